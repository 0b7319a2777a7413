"""Ablation in one run: exact replayed rows, the ablation family, settings and hostile input."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from pydantic import ValidationError

from groundkit.cli.run._run import demo_data
from groundkit.harness import EvalSettings, evaluate
from groundkit.harness.analysis import comparison_problem, report_ablation_family
from groundkit.harness.analysis._stats import ablation_family
from groundkit.judgments import SCHEMA_VERSION, Corpus, EvalReport, Judgment, load_judgments
from groundkit.judgments.report import BootstrapSettings, NoteCode


def overlap_scores(query: str, texts: list[str]) -> list[float]:
    """A rerank scorer: words shared with the query (fast, deterministic)."""
    words = set(query.lower().split())
    return [float(len(words & set(text.lower().split()))) for text in texts]


@pytest.fixture(scope="module")
def demo() -> Iterator[tuple[Corpus, list[Judgment]]]:
    with demo_data() as (corpus, judgments):
        # 80 of the demo's queries keep the file fast; every figure is still the demo's own.
        yield Corpus.load(corpus), load_judgments(judgments)[:80]


def _stages(*extra: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {"name": "small", "retriever": {"kind": "bm25"}, "chunker": "chars:400:50"},
        {"name": "whole-doc", "retriever": {"kind": "bm25"}, "chunker": "document"},
        *extra,
    ]


HYBRID3 = {
    "name": "fused",
    "retriever": {"kind": "hybrid", "stages": ["bm25", "small", "whole-doc"]},
}
RERANK = {
    "name": "reranked",
    "retriever": {"kind": "rerank", "stage": "fused", "target": overlap_scores, "top": 10},
}
HEADLINE = ["recall@10", "ndcg@10", "mrr", "recall@2000c"]
_SETTINGS: dict[str, Any] = {"cutoffs": [5, 10], "budgets": [2000], "bootstrap": {"resamples": 200}}


def _run(
    demo: tuple[Corpus, list[Judgment]], stages: list[dict[str, Any]], **more: Any
) -> EvalReport:
    settings = EvalSettings.model_validate({**_SETTINGS, "stages": stages, **more})
    return evaluate(demo[0], demo[1], settings)


@pytest.fixture(scope="module")
def report(demo: tuple[Corpus, list[Judgment]]) -> EvalReport:
    return _run(demo, _stages(HYBRID3, RERANK))


def _rows(report: EvalReport) -> dict[tuple[str, str], Any]:
    return {(row.stage, row.component): row for row in report.ablation}


def _scores(report: EvalReport, stage: str) -> dict[str, dict[str, float]]:
    return {r.query_id: r.scores for r in report.stage(stage).queries}


def test_rows_of_a_hybrid_and_a_rerank_of_it(report: EvalReport) -> None:
    rows = _rows(report)
    assert list(rows) == [
        ("fused", "bm25"),
        ("fused", "small"),
        ("fused", "whole-doc"),
        ("fused", "fused without bm25"),
        ("fused", "fused without small"),
        ("fused", "fused without whole-doc"),
        ("reranked", "fused"),
        ("reranked", "bm25"),
        ("reranked", "small"),
        ("reranked", "whole-doc"),
        ("reranked", "fused without bm25"),
        ("reranked", "fused without small"),
        ("reranked", "fused without whole-doc"),
    ]
    assert rows[("reranked", "fused")].removed == ["reranked"]
    assert rows[("reranked", "small")].removed == ["reranked", "bm25", "whole-doc"]
    assert rows[("fused", "fused without small")].removed == ["small"]
    replay = rows[("fused", "fused without small")]
    assert (replay.source, replay.inputs, replay.k) == ("replay", ["bm25", "whole-doc"], 60)
    assert rows[("fused", "small")].source == "stage"
    assert rows[("fused", "small")].scores == {}  # the stage's own rows hold them


def test_a_stage_component_is_that_stage_and_the_difference_is_whole_minus_it(
    report: EvalReport,
) -> None:
    row = _rows(report)[("reranked", "fused")]
    whole, part = report.stage("reranked"), report.stage("fused")
    for metric in report.run.headline_metrics:
        assert row.aggregates[metric] == part.aggregates[metric]
        (comparison,) = [c for c in row.comparisons if c.metric == metric]
        assert (comparison.baseline, comparison.candidate) == ("fused", "reranked")
        expected = whole.aggregates[metric].mean - part.aggregates[metric].mean
        assert comparison.effect == pytest.approx(expected, abs=1e-12)


def test_a_leave_one_out_fusion_equals_a_hybrid_stage_of_those_inputs(
    demo: tuple[Corpus, list[Judgment]], report: EvalReport
) -> None:
    pair = {"name": "pair", "retriever": {"kind": "hybrid", "stages": ["bm25", "whole-doc"]}}
    # The same inputs fused by a stage of their own, in a run without the 3-way fusion.
    alone = _run(demo, _stages(pair))
    replayed = _rows(report)[("fused", "fused without small")]
    assert replayed.scores == _scores(alone, "pair")  # every query, every metric, exactly
    assert replayed.aggregates == {
        m: alone.stage("pair").aggregates[m] for m in report.run.headline_metrics
    }
    # And in the same run as a stage: its row stays a replay, with the same values.
    both = _run(demo, _stages(pair, HYBRID3), ablation=["fused"])
    assert _rows(both)[("fused", "fused without small")].scores == _scores(both, "pair")


def test_the_ablation_family_is_its_own_and_reproduces_from_the_report(
    demo: tuple[Corpus, list[Judgment]], report: EvalReport
) -> None:
    without = _run(demo, _stages(HYBRID3, RERANK), ablation=False)
    assert without.ablation == []
    # Ablation on or off never changes a stage comparison.
    assert [s.comparisons for s in without.stages] == [s.comparisons for s in report.stages]
    members = len(report.ablation) * len(report.run.headline_metrics)
    sizes = {c.family_size for row in report.ablation for c in row.comparisons}
    assert sizes == {members}
    assert {c.family_size for s in report.stages for c in s.comparisons} == {
        4 * len(report.run.headline_metrics)
    }
    again = report_ablation_family(report)
    for row, results in zip(report.ablation, again, strict=True):
        assert [c.p_value for c in row.comparisons] == [r.p_value for r in results]
        assert [c.outcome for c in row.comparisons] == [r.verdict for r in results]
    assert comparison_problem(report) is None
    first = report.ablation[0]
    stored = first.comparisons[0]
    edited = stored.model_copy(update={"effect": stored.effect + 0.05})
    tampered_row = first.model_copy(update={"comparisons": [edited, *first.comparisons[1:]]})
    tampered = report.model_copy(update={"ablation": [tampered_row, *report.ablation[1:]]})
    problem = comparison_problem(tampered)
    assert problem is not None
    assert problem.startswith("ablation row 'fused' / 'bm25', recall@10: the stored effect is")


def test_aa_false_alarms_of_the_ablation_family_stay_under_alpha() -> None:
    # Every column exchangeable with the whole (the null true for every member), the whole
    # shared by every row as in a run: the chance of any false verdict in the family.
    rng = np.random.default_rng(11)
    pairs = [("whole", "a"), ("whole", "b"), ("whole", "c"), ("whole", "whole without a")]
    metrics = ["hit@10", "mrr"]
    trials, alarms = 150, 0
    for trial in range(trials):
        columns = {
            name: {
                "hit@10": {f"q{i}": float(v) for i, v in enumerate(rng.random(40) < 0.5)},
                "mrr": {f"q{i}": float(v) for i, v in enumerate(rng.random(40))},
            }
            for name in ("whole", "a", "b", "c", "whole without a")
        }
        settings = BootstrapSettings(resamples=200, seed=trial)
        decided = ablation_family(pairs, columns, metrics, settings)
        assert {r.family_size for row in decided for r in row} == {8}
        alarms += any(r.verdict in ("better", "worse") for row in decided for r in row)
    share = alarms / trials
    # alpha = 0.05 plus 2.6 binomial SDs of the share over the trials.
    assert share <= 0.05 + 2.6 * (0.05 * 0.95 / trials) ** 0.5, share


def test_default_is_on_only_with_something_to_ablate(
    demo: tuple[Corpus, list[Judgment]],
) -> None:
    plain = _run(demo, _stages())
    assert plain.ablation == []
    assert not [n for n in plain.note_records if n.code is NoteCode.ABLATION]
    assert "ablation" not in plain.timings
    asked = _run(demo, _stages(), ablation=True)
    assert asked.ablation == []
    (note,) = [n for n in asked.note_records if n.code is NoteCode.ABLATION]
    assert "nothing to ablate" in note.text


def test_naming_stages_limits_the_rows(demo: tuple[Corpus, list[Judgment]]) -> None:
    primary = {"resamples": 200, "primary_metric": "ndcg@10"}
    only = _run(demo, _stages(HYBRID3, RERANK), ablation="reranked", bootstrap=primary)
    assert only.run.config["ablation"] == ["reranked"]
    assert {row.stage for row in only.ablation} == {"reranked"}
    # A primary metric decides here as in the stage comparisons; the others are guardrails.
    roles = {(c.metric, c.role) for row in only.ablation for c in row.comparisons}
    assert roles == {(m, "decision" if m == "ndcg@10" else "guardrail") for m in HEADLINE}
    decisions = [c for row in only.ablation for c in row.comparisons if c.role == "decision"]
    assert {c.family_size for c in decisions} == {len(only.ablation)}
    assert comparison_problem(only) is None
    assert "ablation" in only.timings


@pytest.mark.parametrize(
    ("ablation", "message"),
    [
        (["nope"], "ablation: 'nope' is not a stage (stages: bm25, small, whole-doc, fused)"),
        (["small"], "ablation: stage 'small' (bm25) has no components to ablate"),
        ("yes", "ablation: 'yes' is not a stage"),  # never read as true
        ([1], "must be true, false or a list of stage names, got list [1]"),
    ],
)
def test_bad_names_are_one_line_errors(ablation: Any, message: str) -> None:
    with pytest.raises(ValidationError) as caught:
        EvalSettings.model_validate({"stages": _stages(HYBRID3), "ablation": ablation})
    (error,) = caught.value.errors()
    assert message in error["msg"]


def test_a_failed_input_leaves_its_rows_out_with_a_note(
    demo: tuple[Corpus, list[Judgment]],
) -> None:
    def broken(query: str) -> list[Any]:
        raise RuntimeError("down")

    stages = _stages(
        {"name": "ext", "retriever": {"kind": "callable", "target": broken}},
        {"name": "mix", "retriever": {"kind": "hybrid", "stages": ["bm25", "small", "ext"]}},
        {
            "name": "mix2",
            "retriever": {"kind": "rerank", "stage": "small", "target": overlap_scores},
        },
    )
    got = _run(demo, stages)
    assert got.stage("mix").error is not None
    assert {row.stage for row in got.ablation} == {"mix2"}
    assert not [n for n in got.note_records if n.code is NoteCode.ABLATION]


def test_ablation_searches_and_scores_nothing_again(demo: tuple[Corpus, list[Judgment]]) -> None:
    # A retriever and a rerank scorer that count their calls: the replays of the fusions
    # without one input read the lists the stages already returned.
    searched: list[str] = []
    scored: list[str] = []
    first = sorted(demo[0])[0]

    def counted(query: str) -> list[dict[str, Any]]:
        searched.append(query)
        return [{"doc": first, "start": 0, "end": 200, "score": 1.0}]

    def counted_scores(query: str, texts: list[str]) -> list[float]:
        scored.append(query)
        return overlap_scores(query, texts)

    stages = _stages(
        {"name": "ext", "retriever": {"kind": "callable", "target": counted}},
        {"name": "mix", "retriever": {"kind": "hybrid", "stages": ["bm25", "small", "ext"]}},
        {"name": "re", "retriever": {"kind": "rerank", "stage": "mix", "target": counted_scores}},
    )
    got = _run(demo, stages)
    answerable = sum(1 for q in got.queries if q.answerable)
    assert sum(1 for row in got.ablation if row.source == "replay") == 6
    assert len(searched) == answerable  # once per query: the stage itself
    assert len(scored) == answerable


def test_ablation_is_recorded_in_the_run_config(report: EvalReport, tmp_path: Path) -> None:
    assert report.run.config["ablation"] is None
    assert report.schema_version == SCHEMA_VERSION
