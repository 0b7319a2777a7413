"""`grk eval sweep --config sweep.toml`: every arm of a grid or list, the Pareto front, resumable.

Exit codes: 0 when every arm ran; 1 when an arm's stage failed (its report is written and the
other arms go on); 2 for a bad sweep file or folder (nothing written).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
from rich.table import Table

from groundkit.cli._errors import StageFailedError
from groundkit.cli._lazy import lazy
from groundkit.cli.console._fit import print_table
from groundkit.cli.console._report import ProgressDisplay, make_console, progress_option

if TYPE_CHECKING:
    from groundkit.harness import SweepSummary, load_sweep, run_sweep
    from groundkit.harness.sweep import SweepEvent, SweepPoint
    from groundkit.judgments.report import StageComparison
else:  # imported when the command runs, not for --help
    SweepSummary = lazy("groundkit.harness", "SweepSummary")
    load_sweep = lazy("groundkit.harness", "load_sweep")
    run_sweep = lazy("groundkit.harness", "run_sweep")
    SweepEvent = lazy("groundkit.harness.sweep", "SweepEvent")
    SweepPoint = lazy("groundkit.harness.sweep", "SweepPoint")
    StageComparison = lazy("groundkit.judgments.report", "StageComparison")

__all__ = ["SweepDisplay", "render_sweep", "sweep_command"]

_MARKS = {"better": "▲ better", "worse": "▼ worse", "inconclusive": "≈ inconclusive"}


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return "–"
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes}:{rest:02d}"


class SweepDisplay:
    """Arms done / total with an ETA, as a rich bar on standard error (only on a terminal).

    One line per finished or skipped arm goes to standard error too, terminal or not. The bar
    is a :class:`ProgressDisplay` with the sweep's columns (when to draw, where, and how it is
    started and stopped are the run's).
    """

    def __init__(self, *, enabled: bool | None = None) -> None:
        self._bars = ProgressDisplay(
            enabled=enabled,
            columns=(
                TextColumn("arms"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                TextColumn("ETA {task.fields[eta]}"),
                TextColumn("{task.fields[arm]}"),
            ),
        )
        self.enabled = self._bars.enabled
        self._log = make_console(stderr=True)

    def __enter__(self) -> SweepDisplay:
        self._bars.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self._bars.__exit__(*exc)

    def __call__(self, event: SweepEvent) -> None:
        """Show one event."""
        self._bars.show(
            "arms",
            completed=event.done,
            total=event.total,
            eta=_duration(event.eta),
            arm=event.arm,
        )
        if event.status == "skipped":
            text = f"arm {event.arm}: skipped (outputs complete, same config)"
        elif event.status in ("done", "failed"):
            text = f"arm {event.arm}: {event.status} in {event.seconds or 0.0:.1f} s"
        else:
            return
        self._log.print(f"[{event.done}/{event.total}] {text}", markup=False)


def _verdict(point: SweepPoint, comparison: StageComparison | None) -> str:
    if point.role == "baseline":
        return "baseline"
    if comparison is not None:
        return _MARKS.get(comparison.verdict, comparison.verdict)
    return "same as baseline" if point.same_as_baseline else ""


def _cells(point: SweepPoint, metric: str) -> list[str]:
    if point.error is not None:
        return [point.name, "", "failed", "", point.error[:60], "", ""]
    comparison = next((c for c in point.comparisons if c.metric == metric), None)
    return [
        point.name,
        "★" if point.on_front else "",
        f"{point.metric_mean:.4f}" if point.metric_mean is not None else "",
        f"{comparison.effect:+.4f}" if comparison else "",
        _verdict(point, comparison),
        f"{point.context_chars:,.0f}" if point.context_chars is not None else "",
        f"{point.latency_p95 * 1000:.3f}" if point.latency_p95 is not None else "–",
    ]


def render_sweep(console: Console, summary: SweepSummary, folder: Path) -> None:
    """The arms as a table, the front marked, then the outputs."""
    family = f"{summary.adjustment}, family of {summary.family_size}"
    table = Table(title=f"sweep: {summary.metric} vs baseline ({family})")
    for column in ("arm", "front", summary.metric, "Δ", "verdict", "context chars", "p95 ms"):
        table.add_column(column, justify="left" if column in ("arm", "verdict") else "right")
    for point in summary.points:
        table.add_row(*_cells(point, summary.metric))
    print_table(console, table)
    arrows = {
        "metric": f"{summary.metric} ↑",
        "context_chars": "context chars ↓",
        "latency_p95": "latency p95 ↓",
    }
    axes = ", ".join(arrows[a] for a in summary.front_axes)
    console.print(f"Pareto front ({axes}): " + ", ".join(summary.front), markup=False)
    counts = ", ".join(f"{k} {v}" for k, v in summary.shared.items())
    console.print(
        f"ran {len(summary.ran)} arm(s), skipped {len(summary.skipped)} finished; "
        f"work done: {counts}; {summary.seconds:.1f} s",
        markup=False,
    )
    console.print(
        f"summary: {folder / 'sweep.json'}\nhtml:    {folder / 'sweep.html'}", markup=False
    )


@click.command("sweep")
@click.option(
    "--config",
    "config_path",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="Sweep file: a run config (TOML) with a [sweep] table of a grid or named arms.",
)
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("groundkit-sweep"),
    show_default=True,
    help="Sweep folder: arms/NAME.json and .items.jsonl per arm, sweep.json, sweep.html. "
    "Rerunning on the same folder skips arms whose outputs are complete and whose "
    "configuration is unchanged.",
)
@click.option("--html/--no-html", default=True, show_default=True, help="Write sweep.html.")
@click.option(
    "--executor",
    type=click.Choice(["local", "ray"]),
    default=None,
    help="Where the arms run: local (in this process, sharing chunks and indexes) or ray (a "
    "Ray task per arm, sharing the embedding cache; the ray extra) [default: the sweep "
    "file's executor, else local].",
)
@click.option(
    "--ray-address",
    default=None,
    help="The Ray cluster of --executor ray [default: RAY_ADDRESS, else a local Ray].",
)
@progress_option
def sweep_command(
    config_path: Path,
    out_dir: Path,
    html: bool,
    executor: str | None,
    ray_address: str | None,
    progress: bool | None,
) -> None:
    """Run every arm of a sweep, compare each with the baseline, print the Pareto front.

    Arms share their work (chunks per chunker, BM25 indexes per chunk set, embeddings through
    the embedding cache); every arm is compared with the BM25 baseline as one family; the
    front is over the headline metric, characters of context read and latency p95. With
    --executor ray each arm is a Ray task; the results are the local sweep's.
    """
    flags = {"executor": executor, "ray_address": ray_address}
    plan = load_sweep(config_path, sweep={k: v for k, v in flags.items() if v is not None})
    render = None
    if html:
        # Imported here: matplotlib loads only when a page is asked for.
        from groundkit.cli.html import render_sweep as render_sweep_html

        render = render_sweep_html
    with SweepDisplay(enabled=progress) as display:
        summary = run_sweep(plan, out_dir, progress=display, render_html=render)
    render_sweep(make_console(), summary, out_dir)
    failed = [p for p in summary.points if p.error is not None]
    if failed:
        raise StageFailedError(
            f"arm {failed[0].name!r}: {failed[0].error}"
            + (f" (and {len(failed) - 1} more arm(s))" if len(failed) > 1 else "")
            + f"; every arm's report was written under {out_dir}"
        )
