"""Sheets for people: a stratified sample of hits or misses to mark, and what the marks say.

A sheet row is one hit or miss with its stratum (a diagnosis bucket or a stage) and the
stratum's size. A person fills the ``mark`` column — ``judge right``, ``judge wrong``, ``gold
wrong`` or ``unsure`` — in the JSONL or the CSV (a spreadsheet keeps the columns). The *call*
a mark is about is the row's: the judge's grade when it has one, else the gold's (a hit that
touches gold is relevant, one that does not is not; a miss is a gold passage not found).

Reading a sheet back gives, per stratum, the share of marked rows whose call was right
(``judge right`` over ``judge right`` + ``judge wrong`` + ``gold wrong``; ``unsure`` and blank
rows count neither way) with a Wilson interval, and overall the share weighted by stratum size
with a stratified Wilson interval.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Mapping, Sequence
from enum import StrEnum
from pathlib import Path
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from groundkit.evalset._errors import EvalSetError
from groundkit.evalset.pool._pool import allocate
from groundkit.stats import (
    ProportionInterval,
    stratified_wilson_interval,
    wilson_interval,
)

__all__ = [
    "SHEET_COLUMNS",
    "SHEET_FORMAT",
    "SheetCandidate",
    "SheetMark",
    "SheetResult",
    "SheetRow",
    "SheetStratum",
    "draw_sheet",
    "read_sheet",
    "sheet_csv",
    "sheet_jsonl",
    "sheet_precision",
]

SHEET_FORMAT = "groundkit-sheet-1"


class SheetMark(StrEnum):
    """What a person says of a row's call."""

    JUDGE_RIGHT = "judge right"
    JUDGE_WRONG = "judge wrong"
    GOLD_WRONG = "gold wrong"
    UNSURE = "unsure"


class SheetCandidate(BaseModel):
    """A hit or miss that may go on a sheet.

    Attributes:
        stratum: Its stratum (a diagnosis bucket or a stage).
        kind: ``hit`` or ``miss``.
        stage: The stage.
        query_id: The query.
        query: The question.
        doc: The document.
        start: Span start (characters; the quote's for a miss).
        end: Span end.
        rank: The hit's rank (a miss: the first hit touching the quote, if any).
        text: The passage (a hit) or the gold quote (a miss).
        touches_gold: A hit: whether it touches a gold quote.
        judge_grade: The adjudicated grade, when there is one.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    stratum: str
    kind: Literal["hit", "miss"]
    stage: str
    query_id: str
    query: str
    doc: str
    start: int | None = None
    end: int | None = None
    rank: int | None = None
    text: str = ""
    touches_gold: bool | None = None
    judge_grade: int | None = None


class SheetRow(SheetCandidate):
    """A sheet row: a candidate with its place, its stratum's size and the person's mark.

    Attributes:
        sheet: :data:`SHEET_FORMAT`.
        row: Row number (1-based).
        stratum_size: Candidates in the stratum (its weight).
        mark: The person's mark (``None``: not marked yet).
        comment: Free text for the person.
    """

    sheet: str = SHEET_FORMAT
    row: int = Field(ge=1)
    stratum_size: int = Field(ge=1)
    mark: SheetMark | None = None
    comment: str = ""


SHEET_COLUMNS: tuple[str, ...] = (
    "sheet", "row", "stratum", "stratum_size", "mark", "comment", "kind", "stage", "query_id",
    "query", "doc", "start", "end", "rank", "touches_gold", "judge_grade", "text",
)  # fmt: skip
"""The CSV's columns, in order (the JSONL carries the same keys)."""


def draw_sheet(candidates: Sequence[SheetCandidate], n: int, seed: int) -> list[SheetRow]:
    """Draw ``n`` rows, equally per stratum (seeded, without replacement), in stratum order.

    Raises:
        EvalSetError: No candidates, or ``n`` below 1.
    """
    if n < 1:
        raise EvalSetError(f"n must be at least 1, got {n}")
    if not candidates:
        raise EvalSetError("nothing to sample: no candidate rows")
    strata: dict[str, list[SheetCandidate]] = {}
    for candidate in candidates:
        strata.setdefault(candidate.stratum, []).append(candidate)
    names = list(strata)
    quotas = allocate([len(strata[name]) for name in names], n)
    rng = np.random.default_rng(seed)
    rows: list[SheetRow] = []
    for name, quota in zip(names, quotas, strict=True):
        members = strata[name]
        for pick in sorted(rng.choice(len(members), size=quota, replace=False)):
            rows.append(
                SheetRow(
                    **members[int(pick)].model_dump(),
                    row=len(rows) + 1,
                    stratum_size=len(members),
                )
            )
    return rows


def _cell(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, SheetMark):
        return value.value
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def sheet_jsonl(rows: Sequence[SheetRow]) -> str:
    """The sheet as JSON lines."""
    return "".join(r.model_dump_json() + "\n" for r in rows)


