"""`grk eval export`: a stage's run and its qrels as files trec_eval, ranx and ir_measures read.

Formats: ``trec`` and ``ir-measures`` write the same two plain-text files (a 6-column run and
a 4-column qrels, through core's TREC writers), which ``trec_eval``,
``ir_measures.read_trec_run``/``read_trec_qrels`` and ``ranx.Run.from_file`` read; ``ranx``
writes the JSON dictionaries ``ranx.Run.from_file``/``ranx.Qrels.from_file`` read
(``{query_id: {id: score}}``). The two files are written as a set: both go to temporary
siblings first and replace their targets only when both are complete.

At chunk level the ids hold each hit's span (``doc#start-end``): the report's spans are first
checked against its corpus when the corpus is at hand (``--corpus``, else the recorded one),
and a span outside its document refuses the export (exit 2, nothing written). Document ids
that are no corpus's (``../../etc/passwd``) are refused when the report is read.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Literal, cast

import click

from groundkit.cli._collector import few_collections
from groundkit.cli._errors import InputError
from groundkit.cli._lazy import lazy
from groundkit.cli._outputs import force_option, guard, output_set
from groundkit.cli.run._describe import describe_option
from groundkit.judgments._errors import JudgmentError

if TYPE_CHECKING:
    from groundkit.cli._checked import load_checked_report
    from groundkit.judgments import EvalReport, export_stage
    from groundkit.judgments.report import recorded_input, report_corpus_at_hand
    from groundkit.judgments.trec import (
        ExportLevel,
        StageExport,
        id_map_beside,
        qrels_text,
        read_id_map,
        trec_run_text,
        with_original_ids,
    )
else:  # imported when the command runs, not for --help
    load_checked_report = lazy("groundkit.cli._checked", "load_checked_report")
    EvalReport = lazy("groundkit.judgments", "EvalReport")
    export_stage = lazy("groundkit.judgments", "export_stage")
    recorded_input = lazy("groundkit.judgments.report", "recorded_input")
    report_corpus_at_hand = lazy("groundkit.judgments.report", "report_corpus_at_hand")
    ExportLevel = lazy("groundkit.judgments.trec", "ExportLevel")
    StageExport = lazy("groundkit.judgments.trec", "StageExport")
    id_map_beside = lazy("groundkit.judgments.trec", "id_map_beside")
    qrels_text = lazy("groundkit.judgments.trec", "qrels_text")
    read_id_map = lazy("groundkit.judgments.trec", "read_id_map")
    trec_run_text = lazy("groundkit.judgments.trec", "trec_run_text")
    with_original_ids = lazy("groundkit.judgments.trec", "with_original_ids")

__all__ = ["FORMATS", "export_command", "export_texts"]

ExportFormat = Literal["trec", "ranx", "ir-measures"]
FORMATS: tuple[ExportFormat, ...] = ("trec", "ranx", "ir-measures")
_SUFFIX = {"trec": ".trec", "ir-measures": ".trec", "ranx": ".json"}
_READERS = {
    "trec": "trec_eval QRELS RUN; ranx.Run.from_file / Qrels.from_file",
    "ir-measures": "ir_measures.read_trec_qrels(QRELS), ir_measures.read_trec_run(RUN)",
    "ranx": "ranx.Qrels.from_file(QRELS), ranx.Run.from_file(RUN)",
}


def export_texts(
    export: StageExport, file_format: ExportFormat, *, run_path: Path, qrels_path: Path
) -> tuple[str, str]:
    """The run and qrels files' texts in a format.

    Raises:
        JudgmentError: An id that cannot be a TREC field (whitespace, a leading ``#``).
    """
    if file_format == "ranx":
        run = {query: dict(docs) for query, docs in sorted(export.run.items())}
        qrels = {query: dict(docs) for query, docs in sorted(export.qrels.items())}
        return (
            json.dumps(run, ensure_ascii=False) + "\n",
            json.dumps(qrels, ensure_ascii=False) + "\n",
        )
    return (
        trec_run_text(export.run, run_id=export.stage, path=run_path),
        qrels_text(export.qrels, path=qrels_path),
    )


def _with_original_ids(
    export: StageExport,
    report: EvalReport,
    report_path: Path,
    corpus_path: Path | None,
    id_map_path: Path | None,
) -> StageExport:
    """The export in the dataset's own ids, through ``--id-map`` or the one beside the corpus.

    Raises:
        InputError: No id map found, an unreadable one, a chunk-level export or an id the map
            did not make.
    """
    corpus = corpus_path or recorded_input(report, "corpus", report_path)
    path = id_map_path or id_map_beside(corpus)
    if path is None:
        raise InputError(
            "--ids original: no id map beside the report's corpus; give --id-map FILE "
            "(grk beir adapt writes id_map.json beside the corpus folder)"
        )
    try:
        return with_original_ids(export, read_id_map(path))
    except JudgmentError as error:
        raise InputError(f"--ids original: {error}") from None


def _default_path(report_path: Path, stage: str, what: str, file_format: ExportFormat) -> Path:
    stem = report_path.name.removesuffix(".json")
    return report_path.with_name(f"{stem}.{stage}.{what}{_SUFFIX[file_format]}")


def _check_targets(
    report_path: Path,
    report: EvalReport,
    run: Path,
    qrels: Path,
    corpus_path: Path | None,
    *,
    force: bool,
) -> None:
    inputs: list[tuple[str, Path | None]] = [("REPORT", report_path), ("--corpus", corpus_path)]
    for what, recorded in (
        ("the report's judgments", recorded_input(report, "judgments", report_path)),
        ("the report's corpus", recorded_input(report, "corpus", report_path)),
    ):
        if recorded is not None:
            inputs.append((what, recorded))
    guard([("--run", run, "run file"), ("--qrels", qrels, "qrels file")], inputs, force=force)


def _check_spans(
    report_path: Path, report: EvalReport, level: str, corpus_path: Path | None
) -> str | None:
    """At chunk level, the report's spans against its corpus when at hand; or why not."""
    if level != "chunk":
        return None  # document ids alone: no span is exported
    _, note = report_corpus_at_hand(
        report, corpus_path, base_dir=report_path.parent, source=report_path
    )
    return None if note is None else f"note: spans not checked against the corpus: {note}"


def _summary(export: StageExport, report_path: Path, run: Path, qrels: Path, fmt: str) -> str:
    ids = sum(len(docs) for docs in export.run.values())
    kind = "documents" if export.level == "document" else "chunks"
    lines = [
        f"exported stage {export.stage!r} of {report_path} at {export.level} level: "
        f"{len(export.run):,} of {export.query_count:,} queries, {ids:,} {kind}",
        f"  run:   {run}",
        f"  qrels: {qrels}",
        f"  read with: {_READERS[fmt]}",
    ]
    if export.missing and export.level == "document":
        lines.append(
            f"note: {len(export.missing):,} queries have no hits and are not in the run; the "
            "report scores them 0, as trec_eval -c and ranx.evaluate(make_comparable=True) do"
        )
    elif export.missing:
        lines.append(
            f"note: {len(export.missing):,} queries have no hits and are in neither file; the "
            f"report's means count them as 0 over all {export.query_count:,} queries"
        )
    if export.adjusted:
        lines.append(
            f"note: {export.adjusted:,} scores that tie (or do not decrease) in single "
            "precision were lowered to the next 32-bit float, so every tool keeps the "
            "report's order"
        )
    if export.repeated:
        lines.append(f"note: {export.repeated:,} repeated hits were left out (one id per query)")
    if export.level == "chunk":
        lines.append(
            "note: chunk ids are doc#start-end; P_k, success_k and recip_rank equal the "
            "report's precision@k, hit@k and mrr; recall, nDCG, MAP and R-precision do not "
            "(the report credits each gold quote once)"
        )
    return "\n".join(lines)


@click.command("export")
@describe_option("report")
@click.argument("report_path", metavar="REPORT.json", type=click.Path(path_type=Path))
@click.option("--stage", required=True, help="The stage to export.")
@click.option(
    "--format",
    "file_format",
    type=click.Choice(FORMATS),
    default="trec",
    show_default=True,
    help="trec and ir-measures: TREC run and qrels files; ranx: ranx's JSON files.",
)
@click.option(
    "--level",
    type=click.Choice(["chunk", "document"]),
    default=None,
    help="Ids of chunks (doc#start-end) or of documents [default: the report's level; a "
    "chunk-level report can be exported at document level].",
)
@click.option(
    "--run",
    "run_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Where to write the run [default: REPORT.STAGE.run.trec (.json for ranx)].",
)
@click.option(
    "--qrels",
    "qrels_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Where to write the qrels [default: REPORT.STAGE.qrels.trec (.json for ranx)].",
)
@click.option(
    "--corpus",
    "corpus_path",
    type=click.Path(path_type=Path),
    default=None,
    help="The corpus the report was run on, to check its spans at chunk level [default: the "
    "report's corpus_source when it exists].",
)
@click.option(
    "--ids",
    type=click.Choice(["groundkit", "original"]),
    default="groundkit",
    show_default=True,
    help="original: the dataset's own query and document ids, through the id map "
    "(document level), so the qrels can be diffed with the dataset's (BEIR's qrels/test.tsv).",
)
@click.option(
    "--id-map",
    "id_map_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="The id map for --ids original [default: id_map.json beside the report's corpus "
    "folder, as grk beir adapt writes it].",
)
@force_option
def export_command(  # noqa: PLR0913 (each keyword is a documented option)
    report_path: Path,
    stage: str,
    file_format: str,
    level: str | None,
    run_path: Path | None,
    qrels_path: Path | None,
    corpus_path: Path | None,
    ids: str,
    id_map_path: Path | None,
    force: bool,
) -> None:
    """Write a stage's run and its qrels for trec_eval, ranx or ir_measures.

    \b
    grk eval export report.json --stage bm25
    grk eval export report.json --stage dense --format ranx --run dense.json --qrels qrels.json

    At document level, trec_eval, ranx and ir_measures compute the report's own per-query
    values (ndcg_cut_10 = ndcg@10, recall_100 = recall@100, recip_rank = mrr...). At chunk
    level the ids are doc#start-end and a chunk is relevant exactly when the report counts it
    as touching a gold quote.
    """  # noqa: D301 (click needs a real \b to keep the example lines as they are)
    chosen = cast(ExportFormat, file_format)
    with few_collections():
        report = load_checked_report(report_path)
        export = export_stage(report, stage, level=cast("ExportLevel | None", level))
        if ids == "original":
            export = _with_original_ids(export, report, report_path, corpus_path, id_map_path)
        run = run_path or _default_path(report_path, stage, "run", chosen)
        qrels = qrels_path or _default_path(report_path, stage, "qrels", chosen)
        _check_targets(report_path, report, run, qrels, corpus_path, force=force)
        unchecked = _check_spans(report_path, report, export.level, corpus_path)
        run_text, qrels_text_ = export_texts(export, chosen, run_path=run, qrels_path=qrels)
    with output_set([run, qrels]) as outputs:  # both files, or neither
        outputs.write_text(run, run_text)
        outputs.write_text(qrels, qrels_text_)
    click.echo(_summary(export, report_path, run, qrels, chosen))
    if unchecked is not None:
        click.echo(unchecked)
