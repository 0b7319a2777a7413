"""How a calibration card and a judge's calibration figures are shown in the terminal."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.table import Table

from groundkit.cli.console._fit import print_table
from groundkit.cli.judges._clients import usage_line
from groundkit.evalset import CalibrationCard
from groundkit.evalset.judge import rate_text

__all__ = ["print_card"]


def print_card(console: Console, card: CalibrationCard, path: Path) -> None:
    """The card: judge, sample by stratum, figures (with Wilson intervals) and cost."""
    console.print(
        f"calibration card of {card.judge} (model {card.model}, prompt {card.prompt_version}, "
        f"{card.repeats} repeat{'s' if card.repeats > 1 else ''}) on {card.report}",
        highlight=False,
    )
    table = Table(title=None, show_edge=False)
    for column in ("stratum", "population", "sampled", "decided", "rate", "estimate"):
        table.add_column(column, justify="left" if column in {"stratum", "rate"} else "right")
    rates = {"positive": ("TPR", card.figures.tpr), "negative": ("TNR", card.figures.tnr)}
    for stratum in card.strata:
        label, rate = rates[stratum.name]
        table.add_row(
            stratum.name,
            str(stratum.population),
            str(stratum.sampled),
            str(stratum.decided),
            label,
            rate_text(rate),
        )
    print_table(console, table)
    level = round(100 * card.figures.confidence)
    kappa = "undefined" if card.figures.kappa is None else f"{card.figures.kappa:.3f}"
    console.print(
        f"Cohen's kappa {kappa} (Wilson {level}% intervals; seed {card.seed}, negatives from "
        f"rank {card.negative_from_rank} of {', '.join(card.stages)})",
        highlight=False,
    )
    console.print(usage_line(card.usage), highlight=False)
    console.print(f"card: {path}", highlight=False)
