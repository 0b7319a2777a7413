"""groundkit's chunk metrics against Chroma's own code, on Chroma's general evaluation set.

The reference is Chroma's chunking_evaluation (github.com/brandonstarxel/chunking_evaluation,
MIT): its ``BaseEvaluation._full_precision_score`` (precision Ω) and
``BaseEvaluation._scores_from_dataset_and_retrievals`` (recall, precision, IoU), loaded from
a checkout at run time and called on groundkit's own chunks and top-5 hits, so both sides
score identical chunks and identical retrievals. Nothing of Chroma's code is in this project.

The set (472 questions, 790 references with ``start_index``/``end_index``, 5 corpora) is
converted to judgments whose quotes are pinned to the references' offsets (``start``), as the
docs page ``guides/chroma-chunking.md`` shows. One run, BM25 top 5, four stages: ``chars:200``,
``chars:400:200``, ``tokens:200`` counted in cl100k_base tokens, and ``sentences``.

Per query, groundkit's ``span_recall@5``, ``span_precision_chroma@5``, ``span_iou_chroma@5``
and ``precision_omega`` must equal Chroma's recall, precision, IoU and precision Ω within
``TOLERANCE``, except where Chroma's range intersection counts a chunk that only touches a
reference (ends where it starts): such a chunk enters Chroma's precision Ω denominator, never
groundkit's. Those queries are counted apart, and checked to be exactly that case.

It also reports what pinning changes (the same run with unpinned quotes: 97
references occur more than once in their document).

Usage: ``python tests/benchmarks/bench_core_chroma_agreement.py [CHECKOUT]`` where CHECKOUT
is a clone of chunking_evaluation (default: ``$CHROMA_CHUNKING_EVALUATION``). Skipped (exit 0)
when there is none; exit 1 when a query disagrees.
"""

from __future__ import annotations

import csv
import importlib.util
import json
import os
import sys
import time
import types
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from groundkit.harness import Bm25Retriever, EvalSettings, StageConfig, evaluate
from groundkit.judgments import GoldQuote, Judgment, parse_chunker_spec
from groundkit.judgments.corpus import chunk_corpus, load_tokenizer

DATA = Path("chunking_evaluation/evaluation_framework/general_evaluation_data")
CODE = Path("chunking_evaluation/evaluation_framework/base_evaluation.py")
STAGES = {
    "bm25": "chars:200:0",
    "chars-400-200": "chars:400:200",
    "tokens-200": "tokens:200:0",
    "sentences": "sentences",
}
K = 5
TOLERANCE = 1e-9
METRICS = {  # groundkit's name -> Chroma's
    f"span_recall@{K}": "recall",
    f"span_precision_chroma@{K}": "precision",
    f"span_iou_chroma@{K}": "iou",
    "precision_omega": "precision_omega",
}


def _chroma_code(checkout: Path) -> Any:
    """Chroma's ``BaseEvaluation``, imported with stand-ins for modules it does not need here.

    The scoring methods use only plain Python; the stand-ins cover the vector store, the
    embedding helpers and the fuzzy search that the module imports at its top.
    """
    for name in ("chromadb", "chromadb.utils", "chromadb.utils.embedding_functions"):
        sys.modules.setdefault(name, types.ModuleType(name))
    helpers = types.ModuleType("chunking_evaluation.utils")
    helpers.rigorous_document_search = None  # type: ignore[attr-defined]
    helpers.get_openai_embedding_function = None  # type: ignore[attr-defined]
    sys.modules["chunking_evaluation.utils"] = helpers
    spec = importlib.util.spec_from_file_location("chroma_base_evaluation", checkout / CODE)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.BaseEvaluation


class _Questions:
    """What Chroma's scoring methods read of a DataFrame: ``iterrows()``."""

    def __init__(self, rows: Sequence[Mapping[str, Any]]) -> None:
        self.rows = rows

    def iterrows(self) -> Iterator[tuple[int, Mapping[str, Any]]]:
        yield from enumerate(self.rows)


def _load(checkout: Path) -> tuple[dict[str, str], list[dict[str, Any]]]:
    data = checkout / DATA
    with (data / "questions_df.csv").open(encoding="utf-8", newline="") as handle:
        rows = [
            {**row, "references": json.loads(row["references"])} for row in csv.DictReader(handle)
        ]
    corpus = {
        f"{name}.md": (data / "corpora" / f"{name}.md").read_text(encoding="utf-8")
        for name in sorted({row["corpus_id"] for row in rows})
    }
    return corpus, rows


def _judgments(
    corpus: Mapping[str, str], rows: Sequence[Mapping[str, Any]], *, pinned: bool
) -> list[Judgment]:
    judgments = []
    for number, row in enumerate(rows):
        doc = f"{row['corpus_id']}.md"
        gold = []
        for reference in row["references"]:
            start, end = int(reference["start_index"]), int(reference["end_index"])
            quote = corpus[doc][start:end]  # what the offsets hold (equal to "content" here)
            gold.append(GoldQuote(doc=doc, quote=quote, start=start if pinned else None))
        judgments.append(Judgment(query_id=f"q{number}", query=row["question"], gold=gold))
    return judgments


def _run(corpus: Mapping[str, str], judgments: Sequence[Judgment]) -> Any:
    stages = [
        StageConfig(name=name, retriever=Bm25Retriever(), chunker=parse_chunker_spec(spec))
        for name, spec in STAGES.items()
    ]
    settings = EvalSettings(
        stages=stages,
        depth=K,
        cutoffs=[K],
        headline_metrics=[m for m in METRICS if m != "precision_omega"],
        tokenizer="cl100k_base",
        bootstrap={"resamples": 200},
    )
    return evaluate(corpus, judgments, settings)


