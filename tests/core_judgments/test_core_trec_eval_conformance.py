"""evaluate_trec reproduces trec_eval's own expected outputs (NIST test collection, copied)."""

from __future__ import annotations

from pathlib import Path

import pytest

from groundkit.judgments import evaluate_trec, read_qrels, read_trec_run
from groundkit.judgments.trec import format_trec_eval

DATA = Path(__file__).parent / "data" / "trec_eval"

# Every measure of trec_eval 10 is implemented: nothing is left out of the comparisons.
UNSUPPORTED: set[str] = set()


def _lines(text: str) -> list[tuple[str, str, str]]:
    out = []
    for line in text.splitlines():
        name, query, value = line.split("\t")
        out.append((name.rstrip(), query, value))
    return out


def _compare(expected_file: str, produced: str) -> int:
    expected_text = (DATA / expected_file).read_text(encoding="utf-8")
    expected = _lines(expected_text)
    produced_lines = _lines(produced)
    # Same lines, same order, for every supported measure.
    supported_expected = [line for line in expected if line[0] not in UNSUPPORTED]
    assert produced_lines == supported_expected
    # And byte-identical formatting (padding, tabs, decimals) on those lines.
    raw = [
        line
        for line in expected_text.splitlines()
        if line.split("\t")[0].rstrip() not in UNSUPPORTED
    ]
    assert produced.splitlines() == raw
    return len(supported_expected)


def test_default_measures_match_out_test() -> None:
    qrels = read_qrels(DATA / "qrels.test")
    run = read_trec_run(DATA / "results.test")
    produced = format_trec_eval(evaluate_trec(qrels, run))
    assert produced == (DATA / "out.test").read_text(encoding="utf-8")


def test_qrels_with_comments_give_the_same_output() -> None:
    qrels = read_qrels(DATA / "qrels.test.with-comments")
    run = read_trec_run(DATA / "results.test")
    produced = format_trec_eval(evaluate_trec(qrels, run))
    assert produced == (DATA / "out.test").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("expected", "qrels_file", "run_file", "measures", "options", "per_query"),
    [
        ("out.test.a", "qrels.test", "results.test", ["all_trec"], {}, False),
        ("out.test.aq", "qrels.test", "results.test", ["all_trec"], {}, True),
        ("out.test.aqc", "qrels.test", "results.trunc", ["all_trec"], {"all_queries": True}, True),
        (
            "out.test.aqcM",
            "qrels.test",
            "results.trunc",
            ["all_trec"],
            {"all_queries": True, "max_per_query": 100},
            True,
        ),
        (
            "out.test.aql",
            "qrels.rel_level",
            "results.test",
            ["all_trec", "relstring.20"],
            {"relevance_level": 2},
            True,
        ),
        (
            "out.test.meas_params",
            "qrels.test",
            "results.test",
            [
                "iprec_at_recall..10,.20,.25,.75,.50",
                "P.5,7,3",
                "recall.20,2000",
                "Rprec_mult.5.0,0.2,0.35",
                "utility.2,-1,0,0",
                "11pt_avg..25,.5,.75",
                "ndcg.1=3,2=9,4=4.5",
                "ndcg_cut.10,20,23.4",
                "success.2,5,20",
            ],
            {},
            True,
        ),
    ],
)
def test_expected_outputs(
    expected: str,
    qrels_file: str,
    run_file: str,
    measures: list[str],
    options: dict[str, object],
    per_query: bool,
) -> None:
    qrels = read_qrels(DATA / qrels_file)
    # results.trunc has "junk at end of lines" that trec_eval ignores: opt in to the same.
    run = read_trec_run(DATA / run_file, extra_fields=run_file == "results.trunc")
    result = evaluate_trec(qrels, run, measures, **options)  # type: ignore[arg-type]
    compared = _compare(expected, format_trec_eval(result, per_query=per_query))
    assert compared >= 20


def test_all_queries_flag_counts_missing_queries_as_zero() -> None:
    qrels = read_qrels(DATA / "qrels.test")
    run = read_trec_run(DATA / "results.trunc", extra_fields=True)
    plain = evaluate_trec(qrels, run, ["map", "num_q"])
    complete = evaluate_trec(qrels, run, ["map", "num_q"], all_queries=True)
    assert plain.summary["num_q"] == 2
    assert complete.summary["num_q"] == 3
    assert complete.per_query["302"]["map"] == 0.0
    assert complete.summary["map"] == pytest.approx(plain.summary["map"] * 2 / 3)


def test_ties_are_broken_by_document_id_descending() -> None:
    qrels = {"q": {"a": 1, "b": 0, "c": 0}}
    # All scores equal: trec_eval ranks c, b, a.
    run = {"q": {"a": 1.0, "b": 1.0, "c": 1.0}}
    result = evaluate_trec(qrels, run, ["recip_rank", "relstring"])
    assert result.per_query["q"]["recip_rank"] == pytest.approx(1 / 3)
    assert result.relstrings["q"]["relstring"] == "001"
