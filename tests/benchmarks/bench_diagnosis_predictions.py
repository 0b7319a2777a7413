"""How well diagnosis predicts: every fix it proposes applied, on real collections, chunk level.

For each collection a BM25 stage (and, with the dense extra, a dense stage beside it) is run
and diagnosed at its cutoff, with the chunk fixes replayed by re-running the stage
(``rerun_chunk_fixes``). Then every fix that can be applied in the harness is applied as a
run of its own, as a user would apply it, and its measured gain in recall@k gets its paired
interval from ``groundkit.stats.compare_items`` (the engine behind ``grk eval compare``):

* larger-chunks, smaller-chunks, chunk-overlap: BM25 with the variant chunker, run apart;
* raise-k: recall at the raised cutoff, as the harness scored it in the run;
* hybrid-fusion: a run with a hybrid stage fusing BM25 and dense (RRF);
* dense: the dense stage of the run;
* rerank: a rerank stage (the packaged model as a bi-encoder) over BM25's top 50.

query-expansion, repair-judgments and index-coverage have no knob the harness can turn; a
deduplicate replay that removes nothing is left out (nothing was applied).

Reported per fix kind: how often the measured 95% interval contains the prediction, and the
rank correlation (Spearman) of predicted against measured gains over every applied fix.
Targets: the prediction inside the interval for >= 80% of exactly replayed fixes, and
Spearman >= 0.7 over all applied fixes. Exit 1 when a target is missed or fewer than 4
collections were available.

Collections: BEIR SciFact (``../shared``, ``chars:500:100``, k = 10) and the five corpora of
Chroma's general evaluation set (a chunking_evaluation checkout, ``chars:400:0``, k = 5),
each scored on its own.

Usage: ``python tests/benchmarks/bench_diagnosis_predictions.py [--chroma CHECKOUT]
[--scifact DIR] [--no-dense]``.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import sys
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scipy.stats import spearmanr

from groundkit.adapters.beir import adapt_beir_dataset
from groundkit.diagnosis import Fix, FixName, chunk_variant, chunker_text, diagnose, fixes
from groundkit.harness import dense_available, run_config_from_dict, run_evaluation
from groundkit.harness.analysis import rerun_chunk_fixes
from groundkit.judgments import EvalReport, parse_chunker_spec
from groundkit.stats import compare_items

DEFAULT_SCIFACT = Path(__file__).resolve().parents[3] / "shared" / "data" / "beir" / "scifact"
CHROMA_DATA = Path("chunking_evaluation/evaluation_framework/general_evaluation_data")
EXACT_TARGET = 0.80
SPEARMAN_TARGET = 0.70
MIN_COLLECTIONS = 4


@dataclass(frozen=True)
class Collection:
    """A corpus folder and judgments file, with the chunker and cutoff it is diagnosed at."""

    name: str
    corpus: Path
    judgments: Path
    chunker: str
    k: int


@dataclass(frozen=True)
class Row:
    """One applied fix: what diagnosis predicted and what applying it measured."""

    collection: str
    fix: str
    exact: bool
    shown: bool
    predicted: float
    measured: float
    low: float
    high: float

    @property
    def inside(self) -> bool:
        return self.low - 1e-12 <= self.predicted <= self.high + 1e-12


def _chroma_collections(checkout: Path, root: Path) -> list[Collection]:
    data = checkout / CHROMA_DATA
    with (data / "questions_df.csv").open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    out = []
    for name in sorted({row["corpus_id"] for row in rows}):
        folder = root / f"chroma-{name}"
        (folder / "corpus").mkdir(parents=True)
        text = (data / "corpora" / f"{name}.md").read_text(encoding="utf-8")
        (folder / "corpus" / f"{name}.md").write_text(text, encoding="utf-8")
        lines = []
        for number, row in enumerate(r for r in rows if r["corpus_id"] == name):
            gold = [
                {
                    "doc": f"{name}.md",
                    "quote": text[int(ref["start_index"]) : int(ref["end_index"])],
                    "start": int(ref["start_index"]),
                }
                for ref in json.loads(row["references"])
            ]
            lines.append(
                json.dumps({"query_id": f"q{number}", "query": row["question"], "gold": gold})
            )
        (folder / "judgments.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
        out.append(
            Collection(
                f"chroma/{name}", folder / "corpus", folder / "judgments.jsonl", "chars:400:0", 5
            )
        )
    return out


def _scifact_collection(scifact: Path, root: Path) -> Collection:
    adapted = root / "scifact"
    adapt_beir_dataset(scifact, adapted, split="test")
    return Collection(
        "beir/scifact", adapted / "corpus", adapted / "judgments.jsonl", "chars:500:100", 10
    )


def _run(collection: Collection, stages: list[dict[str, Any]], cache: Path) -> EvalReport:
    k = collection.k
    raw = {
        "corpus": str(collection.corpus),
        "judgments": str(collection.judgments),
        "chunker": collection.chunker,
        "stages": stages,
        "depth": 100,
        "cutoffs": sorted({1, k, 5 * k, 100}),
        "budgets": [],
        "embedding_cache_dir": str(cache),
        "bootstrap": {"resamples": 200},
    }
    return run_evaluation(run_config_from_dict(raw))


def _scores(report: EvalReport, stage: str, metric: str) -> dict[str, float]:
    return {r.query_id: r.scores[metric] for r in report.stage(stage).queries}


def _rows(
    collection: Collection,
    fix: Fix,
    a: Mapping[str, float],
    b: Mapping[str, float],
    estimate: Fix | None = None,
) -> list[Row]:
    """The fix as diagnosed, and the estimate ``--no-rerun`` gives for a re-run chunk fix."""
    result = compare_items(a, b)
    measured = (result.difference, result.confidence_interval_low, result.confidence_interval_high)
    rows = [Row(collection.name, fix.name, fix.exact, True, fix.expected or 0.0, *measured)]
    if estimate is not None and estimate.expected is not None and not estimate.exact:
        rows.append(Row(collection.name, fix.name, False, False, estimate.expected, *measured))
    return rows


def _bm25(chunker: str | None = None) -> dict[str, Any]:
    stage: dict[str, Any] = {"name": "bm25", "retriever": {"kind": "bm25"}}
    if chunker is not None:
        stage["chunker"] = chunker
    return stage


_DENSE = {"name": "dense", "retriever": {"kind": "dense"}}


def _applied(
    collection: Collection,
    ranked: list[Fix],
    estimates: Mapping[FixName, Fix],
    report: EvalReport,
    cache: Path,
    dense: bool,
) -> list[Row]:
    k = collection.k
    metric = f"recall@{k}"
    base = _scores(report, "bm25", metric)
    chunker = parse_chunker_spec(collection.chunker)
    rows = []
    for fix in ranked:
        if fix.expected is None:
            continue
        variant = chunk_variant(chunker, fix.name)
        if variant is not None:
            run = _run(collection, [_bm25(chunker_text(variant))], cache)
            after = _scores(run, "bm25", metric)
            rows += _rows(collection, fix, base, after, estimates.get(fix.name))
        elif fix.name == "raise-k":
            rows += _rows(collection, fix, base, _scores(report, "bm25", f"recall@{5 * k}"))
        elif fix.name == "dense" and dense:
            rows += _rows(collection, fix, base, _scores(report, "dense", metric))
        elif fix.name == "hybrid-fusion" and dense:
            hybrid = {"name": "hyb", "retriever": {"kind": "hybrid", "stages": ["bm25", "dense"]}}
            run = _run(collection, [_bm25(), _DENSE, hybrid], cache)
            rows += _rows(collection, fix, base, _scores(run, "hyb", metric))
        elif fix.name == "rerank" and dense:
            retriever = {"kind": "rerank", "stage": "bm25", "top": 5 * k}
            retriever |= {"scorer": "bi-encoder", "model": _model()}
            run = _run(collection, [_bm25(), {"name": "rr", "retriever": retriever}], cache)
            rows += _rows(collection, fix, base, _scores(run, "rr", metric))
    return rows


def _model() -> str:
    from groundkit.harness import DEFAULT_MODEL

    return DEFAULT_MODEL


def _collection_rows(collection: Collection, cache: Path, dense: bool) -> list[Row]:
    stages = [_bm25(), _DENSE] if dense else [_bm25()]
    started = time.perf_counter()
    report = _run(collection, stages, cache)
    reruns = rerun_chunk_fixes(report, "bm25")
    ranked = fixes(diagnose(report, "bm25", k=collection.k, reruns=reruns))
    estimates = {f.name: f for f in fixes(diagnose(report, "bm25", k=collection.k))}
    for fix in [*ranked, *estimates.values()]:
        if fix.expected is not None and fix.expected > (fix.ceiling or 0.0) + 1e-12:
            raise SystemExit(f"{collection.name}: {fix.name} expected above its ceiling")
    rows = _applied(collection, ranked, estimates, report, cache, dense)
    took = time.perf_counter() - started
    queries = len(report.queries)
    print(f"{collection.name}: {queries} queries, {len(rows)} rows ({took:.0f} s)", flush=True)
    for row in rows:
        mark = "inside" if row.inside else "OUTSIDE"
        kind = _mode(row)
        print(
            f"  {row.fix:<15} {kind:<9} predicted {row.predicted:+.4f}  measured "
            f"{row.measured:+.4f} [{row.low:+.4f}, {row.high:+.4f}]  {mark}"
        )
    return rows


def _mode(row: Row) -> str:
    if row.exact:
        return "exact"
    return "estimated" if row.shown else "--no-rerun"


def _spearman(rows: list[Row]) -> float:
    if len(rows) < 3:
        return float("nan")
    return float(spearmanr([r.predicted for r in rows], [r.measured for r in rows]).statistic)


def _print_summary(rows: list[Row], collections: int) -> tuple[float, float]:
    """Per fix kind and mode, inside / total; then the two headline figures."""
    print("\nper fix kind: prediction inside the measured 95% interval")
    modes = (("exact", True, True), ("estimated", False, True), ("--no-rerun", False, False))
    for name in sorted({r.fix for r in rows}):
        for label, is_exact, as_shown in modes:
            mode = (is_exact, as_shown)
            chosen = [r for r in rows if r.fix == name and (r.exact, r.shown) == mode]
            if chosen:
                inside = sum(r.inside for r in chosen)
                print(f"  {name:<15} {label:<10} {inside}/{len(chosen)}")
    exact = [r for r in rows if r.exact]
    share = sum(r.inside for r in exact) / len(exact) if exact else 0.0
    shown = [r for r in rows if r.shown]
    rho = _spearman(shown)
    estimated = [r for r in rows if not r.exact]
    print(
        f"exactly replayed fixes inside their interval: {sum(r.inside for r in exact)}/"
        f"{len(exact)} ({share:.0%}; target >= {EXACT_TARGET:.0%})"
    )
    print(
        f"estimated fixes inside their interval: {sum(r.inside for r in estimated)}/"
        f"{len(estimated)}; Spearman over them {_spearman(estimated):.2f}"
    )
    print(
        f"rank correlation, predicted vs measured, the {len(shown)} fixes as diagnosed on "
        f"{collections} collections: Spearman {rho:.2f} (target >= {SPEARMAN_TARGET})"
    )
    return share, rho


def main(argv: list[str] | None = None) -> int:
    """Run every collection available; exit 1 when a target is missed."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    checkout = os.environ.get("CHROMA_CHUNKING_EVALUATION")
    parser.add_argument("--chroma", type=Path, default=None if checkout is None else Path(checkout))
    parser.add_argument("--scifact", type=Path, default=DEFAULT_SCIFACT)
    parser.add_argument("--no-dense", action="store_true", help="BM25 fixes only (no model runs)")
    args = parser.parse_args(argv)
    dense = not args.no_dense and dense_available()
    with tempfile.TemporaryDirectory(prefix="grk-bench-diagnosis-") as tmp:
        root = Path(tmp)
        collections = []
        if args.scifact.is_dir():
            collections.append(_scifact_collection(args.scifact, root))
        if args.chroma is not None and (args.chroma / CHROMA_DATA).is_dir():
            collections += _chroma_collections(args.chroma, root)
        if len(collections) < MIN_COLLECTIONS:
            found = len(collections)
            print(f"skipped: {found} collections, {MIN_COLLECTIONS} needed (--chroma, --scifact)")
            return 0
        models = "applied" if dense else "not applied (no dense extra, or --no-dense)"
        print(f"dense, rerank and hybrid-fusion: {models}")
        rows = [row for c in collections for row in _collection_rows(c, root / "cache", dense)]
    share, rho = _print_summary(rows, len(collections))
    return 0 if share >= EXACT_TARGET and rho >= SPEARMAN_TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