def _chunks(corpus: Mapping[str, str], stage: Any) -> list[Any]:
    """The stage's chunks, cut again with its recorded chunker and the run's tokenizer."""
    return chunk_corpus(corpus, stage.chunker, load_tokenizer("cl100k_base"))


def _chroma_scores(
    base: Any, corpus: Mapping[str, str], rows: Sequence[Mapping[str, Any]], stage: Any
) -> dict[str, list[float]]:
    """Chroma's four scores per question, on the stage's chunks and top-K hits."""
    chunks = _chunks(corpus, stage)
    every = [
        {"start_index": c.start, "end_index": c.end, "corpus_id": c.doc.removesuffix(".md")}
        for c in chunks
    ]
    hits = {q.query_id: q.hits for q in stage.queries}
    retrieved = [
        [
            {"start_index": h.start, "end_index": h.end, "corpus_id": h.doc.removesuffix(".md")}
            for h in hits[f"q{number}"][:K]
        ]
        for number in range(len(rows))
    ]
    shim = types.SimpleNamespace(questions_df=_Questions(rows))
    omega, _ = base._full_precision_score(shim, every)
    iou, recall, precision = base._scores_from_dataset_and_retrievals(
        shim, retrieved, [K] * len(rows)
    )
    return {"recall": recall, "precision": precision, "iou": iou, "precision_omega": omega}


def _touching(chunks: Sequence[Any], row: Mapping[str, Any]) -> bool:
    """Whether a chunk of the question's corpus only touches one of its references.

    Chroma's ``intersect_two_ranges`` returns a zero-length range for a chunk that ends where a
    reference starts (or starts where it ends), so ``_full_precision_score`` counts that chunk
    as holding the reference and adds it to precision Ω's denominator. groundkit counts a chunk
    only when it overlaps (shares a character), as its relevance rule does everywhere.
    """
    doc = f"{row['corpus_id']}.md"
    edges = {int(r[key]) for r in row["references"] for key in ("start_index", "end_index")}
    return any(c.doc == doc and (c.start in edges or c.end in edges) for c in chunks)


def _compare(
    report: Any,
    reference: Mapping[str, Mapping[str, list[float]]],
    chunks: Mapping[str, Sequence[Any]],
    rows: Sequence[Mapping[str, Any]],
) -> tuple[int, int]:
    """(unexplained, explained) per-query disagreements; prints the table."""
    unexplained = explained = 0
    print(f"{'stage':<15}{'metric':<26}{'groundkit':>10}{'Chroma':>10}{'max |Δ|':>10}  agree")
    for name in STAGES:
        stage = report.stage(name)
        by_id = {q.query_id: q.scores for q in stage.queries}
        for ours, theirs in METRICS.items():
            expected = reference[name][theirs]
            got = [by_id[f"q{n}"][ours] for n in range(len(expected))]
            gaps = [abs(a - b) for a, b in zip(got, expected, strict=True)]
            agree = sum(gap <= TOLERANCE for gap in gaps)
            for number, gap in enumerate(gaps):
                if gap <= TOLERANCE:
                    continue
                if ours == "precision_omega" and _touching(chunks[name], rows[number]):
                    explained += 1
                else:
                    unexplained += 1
            print(
                f"{name:<15}{ours:<26}{sum(got) / len(got):>10.4f}"
                f"{sum(expected) / len(expected):>10.4f}{max(gaps):>10.1e}  "
                f"{agree}/{len(gaps)}"
            )
    return unexplained, explained


def _pinning_effect(pinned: Any, unpinned: Any) -> None:
    moved = 0
    pairs = 0
    for name in STAGES:
        left = {q.query_id: q.scores for q in pinned.stage(name).queries}
        right = {q.query_id: q.scores for q in unpinned.stage(name).queries}
        for query_id, scores in left.items():
            pairs += 1
            moved += abs(scores[f"span_recall@{K}"] - right[query_id][f"span_recall@{K}"]) > 1e-12
    print(f"pinning moves span_recall@{K} on {moved} of {pairs} query x stage pairs")


def main(argv: Sequence[str]) -> int:
    """Score Chroma's set both ways; return 1 when a query disagrees, 0 otherwise."""
    where = argv[0] if argv else os.environ.get("CHROMA_CHUNKING_EVALUATION", "")
    checkout = Path(where) if where else None
    if checkout is None or not (checkout / DATA / "questions_df.csv").is_file():
        print("skipped: pass a clone of brandonstarxel/chunking_evaluation (or set")
        print("CHROMA_CHUNKING_EVALUATION); its data and scoring code are the reference")
        return 0
    base = _chroma_code(checkout)
    corpus, rows = _load(checkout)
    references = sum(len(row["references"]) for row in rows)
    print(
        f"Chroma general set: {len(rows)} questions, {references} references, {len(corpus)} corpora"
    )
    started = time.perf_counter()
    report = _run(corpus, _judgments(corpus, rows, pinned=True))
    took = time.perf_counter() - started
    print(f"groundkit run (4 stages, BM25 top {K}, cl100k_base tokens): {took:.1f} s")
    reference = {name: _chroma_scores(base, corpus, rows, report.stage(name)) for name in STAGES}
    chunks = {name: _chunks(corpus, report.stage(name)) for name in STAGES}
    unexplained, explained = _compare(report, reference, chunks, rows)
    _pinning_effect(report, _run(corpus, _judgments(corpus, rows, pinned=False)))
    print(
        f"disagreements beyond {TOLERANCE:g}: {unexplained + explained}; {explained} of them "
        "precision Ω where Chroma counts a chunk that only touches a reference (a zero-length "
        f"intersection); unexplained: {unexplained}"
    )
    return 1 if unexplained else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
