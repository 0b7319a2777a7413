"""What a number in the report cannot say: the report's notes, and the detection limits."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict

from groundkit.judgments import EvalReport, ResolvedJudgment, StageReport, Unresolved
from groundkit.judgments.report import BootstrapSettings, NoteCode, NoteLevel, ReportNote
from groundkit.stats import (
    family_text,
    limit_text,
    minimum_detectable_difference,
    unpaired_limit_text,
)

if TYPE_CHECKING:
    from groundkit.harness.run._config import EvalSettings

__all__ = ["DetectionLimits", "build_notes", "detection_limits"]


class DetectionLimits(BaseModel):
    """The smallest differences an evaluation set can tell apart from noise.

    Attributes:
        query_count: Number of answerable queries.
        unpaired: Floor for two independent runs of a [0, 1] metric (worst-case variance),
            at the level of one comparison.
        paired: Stage -> headline metric -> the comparison's own detection limit (the verdict
            engine's, at the family's level); None where no difference is detectable.
        power: Power the limits are computed for.
        alpha: Two-sided significance level of the family.
        adjustment: Multiplicity control the paired limits account for.
        family_size: Comparisons in the family.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    query_count: int
    unpaired: float
    paired: dict[str, dict[str, float | None]]
    power: float = 0.8
    alpha: float = 0.05
    adjustment: str = "holm"
    family_size: int = 1

    def text(self, *, baseline: str, metric: str | None = None) -> str:
        """The one sentence every surface prints: the set's floor, then the paired limits.

        Args:
            baseline: The stage the paired limits compare with.
            metric: Only this metric's paired limits (None: every metric's, each named).

        Returns:
            The sentence, without a final full stop.
        """
        text = (
            f"with {self.query_count} answerable queries, differences under "
            f"{unpaired_limit_text(self.unpaired)} cannot be told from noise "
            f"({round(self.power * 100)}% power, two-sided alpha {self.alpha:g})"
        )
        rows = [
            (stage, name, limit)
            for stage, floors in self.paired.items()
            for name, limit in floors.items()
            if metric is None or name == metric
        ]
        if not rows:
            return text
        family = family_text(self.adjustment, self.family_size)
        where = f"against {baseline}" + ("" if metric is None else f" on {metric}")
        listed = (
            f"{stage} {limit_text(limit)}"
            if metric is not None
            else f"{stage} on {name} {limit_text(limit)}"
            for stage, name, limit in rows
        )
        return f"{text}; paired, {where} ({family}): " + ", ".join(listed)


def _stored_or_recomputed(report: EvalReport) -> list[tuple[str, str, float | None, int | None]]:
    """(stage, metric, limit, family size) per decision comparison of the report.

    Reports written since schema 1.1 carry each comparison's limit; older ones are recomputed
    from their per-query scores by the same engine.
    """
    stored = [
        (s.name, c.metric, c.detection_limit, c.family_size)
        for s in report.stages
        for c in s.comparisons
        if c.decision is not None and c.role == "decision"
    ]
    if stored or not any(s.comparisons for s in report.stages):
        return stored
    # Only reports older than schema 1.1 get here: the engine (and the run's settings model
    # it reads) is imported for them alone, so reading a report's limits stays light.
    from groundkit.harness.analysis._stats import report_family

    return [
        (r.label or "", r.metric or "", r.detection_limit, r.family_size)
        for r in report_family(report)
        if r.role == "decision"
    ]


def detection_limits(report: EvalReport) -> DetectionLimits:
    """Detection limits of a report's evaluation set and of each comparison with the baseline.

    Args:
        report: An evaluation report.

    Returns:
        The unpaired floor for the set's size and, per stage and headline metric, the
        comparison's detection limit.
    """
    return _limits(report.answerable_count, report.run.bootstrap, _stored_or_recomputed(report))


def _limits(
    count: int,
    settings: BootstrapSettings,
    rows: Sequence[tuple[str, str, float | None, int | None]],
) -> DetectionLimits:
    """The limits from the set's size and each decision's (stage, metric, limit, family)."""
    alpha = 1.0 - settings.confidence_level
    paired: dict[str, dict[str, float | None]] = {}
    sizes = {1}
    for stage, metric, limit, size in rows:
        paired.setdefault(stage, {})[metric] = limit
        sizes.add(size or 1)
    return DetectionLimits(
        query_count=count,
        unpaired=minimum_detectable_difference(max(count, 1), power=settings.power, alpha=alpha),
        paired=paired,
        power=settings.power,
        alpha=alpha,
        adjustment=settings.multiplicity,
        family_size=max(sizes),
    )


