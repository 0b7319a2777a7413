"""Document-level ties as trec_eval breaks them: a report, `grk eval trec` and a TREC run agree.

A small Cranfield-like collection where BM25 gives several documents exactly the same score
(identical texts under different ids). trec_eval ranks tied documents by id descending; the
built-in bm25 stage at document level must report the same figures as the same scores read back
as a TREC run (through `--predictions` and through `grk eval trec`).
"""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from groundkit.cli import cli
from groundkit.judgments import evaluate_trec, load_report
from groundkit.judgments.trec import write_qrels, write_trec_run

# Each topic's relevant texts appear under several ids with identical text, so BM25 ties them;
# which of the tied ids is relevant decides the figures when the cut or the order matters.
TOPICS = {
    "boundary-layer": "boundary layer transition on a flat plate in supersonic flow",
    "heat-transfer": "heat transfer to a blunt body in hypersonic flow",
    "buckling": "buckling of thin cylindrical shells under axial compression",
    "flutter": "panel flutter of a plate in supersonic flow",
}


def _collection(root: Path) -> tuple[Path, Path]:
    corpus = root / "corpus"
    corpus.mkdir()
    judgments: list[dict[str, object]] = []
    for number, (topic, text) in enumerate(TOPICS.items()):
        copies = [f"{topic}-{copy}.txt" for copy in "abcde"]
        for name in copies:
            (corpus / name).write_text(f"{text}.\n", encoding="utf-8")
        (corpus / f"{topic}-other.txt").write_text(f"{text.split()[0]} notes.\n", encoding="utf-8")
        # Relevant: the alphabetically first and a middle copy (graded), not the last one.
        gold = [
            {"doc": copies[0], "quote": f"{text}.", "grade": 2},
            {"doc": copies[2], "quote": f"{text}.", "grade": 1 + number % 2},
        ]
        judgments.append(
            {"query_id": f"q-{topic}", "query": " ".join(text.split()[:4]), "gold": gold}
        )
    path = root / "judgments.jsonl"
    path.write_text("".join(json.dumps(j) + "\n" for j in judgments), encoding="utf-8")
    return corpus, path


def _run(*args: str | Path) -> None:
    result = CliRunner().invoke(cli, [str(a) for a in args])
    assert result.exit_code == 0, result.output


def test_bm25_stage_and_its_scores_read_back_as_a_trec_run_agree(tmp_path: Path) -> None:
    corpus, judgments = _collection(tmp_path)
    first = tmp_path / "first.json"
    _run(
        "eval",
        "run",
        "--corpus",
        corpus,
        "--judgments",
        judgments,
        "--level",
        "document",
        "--k",
        "3",
        "--report",
        first,
        "--no-items",
        "--resamples",
        "50",
    )
    report = load_report(first)
    bm25 = report.stages[0]
    # The hits are ranked as trec_eval ranks them: among equal scores, ids descending.
    for query in bm25.queries:
        pairs = [(hit.score, hit.doc) for hit in query.hits]
        assert pairs == sorted(pairs, key=lambda p: (p[0], p[1]), reverse=True)
    run = {q.query_id: {hit.doc: hit.score for hit in q.hits} for q in bm25.queries}
    run_file = tmp_path / "bm25.trec"
    write_trec_run(run, run_file, run_id="bm25")
    qrels = {
        j["query_id"]: {g["doc"]: g["grade"] for g in j["gold"]}
        for j in map(json.loads, judgments.read_text().splitlines())
    }
    qrels_file = tmp_path / "qrels.txt"
    write_qrels(qrels, qrels_file)

    # 1. The same scores as a TREC run stage of the harness.
    second = tmp_path / "second.json"
    _run(
        "eval",
        "run",
        "--corpus",
        corpus,
        "--judgments",
        judgments,
        "--level",
        "document",
        "--k",
        "3",
        "--predictions",
        f"trec={run_file}",
        "--report",
        second,
        "--no-items",
        "--resamples",
        "50",
    )
    again = load_report(second).stage("trec")
    for metric in ("ndcg@10", "recall@10", "mrr", "map", "precision@10"):
        ours = {q.query_id: q.scores[metric] for q in bm25.queries}
        theirs = {q.query_id: q.scores[metric] for q in again.queries}
        assert ours == theirs, metric
        assert bm25.aggregates[metric].mean == again.aggregates[metric].mean

    # 2. trec_eval's figures (core's implementation, checked against trec_eval's own outputs).
    result = evaluate_trec(qrels, run, ["ndcg_cut.10", "map", "recip_rank"], all_queries=True)
    for metric, measure in (("ndcg@10", "ndcg_cut_10"), ("map", "map"), ("mrr", "recip_rank")):
        for query in bm25.queries:
            assert query.scores[metric] == result.per_query[query.query_id][measure]

    # 3. And `grk eval trec` prints the report's means to trec_eval's digits.
    printed = CliRunner().invoke(
        cli, ["eval", "trec", "-c", "-m", "ndcg_cut.10", str(qrels_file), str(run_file)]
    )
    assert printed.exit_code == 0, printed.output
    value = float(printed.output.split()[-1])
    assert value == round(bm25.aggregates["ndcg@10"].mean, 4)


