"""BEIR SciFact end to end: runs written on BEIR's own ids score without rewriting.

`grk beir adapt` names documents `<id>.txt` and records `id_map.json`; a TREC run on the
original ids (here a direct bm25s run over BEIR's corpus.jsonl, as Pyserini or BEIR's scripts
would write one) is read through that map by `grk eval run --predictions`, and scores exactly
as the same run rewritten with the adapted ids, and as ir_measures scores it against BEIR's
own qrels. Skipped when ../shared has no SciFact.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from click.testing import CliRunner

from groundkit.cli import cli
from groundkit.judgments import EvalReport, load_report, read_trec_run
from groundkit.judgments.trec import read_id_map, write_qrels, write_trec_run

pytestmark = pytest.mark.slow


def _grk(*args: str | Path) -> str:
    result = CliRunner().invoke(cli, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    return result.output


def _bm25s_run(scifact: Path, query_ids: set[str]) -> dict[str, dict[str, float]]:
    """A run on BEIR's ids straight from BEIR's files, without groundkit."""
    import bm25s

    with (scifact / "corpus.jsonl").open(encoding="utf-8") as handle:
        documents = [json.loads(line) for line in handle]
    with (scifact / "queries.jsonl").open(encoding="utf-8") as handle:
        queries = {q["_id"]: q["text"] for q in map(json.loads, handle) if q["_id"] in query_ids}
    retriever = bm25s.BM25()
    texts = [f"{d.get('title') or ''} {d['text']}" for d in documents]
    retriever.index(bm25s.tokenize(texts, stopwords="en", show_progress=False), show_progress=False)
    ordered = sorted(queries)
    tokens = bm25s.tokenize([queries[q] for q in ordered], stopwords="en", show_progress=False)
    found, scores = retriever.retrieve(tokens, k=100, show_progress=False)
    return {
        query_id: {documents[i]["_id"]: float(s) for i, s in zip(rows, row_scores, strict=True)}
        for query_id, rows, row_scores in zip(ordered, found.tolist(), scores.tolist(), strict=True)
    }


def _evaluate(adapted: Path, report: Path, *predictions: tuple[str, Path]) -> EvalReport:
    """`grk eval run` at document level on the adapted set, with predictions stages."""
    flags = [f for name, path in predictions for f in ("--predictions", f"{name}={path}")]
    _grk(
        "eval", "run", "--corpus", adapted / "corpus", "--judgments", adapted / "judgments.jsonl",
        "--level", "document", "--resamples", "100", "--no-items", "--report", report, *flags,
    )  # fmt: skip
    return load_report(report)


def _scores(report: EvalReport, stage: str) -> dict[str, dict[str, float]]:
    return {q.query_id: q.scores for q in report.stage(stage).queries}


def test_scifact_runs_on_beir_ids_score_as_they_are(scifact_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "scifact"
    _grk("beir", "adapt", scifact_dir, out)
    id_map = read_id_map(out / "id_map.json")
    assert id_map.document_suffix == ".txt"

    qrels_rows = (scifact_dir / "qrels" / "test.tsv").read_text(encoding="utf-8").splitlines()[1:]
    beir_qrels: dict[str, dict[str, int]] = {}
    for row in qrels_rows:
        query_id, doc_id, score = row.split("\t")
        beir_qrels.setdefault(query_id, {})[doc_id] = int(score)
    original = _bm25s_run(scifact_dir, set(beir_qrels))
    write_trec_run(original, tmp_path / "original.trec", run_id="bm25s")
    adapted = {
        id_map.query_id(q): {id_map.document_id(d): s for d, s in docs.items()}
        for q, docs in original.items()
    }
    write_trec_run(adapted, tmp_path / "adapted.trec", run_id="bm25s")

    report = _evaluate(
        out,
        tmp_path / "report.json",
        ("original", tmp_path / "original.trec"),
        ("adapted", tmp_path / "adapted.trec"),
    )
    assert _scores(report, "original") == _scores(report, "adapted")
    hits = {q.query_id: [h.doc for h in q.hits] for q in report.stage("original").queries}
    assert hits == {q.query_id: [h.doc for h in q.hits] for q in report.stage("adapted").queries}
    assert len(hits) == 300

    # ir_measures (pytrec_eval) on BEIR's own files, with BEIR's ids, gives the same figures.
    ir_measures = pytest.importorskip("ir_measures")
    write_qrels(beir_qrels, tmp_path / "beir.qrels")
    measures = {"nDCG@10": "ndcg@10", "R@100": "recall@100", "RR": "mrr"}
    parsed = {ir_measures.parse_measure(name): ours for name, ours in measures.items()}
    theirs: dict[str, dict[str, float]] = {}
    for row in ir_measures.iter_calc(
        list(parsed),
        ir_measures.read_trec_qrels(str(tmp_path / "beir.qrels")),
        ir_measures.read_trec_run(str(tmp_path / "original.trec")),
    ):
        theirs.setdefault(row.query_id, {})[parsed[row.measure]] = row.value
    ours = _scores(report, "original")
    for query_id, values in theirs.items():
        for metric, value in values.items():
            assert math.isclose(ours[query_id][metric], value, abs_tol=1e-12), (query_id, metric)


def test_scifact_report_run_exported_back_to_beir_ids(scifact_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "scifact"
    _grk("beir", "adapt", scifact_dir, out)
    report_path = tmp_path / "report.json"
    first = _evaluate(out, report_path)
    _grk("eval", "export", report_path, "--stage", "bm25", "--run", tmp_path / "adapted.trec",
         "--qrels", tmp_path / "adapted.qrels")  # fmt: skip
    # Back to BEIR's ids: strip the suffix the id map records (SciFact renames nothing).
    id_map = read_id_map(out / "id_map.json")
    assert id_map.documents == {}
    assert id_map.queries == {}
    exported = read_trec_run(tmp_path / "adapted.trec")
    back = {
        q: {d.removesuffix(id_map.document_suffix): s for d, s in docs.items()}
        for q, docs in exported.items()
    }
    write_trec_run(back, tmp_path / "beir-ids.trec", run_id="bm25")
    again = _evaluate(out, tmp_path / "second.json", ("beir-ids", tmp_path / "beir-ids.trec"))
    assert _scores(again, "beir-ids") == _scores(first, "bm25")
    assert again.stage("beir-ids").aggregates["ndcg@10"].mean == pytest.approx(0.6863, abs=5e-5)
