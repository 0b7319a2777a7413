"""Candidates for new gold: hits a judge found relevant that no gold quote covers.

``grk eval adjudicate`` writes a list file, one JSON line per judged hit (query, doc, span,
grades, majority, ``possibly_missing_from_gold``). A person reviews the flagged lines; each
accepted span becomes a new gold quote (grade 1, the passage verbatim) of its query. The whole
state of a review is its decisions, so replaying them over the same judgments and list
rebuilds the same result (a review can be saved decision by decision and resumed).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import ClassVar, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from groundkit.evalset._errors import EvalSetError
from groundkit.evalset.judge._span import JudgedSpan, SpanKey
from groundkit.judgments import GoldQuote, Judgment
from groundkit.judgments.gold import format_validation_error

__all__ = [
    "CANDIDATE_SOURCE_KEY",
    "CandidateAction",
    "CandidateDecision",
    "CandidateLine",
    "apply_candidate_decisions",
    "read_candidate_decisions",
    "read_candidates",
]

CandidateAction = Literal["accept", "reject", "skip"]
#: ``meta`` key listing the gold quotes a review added from judged candidates.
CANDIDATE_SOURCE_KEY = "gold_added_from_candidates"

_Row = TypeVar("_Row", bound=BaseModel)


class CandidateLine(JudgedSpan):
    """One line of an adjudication list (extra fields are kept by adjudicate, ignored here)."""

    model_config = ConfigDict(frozen=True, extra="ignore")
    json_order: ClassVar[tuple[str, ...]] = (
        "query_id",
        "query",
        "stage",
        "rank",
        "doc",
        "start",
        "end",
        "passage_sha256",
        "grades",
        "majority",
        "possibly_missing_from_gold",
    )

    query: str
    possibly_missing_from_gold: bool


class CandidateDecision(BaseModel):
    """A person's decision on one candidate."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    action: CandidateAction
    query_id: str
    doc: str
    start: int = Field(ge=0)
    end: int = Field(ge=0)

    @property
    def key(self) -> SpanKey:
        """The (query, span) decided."""
        return (self.query_id, self.doc, self.start, self.end)


def _rows(path: Path, model: type[_Row], what: str) -> Iterator[tuple[int, _Row]]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise EvalSetError(f"cannot read {path}: {error}") from None
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            yield number, model.model_validate(json.loads(raw))
        except json.JSONDecodeError:
            raise EvalSetError(f"{path}:{number}: not a JSON object") from None
        except ValidationError as error:
            raise EvalSetError(
                f"{path}:{number}: not {what} line: {format_validation_error(error)}"
            ) from None


def read_candidates(path: Path) -> list[CandidateLine]:
    """The lines of an adjudication list, in order, one per distinct (query, span).

    Raises:
        EvalSetError: The file cannot be read, or a line is not a list line (names the
            file and line).
    """
    found: dict[SpanKey, CandidateLine] = {}
    for number, line in _rows(path, CandidateLine, "an adjudication list"):
        if line.end <= line.start:
            raise EvalSetError(f"{path}:{number}: empty span {line.start}-{line.end}")
        found.setdefault(line.key, line)
    return list(found.values())


def read_candidate_decisions(path: Path) -> list[CandidateDecision]:
    """Decisions written down beforehand, in order (the latest on a candidate counts).

    Each line is one JSON object: ``action``, ``query_id``, ``doc``, ``start``, ``end``.

    Raises:
        EvalSetError: The file cannot be read or a line is not a decision (names the
            file and line).
    """
    return [decision for _, decision in _rows(path, CandidateDecision, "a candidate decision")]


def _quote(line: CandidateLine, corpus: Mapping[str, str]) -> str:
    text = corpus.get(line.doc)
    if text is None:
        raise EvalSetError(
            f"candidate of {line.query_id!r}: document {line.doc!r} is not in the corpus"
        )
    quote = text[line.start : line.end]
    if hashlib.sha256(quote.encode("utf-8")).hexdigest() != line.passage_sha256:
        raise EvalSetError(
            f"candidate of {line.query_id!r} in {line.doc!r} at {line.start}-{line.end}: the "
            "corpus text differs from the passage that was judged (give the report's corpus)"
        )
    return quote


def apply_candidate_decisions(
    judgments: Sequence[Judgment],
    candidates: Sequence[CandidateLine],
    decisions: Iterable[CandidateDecision],
    corpus: Mapping[str, str],
) -> list[Judgment]:
    """The judgments with every accepted candidate added as a gold quote (grade 1).

    The latest decision on a candidate counts. A quote its query already has is not added
    twice. Each query that gained quotes lists their spans under ``meta`` key
    :data:`CANDIDATE_SOURCE_KEY`.

    Raises:
        EvalSetError: A decision on no candidate of the list, a candidate whose query is not
            in the judgments (or is unanswerable), or a corpus other than the judged one.
    """
    lines = {c.key: c for c in candidates}
    latest: dict[SpanKey, CandidateAction] = {}
    for decision in decisions:
        if decision.key not in lines:
            raise EvalSetError(
                f"decision on {decision.query_id!r} {decision.doc}:{decision.start}-"
                f"{decision.end}, which is not a candidate of the list"
            )
        latest[decision.key] = decision.action
    by_id = {j.query_id: j for j in judgments}
    added: dict[str, list[CandidateLine]] = {}
    for key, action in latest.items():
        if action != "accept":
            continue
        line = lines[key]
        judgment = by_id.get(line.query_id)
        if judgment is None or not judgment.gold:
            raise EvalSetError(
                f"candidate of {line.query_id!r}: no answerable query with that id in the judgments"
            )
        added.setdefault(line.query_id, []).append(line)
    return [_with_quotes(j, added.get(j.query_id, []), corpus) for j in judgments]


def _with_quotes(
    judgment: Judgment, lines: Sequence[CandidateLine], corpus: Mapping[str, str]
) -> Judgment:
    if not lines:
        return judgment
    gold = list(judgment.gold)
    sources = list(judgment.meta.get(CANDIDATE_SOURCE_KEY, []))
    for line in sorted(lines, key=lambda c: c.key):
        quote = GoldQuote(doc=line.doc, quote=_quote(line, corpus), grade=1)
        if any(g.doc == quote.doc and g.quote == quote.quote for g in gold):
            continue
        gold.append(quote)
        sources.append({"doc": line.doc, "start": line.start, "end": line.end})
    meta = {**judgment.meta, CANDIDATE_SOURCE_KEY: sources}
    return judgment.model_copy(update={"gold": tuple(gold), "meta": meta})
