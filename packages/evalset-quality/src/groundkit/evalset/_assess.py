"""``assess``: how much an eval set can tell, and what in it may mislead.

The two silent failures this guards against: a set too small to tell noise from a real
difference between systems, and questions that do not test retrieval at all (every system
aces them, or a model answers them without documents).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

from pydantic import BaseModel, ConfigDict

from groundkit.evalset._errors import EvalSetError
from groundkit.evalset._floors import questions_needed
from groundkit.evalset._notes import CAUTION, INFO, Note
from groundkit.evalset._scores import (
    ScoreInput,
    default_metric,
    discriminating_power,
    normalise_scores,
    stage_scores,
)
from groundkit.evalset.filters._classify import UNLABELLED, type_distribution
from groundkit.evalset.filters._closed_book import Answerer, closed_book_check
from groundkit.judgments import Corpus, EvalReport, Judgment, resolve_judgments
from groundkit.stats import (
    limit_text,
    limit_value,
    minimum_detectable_difference,
    paired_minimum_detectable_difference,
)

__all__ = ["EvalSetQuality", "assess"]

#: A set whose floor is above this cannot separate systems that differ by ten points.
_USEFUL_FLOOR = 0.10
_LOW_REVIEW_SHARE = 0.5
_DOMINANT_SHARE = 0.7
_DOMINANCE_MIN_SIZE = 10
_SHOWN_IDS = 5


def _ids(ids: Sequence[str]) -> str:
    shown = ", ".join(ids[:_SHOWN_IDS])
    return shown + (f" and {len(ids) - _SHOWN_IDS} more" if len(ids) > _SHOWN_IDS else "")


class EvalSetQuality(BaseModel):
    """What an eval set can and cannot tell (see :func:`assess`).

    Attributes:
        size: Number of items.
        answerable: Items with gold evidence (the only ones ranking metrics average over).
        reviewed: Items whose ``meta[reviewed_key]`` is true.
        reviewed_key: The ``meta`` key read for ``reviewed``.
        corpus_checked: Whether gold was resolved against a corpus.
        portable: Answerable items whose every gold quote resolves (``None``: unchecked).
        unresolved_ids: Answerable items with at least one gold quote that does not resolve.
        question_types: Count per question type (``"unlabelled"`` for items without one).
        power: Power of the size calculation.
        alpha: Two-sided significance level of the size calculation.
        detectable_difference: Exact unpaired floor for ``answerable`` questions (``None``
            without answerable items).
        reported_detectable_difference: The floor rounded UP to 3 decimals (safe to print and
            hand back to :meth:`can_support`).
        paired_worst_case: Paired floor when per-query differences are as wide as they can be
            (±1, standard deviation 1).
        paired_observed: Paired floor per report stage, from its per-query differences with
            the baseline on ``metric``.
        metric: The report metric the observed floors and stage checks use.
        discriminating_power: Per answerable question with scores: 1 − |mean score − 0.5|·2.
        aced_by_all: Questions every system scored at the top (1.0).
        system_count: Number of systems behind the scores (given, or report stages).
        constant_across_stages: Questions on which every report stage scored the same.
        closed_book_answerable: Questions a model answered without documents.
        closed_book_checked: Number of questions the general-knowledge check looked at
            (``None``: no model given).
        notes: The warnings log (see :meth:`warnings`).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    size: int
    answerable: int
    reviewed: int
    reviewed_key: str
    corpus_checked: bool
    portable: int | None
    unresolved_ids: tuple[str, ...]
    question_types: dict[str, int]
    power: float
    alpha: float
    detectable_difference: float | None
    reported_detectable_difference: float | None
    paired_worst_case: float | None
    paired_observed: dict[str, float]
    metric: str | None
    discriminating_power: dict[str, float]
    aced_by_all: tuple[str, ...]
    system_count: int
    constant_across_stages: tuple[str, ...]
    closed_book_answerable: tuple[str, ...]
    closed_book_checked: int | None
    notes: tuple[Note, ...]

    @property
    def mean_discriminating_power(self) -> float | None:
        """Mean discriminating power over the scored questions (``None`` without scores)."""
        if not self.discriminating_power:
            return None
        return math.fsum(self.discriminating_power.values()) / len(self.discriminating_power)

    def can_support(self, difference: float) -> bool:
        """Whether the set is large enough, by the unpaired size calculation, for ``difference``.

        ``False`` is the answer to trust: the set is below the standard size requirement for a
        gap that small, so do not claim one from it. ``True`` is necessary, not sufficient:
        whether a specific observed gap is real is settled by the paired comparison of the two
        runs (``grk eval compare``), not by the set's size.

        Args:
            difference: The gap between two systems, in the metric's units (0.05 = 5 points).

        Returns:
            ``difference >= detectable_difference`` (always ``False`` without answerable items).
        """
        if self.detectable_difference is None:
            return False
        return difference >= self.detectable_difference

    def questions_needed(self, difference: float) -> int:
        """Answerable questions the unpaired size calculation needs for ``difference``."""
        return questions_needed(difference, power=self.power, alpha=self.alpha)

    def summary(self) -> str:
        """One line: size, answerable, reviewed, floor."""
        floor = (
            "no difference is detectable (no answerable questions)"
            if self.reported_detectable_difference is None
            else f"detects differences of {self.reported_detectable_difference:.3f} or more "
            f"({self.power:.0%} power, {self.alpha:g} two-sided, unpaired: two independent runs)"
        )
        portable = "" if self.portable is None else f", {self.portable} portable"
        cautions = sum(1 for note in self.notes if note.level == CAUTION)
        return (
            f"{self.size} questions, {self.answerable} answerable, {self.reviewed} reviewed"
            f"{portable}; {floor}; {cautions} caution(s)"
        )

    def warnings(self) -> list[Note]:
        """The warnings log: CAUTION entries first, then INFO, each in the order found."""
        return sorted(self.notes, key=lambda note: note.level != CAUTION)


