"""`grk eval report REPORT.json --html report.html`: the report as one self-contained page."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

import click

from groundkit.cli._collector import few_collections
from groundkit.cli._errors import InputError
from groundkit.cli._lazy import lazy
from groundkit.cli._outputs import force_option, guard, output_set
from groundkit.cli.run._describe import describe_option

if TYPE_CHECKING:
    from groundkit.cli._checked import load_checked_report
    from groundkit.cli.html import render as render_html_report
else:  # imported when the command runs, not for --help
    load_checked_report = lazy("groundkit.cli._checked", "load_checked_report")
    render_html_report = lazy("groundkit.cli.html", "render")

__all__ = ["report_command"]


@click.command("report")
@describe_option("report")
@click.argument("report_path", metavar="REPORT.json", type=click.Path(path_type=Path))
@click.option(
    "--html",
    "html_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Where to write the page (default: REPORT.html beside the report).",
)
@click.option(
    "--corpus",
    "corpus_path",
    type=click.Path(path_type=Path),
    default=None,
    help="The corpus the report was run on, to show chunk texts (default: the report's "
    "corpus_source when it exists).",
)
@force_option
def report_command(
    report_path: Path, html_path: Path | None, corpus_path: Path | None, force: bool
) -> None:
    """Write an evaluation report as one self-contained HTML page.

    The page opens from disk with no network: summary and detection limit, differences from
    the baseline with intervals and verdicts, recall curves by rank and by characters read,
    per-category breakdown, worst queries, and the diagnosis of misses.
    """
    started = time.perf_counter()
    target = html_path if html_path is not None else report_path.with_suffix(".html")
    guard(
        [("--html", target, "HTML report")],
        [("REPORT.json", report_path), ("--corpus", corpus_path)],
        force=force,
    )
    with few_collections():
        report = load_checked_report(report_path)
        if corpus_path is not None and not corpus_path.exists():
            raise InputError(f"{corpus_path}: corpus not found")
        page = render_html_report(
            report, corpus=corpus_path, base_dir=report_path.parent, source=report_path
        )
    with output_set([target]) as outputs:
        outputs.write_text(target, page)
    elapsed = time.perf_counter() - started
    click.echo(f"wrote {target} ({target.stat().st_size / 1024:,.0f} KiB, {elapsed:.1f} s)")
