"""Running filters in order, and what came out."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from groundkit.evalset._errors import EvalSetError
from groundkit.evalset._notes import CAUTION, Note
from groundkit.evalset._scores import ScoreInput
from groundkit.evalset._version import set_version, with_set_version
from groundkit.evalset.filters._closed_book import Answerer
from groundkit.evalset.filters._filters import (
    DanglingReferenceFilter,
    Filter,
    GeneralKnowledgeFilter,
    NearDuplicateFilter,
    NonDiscriminatingFilter,
    Rejection,
    ResolutionInput,
    TooShortFilter,
    UnresolvedEvidenceFilter,
)
from groundkit.judgments import Judgment

__all__ = ["MIN_KEPT", "FilterChain", "FilterResult", "default_filters"]

#: Below this many kept items, no comparison on the set can be trusted (see ``assess``).
MIN_KEPT = 30


class FilterResult(BaseModel):
    """The outcome of a :class:`FilterChain` run.

    Attributes:
        kept: Surviving items, in input order.
        rejected: One entry per dropped item, naming the filter, the id and why.
        warnings: CAUTION and INFO entries of the filters and of the chain.
        filters: Names of the filters that ran, in order.
        input_count: Number of items given.
        input_version: Set version of the input (see ``set_version``).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    kept: tuple[Judgment, ...]
    rejected: tuple[Rejection, ...]
    warnings: tuple[Note, ...]
    filters: tuple[str, ...]
    input_count: int
    input_version: int

    @property
    def kept_count(self) -> int:
        """Number of surviving items."""
        return len(self.kept)

    @property
    def rejected_count(self) -> int:
        """Number of dropped items."""
        return len(self.rejected)

    def by_filter(self) -> dict[str, int]:
        """Rejections per filter, every filter of the chain listed (in order), even at zero."""
        counts = dict.fromkeys(self.filters, 0)
        for rejection in self.rejected:
            counts[rejection.filter] = counts.get(rejection.filter, 0) + 1
        return counts

    def summary(self) -> str:
        """One line: kept, rejected per filter, and how many cautions."""
        parts = ", ".join(f"{name} {count}" for name, count in self.by_filter().items() if count)
        cautions = sum(1 for note in self.warnings if note.level == CAUTION)
        rejected = f"rejected {self.rejected_count}" + (f" ({parts})" if parts else "")
        return f"kept {self.kept_count} of {self.input_count}, {rejected}; {cautions} caution(s)"

    def as_judgments(self) -> list[Judgment]:
        """The kept items stamped with the next set version (input version plus one)."""
        return with_set_version(self.kept, self.input_version + 1)


class FilterChain:
    """Filters run in order, each on the survivors of the previous one.

    Args:
        filters: The filters; cheap ones first is cheapest (a model is asked only about
            questions that survived the text checks).
    """

    def __init__(self, filters: Sequence[Filter]) -> None:
        names = [f.name for f in filters]
        repeated = sorted({name for name in names if names.count(name) > 1})
        if repeated:
            raise EvalSetError(f"a filter chain runs each filter once: {', '.join(repeated)}")
        self.filters = tuple(filters)

    def run(self, judgments: Sequence[Judgment]) -> FilterResult:
        """Run every filter and gather the kept items, rejections and warnings.

        Raises:
            EvalSetError: A query id appears twice in ``judgments``.
        """
        items = tuple(judgments)
        seen: set[str] = set()
        for judgment in items:
            if judgment.query_id in seen:
                raise EvalSetError("query id appears twice in the set", item_id=judgment.query_id)
            seen.add(judgment.query_id)
        version = set_version(items)
        survivors = items
        rejected: list[Rejection] = []
        warnings: list[Note] = []
        for step in self.filters:
            outcome = step.apply(survivors)
            survivors = outcome.kept
            rejected.extend(outcome.rejected)
            warnings.extend(outcome.notes)
        if items and len(rejected) * 2 > len(items):
            warnings.append(
                Note(
                    level=CAUTION,
                    code="most-rejected",
                    message=f"{len(rejected)} of {len(items)} items were rejected (more than "
                    "half): check the generator or the thresholds before trusting the rest",
                    source="chain",
                )
            )
        if len(survivors) < MIN_KEPT:
            warnings.append(
                Note(
                    level=CAUTION,
                    code="few-kept",
                    message=f"only {len(survivors)} item(s) kept, fewer than {MIN_KEPT}: too "
                    "few to tell a real difference between systems from noise",
                    source="chain",
                )
            )
        return FilterResult(
            kept=survivors,
            rejected=tuple(rejected),
            warnings=tuple(warnings),
            filters=tuple(step.name for step in self.filters),
            input_count=len(items),
            input_version=version,
        )


def default_filters(
    baseline_scores: ScoreInput | None = None,
    answerer: Answerer | None = None,
    resolved: ResolutionInput | None = None,
) -> list[Filter]:
    """The standard chain, cheapest first.

    too-short, dangling-reference, unresolved-evidence, near-duplicate, non-discriminating,
    general-knowledge. Filters whose input is missing (no resolution, scores or model) keep
    everything and log a CAUTION.
    """
    return [
        TooShortFilter(),
        DanglingReferenceFilter(),
        UnresolvedEvidenceFilter(resolved),
        NearDuplicateFilter(),
        NonDiscriminatingFilter(baseline_scores),
        GeneralKnowledgeFilter(answerer),
    ]