def _is_true(value: object) -> bool:
    return value is True


def _size_notes(
    answerable: int, floor: float | None, reported: float | None, power: float, alpha: float
) -> list[Note]:
    if floor is None or reported is None:
        return [
            Note(
                level=CAUTION,
                code="no-answerable",
                message="no answerable questions: ranking metrics cannot be computed at all",
            )
        ]
    needed = questions_needed(0.05, power=power, alpha=alpha)
    beyond = ", more than any [0, 1] metric can differ by" if reported > 1.0 else ""
    text = (
        f"with {answerable} answerable questions the smallest difference this set detects is "
        f"{reported:.3f}{beyond} ({power:.0%} power, {alpha:g} two-sided, unpaired: two "
        "independent runs); a 0.05 difference "
        f"needs about {needed}"
    )
    if floor > _USEFUL_FLOOR:
        return [Note(level=CAUTION, code="small-set", message=text)]
    return [Note(level=INFO, code="detection-floor", message=text)]


def _paired_note(
    worst: float | None, observed: Mapping[str, float], baseline: str | None
) -> list[Note]:
    if worst is None:
        return []
    parts = [
        "the detection floor assumes an unpaired test while comparisons are paired: "
        "with per-query differences of ±1 (the worst case) the paired detection limit is "
        f"{limit_text(worst)} (a family of one)"
    ]
    if observed:
        shown = ", ".join(f"{name} vs {baseline}: {limit_text(v)}" for name, v in observed.items())
        parts.append(
            f"from the report's per-query differences it is {shown} (each a family of one; "
            "the report's own limits are for its family and are larger)"
        )
    else:
        parts.append("pass a report with several stages for the observed paired floor")
    return [Note(level=INFO, code="paired-floor", message="; ".join(parts))]


def _review_notes(reviewed: int, size: int, key: str) -> list[Note]:
    if size == 0 or reviewed == size:
        return []
    share = reviewed / size
    level = CAUTION if share < _LOW_REVIEW_SHARE else INFO
    return [
        Note(
            level=level,
            code="low-review-coverage",
            message=f"only {reviewed} of {size} questions ({share:.0%}) are reviewed "
            f"(meta.{key}); unreviewed questions may be wrong or unanswerable",
        )
    ]


