"""The options of `grk eval compare`, as one frozen object built by one decorator.

:func:`compare_options` adds every flag of the command (in the order ``--help`` lists them)
and hands the command a :class:`CompareOptions` instead of sixteen keyword arguments, so the
command and its modes take one value each (precedent: ``judge_options`` / ``JudgeSettings``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from groundkit.cli._defaults import DEFAULT_RESAMPLES
from groundkit.cli._outputs import force_option
from groundkit.cli._types import FiniteFloatRange
from groundkit.diagnosis import FIXES  # track record
from groundkit.harness.run import MAX_RESAMPLES

__all__ = ["ALLOW_FLAG", "CompareOptions", "compare_options"]

ALLOW_FLAG = "--allow-different-gold"
"""The flag that lets `grk eval compare` go on when the two files were scored on other gold."""


@dataclass(frozen=True)
class CompareOptions:
    """The flags of `grk eval compare`, as given (``None``: not given)."""

    metric: str
    baseline: str | None
    candidate: str | None
    stage_a: str | None
    stage_b: str | None
    resamples: int | None
    seed: int | None
    equivalence_margin: float | None
    all_pairs: bool
    fail_under: float | None
    fail_on_inconclusive: bool
    guardrails: tuple[str, ...]
    allow_different_gold: bool
    as_json: bool
    track_record: Path | None = None
    applied: str | None = None
    force: bool = False
    alpha: float | None = None


_OPTIONS: tuple[Callable[[Callable[..., Any]], Callable[..., Any]], ...] = (
    click.option("--metric", default="recall@10", show_default=True, help="The deciding metric."),
    click.option(
        "--baseline", default=None, help="Report mode: baseline stage (default: the report's)."
    ),
    click.option("--candidate", default=None, help="Report mode: candidate stage."),
    click.option("--stage-a", default=None, help="Items mode: stage of A when A has several."),
    click.option("--stage-b", default=None, help="Items mode: stage of B when B has several."),
    click.option(
        "--resamples",
        type=click.IntRange(min=1, max=MAX_RESAMPLES),
        default=None,
        help="Random sign patterns where a test cannot be enumerated exactly "
        f"[items: {DEFAULT_RESAMPLES}; report: the report's setting].",
    ),
    click.option(
        "--seed",
        type=click.IntRange(min=0),
        default=None,
        help="Seed of every random step [items: 0; report: the report's setting].",
    ),
    click.option(
        "--equivalence-margin",
        type=FiniteFloatRange(min=0.0, min_open=True, max=1.0),
        default=None,
        metavar="M",
        help="Also test equivalence within ±M (TOST), so an undecided comparison can be told "
        "from an equivalent one [report: the report's setting].",
    ),
    click.option(
        "--alpha",
        type=FiniteFloatRange(min=0.0, min_open=True, max=0.5),
        default=None,
        metavar="A",
        help="Items mode: the level of its one decision [default: 0.05]. `grk eval compare "
        "REPORT` prints the level that reproduces a report's family-wise verdict.",
    ),
    click.option(
        "--all-pairs",
        is_flag=True,
        help="Report mode: compare every pair of stages under one family-wise randomisation "
        "test (max statistic, like Tukey's HSD).",
    ),
    click.option(
        "--fail-under",
        type=FiniteFloatRange(),
        default=None,
        metavar="X",
        help="Items mode: exit 1 when the low end of B's 95% range on the metric is under X.",
    ),
    click.option(
        "--fail-on-inconclusive", is_flag=True, help="Exit 1 on an inconclusive verdict as well."
    ),
    click.option(
        "--guardrail",
        "guardrails",
        multiple=True,
        metavar="METRIC|FIGURE<=LIMIT",
        help="Items mode: metric shown beside the deciding one "
        "[default: the default headline metrics present in both files]. Either mode: a cost "
        "threshold on the recorded figures, e.g. latency_p95<=1.2x (relative to A) or usd<=0.5; "
        "a failed one exits 1 (a threshold check, not a statistical test).",
    ),
    click.option(
        ALLOW_FLAG,
        "allow_different_gold",
        is_flag=True,
        help="Items mode: compare files scored on different judgments or a different corpus "
        "(refused by default: the difference would not be the retrieval's).",
    ),
    click.option("--json", "as_json", is_flag=True, help="Print machine-readable JSON."),
    # --- track record (groundkit.diagnosis; owner: diagnosis helper) ---
    click.option(
        "--track-record",
        "track_record",
        type=click.Path(dir_okay=False, path_type=Path),
        default=None,
        help="Items mode: append what B measured for a fix predicted for A to this record file.",
    ),
    click.option(
        "--applied",
        type=click.Choice(FIXES),
        default=None,
        help="The fix B applied (default: inferred when the two stage configs differ only there).",
    ),
    force_option,
    # --- end track record ---
)


def compare_options(
    function: Callable[[tuple[Path, ...], CompareOptions], None],
) -> Callable[..., None]:
    """Add the options of `grk eval compare`; the command receives them as one object."""

    @functools.wraps(function)
    def command(files: tuple[Path, ...], **values: Any) -> None:
        function(files, CompareOptions(**values))

    decorated: Callable[..., Any] = command
    for option in reversed(_OPTIONS):
        decorated = option(decorated)
    return decorated