def sheet_csv(rows: Sequence[SheetRow]) -> str:
    """The sheet as CSV with :data:`SHEET_COLUMNS` (a header line first)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(SHEET_COLUMNS)
    for row in rows:
        values = row.model_dump()
        writer.writerow([_cell(row.mark if c == "mark" else values[c]) for c in SHEET_COLUMNS])
    return buffer.getvalue()


def _mark(value: object, path: Path, line: int) -> SheetMark | None:
    if value is None:
        return None
    text = str(value).strip().lower().replace("_", " ").replace("-", " ")
    if not text:
        return None
    try:
        return SheetMark(" ".join(text.split()))
    except ValueError:
        known = ", ".join(m.value for m in SheetMark)
        raise EvalSetError(
            f"{path}: line {line}: unknown mark {str(value)!r} (give {known}, or leave it empty)"
        ) from None


def _csv_record(record: Mapping[str, object]) -> dict[str, object]:
    out: dict[str, object] = {}
    for key, value in record.items():
        if key is None:
            raise ValueError("more cells than columns")
        if not isinstance(key, str) or key not in SHEET_COLUMNS or not isinstance(value, str):
            continue  # a column the person added (or a short row): not the sheet's
        if key in {"row", "stratum_size", "start", "end", "rank", "judge_grade"}:
            out[key] = int(value) if value.strip() else None
        elif key == "touches_gold":
            out[key] = None if not value.strip() else value.strip().lower() in {"true", "1", "yes"}
        else:
            out[key] = value
    return out


def _records(path: Path, text: str) -> list[tuple[int, dict[str, object]]]:
    if path.suffix.lower() == ".csv":
        reader = csv.DictReader(io.StringIO(text.removeprefix("\ufeff")))
        missing = {"sheet", "row", "stratum", "stratum_size", "mark"} - set(reader.fieldnames or [])
        if missing:
            raise EvalSetError(
                f"{path}: line 1: not a sample sheet (no {', '.join(sorted(missing))} column)"
            )
        records = []
        start = reader.line_num + 1
        for record in reader:
            # The line the row starts on: a quoted cell may hold newlines.
            records.append((start, dict(record)))
            start = reader.line_num + 1
        return records
    found = []
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            try:
                found.append((number, json.loads(line)))
            except json.JSONDecodeError as error:
                raise EvalSetError(f"{path}: line {number}: not JSON ({error.msg})") from None
    return found


def read_sheet(path: Path) -> list[SheetRow]:
    """Read a sheet back (``.csv``, else JSON lines), as a person edited it.

    Raises:
        EvalSetError: The file cannot be read, a line is not a sheet row, or a mark is not
            one of :class:`SheetMark` (the message names the file, line and value).
    """
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise EvalSetError(f"cannot read sheet {path}: {error}") from None
    rows = []
    is_csv = path.suffix.lower() == ".csv"
    for line, record in _records(path, text):
        if not isinstance(record, dict) or record.get("sheet") != SHEET_FORMAT:
            raise EvalSetError(f"{path}: line {line}: not a sample sheet row")
        mark = _mark(record.pop("mark", None), path, line)
        try:
            fields = _csv_record(record) if is_csv else record
            row = SheetRow.model_validate({**fields, "mark": mark})
        except (ValidationError, ValueError, TypeError) as error:
            first = str(error).splitlines()[0] if str(error) else type(error).__name__
            raise EvalSetError(f"{path}: line {line}: not a sample sheet row ({first})") from None
        rows.append(row)
    if not rows:
        raise EvalSetError(f"{path}: the sheet has no rows")
    return rows


class SheetStratum(BaseModel):
    """What the marks say in one stratum.

    Attributes:
        stratum: The stratum.
        size: Its size (candidates it stands for).
        rows: Rows drawn from it.
        right: Rows marked ``judge right``.
        judge_wrong: Rows marked ``judge wrong``.
        gold_wrong: Rows marked ``gold wrong``.
        unsure: Rows marked ``unsure``.
        unmarked: Rows left empty.
        precision: ``right`` over the rows marked right or wrong, with a Wilson interval
            (``None``: none is).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    stratum: str
    size: int
    rows: int
    right: int
    judge_wrong: int
    gold_wrong: int
    unsure: int
    unmarked: int
    precision: ProportionInterval | None = None


class SheetResult(BaseModel):
    """A read-back sheet: per stratum and overall (weighted by stratum size)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    strata: list[SheetStratum]
    overall: ProportionInterval | None = None


def sheet_precision(rows: Sequence[SheetRow], *, confidence: float = 0.95) -> SheetResult:
    """Precision of the calls per stratum and overall, from a person's marks.

    A stratum without a row marked right or wrong has no precision and is left out of the
    overall figure, which weights the others by their sizes.

    Raises:
        EvalSetError: Rows of one stratum give different stratum sizes.
    """
    groups: dict[str, list[SheetRow]] = {}
    for row in rows:
        groups.setdefault(row.stratum, []).append(row)
    strata = []
    for name, members in groups.items():
        sizes = {r.stratum_size for r in members}
        if len(sizes) != 1:
            raise EvalSetError(f"stratum {name!r}: rows give different sizes {sorted(sizes)}")
        marks = [r.mark for r in members]
        right = marks.count(SheetMark.JUDGE_RIGHT)
        counted = right + marks.count(SheetMark.JUDGE_WRONG) + marks.count(SheetMark.GOLD_WRONG)
        strata.append(
            SheetStratum(
                stratum=name,
                size=sizes.pop(),
                rows=len(members),
                right=right,
                judge_wrong=marks.count(SheetMark.JUDGE_WRONG),
                gold_wrong=marks.count(SheetMark.GOLD_WRONG),
                unsure=marks.count(SheetMark.UNSURE),
                unmarked=marks.count(None),
                precision=wilson_interval(right, counted, confidence=confidence)
                if counted
                else None,
            )
        )
    counted_strata = [
        (s.right, s.right + s.judge_wrong + s.gold_wrong, s.size)
        for s in strata
        if s.precision is not None
    ]
    overall = (
        stratified_wilson_interval(counted_strata, confidence=confidence)
        if counted_strata
        else None
    )
    return SheetResult(strata=strata, overall=overall)
