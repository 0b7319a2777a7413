"""Retrieved hits and the overlap rule that decides whether a hit touches a gold span."""

from __future__ import annotations

import math
from typing import Self

from pydantic import BaseModel, ConfigDict, Field, model_validator

from groundkit.judgments._errors import JudgmentError

__all__ = ["Hit", "check_min_overlap_fraction", "overlaps"]


class Hit(BaseModel):
    """One retrieved passage: a character span of a corpus document, with its retrieval score.

    Attributes:
        doc: The document id.
        start: First character of the span (0-based, inclusive), ``>= 0``.
        end: End of the span (exclusive), ``>= start``.
        score: The retriever's score (finite; higher is better). Metrics use the order in which
            hits are given, never the score.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    doc: str = Field(min_length=1)
    start: int = Field(ge=0)
    end: int = Field(ge=0)
    score: float = Field(allow_inf_nan=False)

    @model_validator(mode="after")
    def _check_order(self) -> Self:
        if self.end < self.start:
            raise ValueError(f"hit end ({self.end}) is before its start ({self.start})")
        return self

    @property
    def length(self) -> int:
        """Number of characters of the span (``end - start``)."""
        return self.end - self.start

    def overlaps(
        self, doc: str, start: int, end: int, *, min_overlap_fraction: float = 0.0
    ) -> bool:
        """Whether this hit touches the span ``[start, end)`` of document ``doc``.

        Same rule as :func:`overlaps`, and ``False`` when the documents differ.
        """
        return doc == self.doc and overlaps(
            self.start, self.end, start, end, min_overlap_fraction=min_overlap_fraction
        )


def check_min_overlap_fraction(value: float) -> float:
    """Return ``value`` if it is a valid overlap fraction (finite, within [0, 1]).

    Raises:
        JudgmentError: When it is not.
    """
    if not (math.isfinite(value) and 0.0 <= value <= 1.0):
        raise JudgmentError(f"min_overlap_fraction must be within [0, 1], got {value!r}")
    return float(value)


def overlaps(
    hit_start: int,
    hit_end: int,
    span_start: int,
    span_end: int,
    *,
    min_overlap_fraction: float = 0.0,
) -> bool:
    """Whether the hit ``[hit_start, hit_end)`` touches the gold span ``[span_start, span_end)``.

    Both intervals are half-open character ranges of the same document. With
    ``overlap = min(hit_end, span_end) - max(hit_start, span_start)`` the hit touches the span
    when ``overlap >= 1`` (at least one shared character) and, if ``min_overlap_fraction`` is
    ``f > 0``, also ``overlap >= f * (span_end - span_start)`` (the hit covers at least that
    fraction of the gold span). With ``f = 0`` the relation is symmetric.

    Args:
        hit_start: Start of the hit (inclusive).
        hit_end: End of the hit (exclusive).
        span_start: Start of the gold span (inclusive).
        span_end: End of the gold span (exclusive).
        min_overlap_fraction: Required covered fraction of the gold span, within [0, 1].

    Returns:
        True when the hit touches the span.

    Raises:
        JudgmentError: If ``min_overlap_fraction`` is outside [0, 1].
    """
    fraction = check_min_overlap_fraction(min_overlap_fraction)
    overlap = min(hit_end, span_end) - max(hit_start, span_start)
    if overlap < 1:
        return False
    return fraction == 0.0 or overlap >= fraction * (span_end - span_start)
