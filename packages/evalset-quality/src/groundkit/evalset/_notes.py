"""Log entries: what a check found that a reader must know (CAUTION) or may want to know (INFO)."""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict

__all__ = ["CAUTION", "INFO", "EvalsetNoteCode", "Note", "NoteLevel"]

NoteLevel = Literal["CAUTION", "INFO"]
CAUTION: NoteLevel = "CAUTION"
INFO: NoteLevel = "INFO"


class EvalsetNoteCode(StrEnum):
    """What an eval-set note is about (stable names: programs match these, never the text)."""

    NO_ANSWERABLE = "no-answerable"
    SMALL_SET = "small-set"
    DETECTION_FLOOR = "detection-floor"
    PAIRED_FLOOR = "paired-floor"
    LOW_REVIEW_COVERAGE = "low-review-coverage"
    UNLABELLED_TYPES = "unlabelled-types"
    DOMINANT_TYPE = "dominant-type"
    PORTABILITY_UNCHECKED = "portability-unchecked"
    UNRESOLVED_GOLD = "unresolved-gold"
    DISCRIMINATION_UNCHECKED = "discrimination-unchecked"
    SCORES_UNKNOWN_IDS = "scores-unknown-ids"
    SCORES_MISSING = "scores-missing"
    NON_DISCRIMINATING = "non-discriminating"
    SAME_ACROSS_STAGES = "same-across-stages"
    SINGLE_STAGE = "single-stage"
    GENERAL_KNOWLEDGE_UNCHECKED = "general-knowledge-unchecked"
    NO_REFERENCE_ANSWER = "no-reference-answer"
    GENERAL_KNOWLEDGE = "general-knowledge"
    MOST_REJECTED = "most-rejected"
    FEW_KEPT = "few-kept"
    FILTER_DID_NOT_RUN = "filter-did-not-run"
    NOT_RESOLVED = "not-resolved"
    UNSCORED = "unscored"


class Note(BaseModel):
    """One entry of a warnings log.

    Attributes:
        level: ``CAUTION`` (a conclusion drawn from the set may be wrong) or ``INFO``.
        code: What the note is about (an :class:`EvalsetNoteCode`; its value, e.g.
            ``small-set``, is what the JSON output carries).
        message: One sentence for a person.
        source: The check or filter that wrote the entry.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    level: NoteLevel
    code: EvalsetNoteCode
    message: str
    source: str = "assess"

    def __str__(self) -> str:
        return f"{self.level}: {self.message}"
