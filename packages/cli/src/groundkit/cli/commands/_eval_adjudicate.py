"""`grk eval adjudicate`: judge a report's unjudged top-k hits; adjudicated scores beside strict.

Exit codes: 0 done, 2 bad input (a report without hits, an unknown stage, an unreachable
endpoint, a corpus other than the report's): nothing is written then, except the calls that
finished, which stay in the judge's cache so a rerun does not repeat them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from groundkit.cli._errors import InputError
from groundkit.cli._lazy import lazy
from groundkit.cli._outputs import force_option, guard, output_set
from groundkit.cli.console._report import make_console, render_notes
from groundkit.cli.judges._options import judge_options
from groundkit.cli.run._describe import describe_option
from groundkit.judgments._errors import JudgmentError

if TYPE_CHECKING:
    from groundkit.cli._checked import load_checked_report
    from groundkit.cli.judges._clients import JudgeSettings, build_judge, usage_line
    from groundkit.evalset import CalibrationCard
    from groundkit.evalset.judge import (
        JudgeUsage,
        PairVerdict,
        card_path,
        figures_text,
        find_card,
    )
    from groundkit.harness.analysis._adjudicate import (
        Candidate,
        adjudicated_report,
        adjudication_tokens,
        unjudged_hits,
    )
    from groundkit.judgments import Corpus, EvalReport
    from groundkit.judgments.report import (
        AdjudicationInfo,
        CalibrationStatus,
        anchor_inputs,
        checked_report_json,
        recorded_input,
    )
else:  # imported when the command runs, not for --help
    load_checked_report = lazy("groundkit.cli._checked", "load_checked_report")
    JudgeSettings = lazy("groundkit.cli.judges._clients", "JudgeSettings")
    build_judge = lazy("groundkit.cli.judges._clients", "build_judge")
    usage_line = lazy("groundkit.cli.judges._clients", "usage_line")
    CalibrationCard = lazy("groundkit.evalset", "CalibrationCard")
    JudgeUsage = lazy("groundkit.evalset.judge", "JudgeUsage")
    PairVerdict = lazy("groundkit.evalset.judge", "PairVerdict")
    card_path = lazy("groundkit.evalset.judge", "card_path")
    figures_text = lazy("groundkit.evalset.judge", "figures_text")
    find_card = lazy("groundkit.evalset.judge", "find_card")
    Candidate = lazy("groundkit.harness.analysis._adjudicate", "Candidate")
    adjudicated_report = lazy("groundkit.harness.analysis._adjudicate", "adjudicated_report")
    adjudication_tokens = lazy("groundkit.harness.analysis._adjudicate", "adjudication_tokens")
    unjudged_hits = lazy("groundkit.harness.analysis._adjudicate", "unjudged_hits")
    Corpus = lazy("groundkit.judgments", "Corpus")
    EvalReport = lazy("groundkit.judgments", "EvalReport")
    AdjudicationInfo = lazy("groundkit.judgments.report", "AdjudicationInfo")
    CalibrationStatus = lazy("groundkit.judgments.report", "CalibrationStatus")
    anchor_inputs = lazy("groundkit.judgments.report", "anchor_inputs")
    checked_report_json = lazy("groundkit.judgments.report", "checked_report_json")
    recorded_input = lazy("groundkit.judgments.report", "recorded_input")

__all__ = ["adjudicate_command", "calibration_line", "report_corpus"]

_USAGE = {"calls", "cached", "failed", "tokens", "seconds"}


def calibration_line(info: AdjudicationInfo) -> str:
    """UNCALIBRATED, or the card's kappa, TPR and TNR (from the typed status, not the text)."""
    figures = info.calibration
    if info.calibration_status is CalibrationStatus.UNCALIBRATED or figures is None:
        return (
            f"UNCALIBRATED: no calibration card of {info.judge} beside the report; run "
            "`grk eval calibrate` with the same judge"
        )
    return f"CALIBRATED ({info.calibration_card}): {figures_text(figures)}"


_FILE = click.Path(dir_okay=False, path_type=Path)


