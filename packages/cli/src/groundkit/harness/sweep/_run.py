"""Running a sweep: every arm through the one pipeline, sharing work, resumable, then the summary.

The corpus and judgments are loaded once; every arm gets the same :class:`SharedWork`, so a
chunker cuts the corpus once and a BM25 index is built once per chunk set and settings, and
every dense stage goes through the embedding cache (keyed by model and chunk text), so a chunk
text is embedded once. Each arm's report and items file are written as one set
(``arms/NAME.json`` and ``arms/NAME.items.jsonl``) as soon as the arm is done.

Resuming: an arm whose report and items are both there, whose recorded configuration hashes
to the arm's current one, run on the same corpus and judgments with no stage failed, is read
back instead of run again. A changed sweep file therefore reruns exactly the arms whose
configuration changed (a changed base reruns them all); arms no longer in the file are left
on disk and left out of the summary.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from groundkit.harness._errors import HarnessError
from groundkit.harness.run._config import BASELINE_STAGE
from groundkit.harness.run._context import SharedWork
from groundkit.harness.run._items import items_text
from groundkit.harness.run._pipeline import evaluate_loaded, load_run_inputs
from groundkit.harness.run._record import package_versions
from groundkit.harness.sweep._config import SweepArm, SweepPlan
from groundkit.harness.sweep._summary import (
    SweepPoint,
    SweepSummary,
    compared_points,
    context_chars,
    pipeline_latency_p95,
)
from groundkit.judgments import (
    Corpus,
    EvalReport,
    Judgment,
    JudgmentError,
    config_hash,
    load_report,
)
from groundkit.judgments.files import OutputSet
from groundkit.judgments.gold import judgments_fingerprint
from groundkit.judgments.report import anchor_inputs, checked_report_json

__all__ = ["SweepEvent", "SweepProgress", "arm_paths", "run_sweep"]

SUMMARY_NAME = "sweep.json"
ARMS_FOLDER = "arms"


@dataclass(frozen=True)
class SweepEvent:
    """What a sweep reports as it goes.

    Attributes:
        arm: The arm concerned.
        status: ``running`` (started), ``done``, ``failed`` (a stage failed; its report is
            written) or ``skipped`` (complete outputs of an earlier run were reused).
        done: Arms finished so far (done, failed or skipped).
        total: Arms in the sweep.
        seconds: The arm's seconds (``done``/``failed``).
        eta: Seconds the remaining arms should take, from the arms run so far (``None``
            before the first).
    """

    arm: str
    status: Literal["running", "done", "failed", "skipped"]
    done: int
    total: int
    seconds: float | None = None
    eta: float | None = None


SweepProgress = Callable[[SweepEvent], None]


def arm_paths(folder: Path, name: str) -> tuple[Path, Path]:
    """The report and items file of arm ``name`` in sweep folder ``folder``."""
    arms = folder / ARMS_FOLDER
    return arms / f"{name}.json", arms / f"{name}.items.jsonl"


def _finished(arm: SweepArm, folder: Path, fingerprints: tuple[str, str]) -> EvalReport | None:
    """The arm's earlier report when its outputs are complete and still its own."""
    report_path, items_path = arm_paths(folder, arm.name)
    if not (report_path.is_file() and items_path.is_file()):
        return None
    try:
        report = load_report(report_path)
    except (JudgmentError, OSError):
        return None  # unreadable or torn: run the arm again
    run = report.run
    if (run.corpus_fingerprint, run.judgments_fingerprint) != fingerprints:
        return None
    if config_hash(run.config) != arm.config_hash:
        return None
    if any(stage.error is not None for stage in report.stages):
        return None  # a failed stage may succeed now
    return report


def _write_arm(report: EvalReport, folder: Path, name: str) -> None:
    report_path, items_path = arm_paths(folder, name)
    report = anchor_inputs(report, report_path)  # its inputs found from the arm's folder
    report_text, items = checked_report_json(report), items_text(report)
    report_path.parent.mkdir(parents=True, exist_ok=True)
    with OutputSet([report_path, items_path]) as outputs:
        outputs.write_text(report_path, report_text)
        outputs.write_text(items_path, items)
        outputs.commit()


def _point(arm: SweepArm, report: EvalReport, plan: SweepPlan, folder: Path) -> SweepPoint:
    report_path, items_path = arm_paths(folder, arm.name)
    relative = {
        "report": report_path.relative_to(folder).as_posix(),
        "items": items_path.relative_to(folder).as_posix(),
        "config_hash": arm.config_hash,
        "stages": list(arm.pipeline),
        "same_as_baseline": arm.same_as_baseline,
    }
    failed = [s for s in report.stages if s.error is not None and s.name in arm.pipeline]
    if report.baseline.error is not None:
        failed.insert(0, report.baseline)
    if failed:
        return SweepPoint(name=arm.name, role="arm", error=failed[0].error, **relative)
    return _figures(report, arm.name, arm.pipeline, plan, name=arm.name, role="arm", **relative)


