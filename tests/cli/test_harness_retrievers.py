"""Every retriever kind: command, callable, predictions (JSONL and TREC), hybrid, and BM25."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from groundkit.harness import (
    CallableRetriever,
    CommandRetriever,
    EvalSettings,
    HarnessError,
    HybridRetriever,
    PredictionsRetriever,
    StageConfig,
    StageFailed,
    evaluate,
)
from groundkit.harness.run._ranking import top_k
from groundkit.judgments import CharsChunker, EvalReport, GoldQuote, Judgment, StageReport

DOCS = {
    "a.txt": "Alpha particles are helium nuclei. They are stopped by paper.",
    "b.txt": "Beta particles are electrons. Aluminium foil stops them.",
    "c.txt": "Gamma rays are photons. Lead shielding reduces them.",
    "guides/d.txt": "Neutrons are stopped by water or concrete.",
}
JUDGMENTS = [
    Judgment(
        query_id="q-alpha",
        query="What stops alpha particles?",
        gold=(GoldQuote(doc="a.txt", quote="They are stopped by paper."),),
    ),
    Judgment(
        query_id="q-beta",
        query="What stops beta particles?",
        gold=(GoldQuote(doc="b.txt", quote="Aluminium foil stops them."),),
    ),
    Judgment(query_id="q-none", query="Who won the cup?", category="unanswerable"),
]


def _run(*stages: StageConfig, stop_on_failure: bool = False) -> EvalReport:
    settings = EvalSettings(
        stages=list(stages),
        chunker=CharsChunker(size=40, overlap=0),
        bootstrap={"resamples": 100},
    )
    return evaluate(DOCS, JUDGMENTS, settings, stop_on_failure=stop_on_failure)


def _spans(stage: StageReport, query_id: str) -> list[tuple[str, int, int]]:
    result = next(q for q in stage.queries if q.query_id == query_id)
    return [(h.doc, h.start, h.end) for h in result.hits]


# --- command ------------------------------------------------------------------------------------

RETRIEVER_SCRIPT = textwrap.dedent(
    """
    import json, sys
    source, target = sys.argv[1], sys.argv[2]
    rows = [json.loads(line) for line in open(source, encoding="utf-8")]
    with open(target, "w", encoding="utf-8") as out:
        for row in rows:
            hits = [{"doc": "a.txt", "text": "stopped by paper", "score": 2.0},
                    {"doc": "b.txt", "start": 0, "end": 29, "score": 1.0}]
            out.write(json.dumps({"query_id": row["query_id"], "hits": hits}) + "\\n")
    """
)


def test_command_retriever_reads_queries_and_writes_predictions(tmp_path: Path) -> None:
    script = tmp_path / "retriever.py"
    script.write_text(RETRIEVER_SCRIPT, encoding="utf-8")
    stage = StageConfig(
        name="cmd",
        retriever=CommandRetriever(argv=[sys.executable, str(script), "{in}", "{out}"]),
    )
    report = _run(stage)
    cmd = report.stage("cmd")
    assert cmd.error is None
    start = DOCS["a.txt"].index("stopped by paper")
    assert _spans(cmd, "q-alpha") == [("a.txt", start, start + 16), ("b.txt", 0, 29)]
    assert [h.score for h in cmd.queries[0].hits] == [2.0, 1.0]
    assert cmd.queries[0].scores["hit@1"] == 1.0


def test_command_retriever_stdin_and_stdout(tmp_path: Path) -> None:
    code = (
        "import json, sys\n"
        "for line in sys.stdin:\n"
        "    q = json.loads(line)\n"
        "    print(json.dumps({'query_id': q['query_id'], 'hits': [{'text': 'Lead shielding'}]}))\n"
    )
    stage = StageConfig(name="pipe", retriever=CommandRetriever(argv=[sys.executable, "-c", code]))
    report = _run(stage)
    hits = report.stage("pipe").queries[0].hits
    assert [(h.doc, h.score) for h in hits] == [("c.txt", 1.0)]  # score 1 / rank when absent


@pytest.mark.parametrize(
    ("argv_tail", "timeout", "expected"),
    [
        (
            ["import sys; sys.stderr.write('index missing\\n'); sys.exit(3)"],
            30.0,
            "exited with status 3",
        ),
        (["import time; time.sleep(30)"], 1.0, "timed out after 1 s"),
        (["pass"], 30.0, "wrote no predictions"),
    ],
    ids=["failing", "timeout", "silent"],
)
def test_command_failures_fail_only_that_stage(
    argv_tail: list[str], timeout: float, expected: str
) -> None:
    stage = StageConfig(
        name="broken",
        retriever=CommandRetriever(argv=[sys.executable, "-c", *argv_tail], timeout=timeout),
    )
    report = _run(stage)
    broken = report.stage("broken")
    assert broken.error is not None
    assert expected in broken.error
    assert broken.queries == []
    assert broken.aggregates == {}
    assert broken.comparisons == []
    assert report.baseline.error is None
    assert report.baseline.queries
    assert any("'broken' failed" in note for note in report.notes)
    if "status 3" in expected:
        assert "index missing" in broken.error
    with pytest.raises(StageFailed, match=expected) as raised:
        _run(stage, stop_on_failure=True)
    assert raised.value.stage == "broken"


def test_command_that_cannot_start() -> None:
    stage = StageConfig(name="nope", retriever=CommandRetriever(argv=["/nonexistent/retriever"]))
    assert "cannot start" in (_run(stage).stage("nope").error or "")


# --- callable -----------------------------------------------------------------------------------

MODULE = textwrap.dedent(
    """
    class Document:
        def __init__(self, page_content, metadata):
            self.page_content = page_content
            self.metadata = metadata

    def search(query):
        if "alpha" in query:
            return [
                Document(
                    "They are stopped by paper.", {"source": "/data/corpus/a.txt", "score": 0.9}
                ),
                (Document("Aluminium foil", {"source": "b.txt", "start_index": 30}), 0.5),
                ("c.txt", 0, 10, 0.1),
            ]
        return []

    def search_many(queries):
        return [[{"doc": "b.txt", "start": 30, "end": 56, "score": 3}] for _ in queries]

    def explode(query):
        raise RuntimeError("vector store offline")

    def nan_score(query):
        return [{"doc": "a.txt", "start": 0, "end": 5, "score": float("nan")}]
    """
)


def test_callable_from_module_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "my_retriever_mod.py").write_text(MODULE, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    stage = StageConfig(name="lc", retriever=CallableRetriever(target="my_retriever_mod:search"))
    report = _run(stage)
    lc = report.stage("lc")
    alpha = DOCS["a.txt"].index("They are")
    assert _spans(lc, "q-alpha") == [
        ("a.txt", alpha, alpha + 26),
        ("b.txt", 30, 44),
        ("c.txt", 0, 10),
    ]
    assert [h.score for h in lc.queries[0].hits] == [0.9, 0.5, 0.1]
    assert lc.queries[1].missing is True


def test_callable_from_file_path_in_batch(tmp_path: Path) -> None:
    file = tmp_path / "retrievers.py"
    file.write_text(MODULE, encoding="utf-8")
    stage = StageConfig(
        name="batch", retriever=CallableRetriever(target=f"{file}:search_many", batch=True)
    )
    report = _run(stage)
    assert _spans(report.stage("batch"), "q-beta") == [("b.txt", 30, 56)]
    assert report.stage("batch").queries[1].scores["recall@1"] == 1.0


def test_callable_errors(tmp_path: Path) -> None:
    file = tmp_path / "retrievers.py"
    file.write_text(MODULE, encoding="utf-8")
    report = _run(StageConfig(name="boom", retriever=CallableRetriever(target=f"{file}:explode")))
    assert "RuntimeError: vector store offline" in (report.stage("boom").error or "")
    # Bad hits from a running retriever fail its stage (the report is still written).
    nan = StageConfig(name="nan", retriever=CallableRetriever(target=f"{file}:nan_score"))
    failed = _run(nan).stage("nan")
    assert failed.error == "stage 'nan': query 'q-alpha': hit 1: score must be finite, got nan"
    assert failed.queries == []
    with pytest.raises(
        StageFailed, match="stage 'nan': query 'q-alpha': hit 1: score must be finite"
    ):
        _run(nan, stop_on_failure=True)
    with pytest.raises(HarnessError, match="has no function 'missing'"):
        _run(StageConfig(name="x", retriever=CallableRetriever(target=f"{file}:missing")))
    with pytest.raises(HarnessError, match="cannot import 'no_such_module_xyz'"):
        _run(StageConfig(name="x", retriever=CallableRetriever(target="no_such_module_xyz:f")))


# --- predictions --------------------------------------------------------------------------------


def _write_lines(path: Path, rows: list[object]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_predictions_jsonl_forms(tmp_path: Path) -> None:
    path = _write_lines(
        tmp_path / "p.jsonl",
        [
            {"query_id": "q-alpha", "query": "echo", "hits": [{"text": "helium nuclei"}]},
            {"query_id": "q-beta", "hits": [{"doc": "b.txt", "text": "Aluminium  foil\nstops"}]},
            {"query_id": "q-none", "hits": [{"doc": "zzz", "start": 0, "end": 1}]},
        ],
    )
    report = _run(StageConfig(name="p", retriever=PredictionsRetriever(path=path)))
    stage = report.stage("p")
    helium = DOCS["a.txt"].index("helium nuclei")
    assert _spans(stage, "q-alpha") == [("a.txt", helium, helium + 13)]
    foil = DOCS["b.txt"].index("Aluminium foil stops")
    assert _spans(stage, "q-beta") == [("b.txt", foil, foil + 20)]  # tolerant whitespace


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ({"query_id": "q-x", "hits": []}, ":1: stage 'p': unknown query id 'q-x'"),
        (
            {"query_id": "q-alpha", "hits": [{"doc": "nope.txt", "start": 0, "end": 3}]},
            ":1: stage 'p': query 'q-alpha': hit 1: unknown document 'nope.txt'",
        ),
        (
            {"query_id": "q-alpha", "hits": [{"doc": "a.txt", "start": 5, "end": 999}]},
            "hit 1: span \\[5, 999\\) is out of bounds",
        ),
        (
            {
                "query_id": "q-alpha",
                "hits": [{"doc": "a.txt", "start": 0, "end": 3, "score": "hi"}],
            },
            "score must be a number",
        ),
        ({"query_id": "q-alpha", "hits": [{"doc": "a.txt", "begin": 0}]}, "unknown key 'begin'"),
        ({"query_id": "q-alpha"}, "missing key 'hits'"),
        ({"query_id": "q-alpha", "hits": {"doc": "a.txt"}}, "hits must be a list"),
    ],
)
def test_predictions_errors_name_stage_query_and_line(
    tmp_path: Path, row: object, message: str
) -> None:
    path = _write_lines(tmp_path / "p.jsonl", [row])
    with pytest.raises(HarnessError, match=message) as raised:
        _run(StageConfig(name="p", retriever=PredictionsRetriever(path=path)))
    assert "\n" not in str(raised.value)
    assert str(path) in str(raised.value)


def test_predictions_repeated_query(tmp_path: Path) -> None:
    row = {"query_id": "q-alpha", "hits": []}
    path = _write_lines(tmp_path / "p.jsonl", [row, row])
    with pytest.raises(HarnessError, match=":2: stage 'p': query 'q-alpha' repeated"):
        _run(StageConfig(name="p", retriever=PredictionsRetriever(path=path)))


def test_trec_run_file(tmp_path: Path) -> None:
    run = tmp_path / "run.trec"
    run.write_text(
        "q-alpha Q0 b.txt 1 3.5 mine\n"
        "q-alpha Q0 a.txt 2 7.0 mine\n"
        "q-alpha Q0 guides/d.txt 3 7.0 mine\n"
        "q-beta Q0 b.txt 1 1.0 mine\n",
        encoding="utf-8",
    )
    report = _run(StageConfig(name="trec", retriever=PredictionsRetriever(path=run)))
    stage = report.stage("trec")
    # trec_eval order: score descending, ties by document id descending.
    assert [h.doc for h in stage.queries[0].hits] == ["guides/d.txt", "a.txt", "b.txt"]
    assert stage.queries[0].hits[1].end == len(DOCS["a.txt"])
    assert stage.queries[0].scores["mrr"] == 0.5
    bad = tmp_path / "bad.trec"
    bad.write_text("q-alpha Q0 zzz.txt 1 1.0 mine\n", encoding="utf-8")
    with pytest.raises(HarnessError, match=r"unknown document 'zzz\.txt'"):
        _run(StageConfig(name="trec", retriever=PredictionsRetriever(path=bad, format="trec")))


# --- hybrid -------------------------------------------------------------------------------------


def test_reciprocal_rank_fusion_matches_a_hand_computation(tmp_path: Path) -> None:
    first = _write_lines(
        tmp_path / "one.jsonl",
        [
            {
                "query_id": "q-alpha",
                "hits": [
                    {"doc": "a.txt", "start": 0, "end": 10},
                    {"doc": "b.txt", "start": 0, "end": 10},
                    {"doc": "c.txt", "start": 0, "end": 10},
                ],
            }
        ],
    )
    second = _write_lines(
        tmp_path / "two.jsonl",
        [
            {
                "query_id": "q-alpha",
                "hits": [
                    {"doc": "c.txt", "start": 0, "end": 10},
                    {"doc": "guides/d.txt", "start": 0, "end": 10},
                    {"doc": "b.txt", "start": 0, "end": 10},
                ],
            },
            {"query_id": "q-beta", "hits": [{"doc": "b.txt", "start": 0, "end": 5}]},
        ],
    )
    report = _run(
        StageConfig(name="one", retriever=PredictionsRetriever(path=first)),
        StageConfig(name="two", retriever=PredictionsRetriever(path=second)),
        StageConfig(name="rrf", retriever=HybridRetriever(stages=["one", "two"], k=10)),
    )
    fused = next(q for q in report.stage("rrf").queries if q.query_id == "q-alpha")
    expected = {
        "a.txt": 1 / 11,
        "b.txt": 1 / 12 + 1 / 13,
        "c.txt": 1 / 13 + 1 / 11,
        "guides/d.txt": 1 / 12,
    }
    # c (0.1678) > b (0.1603) > a (0.0909) > d (0.0833)
    assert [h.doc for h in fused.hits] == ["c.txt", "b.txt", "a.txt", "guides/d.txt"]
    for hit in fused.hits:
        assert hit.score == pytest.approx(expected[hit.doc], rel=1e-12)
    beta = next(q for q in report.stage("rrf").queries if q.query_id == "q-beta")
    assert [h.doc for h in beta.hits] == ["b.txt"]
    assert beta.hits[0].score == pytest.approx(1 / 11)


def test_fusion_ties_go_to_the_higher_id_whichever_stage_comes_first(tmp_path: Path) -> None:
    one = _write_lines(
        tmp_path / "one.jsonl",
        [{"query_id": "q-alpha", "hits": [{"doc": "b.txt", "start": 0, "end": 4}]}],
    )
    two = _write_lines(
        tmp_path / "two.jsonl",
        [{"query_id": "q-alpha", "hits": [{"doc": "a.txt", "start": 0, "end": 4}]}],
    )
    report = _run(
        StageConfig(name="one", retriever=PredictionsRetriever(path=one)),
        StageConfig(name="two", retriever=PredictionsRetriever(path=two)),
        StageConfig(name="rrf", retriever=HybridRetriever(stages=["two", "one"])),
        StageConfig(name="frr", retriever=HybridRetriever(stages=["one", "two"])),
    )
    # Equal fused scores: trec_eval's order (id descending), not the order of the stages.
    assert [h.doc for h in report.stage("rrf").queries[0].hits] == ["b.txt", "a.txt"]
    assert [h.doc for h in report.stage("frr").queries[0].hits] == ["b.txt", "a.txt"]


def test_hybrid_of_a_failed_stage_fails() -> None:
    report = _run(
        StageConfig(name="dead", retriever=CommandRetriever(argv=[sys.executable, "-c", "pass"])),
        StageConfig(name="mix", retriever=HybridRetriever(stages=["bm25", "dead"])),
    )
    assert "fuses stage 'dead', which failed" in (report.stage("mix").error or "")


def test_hybrid_of_internal_stages_keeps_chunk_traces() -> None:
    from groundkit.harness import Bm25Retriever

    report = _run(
        StageConfig(name="tuned", retriever=Bm25Retriever(k1=0.5)),
        StageConfig(name="mix", retriever=HybridRetriever(stages=["bm25", "tuned"])),
    )
    mix = report.stage("mix")
    assert mix.chunk_count == report.baseline.chunk_count
    trace = mix.queries[0].evidence[0]
    assert trace.best_chunk_share is not None
    assert trace.doc_indexed is True
    assert trace.shares_query_term is None  # not a lexical stage itself


# --- BM25 and top-k -----------------------------------------------------------------------------


def test_top_k_breaks_ties_by_index_descending() -> None:
    scores = np.array([1.0, 3.0, 3.0, 0.0, 3.0, 2.0], dtype=np.float32)
    assert top_k(scores, 2, positive_only=False).tolist() == [4, 2]
    assert top_k(scores, 4, positive_only=False).tolist() == [4, 2, 1, 5]
    assert top_k(scores, 10, positive_only=True).tolist() == [4, 2, 1, 5, 0]
    assert top_k(np.zeros(3), 2, positive_only=True).tolist() == []


@given(
    st.lists(st.integers(min_value=0, max_value=4), min_size=1, max_size=40),
    st.integers(min_value=1, max_value=45),
    st.booleans(),
)
def test_top_k_is_the_full_trec_ranking_cut_at_k(values: list[int], k: int, positive: bool) -> None:
    # The cut keeps what trec_eval would rank first if every item were written to a run:
    # score descending, then id descending (a brute force over the whole list).
    scores = np.array(values, dtype=np.float32)
    full = sorted(
        (i for i in range(len(values)) if not positive or values[i] > 0),
        key=lambda i: (values[i], i),
        reverse=True,
    )
    assert top_k(scores, k, positive_only=positive).tolist() == full[:k]


def test_bm25_returns_only_matching_chunks() -> None:
    report = _run()
    alpha = report.baseline.queries[0]
    assert alpha.hits[0].doc == "a.txt"
    assert all(h.score > 0 for h in alpha.hits)
    assert len(alpha.hits) < report.baseline.chunk_count  # type: ignore[operator]


def test_fusion_ties_do_not_depend_on_the_order_of_the_sum() -> None:
    # Hit A (doc 1) ranks (7, 1, 2) in three runs, hit B (doc 0) ranks (1, 2, 7): the same
    # fused score, so the documented tie rule (trec_eval's) puts the higher document code
    # first. Summing the reciprocal ranks in run order gives B one ulp
    # more than A; the fused score must not depend on that order.
    from groundkit.harness.retrievers._fusion import reciprocal_rank_fusion
    from groundkit.harness.run._ranking import RankedRun

    def run(ranked_docs: dict[int, int]) -> RankedRun:
        depth = max(ranked_docs)
        docs = np.asarray([ranked_docs.get(rank, 2) for rank in range(1, depth + 1)])
        starts = np.asarray(
            [0 if rank in ranked_docs else 10 * rank for rank in range(1, depth + 1)]
        )
        ends = starts + 5
        scores = np.arange(depth, 0, -1, dtype=np.float64)
        chunk_ids = np.full(depth, -1, dtype=np.int64)
        return RankedRun.from_lists(["q"], [(docs, starts, ends, scores, chunk_ids)])

    runs = [run({1: 0, 7: 1}), run({1: 1, 2: 0}), run({2: 1, 7: 0})]
    fused = reciprocal_rank_fusion(runs, k=60, depth=2)
    assert fused.docs.tolist() == [1, 0]
    assert fused.scores[0] == fused.scores[1]
