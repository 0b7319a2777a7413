"""`grk eval compare`: two stages of one report, or two per-query items files.

Two stages of one report get the paired bootstrap of their per-query scores, with a verdict
gated, as in the report itself, on the interval and a paired sign-flip test. Two items files
go through the verdict engine (`groundkit.stats.compare_items`), which gates a verdict on both
the bootstrap interval and an exact paired test, and reports the detection limit. Other
headline metrics present in both files are shown beside the deciding one as guardrails: their
differences and intervals are printed, they never decide the exit code.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from groundkit.cli._console import VERDICT_MARKS, format_delta, format_interval, format_value
from groundkit.cli._errors import EXIT_FAILED, EXIT_OK, InputError
from groundkit.judgments import EvalReport, JudgmentError, load_report, read_regular_bytes
from groundkit.stats import (
    BootstrapResult,
    ItemComparison,
    bootstrap_interval,
    compare_items,
    paired_bootstrap,
    sign_flip_test,
)

__all__ = [
    "ItemsOutcome",
    "ReportOutcome",
    "StageRows",
    "compare_item_rows",
    "compare_report_stages",
    "exit_code_for",
    "load_checked_report",
    "pick_stage_rows",
    "render_items_outcome",
    "render_report_outcome",
]

StageRows = dict[str, dict[str, float]]
"""Query id to metric name to value: one stage's per-query rows."""

_SHOWN = 5


def _names(values: Sequence[str]) -> str:
    shown = ", ".join(values[:_SHOWN])
    return shown + (f", … and {len(values) - _SHOWN} more" if len(values) > _SHOWN else "")


def load_checked_report(path: Path) -> EvalReport:
    """Read a report, naming a repeated stage name before the schema check does.

    Raises:
        InputError: A stage name is repeated (named), or the file is not a valid report.
    """
    try:
        data = json.loads(read_regular_bytes(path).decode("utf-8"))  # never waits on a pipe
    except (JudgmentError, UnicodeDecodeError, json.JSONDecodeError):
        data = None  # load_report gives the precise one-line reason below
    if isinstance(data, dict) and isinstance(data.get("stages"), list):
        names = [s.get("name") for s in data["stages"] if isinstance(s, dict)]
        repeated = sorted(
            n for n, c in Counter(n for n in names if isinstance(n, str)).items() if c > 1
        )
        if repeated:
            raise InputError(
                f"{path}: stage name {repeated[0]!r} is used by "
                f"{names.count(repeated[0])} stages; stage names must be unique "
                "(rename one and re-run)"
            )
    return load_report(path)


@dataclass(frozen=True, slots=True)
class ReportOutcome:
    """Result of comparing two stages of one report."""

    report_path: str
    result: BootstrapResult
    baseline_mean: float
    candidate_mean: float
    verdict: str
    stored_verdict: str | None
    sign_flip_p: float

    def to_json(self) -> dict[str, Any]:
        """Machine-readable form (``--json``)."""
        return {
            "mode": "report",
            "report": self.report_path,
            "metric": self.result.metric,
            "baseline": self.result.baseline,
            "candidate": self.result.candidate,
            "query_count": self.result.query_count,
            "baseline_mean": self.baseline_mean,
            "candidate_mean": self.candidate_mean,
            "difference": self.result.effect,
            "low": self.result.confidence_interval_low,
            "high": self.result.confidence_interval_high,
            "confidence_level": self.result.confidence_level,
            "p_value": self.result.p_value_two_sided,
            "sign_flip_p_value": self.sign_flip_p,
            "verdict": self.verdict,
            "report_verdict": self.stored_verdict,
            "resamples": self.result.resamples,
            "seed": self.result.seed,
        }


def _stage_scores(report: EvalReport, name: str, metric: str, path: Path) -> dict[str, float]:
    if not any(s.name == name for s in report.stages):
        known = ", ".join(s.name for s in report.stages)
        raise InputError(f"{path}: no stage named {name!r} (stages: {known})")
    stage = report.stage(name)
    if stage.error is not None:
        raise InputError(f"{path}: stage {name!r} failed in this run, nothing to compare")
    scores: dict[str, float] = {}
    for result in stage.queries:
        if metric not in result.scores:
            available = sorted(result.scores)
            raise InputError(
                f"{path}: stage {name!r} query {result.query_id!r} has no {metric!r} "
                f"(metrics: {_names(available)})"
            )
        scores[result.query_id] = result.scores[metric]
    if not scores:
        raise InputError(f"{path}: stage {name!r} has no scored queries")
    return scores


