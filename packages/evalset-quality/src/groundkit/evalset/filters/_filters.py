"""Filters that drop eval items which would mislead, each rejection with its reason.

A filter that cannot run (no scores, no model, no resolution) keeps everything and logs a
CAUTION saying which check did not happen: it is never silently skipped.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import ClassVar

from pydantic import BaseModel, ConfigDict

from groundkit.evalset._errors import EvalSetError
from groundkit.evalset._notes import CAUTION, INFO, EvalsetNoteCode, Note, NoteLevel
from groundkit.evalset._scores import ScoreInput, normalise_scores
from groundkit.evalset.filters._closed_book import Answerer, closed_book_check
from groundkit.evalset.filters._pronouns import dangling_pronoun
from groundkit.evalset.filters._text import word_set, words
from groundkit.judgments import Judgment, ResolvedJudgment

__all__ = [
    "DanglingReferenceFilter",
    "Filter",
    "FilterOutcome",
    "GeneralKnowledgeFilter",
    "NearDuplicateFilter",
    "NonDiscriminatingFilter",
    "Rejection",
    "ResolutionInput",
    "TooShortFilter",
    "UnresolvedEvidenceFilter",
    "dangling_pronoun",
]

#: Per query id, whether each gold quote resolved; or the output of ``resolve_judgments``.
ResolutionInput = Mapping[str, Sequence[bool]] | Iterable[ResolvedJudgment]


class Rejection(BaseModel):
    """Why one item was dropped.

    Attributes:
        filter: Name of the filter that dropped it.
        query_id: The item's id.
        reason: One sentence a reviewer can act on.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    filter: str
    query_id: str
    reason: str


