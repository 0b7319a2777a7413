"""Every problem of a dataset, collected in one pass and reported together.

A BEIR download often has several kinds of problem at once; stopping at the first would make
the user fix them one run at a time. Readers add each problem with a *kind* (a short, stable
phrase) and go on; :meth:`ProblemLog.raise_if_any` then raises one :class:`BeirError` whose
single line groups them by kind, with counts and the first places of each.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from groundkit.adapters.beir._errors import BeirError
from groundkit.judgments import JudgmentError

__all__ = ["DatasetProblem", "DatasetProblemsError", "ProblemLog"]

_SHOWN_PER_KIND = 3


@dataclass(frozen=True, slots=True)
class DatasetProblem:
    """One problem: its kind and the error naming the file, line and id."""

    kind: str
    error: JudgmentError


@dataclass(slots=True)
class _Group:
    count: int = 0
    first: list[JudgmentError] = field(default_factory=list)


class DatasetProblemsError(BeirError):
    """Several problems in one dataset; ``problems`` lists them (the first few of each kind).

    Attributes:
        problems: ``(kind, count, first errors)`` per kind, in the order first seen.
    """

    problems: tuple[tuple[str, int, tuple[JudgmentError, ...]], ...] = ()


class ProblemLog:
    """Collects the problems of one dataset."""

    def __init__(self, source: Path) -> None:
        """Collect problems of the dataset in ``source`` (locations are shown relative to it)."""
        self.source = source
        self._groups: dict[str, _Group] = {}
        self.total = 0

    def add(self, kind: str, error: JudgmentError) -> None:
        """Record one problem."""
        group = self._groups.setdefault(kind, _Group())
        group.count += 1
        self.total += 1
        if len(group.first) < _SHOWN_PER_KIND:
            group.first.append(error)

    def _place(self, error: JudgmentError) -> str:
        parts: list[str] = []
        if error.path is not None:
            path = Path(error.path)
            try:
                shown = os.fspath(path.relative_to(self.source))
            except ValueError:
                shown = error.path
            parts.append(shown if error.line is None else f"{shown}:{error.line}")
        if error.item_id is not None:
            parts.append(repr(error.item_id))
        return " ".join(parts) or "the dataset"

    def _first_text(self, error: JudgmentError) -> str:
        return f"{self._place(error)}: {error.message}"

    def raise_if_any(self) -> None:
        """Raise the collected problems: one as it is, several grouped in one line.

        Raises:
            BeirError: The single problem, or a :class:`DatasetProblemsError` listing each kind
                with its count, the first one in full and where the next ones are.
        """
        if self.total == 0:
            return
        if self.total == 1:
            (group,) = self._groups.values()
            error = group.first[0]
            if isinstance(error, BeirError):
                raise error
            raise BeirError(error.message, path=error.path, line=error.line, item_id=error.item_id)
        pieces: list[str] = []
        for kind, group in self._groups.items():
            text = f"{group.count} × {kind} (first: {self._first_text(group.first[0])}"
            others = [self._place(error) for error in group.first[1:]]
            if others:
                text += "; then " + ", ".join(others)
            hidden = group.count - len(group.first)
            if hidden > 0:
                text += f" and {hidden} more"
            pieces.append(text + ")")
        kinds = len(self._groups)
        error = DatasetProblemsError(
            f"{self.total} problems of {kinds} kind{'s' if kinds > 1 else ''} in the dataset, "
            "nothing was written: " + "; ".join(pieces),
            path=self.source,
        )
        error.problems = tuple(
            (kind, group.count, tuple(group.first)) for kind, group in self._groups.items()
        )
        raise error