def compare_report_stages(
    path: Path,
    *,
    baseline: str | None,
    candidate: str | None,
    metric: str,
    resamples: int | None,
    seed: int | None,
) -> ReportOutcome:
    """Paired bootstrap of ``candidate`` against ``baseline`` on one report's per-query scores.

    The verdict needs the interval to exclude zero and both the bootstrap p-value and the paired
    sign-flip p-value to be below 1 − the report's confidence level.

    Args:
        path: The report file.
        baseline: Baseline stage (default: the report's baseline).
        candidate: Candidate stage (default: the only other stage, when there is one).
        metric: Metric compared.
        resamples: Bootstrap resamples (default: the report's setting).
        seed: Seed (default: the report's setting).

    Raises:
        InputError: Unknown or repeated stage, missing metric, or an unreadable report.
    """
    report = load_checked_report(path)
    base_name = baseline or report.baseline.name
    if candidate is None:
        others = [s.name for s in report.stages if s.name != base_name]
        if len(others) != 1:
            raise InputError(
                f"{path}: pass --candidate (stages: {', '.join(s.name for s in report.stages)})"
            )
        candidate = others[0]
    if candidate == base_name:
        raise InputError(f"{path}: baseline and candidate are the same stage {candidate!r}")
    base_scores = _stage_scores(report, base_name, metric, path)
    cand_scores = _stage_scores(report, candidate, metric, path)
    settings = report.run.bootstrap
    count = settings.resamples if resamples is None else resamples
    seed_value = settings.seed if seed is None else seed
    result = paired_bootstrap(
        base_scores,
        cand_scores,
        baseline_name=base_name,
        candidate_name=candidate,
        metric=metric,
        resamples=count,
        seed=seed_value,
        confidence_level=settings.confidence_level,
    )
    # Same rule as the report's own verdicts: the interval must exclude zero and the larger of
    # the bootstrap and the paired sign-flip p-values must be below alpha (the bootstrap tail
    # share alone calls four same-sign queries significant).
    flips = sign_flip_test(base_scores, cand_scores, resamples=count, seed=seed_value)
    gate = max(result.p_value_two_sided, flips.p_value_two_sided)
    alpha = 1.0 - settings.confidence_level
    verdict = "inconclusive"
    if gate < alpha and result.confidence_interval_low > 0.0:
        verdict = "better"
    elif gate < alpha and result.confidence_interval_high < 0.0:
        verdict = "worse"
    stored = None
    if base_name == report.baseline.name:
        stored = next(
            (c.verdict for c in report.stage(candidate).comparisons if c.metric == metric), None
        )
    return ReportOutcome(
        report_path=str(path),
        result=result,
        baseline_mean=sum(base_scores.values()) / len(base_scores),
        candidate_mean=sum(cand_scores.values()) / len(cand_scores),
        verdict=verdict,
        stored_verdict=stored,
        sign_flip_p=flips.p_value_two_sided,
    )


def render_report_outcome(console: Console, outcome: ReportOutcome) -> None:
    """Print a report-mode comparison."""
    result = outcome.result
    level = round(result.confidence_level * 100)
    console.print(
        Text(f"{result.metric}: ", style="bold")
        + Text(
            f"{result.candidate} vs {result.baseline} on {result.query_count} queries "
            f"(paired bootstrap, {result.resamples:,} resamples, seed {result.seed})"
        )
    )
    console.print(f"  {result.baseline:<20} {format_value(outcome.baseline_mean)}")
    console.print(f"  {result.candidate:<20} {format_value(outcome.candidate_mean)}")
    mark, style = VERDICT_MARKS[outcome.verdict]
    line = Text(f"  {'difference':<20} {format_delta(result.effect)} ")
    interval = format_interval(
        result.confidence_interval_low, result.confidence_interval_high, signed=True
    )
    line.append(
        f"{interval} ({level}% interval)  p={result.p_value_two_sided:.3g}  "
        f"sign-flip p={outcome.sign_flip_p:.3g}  "
    )
    line.append(mark, style=style)
    console.print(line)
    if outcome.stored_verdict is not None and outcome.stored_verdict != outcome.verdict:
        console.print(
            Text(
                f"  the report's own verdict is {outcome.stored_verdict!r}: it adjusts p-values "
                "(Holm) across all of the report's candidate stages",
                style="dim",
            )
        )


