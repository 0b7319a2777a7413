"""`grk eval compare A.items B.items`: two per-query items files.

The deciding metric and the guardrails go through the verdict engine as one family
(`groundkit.stats.compare_family`): the deciding metric is the one decision (a family of one),
other metrics present in both files are guardrails — their differences, intervals and tests
are printed, they are not adjusted and never decide the exit code. Report mode lives in
`_compare_report`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from groundkit.cli._defaults import DEFAULT_RESAMPLES
from groundkit.cli._errors import EXIT_FAILED, EXIT_OK, InputError
from groundkit.cli.console._fit import print_table
from groundkit.cli.console._report import VERDICT_MARKS, format_delta, format_interval, format_value
from groundkit.stats import (
    FamilySettings,
    ItemComparison,
    PairedScores,
    compare_family,
    family_text,
    limit_text,
    mean_interval,
)

__all__ = [
    "ItemsOutcome",
    "ItemsSettings",
    "StageRows",
    "compare_item_rows",
    "exit_code_for",
    "pick_stage_rows",
    "render_items_outcome",
]

StageRows = dict[str, dict[str, float]]
"""Query id to metric name to value: one stage's per-query rows."""

_SHOWN = 5


def _names(values: Sequence[str]) -> str:
    shown = ", ".join(values[:_SHOWN])
    return shown + (f", … and {len(values) - _SHOWN} more" if len(values) > _SHOWN else "")


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
    #: Default guardrails some rows hold and others lack: not compared, and said so.
    incomplete: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()

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
            "guardrails_not_in_every_row": list(self.incomplete),
            "notes": list(self.notes),
            "family": family_text(self.decision.adjustment, self.decision.family_size),
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


def _check_guardrails(
    wanted: Sequence[str], shared: Sequence[str], *files: tuple[StageRows, Path]
) -> None:
    """A guardrail asked for by name and absent from a row is an error, never dropped."""
    for guardrail in wanted:
        if guardrail in shared:
            continue
        for rows, path in files:
            try:
                _metric_column(rows, guardrail, path)
            except InputError as error:
                raise InputError(f"--guardrail {guardrail!r}: {error}") from None


def _shared_metrics(rows_a: StageRows, rows_b: StageRows) -> list[str]:
    def everywhere(rows: StageRows) -> set[str]:
        sets = [set(r) for r in rows.values()]
        return set.intersection(*sets) if sets else set()

    return sorted(everywhere(rows_a) & everywhere(rows_b))


@dataclass(frozen=True, slots=True)
class ItemsSettings:
    """How two items files are compared, beyond the deciding metric.

    Attributes:
        guardrail_metrics: Other metrics to show (default: every other metric in both files);
            those missing from either file are skipped unless ``guardrails_required``.
        guardrails_required: The guardrails were asked for by name (``--guardrail``): each
            must be in every row of both files.
        resamples: Random sign patterns where a test cannot be enumerated exactly.
        seed: Seed of every random step.
        fail_under: Floor for the low end of B's interval on the deciding metric.
        equivalence_margin: Margin of an equivalence test on the deciding metric.
        alpha: Level of the one decision (a family of one). A report's comparison prints the
            level that reproduces its family-wise verdict (``grk eval compare REPORT``).
    """

    guardrail_metrics: Sequence[str] | None = None
    guardrails_required: bool = False
    resamples: int = DEFAULT_RESAMPLES
    seed: int = 0
    fail_under: float | None = None
    equivalence_margin: float | None = None
    alpha: float = 0.05


