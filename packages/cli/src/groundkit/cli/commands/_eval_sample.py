"""`grk eval sample` writes a sheet of hits or misses for a person; `grk eval sheet` reads it.

``--by bucket`` strata are the diagnosis buckets of a stage's misses (``grk eval diagnose``'s
nine); ``--by stage`` strata are the stages. The sheet is written as JSONL and CSV together
(one output set); either may be edited and read back. An unknown mark is a one-line error
naming the file, line and value (exit 2). A report whose hits or gold spans do not lie inside
its corpus (a document it does not have, a span past a document's end) is refused (exit 2,
naming the report, the query and the span) whenever the corpus is at hand; with ``--hits``
it always is.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import click
from rich.table import Table

from groundkit.cli._errors import InputError
from groundkit.cli._lazy import lazy
from groundkit.cli._option_groups import option_group
from groundkit.cli._outputs import force_option, guard, output_set
from groundkit.cli.console._report import format_interval, make_console
from groundkit.cli.run._describe import describe_option
from groundkit.diagnosis._errors import DiagnosisError
from groundkit.judgments._errors import JudgmentError

if TYPE_CHECKING:
    from groundkit.cli._checked import load_checked_report
    from groundkit.cli.commands._eval_adjudicate import report_corpus
    from groundkit.diagnosis import diagnose
    from groundkit.evalset import draw_sheet, read_sheet, sheet_precision
    from groundkit.evalset.review import SheetCandidate, SheetResult, sheet_csv, sheet_jsonl
    from groundkit.judgments import EvalReport
    from groundkit.judgments.report import (
        check_report_corpus,
        hit_touches_gold,
        report_corpus_at_hand,
    )
else:  # imported when the command runs, not for --help
    report_corpus = lazy("groundkit.cli.commands._eval_adjudicate", "report_corpus")
    load_checked_report = lazy("groundkit.cli._checked", "load_checked_report")
    diagnose = lazy("groundkit.diagnosis", "diagnose")
    draw_sheet = lazy("groundkit.evalset", "draw_sheet")
    read_sheet = lazy("groundkit.evalset", "read_sheet")
    sheet_precision = lazy("groundkit.evalset", "sheet_precision")
    SheetCandidate = lazy("groundkit.evalset.review", "SheetCandidate")
    SheetResult = lazy("groundkit.evalset.review", "SheetResult")
    sheet_csv = lazy("groundkit.evalset.review", "sheet_csv")
    sheet_jsonl = lazy("groundkit.evalset.review", "sheet_jsonl")
    EvalReport = lazy("groundkit.judgments", "EvalReport")
    check_report_corpus = lazy("groundkit.judgments.report", "check_report_corpus")
    hit_touches_gold = lazy("groundkit.judgments.report", "hit_touches_gold")
    report_corpus_at_hand = lazy("groundkit.judgments.report", "report_corpus_at_hand")

__all__ = ["sample_command", "sheet_command"]

_FILE = click.Path(dir_okay=False, path_type=Path)
_ALL_MISSES = 10**9  # diagnose keeps this many examples per bucket: every miss


@dataclass(frozen=True)
class SheetDraw:
    """What the sheet samples: ``--by``, ``--n``, ``--hits/--misses``, ``--stage``, ``--k``..."""

    by: str
    size: int
    hits: bool
    stage_names: tuple[str, ...]
    k: int
    seed: int


def _stages(report: EvalReport, names: tuple[str, ...], path: Path) -> list[str]:
    try:
        chosen = [report.stage(n).name for n in names] if names else None
    except JudgmentError as error:
        raise InputError(f"{path}: {error}") from None
    return chosen or [s.name for s in report.stages if s.error is None]


def _misses(report: EvalReport, stages: list[str], k: int, by: str) -> list[SheetCandidate]:
    from groundkit.diagnosis import BUCKETS  # a value: imported to run

    queries = {q.query_id: q for q in report.queries}
    found = []
    for name in stages:
        try:
            diagnosis = diagnose(report, name, k=k, examples=_ALL_MISSES)
        except DiagnosisError as error:
            raise InputError(str(error)) from None
        for bucket in diagnosis.buckets:
            for example in bucket.examples:
                query = queries[example.query_id]
                gold = query.gold[example.gold_index]
                span = gold.spans[0] if gold.spans else (None, None)
                found.append(
                    SheetCandidate(
                        stratum=bucket.name if by == "bucket" else name,
                        kind="miss",
                        stage=name,
                        query_id=query.query_id,
                        query=query.query,
                        doc=gold.doc,
                        start=span[0],
                        end=span[1],
                        rank=example.first_rank,
                        text=gold.quote,
                    )
                )
    order: dict[str, int] = {b: i for i, b in enumerate(BUCKETS)}
    return sorted(found, key=lambda c: order.get(c.stratum, -1)) if by == "bucket" else found


def _hits(
    report: EvalReport, stages: list[str], k: int, corpus: dict[str, str] | None
) -> list[SheetCandidate]:
    queries = {q.query_id: q for q in report.queries}
    found = []
    for name in stages:
        for result in report.stage(name).queries:
            query = queries.get(result.query_id)
            if query is None:
                continue
            for rank, hit in enumerate(result.hits[:k], start=1):
                text = "" if corpus is None else corpus.get(hit.doc, "")[hit.start : hit.end]
                touches = hit_touches_gold(
                    hit,
                    query,
                    level=report.run.level,
                    min_overlap_fraction=report.run.min_overlap_fraction,
                )
                found.append(
                    SheetCandidate(
                        stratum=name, kind="hit", stage=name, query_id=query.query_id,
                        query=query.query, doc=hit.doc, start=hit.start, end=hit.end,
                        rank=rank, text=text, touches_gold=touches,
                        judge_grade=hit.adjudicated_grade,
                    )
                )  # fmt: skip
    return found


def _sheet_paths(out: Path) -> tuple[Path, Path]:
    stem = out.with_suffix("") if out.suffix.lower() in {".csv", ".jsonl"} else out
    return stem.with_name(stem.name + ".jsonl"), stem.with_name(stem.name + ".csv")


@click.command("sample")
@click.argument("report_path", metavar="REPORT", type=_FILE)
@option_group(
    "draw",
    SheetDraw,
    click.option("--by", type=click.Choice(["bucket", "stage"]), default="stage",
                 show_default=True,
                 help="Strata: the diagnosis buckets of the misses, or the stages."),
    click.option("--n", "size", default=100, show_default=True, type=click.IntRange(min=1),
                 help="Rows, drawn equally per stratum."),
    click.option("--hits/--misses", "hits", default=False,
                 help="Sample top-k hits or missed gold [default: misses]."),
    click.option("--stage", "stage_names", multiple=True,
                 help="Stages to sample (repeat) [default: all]."),
    click.option("--k", default=10, show_default=True, type=click.IntRange(min=1),
                 help="The cutoff."),
    click.option("--seed", default=0, show_default=True, type=click.IntRange(min=0),
                 help="Seed of the draw."),
)  # fmt: skip
@click.option("--corpus", "corpus_path", type=click.Path(path_type=Path), default=None,
              help="The corpus, for the hits' passages [default: the report's].")  # fmt: skip
@click.option("--out", "out_path", type=_FILE, required=True,
              help="The sheet: OUT.jsonl and OUT.csv are written.")  # fmt: skip
@force_option
@describe_option("report")
def sample_command(
    report_path: Path,
    draw: SheetDraw,
    corpus_path: Path | None,
    out_path: Path,
    force: bool,
) -> None:
    """Write a sheet of misses (or hits) drawn equally per stratum, for a person to mark.

    \b
    grk eval sample report.json --by bucket --n 100 --stage dense --out sheet
    grk eval sample report.json --by stage --hits --n 60 --out hits
    grk eval sheet sheet.csv

    Each row records its stratum's size; the "mark" column takes judge right, judge wrong,
    gold wrong or unsure.
    """  # noqa: D301 (click needs a real \b to keep the example lines as they are)
    jsonl, table = _sheet_paths(out_path)
    guard(
        [("--out", jsonl, "sample sheet"), ("--out", table, "sample sheet (CSV)")],
        [("REPORT", report_path), ("--corpus", corpus_path)],
        force=force,
    )
    if draw.hits and draw.by == "bucket":
        raise InputError(
            "--by bucket sorts misses (diagnosis buckets); give --by stage with --hits"
        )
    report = load_checked_report(report_path)
    if not any(r.hits for s in report.stages for r in s.queries):
        raise InputError(f"{report_path}: the report has no hits to sample")
    stages = _stages(report, draw.stage_names, report_path)
    if draw.hits:
        corpus = report_corpus(report, corpus_path, report_path)
        # The hits' passages are sliced from it: every span must lie inside its document.
        check_report_corpus(report, corpus, source=report_path)
        candidates = _hits(report, stages, draw.k, dict(corpus.items()))
    else:
        # The misses' gold spans go on the sheet: checked against the corpus when at hand.
        report_corpus_at_hand(report, corpus_path, base_dir=report_path.parent, source=report_path)
        candidates = _misses(report, stages, draw.k, draw.by)
    from groundkit.evalset._errors import EvalSetError  # with evalset

    try:
        rows = draw_sheet(candidates, draw.size, draw.seed)
    except EvalSetError as error:
        raise InputError(f"{report_path}: {error}") from None
    with output_set([jsonl, table]) as outputs:
        outputs.temporary(jsonl).write_text(sheet_jsonl(rows), encoding="utf-8")
        outputs.temporary(table).write_text(sheet_csv(rows), encoding="utf-8")
    console = make_console()
    strata: dict[str, tuple[int, int]] = {}
    for row in rows:
        drawn, total = strata.get(row.stratum, (0, row.stratum_size))
        strata[row.stratum] = (drawn + 1, total)
    shown = ", ".join(f"{name} {d} of {t}" for name, (d, t) in strata.items())
    console.print(
        f"{len(rows)} {'hits' if draw.hits else 'misses'} by {draw.by}: {shown}", highlight=False
    )
    console.print(f"sheet: {jsonl}\n       {table}", highlight=False)


@click.command("sheet")
@click.argument("sheet_path", metavar="SHEET", type=_FILE)
def sheet_command(sheet_path: Path) -> None:
    """Read a marked sheet back (CSV or JSONL): precision per stratum and overall.

    Overall is weighted by stratum size, with a stratified Wilson interval; "unsure" and empty
    marks count neither way.
    """
    from groundkit.evalset._errors import EvalSetError  # with evalset

    try:
        result = sheet_precision(read_sheet(sheet_path))
    except EvalSetError as error:
        raise InputError(str(error)) from None
    render_sheet(result)


def _share(result: SheetResult) -> str:
    overall = result.overall
    if overall is None:
        return "no row is marked right or wrong yet"
    return (
        f"overall {overall.estimate:.3f} {format_interval(overall.low, overall.high)} "
        f"(weighted by stratum size, effective n {overall.effective_n:.1f})"
    )


def render_sheet(result: SheetResult) -> None:
    """Print each stratum's marks and precision, then the overall figure."""
    table = Table(title="marks: share of calls a person found right")
    for column in ("stratum", "size", "rows", "right", "judge wrong", "gold wrong", "unsure",
                   "empty", "precision"):  # fmt: skip
        table.add_column(column, justify="left" if column == "stratum" else "right")
    for s in result.strata:
        cell = "—" if s.precision is None else (
            f"{s.precision.estimate:.3f} {format_interval(s.precision.low, s.precision.high)}"
        )  # fmt: skip
        table.add_row(s.stratum, str(s.size), str(s.rows), str(s.right), str(s.judge_wrong),
                      str(s.gold_wrong), str(s.unsure), str(s.unmarked), cell)  # fmt: skip
    console = make_console()
    console.print(table)
    console.print(_share(result), highlight=False)