@dataclass(frozen=True, slots=True)
class ItemsOutcome:
    """Result of comparing two items files."""

    path_a: str
    path_b: str
    stage_a: str
    stage_b: str
    decision: ItemComparison
    guardrails: tuple[ItemComparison, ...]
    fail_under: float | None
    b_low: float | None

    @property
    def below_floor(self) -> bool:
        """True when B's range starts under ``--fail-under``."""
        return (
            self.fail_under is not None and self.b_low is not None and self.b_low < self.fail_under
        )

    def to_json(self) -> dict[str, Any]:
        """Machine-readable form (``--json``)."""
        return {
            "mode": "items",
            "a": {"path": self.path_a, "stage": self.stage_a},
            "b": {"path": self.path_b, "stage": self.stage_b},
            "metric": self.decision.metric,
            "verdict": self.decision.verdict,
            "comparison": self.decision.model_dump(mode="json"),
            "guardrails": [g.model_dump(mode="json") for g in self.guardrails],
            "fail_under": self.fail_under,
            "b_low": self.b_low,
            "below_fail_under": self.below_floor,
        }


def pick_stage_rows(
    stages: Mapping[str, StageRows], wanted: str | None, *, path: Path, flag: str
) -> tuple[str, StageRows]:
    """The rows of the stage named ``wanted``, or of the only stage when none is named.

    Raises:
        InputError: Several stages and none named, or an unknown stage (known ones listed).
    """
    names = list(stages)
    if not names:
        raise InputError(f"{path}: the items file has no rows")
    if wanted is None:
        if len(names) > 1:
            raise InputError(f"{path}: several stages ({', '.join(names)}); choose one with {flag}")
        return names[0], dict(stages[names[0]])
    if wanted not in stages:
        raise InputError(f"{path}: no stage named {wanted!r} (stages: {', '.join(names)})")
    return wanted, dict(stages[wanted])


def _check_pairing(rows_a: StageRows, rows_b: StageRows, path_a: Path, path_b: Path) -> None:
    ids_a, ids_b = set(rows_a), set(rows_b)
    if ids_a == ids_b:
        return
    parts = []
    if ids_a - ids_b:
        parts.append(f"{len(ids_a - ids_b)} only in {path_a} ({_names(sorted(ids_a - ids_b))})")
    if ids_b - ids_a:
        parts.append(f"{len(ids_b - ids_a)} only in {path_b} ({_names(sorted(ids_b - ids_a))})")
    raise InputError(f"cannot compare: the query ids differ: {'; '.join(parts)}")


def _metric_column(rows: StageRows, metric: str, path: Path) -> dict[str, float]:
    column: dict[str, float] = {}
    for query_id, row in rows.items():
        if metric not in row:
            available = sorted({m for r in rows.values() for m in r})
            raise InputError(
                f"{path}: query {query_id!r} has no {metric!r} (metrics: {_names(available)})"
            )
        column[query_id] = row[metric]
    return column


def _shared_metrics(rows_a: StageRows, rows_b: StageRows) -> list[str]:
    def everywhere(rows: StageRows) -> set[str]:
        sets = [set(r) for r in rows.values()]
        return set.intersection(*sets) if sets else set()

    return sorted(everywhere(rows_a) & everywhere(rows_b))