def _figures(
    report: EvalReport,
    stage_name: str,
    stages: Sequence[str],
    plan: SweepPlan,
    /,
    **fields: object,
) -> SweepPoint:
    stage = report.stage(stage_name)
    answerable = sum(1 for q in report.queries if q.answerable)
    aggregate = stage.aggregates.get(plan.metric)
    return SweepPoint.model_validate(
        {
            **fields,
            "metric_mean": None if aggregate is None else aggregate.mean,
            "metric_low": None if aggregate is None else aggregate.low,
            "metric_high": None if aggregate is None else aggregate.high,
            "context_chars": context_chars(stage, answerable, plan.context_k),
            "latency_p95": pipeline_latency_p95(report, stages),
            "index_seconds": _index_seconds(report, stages),
        }
    )


def _index_seconds(report: EvalReport, stages: Sequence[str]) -> float | None:
    total = 0.0
    for name in stages:
        cost = report.stage(name).cost
        if cost is None or cost.index_seconds is None:
            return None
        total += cost.index_seconds
    return round(total, 6)


@dataclass
class _Clock:
    """Arms done and the seconds of those that ran, for the ETA."""

    total: int
    done: int = 0
    ran: int = 0
    seconds: float = 0.0

    def eta(self, remaining_to_run: int) -> float | None:
        return None if not self.ran else self.seconds / self.ran * remaining_to_run


def _arm_reports(
    plan: SweepPlan,
    folder: Path,
    inputs: tuple[Corpus, list[Judgment]],
    shared: SharedWork,
    progress: SweepProgress | None,
) -> Iterator[tuple[SweepArm, EvalReport, bool, float | None]]:
    """Each arm's report, run (and written) or read back; ``(arm, report, resumed, seconds)``."""
    corpus, judgments = inputs
    fingerprints = (corpus.fingerprint(), judgments_fingerprint(judgments))
    clock = _Clock(total=len(plan.arms))
    earlier = {arm.name: _finished(arm, folder, fingerprints) for arm in plan.arms}
    to_run = sum(1 for report in earlier.values() if report is None)

    def tell(
        arm: str,
        status: Literal["running", "done", "failed", "skipped"],
        seconds: float | None = None,
    ) -> None:
        if progress is not None:
            eta = clock.eta(to_run - clock.ran)
            progress(SweepEvent(arm, status, clock.done, clock.total, seconds=seconds, eta=eta))

    if plan.executor == "ray":
        yield from _ray_reports(plan, folder, inputs, shared, earlier, clock, tell)
        return
    for arm in plan.arms:
        report = earlier[arm.name]
        if report is not None:
            clock.done += 1
            tell(arm.name, "skipped")
            yield arm, report, True, None
            continue
        tell(arm.name, "running")
        start = time.perf_counter()
        report = evaluate_loaded(arm.config, corpus, judgments, shared=shared)
        _write_arm(report, folder, arm.name)
        seconds = time.perf_counter() - start
        _ended(arm, report, seconds, clock, tell)
        yield arm, report, False, seconds


def _ended(
    arm: SweepArm, report: EvalReport, seconds: float, clock: _Clock, tell: Callable[..., None]
) -> None:
    """Count an arm that ran (its report written) and say how it ended."""
    clock.done, clock.ran, clock.seconds = clock.done + 1, clock.ran + 1, clock.seconds + seconds
    failed = any(s.error is not None for s in report.stages)
    tell(arm.name, "failed" if failed else "done", seconds=round(seconds, 6))


def _ray_reports(
    plan: SweepPlan,
    folder: Path,
    inputs: tuple[Corpus, list[Judgment]],
    shared: SharedWork,
    earlier: Mapping[str, EvalReport | None],
    clock: _Clock,
    tell: Callable[..., None],
) -> Iterator[tuple[SweepArm, EvalReport, bool, float | None]]:
    """The arms as Ray tasks (each written as it ends), yielded in the sweep file's order."""
    from groundkit.harness.sweep._ray import ray_arm_reports  # Ray only when asked for

    for arm in plan.arms:
        if earlier[arm.name] is not None:
            clock.done += 1
            tell(arm.name, "skipped")
    pending = [arm for arm in plan.arms if earlier[arm.name] is None]
    ran: dict[str, tuple[EvalReport, float]] = {}
    results = ray_arm_reports(
        pending, inputs, address=plan.ray_address, started=lambda a: tell(a.name, "running")
    )
    for arm, report, seconds, counts in results:
        _write_arm(report, folder, arm.name)
        for what, amount in counts.items():
            shared.count(what, amount)
        _ended(arm, report, seconds, clock, tell)
        ran[arm.name] = (report, seconds)
    for arm in plan.arms:
        resumed = earlier[arm.name]
        if resumed is not None:
            yield arm, resumed, True, None
        else:
            yield arm, ran[arm.name][0], False, ran[arm.name][1]


