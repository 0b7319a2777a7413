"""Exported runs loaded by the real ranx, ir_measures (pytrec_eval) and core's trec_eval.

On the demo set (172 answerable queries): at document level every tool computes the report's
own per-query values; at chunk level precision@k, hit@k and mrr agree, and recall, nDCG, MAP
and R-precision do not (credit-once quotes against chunk qrels), while the tools still agree
with each other on every query.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from groundkit.cli import cli
from groundkit.cli.run._run import demo_data
from groundkit.judgments import EvalReport, evaluate_trec, load_report, read_qrels, read_trec_run

ranx = pytest.importorskip("ranx")
ir_measures = pytest.importorskip("ir_measures")

pytestmark = pytest.mark.filterwarnings("ignore:unsafe cast:Warning")  # numba, in ranx

# report metric -> (ranx metric, ir_measures measure name, trec_eval measure)
MEASURES = {
    "ndcg@10": ("ndcg@10", "nDCG@10", "ndcg_cut_10"),
    "recall@100": ("recall@100", "R@100", "recall_100"),
    "mrr": ("mrr", "RR", "recip_rank"),
    "ndcg@3": ("ndcg@3", "nDCG@3", "ndcg_cut_3"),
    "recall@10": ("recall@10", "R@10", "recall_10"),
    "precision@5": ("precision@5", "P@5", "P_5"),
    "hit@5": ("hit_rate@5", "Success@5", "success_5"),
    "map": ("map", "AP", "map"),
    "rprec": ("r-precision", "Rprec", "Rprec"),
}
CHUNK_AGREE = ("precision@5", "hit@5", "mrr")
CHUNK_DIFFER = ("recall@10", "ndcg@10", "ndcg@3", "map", "rprec")

PerQuery = dict[str, dict[str, float]]


def _grk(*args: str | Path) -> None:
    result = CliRunner().invoke(cli, [str(a) for a in args])
    assert result.exit_code == 0, result.output


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("libraries")
    _grk("eval", "demo", "--no-dense", "--out", root / "demo", "--resamples", "50")
    with demo_data() as (corpus, judgments):
        _grk(
            "eval", "run", "--corpus", corpus, "--judgments", judgments, "--level", "document",
            "--stage", "small=bm25@chars:400:50", "--stage", "para=bm25@paragraphs:1000",
            "--report", root / "document.json", "--no-items", "--resamples", "50",
        )  # fmt: skip
    return {"chunk": root / "demo" / "report.json", "document": root / "document.json"}


@functools.cache  # the files stay in the module's folder: export each once per process
def _export(report: Path, stage: str, file_format: str, *extra: str) -> tuple[Path, Path]:
    suffix = ".json" if file_format == "ranx" else ".trec"
    folder = report.parent / f"{stage}-{file_format}-{'-'.join(extra) or 'own'}"
    folder.mkdir(exist_ok=True)
    run, qrels = folder / f"run{suffix}", folder / f"qrels{suffix}"
    _grk("eval", "export", report, "--stage", stage, "--format", file_format, "--run", run,
         "--qrels", qrels, *extra)  # fmt: skip
    return run, qrels


def _with_ranx(run: Path, qrels: Path) -> PerQuery:
    loaded_run = ranx.Run.from_file(str(run))
    loaded_qrels = ranx.Qrels.from_file(str(qrels))
    names = [spec[0] for spec in MEASURES.values()]
    ranx.evaluate(loaded_qrels, loaded_run, names, make_comparable=True)
    out: PerQuery = {}
    for ours, (name, _, _) in MEASURES.items():
        for query_id, value in loaded_run.scores[name].items():
            out.setdefault(query_id, {})[ours] = float(value)
    return out


def _with_ir_measures(run: Path, qrels: Path) -> PerQuery:
    measures = {ir_measures.parse_measure(spec[1]): ours for ours, spec in MEASURES.items()}
    out: PerQuery = {}
    for row in ir_measures.iter_calc(
        list(measures), ir_measures.read_trec_qrels(str(qrels)), ir_measures.read_trec_run(str(run))
    ):
        out.setdefault(row.query_id, {})[measures[row.measure]] = float(row.value)
    return out


def _with_trec_eval(run: Path, qrels: Path) -> PerQuery:
    result = evaluate_trec(
        read_qrels(qrels), read_trec_run(run), [spec[2] for spec in MEASURES.values()]
    )
    return {
        query_id: {ours: values[spec[2]] for ours, spec in MEASURES.items()}
        for query_id, values in result.per_query.items()
    }


TOOLS: dict[str, tuple[str, Callable[[Path, Path], PerQuery]]] = {
    "ranx-json": ("ranx", _with_ranx),
    "ranx-trec": ("trec", _with_ranx),
    "ir_measures": ("ir-measures", _with_ir_measures),
    "trec_eval": ("trec", _with_trec_eval),
}


def _ours(report: EvalReport, stage: str) -> PerQuery:
    return {q.query_id: dict(q.scores) for q in report.stage(stage).queries}


def _differing(ours: PerQuery, theirs: PerQuery, metric: str) -> list[str]:
    return [
        query_id
        for query_id, values in ours.items()
        if not math.isclose(values[metric], theirs[query_id][metric], abs_tol=1e-12)
    ]


def _check_document_level(reports: dict[str, Path], tool: str) -> None:
    file_format, compute = TOOLS[tool]
    report = load_report(reports["document"])
    for stage in ("bm25", "small", "para"):
        theirs = compute(*_export(reports["document"], stage, file_format))
        ours = _ours(report, stage)
        assert set(theirs) == set(ours)
        assert len(ours) == 172
        for metric in MEASURES:
            assert _differing(ours, theirs, metric) == [], (tool, stage, metric)
            mean = sum(values[metric] for values in theirs.values()) / len(theirs)
            assert math.isclose(mean, report.stage(stage).aggregates[metric].mean, abs_tol=1e-12)


def _check_chunk_level(reports: dict[str, Path], tool: str) -> dict[str, PerQuery]:
    file_format, compute = TOOLS[tool]
    report = load_report(reports["chunk"])
    out: dict[str, PerQuery] = {}
    for stage in ("bm25", "bm25-chars200"):
        theirs = out[stage] = compute(*_export(reports["chunk"], stage, file_format))
        ours = _ours(report, stage)
        assert set(theirs) == set(ours)
        for metric in CHUNK_AGREE:
            assert _differing(ours, theirs, metric) == [], (tool, stage, metric)
        # Credit-once quotes are not chunk qrels: these differ on some queries.
        differing = {metric: len(_differing(ours, theirs, metric)) for metric in CHUNK_DIFFER}
        assert differing["ndcg@10"] > 0, (tool, stage)
        assert differing["map"] > 0, (tool, stage)
        if stage == "bm25-chars200":  # 200-character windows cut quotes: several chunks each
            assert all(count > 0 for count in differing.values()), (tool, differing)
    return out


# ranx compiles its metrics with numba on first use (seconds of CPU in every new process), so
# one test does all of ranx's work; the other tools are quick.
def test_ranx_reads_the_exports(reports: dict[str, Path]) -> None:
    for tool in ("ranx-json", "ranx-trec"):
        _check_document_level(reports, tool)
        _check_chunk_level(reports, tool)
    # A chunk report collapsed to documents: the demo's baseline chunks paragraphs of up to
    # 1000 characters like the document-level run's stage 'para', so it scores the same.
    theirs = _with_ranx(*_export(reports["chunk"], "bm25", "ranx", "--level", "document"))
    ours = _ours(load_report(reports["document"]), "para")
    for metric in MEASURES:
        assert _differing(ours, theirs, metric) == [], metric


def test_ir_measures_and_trec_eval_read_the_exports(reports: dict[str, Path]) -> None:
    results = {}
    for tool in ("ir_measures", "trec_eval"):
        _check_document_level(reports, tool)
        results[tool] = _check_chunk_level(reports, tool)
    # At chunk level too, ir_measures (pytrec_eval, trec_eval 9's C code, 32-bit scores) and
    # core's trec_eval agree on every measure and query: they read the same qrels and order.
    for stage, reference in results["trec_eval"].items():
        for metric in MEASURES:
            assert _differing(reference, results["ir_measures"][stage], metric) == [], metric
