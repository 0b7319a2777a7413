"""Ablation in one run: each component of a hybrid or rerank stage scored beside the whole.

A stage kind says what its components are (:meth:`RetrieverSettings.ablation_parts`): a
fusion's inputs alone and, with three or more inputs, each fusion of all but one; a rerank's
input without the re-ordering. Components of components follow (a rerank of a fusion: the
fusion, then each fused stage alone). A component that is a stage of the run reuses that
stage's scores; a fusion without some inputs is *replayed*: run as a stage of its kind over the
ranked lists its inputs already produced (nothing is searched again, so it is cheap and equal,
hit for hit, to a hybrid stage configured with those inputs). The differences whole minus
component are decided by :func:`groundkit.harness.analysis._stats.ablation_family`.

Diagnosis has its own replay (``groundkit.diagnosis``), on a written report's hit lists of
two stages; the harness replays through the stage kind itself on the run's full lists, which
is what makes a replayed row equal to a stage run (the fusion formula is core's either way).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from groundkit.harness._errors import StageFailed
from groundkit.harness.analysis._evidence import StageChunks
from groundkit.harness.analysis._stats import (
    ablation_family,
    aggregate,
    holm_by_member,
    stage_comparison,
)
from groundkit.harness.retrievers._registry import RetrieverSettings
from groundkit.harness.run._config import EvalSettings, StageConfig
from groundkit.harness.run._context import RunContext, StageOutcome
from groundkit.harness.run._ranking import RankedRun
from groundkit.harness.run._scoring import measured_columns
from groundkit.harness.run._stage_run import run_stage
from groundkit.judgments import StageReport
from groundkit.judgments.report import AblationRow, NoteCode, ReportNote, StageComparison

__all__ = ["AblationScores", "Component", "ablation_plan", "run_ablation"]

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class AblationScores:
    """What the ablation needs of the run's scorer.

    Attributes:
        values: Each scored stage's ``(queries, metrics)`` values.
        metrics: The metric names of the columns.
        score: Scores a ranked run (with its stage's chunk list, if any) the way every stage
            is scored.
    """

    values: Mapping[str, FloatArray]
    metrics: Sequence[str]
    score: Callable[[RankedRun, StageChunks | None], tuple[RankedRun, FloatArray]]


@dataclass(frozen=True)
class Component:
    """One ablation row to compute.

    Attributes:
        whole: The whole stage.
        label: The component's column: a stage name or ``"<stage> without <inputs>"``.
        removed: What the whole has and the component has not.
        stage: The stage of the run standing as the component, when it is one.
        replay: Settings replayed over earlier stages' lists, when it is not.
        owner: The stage whose kind gave the component (the replayed fusion's own stage).
    """

    whole: str
    label: str
    removed: tuple[str, ...]
    stage: str | None = None
    replay: RetrieverSettings | None = None
    owner: str = ""


def _components(stages: Mapping[str, StageConfig], whole: StageConfig) -> list[Component]:
    out: list[Component] = []
    seen: set[str] = set()

    def walk(config: StageConfig, removed: tuple[str, ...]) -> None:
        for part in config.retriever.ablation_parts():
            gone = removed + (part.removed or (config.name,))
            if part.stage is not None:
                label = part.stage
            else:
                label = f"{config.name} without {', '.join(part.removed)}"
            if label in seen:
                continue
            seen.add(label)
            out.append(
                Component(whole.name, label, gone, part.stage, part.replay, owner=config.name)
            )
            if part.stage is not None:
                walk(stages[part.stage], gone)

    walk(whole, ())
    return out


def ablation_plan(settings: EvalSettings) -> tuple[list[Component], list[ReportNote]]:
    """The rows the settings ask for, and a note when ablation was asked for in vain."""
    if settings.ablation is False:
        return [], []
    stages = {stage.name: stage for stage in settings.stages}
    if isinstance(settings.ablation, list):
        wholes = [stages[name] for name in settings.ablation]
    else:
        wholes = [s for s in settings.stages if s.retriever.ablation_parts()]
    if not wholes and settings.ablation is True:
        note = ReportNote(
            code=NoteCode.ABLATION,
            text="Ablation was asked for, but no stage fuses or re-orders earlier stages "
            "(hybrid, rerank): there is nothing to ablate.",
        )
        return [], [note]
    return [c for whole in wholes for c in _components(stages, whole)], []


def _replay(
    ctx: RunContext, component: Component, outcomes: Mapping[str, StageOutcome]
) -> StageOutcome | None:
    """The component's outcome, computed as a stage of its kind over the earlier stages'."""
    assert component.replay is not None
    # Not validated as a user's stage: the label is no stage name and the settings came
    # from a validated stage.
    config = StageConfig.model_construct(name=component.label, retriever=component.replay)
    outcome = StageOutcome(config=config, doc_ids=ctx.doc_ids)
    try:
        run_stage(ctx, outcome, outcomes)
    except StageFailed:
        return None
    return outcome if outcome.run is not None else None


def _skipped_note(skipped: Sequence[Component]) -> ReportNote:
    first = skipped[0]
    more = f" (and {len(skipped) - 1} more)" if len(skipped) > 1 else ""
    return ReportNote(
        code=NoteCode.ABLATION,
        level="caution",
        text=f"Ablation of stage {first.whole!r}: component {first.label!r}{more} has no row "
        "because a stage it needs failed.",
    )


def run_ablation(
    ctx: RunContext,
    outcomes: Mapping[str, StageOutcome],
    stages: Sequence[StageReport],
    scores: AblationScores,
) -> tuple[list[AblationRow], list[ReportNote]]:
    """Every ablation row of the run, its comparisons decided as one family.

    Args:
        ctx: The run.
        outcomes: Each stage's outcome (the ranked lists replays read).
        stages: The stage reports (a stage component's aggregates are its stage's).
        scores: The run's scores and scorer.

    Returns:
        The rows and the notes to add to the report.
    """
    settings = ctx.settings
    plan, notes = ablation_plan(settings)
    values: dict[str, FloatArray] = dict(scores.values)
    kept: list[Component] = []
    skipped: list[Component] = []
    for component in plan:
        if component.whole not in values:
            continue  # the whole stage failed: the stage table says so
        if component.replay is not None and component.label not in values:
            replayed = _replay(ctx, component, outcomes)
            if replayed is not None and replayed.run is not None:
                values[component.label] = scores.score(replayed.run, replayed.chunks)[1]
        (kept if component.label in values else skipped).append(component)
    if skipped:
        notes.append(_skipped_note(skipped))
    if not kept:
        return [], notes
    headline = list(settings.headline_metrics)
    index = {name: i for i, name in enumerate(scores.metrics)}
    columns = {
        name: {
            metric: dict(zip(ctx.query_ids, matrix[:, index[metric]].tolist(), strict=True))
            for metric in headline
        }
        for name, matrix in values.items()
    }
    pairs = [(c.whole, c.label) for c in kept]
    decided = ablation_family(pairs, columns, headline, settings.bootstrap)
    flat = [result for row in decided for result in row]
    holm = iter(holm_by_member(flat))
    by_stage = {s.name: s for s in stages}
    rows = []
    for component, results in zip(kept, decided, strict=True):
        comparisons = [
            stage_comparison(r, next(holm), baseline=component.label, candidate=component.whole)
            for r in results
        ]
        rows.append(_row(component, comparisons, values, scores.metrics, ctx, by_stage))
    return rows, notes


def _row(
    component: Component,
    comparisons: list[StageComparison],
    values: Mapping[str, FloatArray],
    metrics: Sequence[str],
    ctx: RunContext,
    by_stage: Mapping[str, StageReport],
) -> AblationRow:
    headline = list(ctx.settings.headline_metrics)
    if component.stage is not None:
        stage = by_stage[component.stage]
        aggregates = {m: stage.aggregates[m] for m in headline if m in stage.aggregates}
        return AblationRow(
            stage=component.whole,
            component=component.label,
            source="stage",
            removed=list(component.removed),
            aggregates=aggregates,
            comparisons=comparisons,
        )
    matrix = values[component.label]
    index = [list(metrics).index(m) for m in headline]
    measured, names = measured_columns(matrix, metrics)  # leaves out what was not measurable
    assert measured is not None
    replay = component.replay
    assert replay is not None
    return AblationRow(
        stage=component.whole,
        component=component.label,
        source="replay",
        removed=list(component.removed),
        inputs=list(replay.upstream_stages()),
        k=getattr(replay, "k", None),
        aggregates=aggregate(matrix[:, index], headline, ctx.settings.bootstrap),
        scores={
            qid: dict(zip(names, row, strict=True))
            for qid, row in zip(ctx.query_ids, measured.tolist(), strict=True)
        },
        comparisons=comparisons,
    )
