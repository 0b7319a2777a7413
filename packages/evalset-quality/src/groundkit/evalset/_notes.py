"""Log entries: what a check found that a reader must know (CAUTION) or may want to know (INFO)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

__all__ = ["CAUTION", "INFO", "Note", "NoteLevel"]

NoteLevel = Literal["CAUTION", "INFO"]
CAUTION: NoteLevel = "CAUTION"
INFO: NoteLevel = "INFO"


class Note(BaseModel):
    """One entry of a warnings log.

    Attributes:
        level: ``CAUTION`` (a conclusion drawn from the set may be wrong) or ``INFO``.
        code: Stable machine-readable name of the finding, e.g. ``small-set``.
        message: One sentence for a person.
        source: The check or filter that wrote the entry.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    level: NoteLevel
    code: str
    message: str
    source: str = "assess"

    def __str__(self) -> str:
        return f"{self.level}: {self.message}"