def compare_item_rows(
    rows_a: StageRows,
    rows_b: StageRows,
    *,
    path_a: Path,
    path_b: Path,
    stage_a: str,
    stage_b: str,
    metric: str,
    settings: ItemsSettings | None = None,
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
        settings: Guardrails, resamples, seed, floor and margin (default ``ItemsSettings()``).

    Raises:
        InputError: Different query ids, or a metric (or a required guardrail) missing from
            a file or a row.
    """
    given = settings or ItemsSettings()
    guardrail_metrics = given.guardrail_metrics
    _check_pairing(rows_a, rows_b, path_a, path_b)
    column_a = _metric_column(rows_a, metric, path_a)
    column_b = _metric_column(rows_b, metric, path_b)
    shared = _shared_metrics(rows_a, rows_b)
    if given.guardrails_required and guardrail_metrics is not None:
        _check_guardrails(guardrail_metrics, shared, (rows_a, path_a), (rows_b, path_b))
    wanted = shared if guardrail_metrics is None else guardrail_metrics
    others = [m for m in wanted if m in shared and m != metric]
    members = [PairedScores(column_a, column_b, metric=metric)] + [
        PairedScores(
            _metric_column(rows_a, other, path_a),
            _metric_column(rows_b, other, path_b),
            metric=other,
            role="guardrail",
        )
        for other in others
    ]
    family = FamilySettings(
        resamples=given.resamples,
        seed=given.seed,
        alpha=given.alpha,
        adjustment="none",
        equivalence_margin=given.equivalence_margin,
    )
    decision, *guardrails = compare_family(members, family)
    present = {m for rows in (rows_a, rows_b) for row in rows.values() for m in row}
    incomplete = tuple(m for m in wanted if m in present and m not in shared and m != metric)
    b_low = None
    if given.fail_under is not None:
        b_low = mean_interval(column_b, seed=given.seed).low
    return ItemsOutcome(
        path_a=str(path_a),
        path_b=str(path_b),
        stage_a=stage_a,
        stage_b=stage_b,
        decision=decision,
        guardrails=tuple(guardrails),
        fail_under=given.fail_under,
        b_low=b_low,
        incomplete=incomplete,
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
        limit_text(comparison.detection_limit),
        Text(mark, style=style if deciding else "dim"),
    ]


def render_items_outcome(console: Console, outcome: ItemsOutcome) -> None:
    """Print an items-mode comparison: the deciding metric first, guardrails below it."""
    decision = outcome.decision
    level = round(decision.confidence_level * 100)
    console.print(Text("A: ", style="bold") + Text(f"{outcome.path_a} [{outcome.stage_a}]"))
    console.print(Text("B: ", style="bold") + Text(f"{outcome.path_b} [{outcome.stage_b}]"))
    table = Table(title=f"B against A on {decision.item_count} queries", title_justify="left")
    headers = ("metric", "A", "B", "B − A", f"{level}% interval", "p", "paired limit", "verdict")
    for header in headers:
        table.add_column(header, justify="left" if header in ("metric", "verdict") else "right")
    table.add_row(*_comparison_row(decision, deciding=True))
    for guardrail in outcome.guardrails:
        table.add_row(*_comparison_row(guardrail, deciding=False))
    print_table(console, table)
    if outcome.incomplete:
        console.print(
            Text(
                f"not compared: {', '.join(outcome.incomplete)} (missing from some rows; "
                "name it with --guardrail to see which)",
                style="yellow",
            )
        )
    console.print(Text(_verdict_sentence(decision), style="dim"))
    for note in outcome.notes:
        console.print(Text(f"note: {note}", style="yellow"))
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


def _verdict_sentence(decision: ItemComparison) -> str:
    if decision.verdict == "too few queries":
        return (
            f"verdict on {decision.metric}: too few queries — {decision.item_count} queries "
            f"cannot reach p < {decision.alpha:g} whatever the scores; at least "
            f"{decision.minimum_queries} are needed. Guardrails are shown, not deciding."
        )
    limit = (
        "no difference is reliably detectable"
        if decision.detection_limit is None
        else f"differences under {decision.detection_text()} are unlikely to be detected"
    )
    return (
        f"verdict on {decision.metric}: {decision.verdict} — the {decision.interval_method} "
        f"interval must exclude zero and the {decision.test} test must give "
        f"p < {decision.alpha:g}; {limit} with {decision.item_count} queries. Guardrails are "
        f"shown, not deciding. {FAMILY_NOTE}"
    )


FAMILY_NOTE = (
    "Items mode decides this one comparison alone (a family of one); a report decides each "
    "stage × metric comparison within its family (holm over all of them by default), so the "
    "same pair can be inconclusive there and decided here: `grk eval compare REPORT "
    "--candidate STAGE` gives the report's verdict and the --alpha that reproduces it here."
)
"""Said under every items-mode verdict: which family decided it, and how a report's differs."""


def exit_code_for(verdict: str, *, fail_on_inconclusive: bool, below_floor: bool = False) -> int:
    """The exit code of a verdict.

    0 better, equivalent or inconclusive; 1 worse, under the floor, or — with
    ``fail_on_inconclusive`` — inconclusive or too few queries.
    """
    undecided = verdict in ("inconclusive", "too few queries")
    if verdict == "worse" or below_floor or (undecided and fail_on_inconclusive):
        return EXIT_FAILED
    return EXIT_OK
