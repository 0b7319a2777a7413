"""Cost guardrails of `grk eval compare`: ``--guardrail latency_p95<=1.2x``.

A cost guardrail is a threshold on a figure the two runs *recorded* (their stages' ``cost``),
not a statistical test: latency and memory are measured once per run, with no per-query
pairing to resample, so the check says only whether B's figure is within the bound. A relative
bound (``<=1.2x``) is that factor times A's figure; an absolute one (``usd<=0.5``) is the
number itself. A figure either run did not record (an older file, an unpriced stage) cannot be
checked: that is an input error naming the file, never a silent pass.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from groundkit.cli._errors import InputError
from groundkit.cli.console._cost_view import format_figure
from groundkit.cli.console._fit import print_table
from groundkit.judgments.report import COST_FIGURES, StageCost

__all__ = [
    "CostCheck",
    "CostGuardrail",
    "check_cost_guardrails",
    "cost_checks_json",
    "render_cost_checks",
    "split_guardrails",
]

_SHAPE = re.compile(r"^\s*([a-z0-9_]+)\s*<=\s*([0-9]*\.?[0-9]+(?:e[+-]?[0-9]+)?)\s*(x?)\s*$")
_NOT_A_TEST = (
    "cost guardrails are threshold checks on the figures each run recorded, not statistical tests"
)


@dataclass(frozen=True, slots=True)
class CostGuardrail:
    """``FIGURE<=LIMIT`` (absolute) or ``FIGURE<=FACTORx`` (relative to A).

    Attributes:
        figure: A :data:`~groundkit.judgments.report.COST_FIGURES` name.
        limit: The number, or the factor when ``relative``.
        relative: The bound is ``limit`` times A's figure.
        text: As the user wrote it.
    """

    figure: str
    limit: float
    relative: bool
    text: str


@dataclass(frozen=True, slots=True)
class CostCheck:
    """One cost guardrail checked: A's and B's figures, the bound and whether B is within it."""

    guardrail: CostGuardrail
    value_a: float
    value_b: float
    bound: float

    @property
    def passed(self) -> bool:
        """B's figure is at most the bound."""
        return self.value_b <= self.bound

    def to_json(self) -> dict[str, Any]:
        """Machine-readable form."""
        return {
            "guardrail": self.guardrail.text,
            "figure": self.guardrail.figure,
            "a": self.value_a,
            "b": self.value_b,
            "bound": self.bound,
            "passed": self.passed,
            "kind": "threshold",
        }


def _parse(text: str) -> CostGuardrail | None:
    match = _SHAPE.match(text.lower())
    if match is None:
        if "<=" in text or "<" in text or ">" in text:
            raise InputError(
                f"--guardrail {text!r}: a cost guardrail is FIGURE<=NUMBER or FIGURE<=FACTORx "
                f"(figures: {', '.join(COST_FIGURES)})"
            )
        return None
    figure, number, relative = match.groups()
    if figure not in COST_FIGURES:
        raise InputError(
            f"--guardrail {text!r}: no cost figure {figure!r} (figures: {', '.join(COST_FIGURES)})"
        )
    return CostGuardrail(figure, float(number), bool(relative), text.strip())


def split_guardrails(given: Sequence[str]) -> tuple[list[str], list[CostGuardrail]]:
    """Metric guardrails (compared statistically) and cost guardrails (thresholds).

    Raises:
        InputError: A guardrail with a comparison that is not a valid cost guardrail.
    """
    metrics: list[str] = []
    costs: list[CostGuardrail] = []
    for text in given:
        parsed = _parse(text)
        if parsed is None:
            metrics.append(text)
        else:
            costs.append(parsed)
    return metrics, costs


def _figure(cost: StageCost | None, figure: str, where: str, text: str) -> float:
    value = None if cost is None else cost.figure(figure)
    if value is None:
        unpriced = ", or unpriced" if figure == "usd" else ""
        why = (
            "has no cost record (written before reports recorded cost)"
            if cost is None
            else f"did not record {figure} (not measured{unpriced})"
        )
        raise InputError(f"--guardrail {text!r}: {where} {why}")
    return value


def check_cost_guardrails(
    guardrails: Sequence[CostGuardrail],
    cost_a: StageCost | None,
    cost_b: StageCost | None,
    *,
    where_a: str,
    where_b: str,
) -> list[CostCheck]:
    """Check each guardrail on the two stages' recorded figures.

    Raises:
        InputError: A figure that one side did not record (the message names the side).
    """
    checks: list[CostCheck] = []
    for guardrail in guardrails:
        value_a = _figure(cost_a, guardrail.figure, where_a, guardrail.text)
        value_b = _figure(cost_b, guardrail.figure, where_b, guardrail.text)
        bound = guardrail.limit * value_a if guardrail.relative else guardrail.limit
        checks.append(CostCheck(guardrail, value_a, value_b, bound))
    return checks


def render_cost_checks(console: Console, checks: Sequence[CostCheck]) -> None:
    """Print the cost guardrails and their status, saying they are not tests."""
    if not checks:
        return
    table = Table(title="cost guardrails (thresholds, not tests)", title_justify="left")
    for header in ("guardrail", "A", "B", "bound", "status"):
        table.add_column(header, justify="left" if header in ("guardrail", "status") else "right")
    for check in checks:
        figure = check.guardrail.figure
        table.add_row(
            check.guardrail.text,
            format_figure(figure, check.value_a),
            format_figure(figure, check.value_b),
            format_figure(figure, check.bound),
            Text("ok", style="green") if check.passed else Text("FAIL", style="bold red"),
        )
    print_table(console, table)
    console.print(Text(_NOT_A_TEST + "; a failed one exits 1.", style="dim"))


def cost_checks_json(checks: Sequence[CostCheck]) -> dict[str, Any]:
    """The ``cost_guardrails`` entry of ``--json`` output."""
    return {"note": _NOT_A_TEST, "checks": [c.to_json() for c in checks]}
