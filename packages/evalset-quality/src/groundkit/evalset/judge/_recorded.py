"""Recorded judge answers: replay grades written down earlier (tests, demos, a person's marks).

The file is JSON lines, one per (query, passage) pair::

    {"query": "...", "passage_sha256": "<hex>", "grades": [3, 3, 2], "reason": "..."}

``passage`` (the text) may stand for ``passage_sha256``, and ``grade`` for a one-element
``grades``. Repeat ``r`` of a pair gets ``grades[r % len(grades)]`` (so one line holds every
repeat of its pair). A pair with no line is a failed call ("no recorded answer"), listed like
any other failure.

A pair has one answer: a second line for the same (query, passage), whether it gives the
passage as text or as its SHA-256, is refused naming both lines when it records other grades
or another reason (``answers.jsonl:7: duplicate of line 3 with other grades (query 'q1',
passage sha256 1f0e...)``): a later line silently winning would replay grades nobody chose.
A line that repeats an earlier one's answer exactly is read once (a file written item by
item, where two queries share a text and a passage, holds such repeats).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path

from groundkit.evalset._errors import EvalSetError
from groundkit.evalset.judge._cache import passage_hash
from groundkit.evalset.judge._judge import JudgeCallError, JudgeRequest

__all__ = ["RecordedJudge"]


class RecordedJudge:
    """A judge client that replays recorded grades.

    Args:
        answers: ``{(query, passage_sha256): (grades, reason)}``.
    """

    def __init__(self, answers: Mapping[tuple[str, str], tuple[Sequence[int], str]]) -> None:
        self.answers = dict(answers)

    @classmethod
    def from_file(cls, path: Path) -> RecordedJudge:
        """Read recorded answers from a JSONL file.

        Raises:
            EvalSetError: The file cannot be read, a line is not a recorded answer, or a
                (query, passage) pair has a second line with another answer (the message
                names the file and the line, and the first line too).
        """
        try:
            text = path.read_text(encoding="utf-8-sig")  # a leading byte-order mark is ignored
        except (OSError, UnicodeDecodeError) as error:
            raise EvalSetError(f"cannot read recorded answers {path}: {error}") from None
        answers: dict[tuple[str, str], tuple[Sequence[int], str]] = {}
        first_line: dict[tuple[str, str], int] = {}
        # Lines end at "\n" only: a JSON string may hold a raw U+2028 or form feed, which
        # str.splitlines() would split on, shifting every later line number.
        for number, line in enumerate(text.split("\n"), start=1):
            if not line.strip():
                continue
            try:
                key, value = _answer(json.loads(line))
            except (ValueError, TypeError, KeyError) as error:
                raise EvalSetError(
                    f"{path}: line {number} is not a recorded answer ({error})"
                ) from None
            previous = first_line.setdefault(key, number)
            if previous != number and answers[key] != value:
                query, digest = key
                raise EvalSetError(
                    f"duplicate of line {previous} with other grades (query {query[:60]!r}, "
                    f"passage sha256 {digest[:12]}...): record each (query, passage) pair once",
                    path=path,
                    line=number,
                )
            answers[key] = value
        return cls(answers)

    def __call__(self, request: JudgeRequest) -> str:
        """The recorded reply for the request's pair and repeat.

        Raises:
            JudgeCallError: No answer is recorded for the pair.
        """
        found = self.answers.get((request.query, passage_hash(request.passage)))
        if found is None:
            raise JudgeCallError(f"no recorded answer for query {request.query[:60]!r}")
        grades, reason = found
        grade = grades[request.repeat % len(grades)]
        return json.dumps({"grade": grade, "reason": reason})


def _answer(row: object) -> tuple[tuple[str, str], tuple[Sequence[int], str]]:
    if not isinstance(row, dict):
        raise ValueError("not a JSON object")
    query = row["query"]
    digest = row.get("passage_sha256")
    if digest is None:
        digest = passage_hash(str(row["passage"]))
    grades = row["grades"] if "grades" in row else [row["grade"]]
    if not isinstance(query, str) or not isinstance(digest, str):
        raise ValueError("query and passage_sha256 must be strings")
    if not grades or not all(
        isinstance(g, int) and not isinstance(g, bool) and 0 <= g <= 3 for g in grades
    ):
        raise ValueError("grades must be integers from 0 to 3")
    return (query, digest), (list(grades), str(row.get("reason", "")))