def report_corpus(report: EvalReport, path: Path | None, report_path: Path | None = None) -> Corpus:
    """The report's corpus (``path`` or the recorded one), checked by its fingerprint.

    The recorded corpus is looked for from the report's folder first, then as given
    (:func:`~groundkit.judgments.report.recorded_input`), so a report read from another folder
    or moved with its corpus finds it.

    Raises:
        InputError: No corpus recorded or found, unreadable, or another corpus than the
            report's.
    """
    source = path if path is not None else recorded_input(report, "corpus", report_path)
    if source is None:
        if report.run.corpus_source is None and report.run.corpus_from_report is None:
            raise InputError("the report records no corpus: give --corpus")
        raise InputError(
            f"the report's corpus {report.run.corpus_source or report.run.corpus_from_report} "
            "is not on this machine (looked from the report's folder and from here): give "
            "--corpus"
        )
    try:
        corpus = Corpus.load(source)
    except JudgmentError as error:
        raise InputError(str(error)) from None
    if corpus.fingerprint() != report.run.corpus_fingerprint:
        raise InputError(
            f"--corpus {source}: not the corpus the report was run on (its fingerprint differs)"
        )
    return corpus


def _calibration(card: CalibrationCard | None, report_path: Path, judge: str) -> dict[str, Any]:
    if card is None:
        return {"calibration_status": CalibrationStatus.UNCALIBRATED}
    return {
        "calibration_status": CalibrationStatus.CALIBRATED,
        "calibration_card": card_path(report_path, judge).name,
        "calibration": card.figures,
    }


def _list_line(candidate: Candidate, verdict: PairVerdict, relevant_grade: int) -> str:
    return json.dumps(
        {
            "query_id": candidate.query_id,
            "query": candidate.query,
            "stage": candidate.stage,
            "rank": candidate.rank,
            "doc": candidate.doc,
            "start": candidate.start,
            "end": candidate.end,
            "passage_sha256": verdict.passage_hash,
            "grades": verdict.grades,
            "reasons": verdict.reasons,
            "failures": verdict.failures,
            "majority": verdict.majority,
            "possibly_missing_from_gold": verdict.relevant(relevant_grade) is True,
        },
        ensure_ascii=False,
    )