def _type_notes(types: Mapping[str, int], size: int) -> list[Note]:
    labelled = {name: count for name, count in types.items() if name != UNLABELLED}
    notes: list[Note] = []
    unlabelled = types.get(UNLABELLED, 0)
    if size and unlabelled * 2 > size:
        notes.append(
            Note(
                level=INFO,
                code="unlabelled-types",
                message=f"{unlabelled} of {size} questions have no type; label them with "
                "grk evalset classify to see the mix",
            )
        )
    total = sum(labelled.values())
    if total >= _DOMINANCE_MIN_SIZE:
        name, count = max(labelled.items(), key=lambda item: (item[1], item[0]))
        if count / total > _DOMINANT_SHARE:
            notes.append(
                Note(
                    level=CAUTION,
                    code="dominant-type",
                    message=f"{count} of {total} labelled questions ({count / total:.0%}) are "
                    f"{name}: results say little about other kinds of question",
                )
            )
    return notes


def _resolve(
    answerable: Sequence[Judgment], corpus: Corpus | Mapping[str, str] | None
) -> tuple[int | None, list[str], list[Note]]:
    if corpus is None:
        note = Note(
            level=INFO,
            code="portability-unchecked",
            message="gold evidence is unchecked against a corpus (pass one to check that "
            "every quote resolves)",
        )
        return None, [], [note]
    resolved = resolve_judgments(answerable, corpus)
    unresolved = [item.judgment.query_id for item in resolved if item.unresolved]
    notes: list[Note] = []
    if unresolved:
        notes.append(
            Note(
                level=CAUTION,
                code="unresolved-gold",
                message=f"{len(unresolved)} answerable question(s) have gold quotes that do not "
                f"resolve in the corpus, so they can never be scored as found: {_ids(unresolved)}",
            )
        )
    return len(answerable) - len(unresolved), unresolved, notes