def run_sweep(
    plan: SweepPlan,
    folder: str | Path,
    *,
    progress: SweepProgress | None = None,
    render_html: Callable[[SweepSummary], str] | None = None,
    shared: SharedWork | None = None,
) -> SweepSummary:
    """Run every arm of ``plan`` into ``folder`` (resuming finished arms) and summarise them.

    Args:
        plan: The sweep (from :func:`load_sweep` or :func:`expand_sweep`).
        folder: The sweep folder: ``arms/`` holds each arm's report and items, ``sweep.json``
            the summary (written last, with the HTML page when ``render_html`` is given).
        progress: Called with a :class:`SweepEvent` as each arm starts and ends.
        render_html: Renders the summary as a page, written as ``sweep.html`` in the same set.
        shared: Work to reuse (default: a fresh :class:`SharedWork`, whose counts the summary
            records).

    Returns:
        The summary, as written.

    Raises:
        groundkit.judgments.JudgmentError: Unreadable corpus or judgments, outputs that cannot
            be written.
        HarnessError: Invalid input.
    """
    started = time.perf_counter()
    out = Path(folder)
    _check_folder(out, plan)
    work = shared if shared is not None else SharedWork()
    inputs = load_run_inputs(plan.base)
    points: list[SweepPoint] = []
    reports: dict[str, EvalReport] = {}
    ran: list[str] = []
    skipped: list[str] = []
    for arm, report, resumed, seconds in _arm_reports(plan, out, inputs, work, progress):
        (skipped if resumed else ran).append(arm.name)
        reports[arm.name] = report
        point = _point(arm, report, plan, out)
        points.append(point.model_copy(update={"resumed": resumed, "seconds": seconds}))
    summary = _summary(plan, out, points, reports, work, ran, skipped, started)
    _write_summary(out, summary, render_html)
    return summary


def _baseline_point(
    plan: SweepPlan, points: Sequence[SweepPoint], reports: Mapping[str, EvalReport]
) -> SweepPoint | None:
    for point in points:
        report = reports[point.name]
        if report.baseline.error is None:
            return _figures(
                report, BASELINE_STAGE, (BASELINE_STAGE,), plan,
                name=BASELINE_STAGE, role="baseline", report=point.report, stages=[BASELINE_STAGE],
            )  # fmt: skip
    return None


def _summary(
    plan: SweepPlan,
    folder: Path,
    points: list[SweepPoint],
    reports: Mapping[str, EvalReport],
    work: SharedWork,
    ran: list[str],
    skipped: list[str],
    started: float,
) -> SweepSummary:
    baseline = _baseline_point(plan, points, reports)
    every = ([baseline] if baseline is not None else []) + points
    compared = compared_points(every, reports, plan.metric, plan.front)
    first = reports[plan.arms[0].name]
    decisions = [c for p in compared for c in p.comparisons if c.role == "decision"]
    kinds = sorted({s.retriever.kind for arm in plan.arms for s in arm.config.stages})
    return SweepSummary(
        created_at=datetime.now(UTC).isoformat(timespec="seconds"),
        source=None if plan.source is None else str(plan.source),
        metric=plan.metric,
        context_k=plan.context_k,
        front_axes=list(plan.front),
        headline_metrics=list(first.run.headline_metrics),
        adjustment=first.run.bootstrap.multiplicity,
        confidence_level=first.run.bootstrap.confidence_level,
        family_size=len(decisions),
        corpus_fingerprint=first.run.corpus_fingerprint,
        judgments_fingerprint=first.run.judgments_fingerprint,
        points=compared,
        front=[p.name for p in compared if p.on_front],
        shared=dict(work.counts),
        ran=ran,
        skipped=skipped,
        seconds=round(time.perf_counter() - started, 6),
        package_versions=package_versions(kinds),
    )


def _check_folder(folder: Path, plan: SweepPlan) -> None:
    """Refuse a folder that is not a sweep's (nothing is written then)."""
    if folder.exists() and not folder.is_dir():
        raise HarnessError("the sweep folder is a file", path=folder)
    if folder.is_dir() and any(folder.iterdir()):
        ours = (folder / SUMMARY_NAME).is_file() or (folder / ARMS_FOLDER).is_dir()
        if not ours:
            raise HarnessError(
                "the folder holds other files and no earlier sweep (sweep.json or arms/); "
                "choose an empty or new folder",
                path=folder,
            )
    base = plan.base
    for source in (Path(base.corpus), Path(base.judgments)):
        resolved, target = source.resolve(), folder.resolve()
        if resolved == target or target in resolved.parents or resolved in target.parents:
            raise HarnessError(f"the sweep folder overlaps the input {source}", path=folder)


def _write_summary(
    folder: Path, summary: SweepSummary, render_html: Callable[[SweepSummary], str] | None
) -> None:
    summary_path = folder / SUMMARY_NAME
    text = summary.model_dump_json(indent=1) + "\n"
    html = None if render_html is None else render_html(summary)
    html_path = folder / "sweep.html"
    folder.mkdir(parents=True, exist_ok=True)
    with OutputSet([summary_path] + ([html_path] if html is not None else [])) as outputs:
        outputs.write_text(summary_path, text)
        if html is not None:
            outputs.write_text(html_path, html)
        outputs.commit()