def compare_item_rows(
    rows_a: StageRows,
    rows_b: StageRows,
    *,
    path_a: Path,
    path_b: Path,
    stage_a: str,
    stage_b: str,
    metric: str,
    guardrail_metrics: Sequence[str] | None = None,
    resamples: int = 2_000,
    seed: int = 0,
    fail_under: float | None = None,
) -> ItemsOutcome:
    """The verdict of B against A on ``metric``, with guardrails and the ``--fail-under`` check.

    Args:
        rows_a: Per-query rows of A.
        rows_b: Per-query rows of B.
        path_a: File of A (messages).
        path_b: File of B (messages).
        stage_a: Stage name of A.
        stage_b: Stage name of B.
        metric: The deciding metric.
        guardrail_metrics: Other metrics to show (default: every other metric in both files).
        resamples: Bootstrap resamples.
        seed: Seed of every resampling.
        fail_under: Floor for the low end of B's range on ``metric``.

    Raises:
        InputError: Different query ids, or a metric missing from a file.
    """
    _check_pairing(rows_a, rows_b, path_a, path_b)
    column_a = _metric_column(rows_a, metric, path_a)
    column_b = _metric_column(rows_b, metric, path_b)
    decision = compare_items(column_a, column_b, metric=metric, resamples=resamples, seed=seed)
    shared = _shared_metrics(rows_a, rows_b)
    others = [
        m for m in (shared if guardrail_metrics is None else guardrail_metrics) if m in shared
    ]
    guardrails = tuple(
        compare_items(
            _metric_column(rows_a, other, path_a),
            _metric_column(rows_b, other, path_b),
            metric=other,
            resamples=resamples,
            seed=seed,
        )
        for other in others
        if other != metric
    )
    b_low = None
    if fail_under is not None:
        b_low = bootstrap_interval(column_b, resamples=resamples, seed=seed).low
    return ItemsOutcome(
        path_a=str(path_a),
        path_b=str(path_b),
        stage_a=stage_a,
        stage_b=stage_b,
        decision=decision,
        guardrails=guardrails,
        fail_under=fail_under,
        b_low=b_low,
    )


def _comparison_row(comparison: ItemComparison, *, deciding: bool) -> list[Text | str]:
    mark, style = VERDICT_MARKS[comparison.verdict]
    name = Text(comparison.metric or "score", style="bold" if deciding else "")
    if not deciding:
        name.append(" (guardrail)", style="dim")
    return [
        name,
        format_value(comparison.mean_a),
        format_value(comparison.mean_b),
        format_delta(comparison.difference),
        format_interval(
            comparison.confidence_interval_low, comparison.confidence_interval_high, signed=True
        ),
        f"{comparison.p_value:.3g}",
        f"±{comparison.detection_limit:.3f}",
        Text(mark, style=style if deciding else "dim"),
    ]


def render_items_outcome(console: Console, outcome: ItemsOutcome) -> None:
    """Print an items-mode comparison: the deciding metric first, guardrails below it."""
    decision = outcome.decision
    level = round(decision.confidence_level * 100)
    console.print(Text("A: ", style="bold") + Text(f"{outcome.path_a} [{outcome.stage_a}]"))
    console.print(Text("B: ", style="bold") + Text(f"{outcome.path_b} [{outcome.stage_b}]"))
    table = Table(title=f"B against A on {decision.item_count} queries", title_justify="left")
    for header in ("metric", "A", "B", "B − A", f"{level}% interval", "p", "detects", "verdict"):
        table.add_column(header, justify="left" if header in ("metric", "verdict") else "right")
    table.add_row(*_comparison_row(decision, deciding=True))
    for guardrail in outcome.guardrails:
        table.add_row(*_comparison_row(guardrail, deciding=False))
    console.print(table)
    test = "exact McNemar" if decision.kind == "binary" else "paired sign-flip"
    console.print(
        Text(
            f"verdict on {decision.metric}: {decision.verdict} — the interval must exclude zero "
            f"and the {test} test must give p < {decision.alpha:g}; differences smaller than "
            f"{decision.detection_limit:.3f} are unlikely to be detected with "
            f"{decision.item_count} queries. Guardrails are shown, not deciding.",
            style="dim",
        )
    )
    if outcome.fail_under is not None and outcome.b_low is not None:
        status = "FAIL" if outcome.below_floor else "ok"
        console.print(
            Text(f"--fail-under {outcome.fail_under:g}: ", style="bold")
            + Text(
                f"{status} (low end of B's {level}% range on {decision.metric} is "
                f"{format_value(outcome.b_low)})",
                style="bold red" if outcome.below_floor else "green",
            )
        )


def exit_code_for(verdict: str, *, fail_on_inconclusive: bool, below_floor: bool = False) -> int:
    """0 better or inconclusive; 1 worse, inconclusive when asked, or under the floor."""
    if verdict == "worse" or below_floor or (verdict == "inconclusive" and fail_on_inconclusive):
        return EXIT_FAILED
    return EXIT_OK
