"""`grk eval diagnose` and `grk eval track-record`.

``diagnose`` prints where a stage of a report loses gold evidence (nine buckets, in contract
order) and the fixes ranked by the recall@k each is expected to gain; with ``--track-record``
it appends the prediction to a record file. ``track-record`` prints predicted against
measured for every fix tried (measurements are appended by ``grk eval compare A B
--track-record``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import click
from rich.console import Console
from rich.table import Table
from rich.text import Text

from groundkit.cli._lazy import lazy
from groundkit.cli._outputs import force_option, guard
from groundkit.cli.console._report import format_delta, format_value, make_console, render_notes
from groundkit.cli.run._describe import describe_option

if TYPE_CHECKING:
    from groundkit.cli._checked import load_checked_report
    from groundkit.cli.compare._track_record import print_cautions, render_track_summary
    from groundkit.diagnosis import (
        Bucket,
        Diagnosis,
        Fix,
        RerunStage,
        default_stage,
        diagnose,
        fixes,
        read_track_record,
        record_prediction,
        summarise_track_record,
    )
    from groundkit.harness.analysis import rerun_chunk_fixes
    from groundkit.judgments import EvalReport
else:  # imported when the command runs, not for --help
    load_checked_report = lazy("groundkit.cli._checked", "load_checked_report")
    print_cautions = lazy("groundkit.cli.compare._track_record", "print_cautions")
    render_track_summary = lazy("groundkit.cli.compare._track_record", "render_track_summary")
    rerun_chunk_fixes = lazy("groundkit.harness.analysis", "rerun_chunk_fixes")
    diagnose = lazy("groundkit.diagnosis", "diagnose")
    default_stage = lazy("groundkit.diagnosis", "default_stage")
    fixes = lazy("groundkit.diagnosis", "fixes")
    read_track_record = lazy("groundkit.diagnosis", "read_track_record")
    record_prediction = lazy("groundkit.diagnosis", "record_prediction")
    summarise_track_record = lazy("groundkit.diagnosis", "summarise_track_record")

__all__ = ["diagnose_command", "render_diagnosis", "track_record_command"]

_FILE = click.Path(dir_okay=False, path_type=Path)
_PATH = click.Path(path_type=Path)


def _cell(value: float | None, *, signed: bool = True) -> Text:
    if value is None:
        return Text("—", style="dim")
    return Text(format_delta(value) if signed else format_value(value))


def _examples(bucket: Bucket) -> Text:
    if bucket.count is None:
        return Text(bucket.reason or "not measurable", style="dim")
    text = Text()
    for index, example in enumerate(bucket.examples):
        if index:
            text.append("\n")
        text.append(example.query_id, style="bold")
        text.append(f" “{example.quote}” ")
        if example.found_by:
            where = f"found by {', '.join(example.found_by)}"
        elif example.first_rank is not None:
            # The rank that put the miss in its bucket; the best chunk's when it differs.
            where = f"first touched at rank {example.first_rank}"
            best = example.best_chunk_rank
            if best is not None and best != example.first_rank:
                where += f", best chunk at {best}"
        elif example.best_chunk_rank is not None:
            where = f"best chunk at rank {example.best_chunk_rank}"
        else:
            where = "best chunk not retrieved"
        text.append(f"· {where}", style="dim")
    if bucket.unmeasured:
        text.append(
            f"{chr(10) if bucket.examples else ''}{bucket.unmeasured} misses lacked this "
            "measurement and went on",
            style="dim",
        )
    return text


def _unit(diagnosis: Diagnosis) -> str:
    # at document level a miss is a gold document, as in the report's recall@k
    return "documents" if diagnosis.level == "document" else "quotes"


def _stage_line(diagnosis: Diagnosis) -> Text:
    config = diagnosis.config
    setup = [config.kind]
    if config.chunker:
        extras = ", ".join(f"{k}={v}" for k, v in sorted(config.chunker.items()) if k != "kind")
        setup.append(f"{config.chunker.get('kind', '?')}({extras})")
    if config.encoder_max_tokens is not None:
        setup.append(f"encoder window {config.encoder_max_tokens} tokens")
    line = Text(f"stage {diagnosis.stage}", style="bold")
    line.append(f" ({' · '.join(setup)})", style="dim")
    line.append(
        f": {diagnosis.metric} {format_value(diagnosis.recall)} over {diagnosis.query_count} "
        f"queries; {diagnosis.miss_count} of {diagnosis.gold_count} gold {_unit(diagnosis)} "
        f"missed at k = {diagnosis.k}"
    )
    return line


def _bucket_table(diagnosis: Diagnosis) -> Table:
    table = Table(
        title=(
            "where the evidence was lost (each miss in the first bucket it fits, in this "
            "order; — = not measurable for this stage)"
        ),
        title_justify="left",
        show_lines=True,
    )
    table.add_column("#", justify="right")
    table.add_column("bucket", no_wrap=True)
    table.add_column("misses", justify="right")
    table.add_column("share", justify="right")
    table.add_column(f"{diagnosis.metric} at stake", justify="right")
    table.add_column("examples: query · quote · where it ranked")
    for bucket in diagnosis.buckets:
        table.add_row(
            str(bucket.position),
            bucket.title,
            Text("—", style="dim") if bucket.count is None else str(bucket.count),
            Text("—", style="dim") if bucket.share is None else f"{bucket.share:.0%}",
            _cell(bucket.weight),
            _examples(bucket),
        )
    return table


def _knob_cell(knob: str, keys: Sequence[str]) -> Text:
    """What the fix turns, with the stage configuration keys under it when it has any."""
    cell = Text(knob, style="dim")
    if keys:
        cell.append("\n" + ", ".join(keys), style="cyan")
    return cell


def _fix_table(diagnosis: Diagnosis, ranked: list[Fix]) -> Table:
    table = Table(
        title=(
            f"fixes ranked by expected gain in {diagnosis.metric} (gains overlap: never sum them)"
        ),
        title_justify="left",
        show_lines=True,
    )
    table.add_column("#", justify="right")
    table.add_column("fix", no_wrap=True)
    table.add_column("knob")
    table.add_column("expected", justify="right", no_wrap=True)
    table.add_column("ceiling", justify="right")
    table.add_column("reference", justify="right")
    table.add_column("basis")
    for fix in ranked:
        expected = _cell(fix.expected)
        expected.stylize("bold")
        if fix.exact:
            expected.append("\nexact", style="dim")
        reference = _cell(fix.reference)
        if fix.reference_stage is not None:
            reference.append(f"\n{fix.reference_stage}", style="dim")
        table.add_row(
            str(fix.rank),
            Text(fix.name, style="bold"),
            _knob_cell(fix.knob, fix.keys),
            expected,
            _cell(fix.ceiling),
            reference,
            fix.basis,
        )
    return table


def render_diagnosis(console: Console, diagnosis: Diagnosis, ranked: list[Fix]) -> None:
    """Print the stage line, the bucket table, the ranked fixes and the notes."""
    console.print(_stage_line(diagnosis))
    console.print(_bucket_table(diagnosis))
    console.print(_fix_table(diagnosis, ranked))
    render_notes(console, diagnosis.notes)


def _reruns(
    report: EvalReport,
    report_path: Path,
    name: str,
    rerun: bool | None,
    moved: tuple[Path | None, Path | None],
) -> tuple[list[RerunStage], str | None]:
    """The stage re-run with each chunk fix (``--rerun``), and a note on what was done.

    Asked for (``--rerun``), a re-run that cannot be made is an error (exit 2); by default
    (a BM25 stage) it falls back to the estimates with a note saying why.
    """
    from groundkit.harness import HarnessError  # caught: the class itself
    from groundkit.judgments import JudgmentError

    target = next((s for s in report.stages if s.name == name), None)
    if rerun is False or target is None or target.error is not None or target.chunker is None:
        return [], None
    if rerun is None and target.kind != "bm25":
        return [], (
            f"the chunk fixes of {name} are estimated; --rerun replays them exactly (it runs "
            "the stage again with each fix's chunker)"
        )
    corpus, judgments = moved
    try:
        reruns = rerun_chunk_fixes(
            report, name, corpus=corpus, judgments=judgments, trust_code=False
        )
    except (HarnessError, JudgmentError) as error:
        if rerun:
            raise
        return [], f"the chunk fixes are estimated: the stage could not be run again ({error})"
    if not reruns:
        return [], None
    return reruns, (
        f"the chunk fixes were replayed by running {name} again on the recorded corpus: "
        + "; ".join(f"{r.fix} with {r.detail}" for r in reruns)
    )


@click.command("diagnose")
@describe_option("report")
@click.argument("report_path", metavar="REPORT", type=_FILE)
@click.option(
    "--stage",
    default=None,
    help="Stage to diagnose [default: the stage with the highest recall@k; ties: the earlier].",
)
@click.option(
    "--k", "k", type=click.IntRange(min=1), default=10, show_default=True, help="The cutoff."
)
@click.option(
    "--examples",
    type=click.IntRange(min=0),
    default=3,
    show_default=True,
    help="Examples shown per bucket.",
)
@click.option("--json", "as_json", is_flag=True, help="Print machine-readable JSON.")
@click.option(
    "--track-record",
    "record_path",
    type=_FILE,
    default=None,
    help="Append the predicted fixes to this record file (JSON Lines).",
)
@click.option(
    "--rerun/--no-rerun",
    "rerun",
    default=None,
    help=(
        "Replay the chunk fixes exactly: chunk the recorded corpus with each fix's chunker "
        "and run the stage again [default: on for a BM25 stage whose inputs are found; a "
        "dense stage re-embeds its chunks, so only when asked]."
    ),
)
@click.option(
    "--corpus",
    "corpus_path",
    type=_PATH,
    default=None,
    help="Where the report's corpus is now, for --rerun (default: the recorded path).",
)
@click.option(
    "--judgments",
    "judgments_path",
    type=_FILE,
    default=None,
    help="Where the report's judgments are now, for --rerun (default: the recorded path).",
)
@force_option
def diagnose_command(  # noqa: PLR0913 (one parameter per option)
    report_path: Path,
    stage: str | None,
    k: int,
    examples: int,
    as_json: bool,
    record_path: Path | None,
    rerun: bool | None,
    corpus_path: Path | None,
    judgments_path: Path | None,
    force: bool,
) -> None:
    """Where a stage of REPORT loses gold evidence at k, and which fix should gain most.

    \b
    grk eval diagnose report.json --stage dense --k 10
    grk eval diagnose report.json --track-record record.jsonl

    Every gold quote missed at k goes into the first bucket it fits: gold not resolvable,
    document never indexed, split by the chunker, beyond the encoder's window, ranked just
    below the cutoff, found by another stage, vocabulary mismatch, crowded out by
    near-duplicates, not retrieved. Fixes are ranked by expected gain in recall@k; raise-k,
    hybrid-fusion and deduplicate are replayed exactly from the recorded rankings, the chunk
    fixes by running the stage again (--rerun). Each ceiling bounds its fix's gain. Gains
    overlap and are never summed.
    """  # noqa: D301 (click's \b keeps the example lines unwrapped)
    guard(
        [("--track-record", record_path, "track record")],
        [("REPORT", report_path)],
        force=force,
        appends=["--track-record"],
    )
    report = load_checked_report(report_path)
    name = default_stage(report, k=k) if stage is None else stage
    reruns, note = _reruns(report, report_path, name, rerun, (corpus_path, judgments_path))
    diagnosis = diagnose(report, name, k=k, examples=examples, source=report_path, reruns=reruns)
    if note is not None:
        diagnosis = diagnosis.model_copy(update={"notes": [*diagnosis.notes, note]})
    ranked = fixes(diagnosis)
    prediction = (
        record_prediction(record_path, diagnosis, ranked) if record_path is not None else None
    )
    if as_json:
        payload = {
            "diagnosis": diagnosis.model_dump(mode="json"),
            "fixes": [fix.model_dump(mode="json") for fix in ranked],
            "track_record": None
            if prediction is None
            else {"path": str(record_path), "prediction_id": prediction.id},
        }
        click.echo(json.dumps(payload, indent=1, ensure_ascii=False))
        return
    console = make_console()
    render_diagnosis(console, diagnosis, ranked)
    if prediction is not None:
        console.print(
            Text("track record: ", style="bold")
            + Text(
                f"appended {len(prediction.fixes)} predicted fixes for stage {diagnosis.stage} "
                f"to {record_path} (prediction {prediction.id})"
            )
        )
        from groundkit.diagnosis import BENCHMARK_FIGURES

        render_notes(console, BENCHMARK_FIGURES.lines(), title="how far to trust them")


@click.command("track-record")
@click.argument("record_path", metavar="RECORD", type=_FILE)
@click.option("--json", "as_json", is_flag=True, help="Print machine-readable JSON.")
def track_record_command(record_path: Path, as_json: bool) -> None:
    """Predicted against measured gains for every fix tried, from a RECORD file.

    \b
    grk eval diagnose A.report.json --track-record record.jsonl
    grk eval compare A.items.jsonl B.items.jsonl --track-record record.jsonl --applied larger-chunks
    grk eval track-record record.jsonl

    A line that cannot be read is reported as a CAUTION naming its line number and skipped.
    """  # noqa: D301 (click's \b keeps the example lines unwrapped)
    record = read_track_record(record_path)
    print_cautions(make_console(stderr=True), record.cautions)
    summary = summarise_track_record(record)
    if as_json:
        click.echo(json.dumps(summary.model_dump(mode="json"), indent=1, ensure_ascii=False))
        return
    render_track_summary(make_console(), summary)
