"""`grk eval calibrate`: a judge's calibration card on the report's own gold.

Exit codes: 0 done, 2 bad input (a report without hits, an unknown stage, nothing to sample,
an unreachable endpoint, a corpus other than the report's): nothing is written then, except
the calls that finished, which stay in the judge's cache so a rerun does not repeat them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from groundkit.cli._errors import InputError
from groundkit.cli._lazy import lazy
from groundkit.cli._option_groups import option_group
from groundkit.cli._outputs import force_option, guard, output_set
from groundkit.cli.console._report import make_console
from groundkit.cli.judges._options import judge_options
from groundkit.cli.run._describe import describe_option
from groundkit.judgments._errors import JudgmentError

if TYPE_CHECKING:
    from groundkit.cli._checked import load_checked_report
    from groundkit.cli.commands._eval_adjudicate import report_corpus
    from groundkit.cli.console._calibration_view import print_card
    from groundkit.cli.judges._clients import JudgeSettings, build_judge, choose_client
    from groundkit.evalset.judge import (
        build_card,
        card_path,
        card_text,
        draw_calibration_sample,
        judge_sample,
    )
else:  # imported when the command runs, not for --help
    report_corpus = lazy("groundkit.cli.commands._eval_adjudicate", "report_corpus")
    load_checked_report = lazy("groundkit.cli._checked", "load_checked_report")
    print_card = lazy("groundkit.cli.console._calibration_view", "print_card")
    JudgeSettings = lazy("groundkit.cli.judges._clients", "JudgeSettings")
    build_judge = lazy("groundkit.cli.judges._clients", "build_judge")
    choose_client = lazy("groundkit.cli.judges._clients", "choose_client")
    build_card = lazy("groundkit.evalset.judge", "build_card")
    card_path = lazy("groundkit.evalset.judge", "card_path")
    card_text = lazy("groundkit.evalset.judge", "card_text")
    draw_calibration_sample = lazy("groundkit.evalset.judge", "draw_calibration_sample")
    judge_sample = lazy("groundkit.evalset.judge", "judge_sample")

__all__ = ["calibrate_command"]

_FILE = click.Path(dir_okay=False, path_type=Path)


@dataclass(frozen=True)
class CalibrationDraw:
    """How the sample to judge is drawn: ``--n-pos``, ``--n-neg``, ``--seed``, ``--stage``..."""

    n_pos: int
    n_neg: int
    seed: int
    stages: tuple[str, ...]
    negative_from_rank: int | None


@click.command("calibrate")
@click.argument("report_path", metavar="REPORT", type=_FILE)
@judge_options
@option_group(
    "draw",
    CalibrationDraw,
    click.option("--n-pos", default=50, show_default=True, type=click.IntRange(min=1),
                 help="Hits touching gold to judge (positives)."),
    click.option("--n-neg", default=50, show_default=True, type=click.IntRange(min=1),
                 help="Low-ranked hits touching no gold to judge (presumed negatives)."),
    click.option("--seed", default=0, show_default=True, type=int, help="Seed of the draw."),
    click.option("--stage", "stages", multiple=True,
                 help="Stage to draw from (repeat) [default: every stage that ran]."),
    click.option("--negative-from-rank", default=None, type=click.IntRange(min=1),
                 help="Lowest rank of a presumed negative [default: depth / 2 + 1]."),
)  # fmt: skip
@click.option("--corpus", "corpus_path", type=click.Path(path_type=Path), default=None,
              help="The corpus [default: the one the report recorded].")  # fmt: skip
@click.option("--cache", "cache_path", type=_FILE, default=None,
              help="The judge's cache [default: the judge's own, shared by every "
              "command: see 'grk doctor'].")  # fmt: skip
@force_option
@describe_option("report")
def calibrate_command(
    report_path: Path,
    draw: CalibrationDraw,
    corpus_path: Path | None,
    cache_path: Path | None,
    force: bool,
    **options: Any,
) -> None:
    """Judge a stratified sample of the report's hits; store the judge's calibration card.

    \b
    grk eval calibrate report.json --judge recorded:answers.jsonl --n-pos 50 --n-neg 50

    Positives are hits that touch gold; presumed negatives are hits of answerable queries
    ranked beyond half the depth that touch no gold (and are no near-duplicate of a hit that
    does). The card (REPORT stem .calibration.<judge id>.json, beside the report) holds
    Cohen's kappa, TPR and TNR with Wilson intervals, the sample with its strata sizes and
    the calls, tokens and seconds; `grk eval adjudicate` with the same judge then reports
    calibrated scores.
    """  # noqa: D301 (click needs a real \b to keep the example lines as they are)
    from groundkit.evalset.judge import RELEVANT_GRADE  # a value: imported to run

    settings = JudgeSettings.pop(options)
    report = load_checked_report(report_path)
    if not any(r.hits for s in report.stages for r in s.queries):
        raise InputError(f"{report_path}: the report has no hits to judge")
    try:
        for name in draw.stages:
            report.stage(name)  # an unknown stage is named before the corpus is read
    except JudgmentError as error:
        raise InputError(f"{report_path}: {error}") from None
    # The judge's name fixes the card's path: choose the client (no call yet) before the guard.
    choice = choose_client(settings)
    out = card_path(report_path, choice[1])
    cache = cache_path or settings.default_cache()
    guard(
        [("card", out, "calibration card"), ("--cache", cache, "judge cache")],
        [("REPORT", report_path), ("--corpus", corpus_path)],
        force=force,
        appends=["--cache"],
    )
    corpus = report_corpus(report, corpus_path, report_path)
    try:
        judge, name, model_name = build_judge(settings, cache, choice)
        sample = draw_calibration_sample(
            report,
            corpus,
            n_pos=draw.n_pos,
            n_neg=draw.n_neg,
            seed=draw.seed,
            stages=list(draw.stages) or None,
            negative_from_rank=draw.negative_from_rank,
        )
    except JudgmentError as error:
        raise InputError(str(error)) from None
    run = judge_sample(judge, sample)
    card = build_card(
        sample,
        run,
        report,
        report_name=report_path.name,
        judge=name,
        model=model_name,
        prompt_version=judge.prompt_version,
        repeats=settings.repeats,
        relevant_grade=RELEVANT_GRADE,
    )
    with output_set([out]) as outputs:
        outputs.temporary(out).write_text(card_text(card), encoding="utf-8")
    print_card(make_console(), card, out)