def build_notes(
    *,
    settings: EvalSettings,
    resolved: Sequence[ResolvedJudgment],
    stages: Sequence[StageReport],
) -> list[ReportNote]:
    """The report's notes, in a fixed order, each with its code."""
    answerable = [r for r in resolved if r.judgment.answerable]
    if settings.level == "chunk":
        notes = [
            _note(
                NoteCode.CHUNK_LEVEL,
                "Chunk-level scores (hits must overlap the quoted gold spans) are not comparable "
                'to published BEIR document-level numbers; use level = "document" for those.',
            )
        ]
    else:
        notes = [
            _note(
                NoteCode.DOCUMENT_LEVEL,
                "Document-level scores: each stage's hits are collapsed to documents (first "
                "occurrence, rank order kept) and scored with trec_eval semantics; a gold "
                "document has the highest grade of its quotes.",
            )
        ]
    unanswerable = len(resolved) - len(answerable)
    if unanswerable:
        notes.append(
            _note(
                NoteCode.UNANSWERABLE,
                f"{unanswerable} unanswerable quer{'y is' if unanswerable == 1 else 'ies are'} "
                "listed but not ranked or scored.",
            )
        )
    notes += _gold_notes(settings, answerable)
    notes += _stage_notes(settings, stages)
    text = _detection_note(settings, len(answerable), stages) + "."
    notes.append(_note(NoteCode.DETECTION_LIMIT, text))
    return notes


def _note(code: NoteCode, text: str, level: NoteLevel = "info") -> ReportNote:
    return ReportNote(code=code, level=level, text=text)


def _gold_notes(settings: EvalSettings, answerable: Sequence[ResolvedJudgment]) -> list[ReportNote]:
    quotes = [q for r in answerable for q in r.quotes]
    unresolved = [q for q in quotes if not q.resolved]
    if not unresolved:
        return []
    effect = (
        "their documents still count as relevant"
        if settings.level == "document"
        else "no hit can touch them, which caps recall"
    )
    notes = [
        _note(
            NoteCode.UNRESOLVED_QUOTES,
            f"{len(unresolved)} of {len(quotes)} gold quotes were not found in their documents; "
            f"{effect} (see the closest passages in queries[].gold).",
            "caution",
        )
    ]
    # A gold document absent from the corpus is usually a wrong corpus path or id: name it.
    absent = sorted({q.gold.doc for q in unresolved if q.unresolved is Unresolved.MISSING_DOCUMENT})
    if absent:
        shown = ", ".join(repr(doc) for doc in absent[:5])
        more = f" and {len(absent) - 5} more" if len(absent) > 5 else ""
        notes.append(
            _note(
                NoteCode.MISSING_DOCUMENTS,
                f"{len(absent)} gold document{'s are' if len(absent) > 1 else ' is'} not in the "
                f"corpus: {shown}{more}.",
                "caution",
            )
        )
    return notes


def _stage_notes(settings: EvalSettings, stages: Sequence[StageReport]) -> list[ReportNote]:
    notes: list[ReportNote] = []
    for stage in stages:
        if stage.error is not None:
            notes.append(
                _note(
                    NoteCode.STAGE_FAILED,
                    f"Stage {stage.name!r} failed and has no results: {stage.error}",
                    "caution",
                )
            )
            continue
        missing = sum(1 for r in stage.queries if r.missing)
        if missing:
            notes.append(
                _note(
                    NoteCode.QUERIES_WITHOUT_HITS,
                    f"Stage {stage.name!r}: {missing} of {len(stage.queries)} queries got no "
                    "hits; queries missing from a run score zero and stay in the mean.",
                )
            )
    if any(k > settings.depth for k in settings.cutoffs):
        notes.append(
            _note(
                NoteCode.CUTOFF_ABOVE_DEPTH,
                f"Only {settings.depth} hits per query are recorded: metrics at a cutoff above "
                f"{settings.depth} equal their value at {settings.depth}.",
            )
        )
    return notes


def _detection_note(settings: EvalSettings, count: int, stages: Sequence[StageReport]) -> str:
    rows = [
        (s.name, c.metric, c.detection_limit, c.family_size)
        for s in stages
        for c in s.comparisons
        if c.role == "decision"
    ]
    limits = _limits(count, settings.bootstrap, rows)
    return "Detection limit: " + limits.text(baseline=settings.baseline)
