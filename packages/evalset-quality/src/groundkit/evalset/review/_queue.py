"""A human review queue over the unreviewed items of an eval set.

The queue's whole state is its decisions log: replaying the same decisions over the same
judgments rebuilds the same queue, so a review can be saved after every keystroke (as an
append-only journal) and resumed after a quit or a crash. ``undo`` is itself a logged decision.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from groundkit.evalset._errors import EvalSetError
from groundkit.evalset._version import set_version, with_set_version
from groundkit.evalset.filters._classify import QTYPE_SOURCE_KEY
from groundkit.evalset.filters._filters import Rejection
from groundkit.judgments import Judgment
from groundkit.judgments.gold import format_validation_error

__all__ = ["VERDICT_KEY", "Decision", "ReviewAction", "ReviewProgress", "ReviewQueue"]

ReviewAction = Literal["accept", "reject", "skip", "edit", "mark", "undo"]
#: ``meta`` key of the verdict stamped on kept items (``accept`` or ``edit``).
VERDICT_KEY = "verdict"
_NOTE_KEY = "review_note"
_VERDICTS = frozenset({"accept", "reject", "skip", "edit"})


class Decision(BaseModel):
    """One entry of the decisions log.

    Attributes:
        action: What the reviewer did. ``mark`` sets the type without deciding; ``undo``
            reverses the latest decision or mark that is not already undone.
        query_id: The item acted on (``None`` for ``undo``).
        note: The reviewer's note (why rejected, what was fixed...).
        question: ``edit``: the new question text.
        quote: ``edit``: the new text of the first gold quote.
        qtype: ``edit`` or ``mark``: the new question type.
        grade: ``edit``: the new grade of the first gold quote.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    action: ReviewAction
    query_id: str | None = None
    note: str | None = None
    question: str | None = None
    quote: str | None = None
    qtype: str | None = None
    grade: int | None = Field(default=None, ge=1)