@click.command("adjudicate")
@click.argument("report_path", metavar="REPORT", type=_FILE)
@click.option("--stage", "stages", multiple=True, required=True, help="Stage to judge (repeat).")
@click.option(
    "--k",
    default=10,
    show_default=True,
    type=click.IntRange(min=1),
    help="Judge the first k hits of each query.",
)
@judge_options
@click.option(
    "--corpus",
    "corpus_path",
    type=click.Path(path_type=Path),
    default=None,
    help="The corpus [default: the one the report recorded].",
)
@click.option("--out", "out_path", type=_FILE, required=True, help="The adjudicated report.")
@click.option(
    "--list",
    "list_path",
    type=_FILE,
    required=True,
    help="JSONL, a line per judged hit (grades, majority, possibly missing from gold).",
)
@click.option(
    "--cache",
    "cache_path",
    type=_FILE,
    default=None,
    help="The judge's cache [default: the judge's own, shared by every command: see 'grk doctor'].",
)
@force_option
@describe_option("report")
def adjudicate_command(
    report_path: Path,
    stages: tuple[str, ...],
    k: int,
    corpus_path: Path | None,
    out_path: Path,
    list_path: Path,
    cache_path: Path | None,
    force: bool,
    **options: Any,
) -> None:
    """Judge every unjudged top-k hit of a stage; write scores with the relevant ones as gold.

    \b
    grk eval adjudicate report.json --stage dense --k 10 --judge recorded:answers.jsonl \\
        --out adjudicated.json --list candidates.jsonl

    A hit is unjudged when it touches no gold quote. The adjudicated scores, aggregates and
    comparisons sit beside the strict ones, which are unchanged. Calls, tokens and seconds
    are printed and recorded in the report's "adjudication".
    """  # noqa: D301 (click needs a real \b to keep the example lines as they are)
    from groundkit.evalset.judge import PROMPT_VERSION, RELEVANT_GRADE  # a value: imported to run

    settings = JudgeSettings.pop(options)
    cache = cache_path or settings.default_cache()
    guard(
        [
            ("--out", out_path, "report"),
            ("--list", list_path, "adjudication list"),
            ("--cache", cache, "judge cache"),
        ],
        [("REPORT", report_path), ("--corpus", corpus_path)],
        force=force,
        appends=["--cache"],
    )
    report = load_checked_report(report_path)
    if not any(r.hits for s in report.stages for r in s.queries):
        raise InputError(f"{report_path}: the report has no hits to judge")
    try:
        for name in stages:
            report.stage(name)  # an unknown stage is named before the corpus is read
    except JudgmentError as error:
        raise InputError(f"{report_path}: {error}") from None
    corpus = report_corpus(report, corpus_path, report_path)
    try:
        candidates = unjudged_hits(report, list(stages), k, corpus)
        tokens = adjudication_tokens(report, corpus)  # checked before anything is judged
        judge, name, model_name = build_judge(settings, cache)
        card = find_card(
            report_path, report, judge=name, model=model_name, prompt_version=PROMPT_VERSION
        )
    except JudgmentError as error:
        raise InputError(str(error)) from None
    run = judge.judge([(c.query, c.passage) for c in candidates])
    grades = {
        c.key: v.majority
        for c, v in zip(candidates, run.verdicts, strict=True)
        if v.majority is not None
    }
    decided = [v.relevant(RELEVANT_GRADE) for v in run.verdicts]
    info = AdjudicationInfo(
        judge=judge.model,
        prompt_version=PROMPT_VERSION,
        stages=list(stages),
        k=k,
        repeats=judge.repeats,
        relevant_grade=RELEVANT_GRADE,
        judged_hits=len(candidates),
        relevant=decided.count(True),
        not_relevant=decided.count(False),
        undecided=decided.count(None),
        **run.usage.model_dump(),
        **_calibration(card, report_path, name),
    )
    adjudicated = anchor_inputs(
        adjudicated_report(report, grades, info, tokens),
        out_path,
        corpus=corpus_path or recorded_input(report, "corpus", report_path),
        judgments=recorded_input(report, "judgments", report_path),
    )
    text = checked_report_json(adjudicated)
    lines = [
        _list_line(c, v, RELEVANT_GRADE) for c, v in zip(candidates, run.verdicts, strict=True)
    ]
    with output_set([out_path, list_path]) as outputs:
        outputs.temporary(out_path).write_text(text, encoding="utf-8")
        outputs.temporary(list_path).write_text(
            "".join(line + "\n" for line in lines), encoding="utf-8"
        )
    _print(adjudicated, info, out_path, list_path)


def _print(report: EvalReport, info: AdjudicationInfo, out: Path, listed: Path) -> None:
    console = make_console()
    console.print(
        f"judged {info.judged_hits} unjudged hits (top {info.k} of {', '.join(info.stages)}): "
        f"{info.relevant} relevant, {info.not_relevant} not, {info.undecided} undecided",
        highlight=False,
    )
    console.print(
        usage_line(JudgeUsage.model_validate(info.model_dump(include=_USAGE))), highlight=False
    )
    console.print(calibration_line(info), highlight=False)
    for stage in report.stages:
        if stage.adjudicated is None or stage.error is not None:
            continue
        figures = ", ".join(
            f"{metric} {stage.aggregates[metric].mean:.3f} → {agg.mean:.3f}"
            for metric, agg in stage.adjudicated.aggregates.items()
            if metric in stage.aggregates
        )
        judged = stage.judged.get(f"judged@{info.k}")
        shown = "" if judged is None else f" (judged@{info.k} {100 * judged:.0f}%)"
        console.print(f"{stage.name}: strict → adjudicated {figures}{shown}", highlight=False)
    render_notes(console, [n.text for n in report.note_records if n.level == "caution"])
    console.print(f"report: {out}\nlist:   {listed}", highlight=False)