class _Systems(BaseModel):
    """Scores of several systems per question, with where they came from."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    per_question: dict[str, tuple[float, ...]]
    system_count: int
    source: str


def _systems_from_report(
    tables: Mapping[str, Mapping[str, float]], answerable_ids: Sequence[str]
) -> _Systems | None:
    per_question: dict[str, tuple[float, ...]] = {}
    for query_id in answerable_ids:
        values = [table[query_id] for table in tables.values() if query_id in table]
        if len(values) == len(tables) and values:
            per_question[query_id] = tuple(min(1.0, max(0.0, v)) for v in values)
    if not per_question:
        return None
    return _Systems(per_question=per_question, system_count=len(tables), source="report")


def _discrimination(
    systems: _Systems | None, answerable_ids: Sequence[str], given_ids: Iterable[str]
) -> tuple[dict[str, float], list[str], list[Note]]:
    if systems is None:
        note = Note(
            level=INFO,
            code="discrimination-unchecked",
            message="no baseline scores or report given: questions every system aces were "
            "not looked for",
        )
        return {}, [], [note]
    answerable_set = set(answerable_ids)
    power = {
        query_id: discriminating_power(scores)
        for query_id, scores in systems.per_question.items()
        if query_id in answerable_set
    }
    aced = [
        query_id
        for query_id, scores in systems.per_question.items()
        if query_id in answerable_set and min(scores) >= 1.0
    ]
    notes: list[Note] = []
    unknown = sorted(set(given_ids) - answerable_set)
    if unknown:
        notes.append(
            Note(
                level=INFO,
                code="scores-unknown-ids",
                message=f"{len(unknown)} score(s) name no answerable question of the set and "
                f"were ignored: {_ids(unknown)}",
            )
        )
    missing = [query_id for query_id in answerable_ids if query_id not in systems.per_question]
    if missing:
        notes.append(
            Note(
                level=INFO,
                code="scores-missing",
                message=f"{len(missing)} answerable question(s) have no score: {_ids(missing)}",
            )
        )
    if aced:
        everyone = "the baseline aces" if systems.system_count == 1 else "every system aces"
        share = len(aced) / max(1, len(power))
        notes.append(
            Note(
                level=CAUTION if share > 0.1 else INFO,
                code="non-discriminating",
                message=f"{len(aced)} of {len(power)} scored questions ({share:.0%}) are ones "
                f"{everyone}: they cannot separate systems ({_ids(aced)})",
            )
        )
    return power, aced, notes


def _report_checks(
    report: EvalReport,
    metric: str | None,
    answerable_ids: Sequence[str],
    power: float,
    alpha: float,
) -> tuple[str, dict[str, dict[str, float]], dict[str, float], list[str], list[Note]]:
    chosen = metric if metric is not None else default_metric(report)
    tables = stage_scores(report, chosen)
    report_ids = {q.query_id for q in report.queries}
    if answerable_ids and not report_ids & set(answerable_ids):
        raise EvalSetError("the report shares no query id with the judgments: wrong report?")
    notes: list[Note] = []
    baseline = report.baseline.name
    observed: dict[str, float] = {}
    base = tables.get(baseline, {})
    for name, table in tables.items():
        if name == baseline:
            continue
        common = [q for q in answerable_ids if q in table and q in base]
        if len(common) >= 2:
            deltas = [table[q] - base[q] for q in common]
            observed[name] = paired_minimum_detectable_difference(deltas, power=power, alpha=alpha)
    constant: list[str] = []
    if len(tables) >= 2:
        for query_id in answerable_ids:
            values = [table[query_id] for table in tables.values() if query_id in table]
            if len(values) == len(tables) and max(values) - min(values) <= 1e-12:
                constant.append(query_id)
        if constant:
            share = len(constant) / max(1, len(answerable_ids))
            notes.append(
                Note(
                    level=CAUTION if share > 0.5 else INFO,
                    code="same-across-stages",
                    message=f"on {len(constant)} question(s) ({share:.0%}) every one of the "
                    f"{len(tables)} stages scores the same {chosen}: only the others separate "
                    f"the stages ({_ids(constant)})",
                )
            )
    else:
        notes.append(
            Note(
                level=INFO,
                code="single-stage",
                message="the report has one stage that ran: questions on which every stage "
                "scores the same cannot be looked for",
            )
        )
    return chosen, tables, observed, constant, notes


def _closed_book(
    answerable: Sequence[Judgment], answerer: Answerer | None, threshold: float
) -> tuple[list[str], int | None, list[Note]]:
    if answerer is None:
        note = Note(
            level=CAUTION,
            code="general-knowledge-unchecked",
            message="no model for the general-knowledge filter: questions a model answers "
            "without retrieval (which every system scores well on) were not looked for",
        )
        return [], None, [note]
    matched: list[str] = []
    checked = 0
    for judgment in answerable:
        result = closed_book_check(judgment, answerer, threshold=threshold)
        if result is None:
            continue
        checked += 1
        if result.matches:
            matched.append(judgment.query_id)
    notes: list[Note] = []
    if checked < len(answerable):
        notes.append(
            Note(
                level=INFO,
                code="no-reference-answer",
                message=f"{len(answerable) - checked} answerable question(s) have no reference "
                "answer, so the general-knowledge check skipped them",
            )
        )
    if matched:
        notes.append(
            Note(
                level=CAUTION,
                code="general-knowledge",
                message=f"{len(matched)} question(s) were answered correctly without retrieval: "
                f"they do not test it ({_ids(matched)})",
            )
        )
    return matched, checked, notes


def _unique(judgments: Sequence[Judgment]) -> list[Judgment]:
    items = list(judgments)
    seen: set[str] = set()
    for judgment in items:
        if judgment.query_id in seen:
            raise EvalSetError("query id appears twice in the set", item_id=judgment.query_id)
        seen.add(judgment.query_id)
    return items


def _given_systems(baseline_scores: ScoreInput) -> tuple[_Systems, list[str]]:
    """The systems of the given per-question scores, and the question ids they score."""
    normalised = normalise_scores(baseline_scores)
    counts = {len(v) for v in normalised.values()}
    systems = _Systems(
        per_question=normalised, system_count=max(counts) if counts else 1, source="given"
    )
    return systems, list(normalised)


# Public API: each keyword is a documented option; grouping them would hide them from
# help() and inspect.signature.
def assess(  # noqa: PLR0913
    judgments: Sequence[Judgment],
    *,
    corpus: Corpus | Mapping[str, str] | None = None,
    baseline_scores: ScoreInput | None = None,
    reviewed_key: str = "reviewed",
    report: EvalReport | None = None,
    metric: str | None = None,
    answerer: Answerer | None = None,
    closed_book_threshold: float = 0.6,
    power: float = 0.8,
    alpha: float = 0.05,
) -> EvalSetQuality:
    """Measure what an eval set can tell and log what may mislead.

    Args:
        judgments: The eval set.
        corpus: The corpus, to check that every gold quote resolves (portability).
        baseline_scores: Per-question scores in [0, 1] of a baseline (query id to a score) or
            of several systems (query id to one score per system).
        reviewed_key: ``meta`` key marking a reviewed item (its value must be ``true``).
        report: An evaluation report: gives the observed paired floor per stage, the
            questions every stage scores the same, and (without ``baseline_scores``) the
            per-question scores of its stages.
        metric: Report metric to use (default: its first headline metric).
        answerer: A closed-book model for the general-knowledge check.
        closed_book_threshold: Jaccard similarity at which a closed-book answer matches.
        power: Power of the size calculation.
        alpha: Two-sided significance level of the size calculation.

    Returns:
        The assessment.

    Raises:
        EvalSetError: Repeated query ids, scores outside [0, 1], a metric the report lacks, or
            a report about another set.
    """
    items = _unique(judgments)
    answerable = [j for j in items if j.answerable]
    answerable_ids = [j.query_id for j in answerable]
    n = len(answerable)
    floor = minimum_detectable_difference(n, power=power, alpha=alpha) if n else None
    reported = None if floor is None else limit_value(floor)
    # A paired t test needs two questions (one degree of freedom) to say anything.
    worst = (
        paired_minimum_detectable_difference(1.0, n, power=power, alpha=alpha) if n >= 2 else None
    )
    reviewed = sum(1 for j in items if _is_true(j.meta.get(reviewed_key)))
    types = type_distribution(items)

    notes: list[Note] = []
    notes += _size_notes(n, floor, reported, power, alpha)
    portable, unresolved, resolve_notes = _resolve(answerable, corpus)

    observed: dict[str, float] = {}
    constant: list[str] = []
    chosen_metric: str | None = None
    report_notes: list[Note] = []
    systems: _Systems | None = None
    given_ids: list[str] = []
    if report is not None:
        chosen_metric, tables, observed, constant, report_notes = _report_checks(
            report, metric, answerable_ids, power, alpha
        )
        if baseline_scores is None:
            systems = _systems_from_report(tables, answerable_ids)
            given_ids = sorted({q for table in tables.values() for q in table})
    if baseline_scores is not None:
        systems, given_ids = _given_systems(baseline_scores)
    notes += _paired_note(worst, observed, report.baseline.name if report else None)
    notes += _review_notes(reviewed, len(items), reviewed_key)
    notes += resolve_notes
    power_map, aced, discrimination_notes = _discrimination(systems, answerable_ids, given_ids)
    notes += discrimination_notes
    notes += report_notes
    notes += _type_notes(types, len(items))
    closed_book, checked, closed_book_notes = _closed_book(
        answerable, answerer, closed_book_threshold
    )
    notes += closed_book_notes

    return EvalSetQuality(
        size=len(items),
        answerable=n,
        reviewed=reviewed,
        reviewed_key=reviewed_key,
        corpus_checked=corpus is not None,
        portable=portable,
        unresolved_ids=tuple(unresolved),
        question_types=types,
        power=power,
        alpha=alpha,
        detectable_difference=floor,
        reported_detectable_difference=reported,
        paired_worst_case=worst,
        paired_observed=observed,
        metric=chosen_metric,
        discriminating_power=power_map,
        aced_by_all=tuple(aced),
        system_count=0 if systems is None else systems.system_count,
        constant_across_stages=tuple(constant),
        closed_book_answerable=tuple(closed_book),
        closed_book_checked=checked,
        notes=tuple(notes),
    )
