"""`grk beir adapt`: turn a BEIR dataset into a corpus folder and quote-anchored judgments."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, cast

import click
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from groundkit.cli._lazy import lazy

if TYPE_CHECKING:
    from groundkit.adapters.beir import BeirAdaptationReport, IdMapping, adapt_beir_dataset
else:  # imported when the command runs, not for --help
    BeirAdaptationReport = lazy("groundkit.adapters.beir", "BeirAdaptationReport")
    IdMapping = lazy("groundkit.adapters.beir", "IdMapping")
    adapt_beir_dataset = lazy("groundkit.adapters.beir", "adapt_beir_dataset")


__all__ = ["adapt_command", "format_summary"]


@contextmanager
def _progress_hook() -> Iterator[Callable[[int, int], None] | None]:
    """A rich progress bar on standard error when it is a terminal; no hook otherwise.

    The bar appears at the first call, i.e. once validation is over and writing starts.
    """
    if not sys.stderr.isatty():
        yield None
        return
    bar = Progress(
        TextColumn("writing corpus"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=Console(stderr=True),
        transient=True,
    )
    task: TaskID | None = None

    def update(done: int, total: int) -> None:
        nonlocal task
        if task is None:
            bar.start()
            task = bar.add_task("corpus", total=total)
        bar.update(task, completed=done, total=total)

    try:
        yield update
    finally:
        bar.stop()


def format_summary(report: BeirAdaptationReport, seconds: float) -> list[str]:
    """The lines printed after a successful adaptation."""
    lines = [
        f"adapted BEIR split {report.split!r} from {report.source_dir} in {seconds:.1f} s",
        f"  documents: {report.document_count:,} ({report.total_characters:,} characters) "
        f"-> {report.corpus_dir}",
        f"  judgments: {report.query_count:,} queries, {report.relevance_pair_count:,} "
        f"relevant documents -> {report.judgments_path}",
    ]
    lines.append(
        f"  id map: {len(report.mapped_document_ids):,} document and "
        f"{len(report.mapped_query_ids):,} query ids renamed, every document named <id>.txt "
        f"-> {report.id_map_path}"
    )
    lines.extend(f"note: {note}" for note in report.notes)
    return lines


@click.command("adapt")
@click.argument("source", type=click.Path(path_type=Path))
@click.argument("output", type=click.Path(path_type=Path))
@click.option(
    "--split",
    default="test",
    show_default=True,
    help="Qrels split to adapt (reads SOURCE/qrels/<split>.tsv).",
)
@click.option(
    "--id-mapping",
    type=click.Choice(["strict", "slug"]),
    default="strict",
    show_default=True,
    help="strict: refuse ids groundkit cannot use as they are; slug: rename them to safe "
    "kebab-case ids (recorded in OUTPUT/id_map.json).",
)
@click.option(
    "--skip-empty-documents",
    is_flag=True,
    help="Leave out documents with neither title nor text, and the qrels rows naming them "
    "(counted in the summary), instead of refusing the dataset.",
)
@click.option(
    "--force",
    is_flag=True,
    help="Replace an existing OUTPUT/corpus, judgments.jsonl or id_map.json that is not from "
    "an earlier adaptation.",
)
def adapt_command(
    source: Path,
    output: Path,
    split: str,
    id_mapping: str,
    skip_empty_documents: bool,
    force: bool,
) -> None:
    """Adapt the BEIR dataset in SOURCE into OUTPUT (corpus/, judgments.jsonl, id_map.json).

    SOURCE holds corpus.jsonl, queries.jsonl (either may be .jsonl.gz) and qrels/<split>.tsv.
    Each document becomes OUTPUT/corpus/<id>.txt (title, a blank line, body); each query with
    a positive qrels row becomes a judgment whose gold quotes are its whole relevant documents.
    OUTPUT/id_map.json records how BEIR's ids became groundkit's, so a TREC run written on
    BEIR's own ids (Pyserini, ranx, BEIR's scripts) is read as it is by
    `grk eval run --predictions`. Everything is checked before anything is written, every
    problem of the dataset is reported at once, and the output appears all at once (an
    interrupted run leaves nothing; run it again).
    """
    started = time.perf_counter()
    with _progress_hook() as hook:
        report = adapt_beir_dataset(
            source,
            output,
            split=split,
            id_mapping=cast("IdMapping", id_mapping),
            progress=hook,
            skip_empty_documents=skip_empty_documents,
            force=force,
        )
    for line in format_summary(report, time.perf_counter() - started):
        click.echo(line)
