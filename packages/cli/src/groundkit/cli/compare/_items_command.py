"""The items-mode command that reproduces a report's verdict (`grk eval compare REPORT`).

A report decides each stage × metric comparison within its family (holm over all of them by
default); items mode decides one comparison alone. The two agree when items mode tests at the
level the family gives this comparison (:func:`groundkit.stats.reproducing_alpha`), with the
report's resamples, seed and equivalence margin. The command is checked before it is printed:
the comparison is decided here exactly as items mode would decide it, at the printed level,
and the command is offered only when the verdicts agree.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from groundkit.cli.run._run import default_items_path
from groundkit.stats import (
    FamilySettings,
    ItemComparison,
    PairedScores,
    compare_family,
    reproducing_alpha,
)

__all__ = ["ItemsCommand", "items_command"]


@dataclass(frozen=True, slots=True)
class ItemsCommand:
    """How items mode gives a report's verdict.

    Attributes:
        command: The command line, or ``None`` when no single level reproduces the verdict.
        alpha: The level items mode decides at in ``command``.
        why_not: Why there is no command (``None`` when there is one).
    """

    command: str | None
    alpha: float
    why_not: str | None = None


def _items_path(report: Path) -> str:
    """The items file beside a report: `grk eval run`'s, or ``items.jsonl`` (`grk eval demo`).

    The first that exists, else ``grk eval run``'s name (:func:`default_items_path`).
    """
    candidates = [default_items_path(report), report.with_name("items.jsonl")]
    return str(next((c for c in candidates if c.is_file()), candidates[0]))


def items_command(
    path: Path,
    scores: tuple[Mapping[str, float], Mapping[str, float]],
    names: tuple[str, str],
    result: ItemComparison,
    family: Sequence[ItemComparison],
) -> ItemsCommand:
    """The items-mode command giving ``result``'s verdict, checked by deciding it that way.

    Args:
        path: The report file (its items file is beside it).
        scores: The baseline's and the candidate's per-query scores on the metric.
        names: The baseline and candidate stage names.
        result: The report's comparison.
        family: Every comparison decided with it (``[result]`` for a family of one).
    """
    decisions = [c for c in family if c.role == "decision"]
    try:
        index = next(
            i
            for i, c in enumerate(decisions)
            if (c.label, c.metric) == (result.label, result.metric)
        )
    except StopIteration:
        return ItemsCommand(None, result.alpha, "the metric is a guardrail, not a decision")
    level = reproducing_alpha(
        [c.p_value for c in decisions], index, result.alpha, result.adjustment
    )
    raw = decisions[index].p_value
    shown = f"{level:.6g}"
    if (raw < float(shown)) != (raw < level):  # the short form would cross the p-value
        shown = repr(level)
    settings = FamilySettings(
        resamples=result.resamples,
        seed=result.seed,
        alpha=float(shown),
        adjustment="none",
        equivalence_margin=result.equivalence_margin,
    )
    (alone,) = compare_family([PairedScores(scores[0], scores[1], metric=result.metric)], settings)
    if alone.verdict != result.verdict:
        return ItemsCommand(
            None,
            float(shown),
            f"deciding alone at alpha {shown} gives {alone.verdict!r}, not {result.verdict!r} "
            "(the family's equivalence test or minimum number of queries differs)",
        )
    items = _items_path(path)
    words = ["grk", "eval", "compare", items, items, "--stage-a", names[0]]
    words += ["--stage-b", names[1], "--metric", str(result.metric), "--alpha", shown]
    words += ["--resamples", str(result.resamples), "--seed", str(result.seed)]
    if result.equivalence_margin is not None:
        words += ["--equivalence-margin", repr(result.equivalence_margin)]
    return ItemsCommand(shlex.join(words), float(shown))