class FilterOutcome(BaseModel):
    """What one filter did to the items it was given."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kept: tuple[Judgment, ...]
    rejected: tuple[Rejection, ...] = ()
    notes: tuple[Note, ...] = ()


class Filter(ABC):
    """A step of a :class:`~groundkit.evalset.FilterChain`: items in, survivors out."""

    name: ClassVar[str]

    @abstractmethod
    def apply(self, judgments: Sequence[Judgment]) -> FilterOutcome:
        """Split ``judgments`` into kept items and rejections (input order is preserved)."""

    def _note(self, level: NoteLevel, code: str, message: str) -> Note:
        return Note(level=level, code=EvalsetNoteCode(code), message=message, source=self.name)

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class _PerItemFilter(Filter):
    """A filter that judges each item on its own."""

    @abstractmethod
    def reason(self, judgment: Judgment) -> str | None:
        """Why ``judgment`` must go, or ``None`` to keep it."""

    def apply(self, judgments: Sequence[Judgment]) -> FilterOutcome:
        """Keep the items :meth:`reason` has nothing against."""
        kept: list[Judgment] = []
        rejected: list[Rejection] = []
        for judgment in judgments:
            why = self.reason(judgment)
            if why is None:
                kept.append(judgment)
            else:
                rejected.append(Rejection(filter=self.name, query_id=judgment.query_id, reason=why))
        return FilterOutcome(kept=tuple(kept), rejected=tuple(rejected))


class TooShortFilter(_PerItemFilter):
    """Drops questions with fewer than ``min_words`` words (too vague to have one answer)."""

    name: ClassVar[str] = "too-short"

    def __init__(self, min_words: int = 4) -> None:
        if min_words < 1:
            raise EvalSetError(f"min_words must be at least 1, got {min_words}")
        self.min_words = min_words

    def reason(self, judgment: Judgment) -> str | None:
        """A reason when the question has fewer than ``min_words`` words."""
        count = len(words(judgment.query))
        if count >= self.min_words:
            return None
        return f"{count} word(s), fewer than {self.min_words}: too vague to have one answer"


class DanglingReferenceFilter(_PerItemFilter):
    """Drops questions relying on a pronoun with no antecedent (see :func:`dangling_pronoun`)."""

    name: ClassVar[str] = "dangling-reference"

    def reason(self, judgment: Judgment) -> str | None:
        """A reason when a pronoun has nothing before it to refer to."""
        pronoun = dangling_pronoun(judgment.query)
        if pronoun is None:
            return None
        return (
            f"{pronoun!r} refers to nothing named in the question: it only makes sense next to "
            "the passage it was written from"
        )


def _resolution_flags(resolved: ResolutionInput) -> dict[str, tuple[bool, ...]]:
    if isinstance(resolved, Mapping):
        return {str(key): tuple(bool(flag) for flag in value) for key, value in resolved.items()}
    return {
        item.judgment.query_id: tuple(quote.resolved for quote in item.quotes) for item in resolved
    }


class UnresolvedEvidenceFilter(Filter):
    """Drops answerable items with a gold quote that does not resolve in the corpus.

    Only meaningful once resolution ran: without ``resolved`` it stands down (keeps everything)
    and logs a CAUTION.
    """

    name: ClassVar[str] = "unresolved-evidence"

    def __init__(self, resolved: ResolutionInput | None = None) -> None:
        self.flags = None if resolved is None else _resolution_flags(resolved)

    def apply(self, judgments: Sequence[Judgment]) -> FilterOutcome:
        """Keep items whose every gold quote resolved."""
        if self.flags is None:
            note = self._note(
                CAUTION,
                "filter-did-not-run",
                "unresolved-evidence did not run: gold was not resolved against a corpus "
                "(pass the corpus), so quotes that match no document were not looked for",
            )
            return FilterOutcome(kept=tuple(judgments), notes=(note,))
        kept: list[Judgment] = []
        rejected: list[Rejection] = []
        unknown: list[str] = []
        for judgment in judgments:
            if not judgment.gold:
                kept.append(judgment)
                continue
            flags = self.flags.get(judgment.query_id)
            if flags is None:
                unknown.append(judgment.query_id)
                kept.append(judgment)
                continue
            missing = [
                f"gold[{index}] ({gold.doc})"
                for index, (gold, ok) in enumerate(zip(judgment.gold, flags, strict=False))
                if not ok
            ]
            if missing:
                reason = f"{', '.join(missing)} not found in the corpus: it can never be retrieved"
                rejected.append(
                    Rejection(filter=self.name, query_id=judgment.query_id, reason=reason)
                )
            else:
                kept.append(judgment)
        notes: tuple[Note, ...] = ()
        if unknown:
            notes = (
                self._note(
                    CAUTION,
                    "not-resolved",
                    f"{len(unknown)} item(s) were not in the resolution given and were kept "
                    f"unchecked: {', '.join(unknown[:5])}",
                ),
            )
        return FilterOutcome(kept=tuple(kept), rejected=tuple(rejected), notes=notes)


class NearDuplicateFilter(Filter):
    """Drops a question whose word set is nearly that of a question kept before it.

    Similarity is the Jaccard index of the two questions' word sets (lower-cased); a question
    at or above ``threshold`` against any question *already kept* is dropped. The result
    depends on order: of two near-duplicates the earlier one survives, and a chain A ~ B ~ C
    with A and C dissimilar keeps A and C.

    Candidates are found with prefix filtering (two sets can reach the threshold only if they
    share a word among the rarest few of each), so the filter stays fast on large sets; the
    decision is always made on the exact similarity.
    """

    name: ClassVar[str] = "near-duplicate"

    def __init__(self, threshold: float = 0.8) -> None:
        if not 0.0 < threshold <= 1.0:
            raise EvalSetError(f"threshold must be in (0, 1], got {threshold}")
        self.threshold = threshold

    def _prefix_length(self, size: int) -> int:
        # Sets of sizes a and b reach Jaccard t only if they share >= ceil(t * a) words.
        return size - math.ceil(self.threshold * size - 1e-9) + 1

    def apply(self, judgments: Sequence[Judgment]) -> FilterOutcome:
        """Keep each question unless it nearly repeats one kept earlier."""
        sets = [word_set(judgment.query) for judgment in judgments]
        frequency = Counter(word for item in sets for word in item)
        index: dict[str, list[int]] = {}
        empty_kept: int | None = None
        kept: list[Judgment] = []
        rejected: list[Rejection] = []
        for position, (judgment, current) in enumerate(zip(judgments, sets, strict=True)):
            match: tuple[int, float] | None = None
            if not current:
                if empty_kept is not None:
                    match = (empty_kept, 1.0)
            else:
                ordered = sorted(current, key=lambda word: (frequency[word], word))
                prefix = ordered[: self._prefix_length(len(ordered))]
                candidates = sorted({other for word in prefix for other in index.get(word, [])})
                for other in candidates:
                    other_set = sets[other]
                    similarity = len(current & other_set) / len(current | other_set)
                    if similarity >= self.threshold:
                        match = (other, similarity)
                        break
            if match is not None:
                other_id = judgments[match[0]].query_id
                rejected.append(
                    Rejection(
                        filter=self.name,
                        query_id=judgment.query_id,
                        reason=f"near-duplicate of {other_id} (word overlap {match[1]:.2f} >= "
                        f"{self.threshold:.2f})",
                    )
                )
                continue
            kept.append(judgment)
            if not current:
                empty_kept = position
                continue
            ordered = sorted(current, key=lambda word: (frequency[word], word))
            for word in ordered[: self._prefix_length(len(ordered))]:
                index.setdefault(word, []).append(position)
        return FilterOutcome(kept=tuple(kept), rejected=tuple(rejected))


class NonDiscriminatingFilter(Filter):
    """Drops questions every system (or the one baseline) scores at or above ``threshold``.

    Such a question adds the same score to every configuration: it dilutes differences and
    makes the set look easier than the task is.
    """

    name: ClassVar[str] = "non-discriminating"

    def __init__(self, baseline_scores: ScoreInput | None = None, threshold: float = 1.0) -> None:
        if not 0.0 < threshold <= 1.0:
            raise EvalSetError(f"threshold must be in (0, 1], got {threshold}")
        self.scores = None if baseline_scores is None else normalise_scores(baseline_scores)
        self.threshold = threshold

    def apply(self, judgments: Sequence[Judgment]) -> FilterOutcome:
        """Keep questions some system scores below the threshold."""
        if self.scores is None:
            note = self._note(
                CAUTION,
                "filter-did-not-run",
                "non-discriminating did not run: no baseline scores given, so questions every "
                "system aces were not looked for",
            )
            return FilterOutcome(kept=tuple(judgments), notes=(note,))
        kept: list[Judgment] = []
        rejected: list[Rejection] = []
        unscored = 0
        for judgment in judgments:
            values = self.scores.get(judgment.query_id)
            if values is None or not judgment.gold:
                unscored += judgment.answerable
                kept.append(judgment)
                continue
            if min(values) >= self.threshold:
                who = "the baseline" if len(values) == 1 else f"all {len(values)} systems"
                shown = ", ".join(f"{value:.2f}" for value in values)
                rejected.append(
                    Rejection(
                        filter=self.name,
                        query_id=judgment.query_id,
                        reason=f"{who} scored >= {self.threshold:.2f} ({shown}): it cannot "
                        "separate systems",
                    )
                )
            else:
                kept.append(judgment)
        notes: tuple[Note, ...] = ()
        if unscored:
            notes = (
                self._note(
                    INFO,
                    "unscored",
                    f"{unscored} answerable item(s) have no baseline score and were kept",
                ),
            )
        return FilterOutcome(kept=tuple(kept), rejected=tuple(rejected), notes=notes)


class GeneralKnowledgeFilter(Filter):
    """Drops questions a closed-book model answers correctly (they do not test retrieval).

    The model gets the question alone; its answer matches when the Jaccard similarity of its
    content words with the reference answer reaches ``threshold``. Items without a reference
    answer are kept (and counted in an INFO entry): there is nothing to compare with.
    """

    name: ClassVar[str] = "general-knowledge"

    def __init__(self, answerer: Answerer | None = None, threshold: float = 0.6) -> None:
        if not 0.0 < threshold <= 1.0:
            raise EvalSetError(f"threshold must be in (0, 1], got {threshold}")
        self.answerer = answerer
        self.threshold = threshold

    def apply(self, judgments: Sequence[Judgment]) -> FilterOutcome:
        """Keep the questions the model could not answer without documents."""
        if self.answerer is None:
            note = self._note(
                CAUTION,
                "filter-did-not-run",
                "general-knowledge did not run: no model given, so questions answerable "
                "without retrieval were not looked for",
            )
            return FilterOutcome(kept=tuple(judgments), notes=(note,))
        kept: list[Judgment] = []
        rejected: list[Rejection] = []
        skipped = 0
        for judgment in judgments:
            result = closed_book_check(judgment, self.answerer, threshold=self.threshold)
            if result is None:
                skipped += judgment.answerable
                kept.append(judgment)
            elif result.matches:
                answer = " ".join(result.answer.split())
                shown = answer if len(answer) <= 60 else answer[:57] + "..."
                rejected.append(
                    Rejection(
                        filter=self.name,
                        query_id=judgment.query_id,
                        reason=f"answered without retrieval ({shown!r} matches the reference, "
                        f"overlap {result.similarity:.2f} >= {self.threshold:.2f})",
                    )
                )
            else:
                kept.append(judgment)
        notes: tuple[Note, ...] = ()
        if skipped:
            notes = (
                self._note(
                    INFO,
                    "no-reference-answer",
                    f"{skipped} answerable item(s) have no reference answer and were kept "
                    "unchecked",
                ),
            )
        return FilterOutcome(kept=tuple(kept), rejected=tuple(rejected), notes=notes)
