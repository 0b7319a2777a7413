"""A report's notes as typed records: a code a program can act on, the text a person reads.

``EvalReport.notes`` keeps the texts (what every earlier reader reads); ``note_records``
carries the same notes with their :class:`NoteCode` and level, so no reader has to match a
note by its wording. A report written before the records existed reads them as ``other``.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict

__all__ = ["NoteCode", "NoteLevel", "ReportNote"]

NoteLevel = Literal["caution", "info"]


class NoteCode(StrEnum):
    """What a report note is about (stable names: programs match these, never the text)."""

    CHUNK_LEVEL = "chunk-level"
    DOCUMENT_LEVEL = "document-level"
    UNANSWERABLE = "unanswerable"
    UNRESOLVED_QUOTES = "unresolved-quotes"
    MISSING_DOCUMENTS = "missing-documents"
    STAGE_FAILED = "stage-failed"
    QUERIES_WITHOUT_HITS = "queries-without-hits"
    CUTOFF_ABOVE_DEPTH = "cutoff-above-depth"
    DETECTION_LIMIT = "detection-limit"
    UNLOCATED_HITS = "unlocated-hits"
    LOW_JUDGED = "low-judged"
    ADJUDICATED = "adjudicated"
    ABLATION = "ablation"
    OTHER = "other"


class ReportNote(BaseModel):
    """One note of a report.

    Attributes:
        code: What the note is about.
        level: ``caution`` (a number may mislead without it) or ``info``.
        text: The note, one or two sentences for a person.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    code: NoteCode
    level: NoteLevel = "info"
    text: str

    def __str__(self) -> str:
        return self.text