def test_ties_are_what_decide_the_figures_here(tmp_path: Path) -> None:
    # Guard against a vacuous test: ranking ties by ascending id instead gives other figures.
    corpus, judgments = _collection(tmp_path)
    out = tmp_path / "r.json"
    _run(
        "eval",
        "run",
        "--corpus",
        corpus,
        "--judgments",
        judgments,
        "--level",
        "document",
        "--k",
        "3",
        "--report",
        out,
        "--no-items",
        "--resamples",
        "50",
    )
    stage = load_report(out).stages[0]
    qrels = {
        j["query_id"]: {g["doc"]: g["grade"] for g in j["gold"]}
        for j in map(json.loads, judgments.read_text().splitlines())
    }
    ascending = {}
    for query in stage.queries:
        docs = sorted(hit.doc for hit in query.hits)
        ascending[query.query_id] = {doc: float(len(docs) - i) for i, doc in enumerate(docs)}
    other = evaluate_trec(qrels, ascending, ["ndcg_cut.10"], all_queries=True)
    assert other.summary["ndcg_cut_10"] != stage.aggregates["ndcg@10"].mean


def _scores(report_path: Path, stage: str = "bm25") -> dict[str, list[tuple[float, str]]]:
    report = load_report(report_path)
    return {
        q.query_id: [(hit.score, hit.doc) for hit in q.hits] for q in report.stage(stage).queries
    }


def test_a_tie_across_the_cut_keeps_what_trec_eval_ranks_first(tmp_path: Path) -> None:
    # The hits at --k 3 are the first three of the whole ranking as trec_eval orders it,
    # even where five tied documents straddle rank 3.
    corpus, judgments = _collection(tmp_path)
    cut, whole = tmp_path / "cut.json", tmp_path / "whole.json"
    common = ["eval", "run", "--corpus", corpus, "--judgments", judgments, "--level", "document"]
    _run(*common, "--k", "3", "--report", cut, "--no-items", "--resamples", "50")
    _run(*common, "--k", "30", "--report", whole, "--no-items", "--resamples", "50")
    for query, ranked in _scores(whole).items():
        in_trec_order = sorted(ranked, reverse=True)  # score, then id, descending
        assert ranked == in_trec_order
        assert _scores(cut)[query] == in_trec_order[:3], query


def test_three_identical_documents_score_alike_at_every_depth(tmp_path: Path) -> None:
    # The repro: the gold document is the last of three identical ones by id; trec_eval ranks
    # it first, so mrr is 1 at --k 1 as at --k 3 (it was 0 at --k 1 when the cut kept the
    # first index of the tie).
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for name in ("a.txt", "b.txt", "c.txt"):
        (corpus / name).write_text("The refund window is thirty days.\n", encoding="utf-8")
    judgments = tmp_path / "j.jsonl"
    gold = {"doc": "c.txt", "quote": "The refund window is thirty days."}
    judgments.write_text(
        json.dumps({"query_id": "q", "query": "refund window", "gold": [gold]}) + "\n",
        encoding="utf-8",
    )
    figures = []
    for k in ("1", "2", "3"):
        out = tmp_path / f"k{k}.json"
        _run(
            "eval", "run", "--corpus", corpus, "--judgments", judgments, "--level", "document",
            "--k", k, "--report", out, "--no-items", "--resamples", "50",
        )  # fmt: skip
        query = load_report(out).stages[0].queries[0]
        assert query.hits[0].doc == "c.txt"
        figures.append(query.scores["mrr"])
    assert figures == [1.0, 1.0, 1.0]