class ReviewProgress(BaseModel):
    """How far a review is.

    Attributes:
        done: Items decided (accepted, edited, rejected or skipped).
        total: Items in the queue (the unreviewed items of the set).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    done: int
    total: int

    @property
    def remaining(self) -> int:
        """Items still to decide."""
        return self.total - self.done

    def __str__(self) -> str:
        return f"{self.done}/{self.total}"


@dataclass(frozen=True, slots=True)
class _Applied:
    """An applied decision and what it replaced, so that it can be undone."""

    decision: Decision
    position: int
    previous: Judgment


class ReviewQueue:
    """The unreviewed items of a set, one at a time.

    Args:
        judgments: The whole set; items whose ``meta[reviewed_key]`` is true are not queued
            (they pass through :meth:`result` unchanged apart from the set version).
        reviewed_key: ``meta`` key that marks a reviewed item.
        decisions: A decisions log to replay (to resume a review).

    Raises:
        EvalSetError: Repeated query ids, or a log that does not fit these judgments.
    """

    def __init__(
        self,
        judgments: Sequence[Judgment],
        *,
        reviewed_key: str = "reviewed",
        decisions: Iterable[Decision] = (),
    ) -> None:
        self._all = list(judgments)
        seen: set[str] = set()
        for judgment in self._all:
            if judgment.query_id in seen:
                raise EvalSetError("query id appears twice in the set", item_id=judgment.query_id)
            seen.add(judgment.query_id)
        self.reviewed_key = reviewed_key
        self._queue = [j for j in self._all if j.meta.get(reviewed_key) is not True]
        self._items = {j.query_id: j for j in self._queue}
        self._verdicts: dict[str, tuple[str, str | None]] = {}
        self._position = 0
        self._stack: list[_Applied] = []
        self._log: list[Decision] = []
        for number, decision in enumerate(decisions, start=1):
            try:
                self.apply(decision)
            except EvalSetError as error:
                raise EvalSetError(
                    f"decision {number} does not fit these judgments: {error.message}",
                    item_id=error.item_id,
                ) from None

    # --- state ---------------------------------------------------------------------------

    @property
    def current(self) -> Judgment | None:
        """The item under review, with any mark applied; ``None`` once every item is decided."""
        if self._position >= len(self._queue):
            return None
        return self._items[self._queue[self._position].query_id]

    @property
    def finished(self) -> bool:
        """Whether every queued item is decided."""
        return self._position >= len(self._queue)

    @property
    def decisions(self) -> tuple[Decision, ...]:
        """The decisions log, undos included, in the order they were made."""
        return tuple(self._log)

    def progress(self) -> ReviewProgress:
        """Items decided so far out of the queue's size."""
        return ReviewProgress(done=self._position, total=len(self._queue))

    def counts(self) -> dict[str, int]:
        """Decisions per verdict, plus ``pending`` for items not decided yet."""
        counts = dict.fromkeys(("accept", "edit", "reject", "skip"), 0)
        for verdict, _ in self._verdicts.values():
            counts[verdict] += 1
        counts["pending"] = len(self._queue) - self._position
        return counts

    def rejections(self) -> list[Rejection]:
        """The rejected items, in review order, with the reviewer's note as the reason."""
        return [
            Rejection(filter="review", query_id=query_id, reason=note or "rejected in review")
            for query_id, (verdict, note) in self._verdicts.items()
            if verdict == "reject"
        ]

    # --- actions -------------------------------------------------------------------------

    def accept(self, note: str | None = None) -> None:
        """Keep the current item as it is."""
        self.apply(Decision(action="accept", query_id=self._current_id(), note=note))

    def reject(self, note: str | None = None) -> None:
        """Drop the current item (say why in ``note``)."""
        self.apply(Decision(action="reject", query_id=self._current_id(), note=note))

    def skip(self, note: str | None = None) -> None:
        """Leave the current item out of the result without judging it."""
        self.apply(Decision(action="skip", query_id=self._current_id(), note=note))

    def edit(
        self,
        *,
        question: str | None = None,
        quote: str | None = None,
        qtype: str | None = None,
        grade: int | None = None,
        note: str | None = None,
    ) -> None:
        """Fix the current item and keep it (``quote`` and ``grade`` change the first gold quote).

        Raises:
            EvalSetError: Nothing to change, an invalid value, or a quote/grade edit on an item
                without gold (reject it, or add evidence to the judgments file).
        """
        self.apply(
            Decision(
                action="edit",
                query_id=self._current_id(),
                question=question,
                quote=quote,
                qtype=qtype,
                grade=grade,
                note=note,
            )
        )

    def mark(self, qtype: str) -> None:
        """Set the current item's question type (a person's label) without deciding."""
        self.apply(Decision(action="mark", query_id=self._current_id(), qtype=qtype))

    def undo(self) -> Decision:
        """Reverse the latest decision or mark; returns what was undone.

        Raises:
            EvalSetError: Nothing left to undo.
        """
        undone = self._stack[-1].decision if self._stack else None
        self.apply(Decision(action="undo"))
        assert undone is not None  # apply raised otherwise
        return undone

    def apply(self, decision: Decision) -> None:
        """Apply one logged decision (what the action methods and a resume both call).

        Raises:
            EvalSetError: The decision does not fit the queue's state (finished queue, another
                item than the current one, an invalid edit, nothing to undo).
        """
        if decision.action == "undo":
            if not self._stack:
                raise EvalSetError("nothing to undo")
            applied = self._stack.pop()
            self._position = applied.position
            self._items[applied.previous.query_id] = applied.previous
            self._verdicts.pop(applied.previous.query_id, None)
            self._log.append(decision)
            return
        current = self.current
        if current is None:
            raise EvalSetError(
                f"the review is finished: all {len(self._queue)} items are decided; undo to "
                "change the last decision, or take the result"
            )
        if decision.query_id != current.query_id:
            raise EvalSetError(
                f"decision is for {decision.query_id!r} but the item under review is "
                f"{current.query_id!r}",
                item_id=decision.query_id,
            )
        updated = current
        if decision.action == "edit":
            updated = self._edited(current, decision)
        elif decision.action == "mark":
            if decision.qtype is None:
                raise EvalSetError("mark needs a question type", item_id=current.query_id)
            updated = self._rebuilt(current, {"qtype": decision.qtype}, person_type=True)
        self._stack.append(_Applied(decision, self._position, current))
        self._items[current.query_id] = updated
        if decision.action in _VERDICTS:
            self._verdicts[current.query_id] = (decision.action, decision.note)
            self._position += 1
        self._log.append(decision)

    # --- result --------------------------------------------------------------------------

    def result(self) -> list[Judgment]:
        """The reviewed set, stamped with the next set version.

        Rejected and skipped items are dropped; accepted and edited ones get
        ``meta[reviewed_key] = True`` and ``meta["verdict"]`` (plus ``meta["review_note"]``
        when a note was given); items not decided yet and items reviewed before pass through.
        """
        out: list[Judgment] = []
        for judgment in self._all:
            if judgment.query_id not in self._items:
                out.append(judgment)
                continue
            item = self._items[judgment.query_id]
            verdict = self._verdicts.get(judgment.query_id)
            if verdict is None:
                out.append(item)
            elif verdict[0] in {"accept", "edit"}:
                meta: dict[str, Any] = {
                    **item.meta,
                    self.reviewed_key: True,
                    VERDICT_KEY: verdict[0],
                }
                if verdict[1]:
                    meta[_NOTE_KEY] = verdict[1]
                out.append(item.model_copy(update={"meta": meta}))
        return with_set_version(out, set_version(self._all) + 1)

    # --- helpers -------------------------------------------------------------------------

    def _current_id(self) -> str:
        current = self.current
        if current is None:
            raise EvalSetError(
                f"the review is finished: all {len(self._queue)} items are decided; undo to "
                "change the last decision, or take the result"
            )
        return current.query_id

    def _edited(self, current: Judgment, decision: Decision) -> Judgment:
        if all(
            value is None
            for value in (decision.question, decision.quote, decision.qtype, decision.grade)
        ):
            raise EvalSetError(
                "edit needs at least one of question, quote, qtype or grade",
                item_id=current.query_id,
            )
        changes: dict[str, Any] = {}
        if decision.question is not None:
            changes["query"] = decision.question
        if decision.quote is not None or decision.grade is not None:
            if not current.gold:
                raise EvalSetError(
                    "has no gold quote to edit: reject it, or add evidence to the judgments file "
                    "and review it again",
                    item_id=current.query_id,
                )
            first = current.gold[0]
            replaced = {
                "doc": first.doc,
                "quote": first.quote if decision.quote is None else decision.quote,
                "grade": first.grade if decision.grade is None else decision.grade,
                # A pin names where the old text starts: a new text drops it.
                "start": first.start if decision.quote in (None, first.quote) else None,
            }
            changes["gold"] = [replaced, *(g.model_dump() for g in current.gold[1:])]
        if decision.qtype is not None:
            changes["qtype"] = decision.qtype
        return self._rebuilt(current, changes, person_type=decision.qtype is not None)

    def _rebuilt(
        self, current: Judgment, changes: dict[str, Any], *, person_type: bool
    ) -> Judgment:
        data = current.model_dump()
        data.update(changes)
        if person_type:
            data["meta"] = {**current.meta, QTYPE_SOURCE_KEY: "person"}
        try:
            return Judgment.model_validate(data)
        except ValidationError as error:
            raise EvalSetError(format_validation_error(error), item_id=current.query_id) from None
