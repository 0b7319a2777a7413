"""Drafting eval questions from corpus passages with a model (any ``prompt -> reply`` callable).

Each draft must carry a verbatim quote of its document: drafts whose quote does not resolve in
the document (the model paraphrased or invented it) are dropped and counted, because a gold
quote that is not in the corpus can never be retrieved. Drafts are marked unreviewed.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from groundkit.evalset._errors import EvalSetError
from groundkit.judgments import Judgment
from groundkit.judgments.gold import format_validation_error, resolve_quote

__all__ = ["DraftResult", "DroppedDraft", "draft_questions", "split_passages"]

_PROMPT = """You write evaluation questions for a search system over a document collection.
Read the passage from the document "{doc}" and write ONE question that a user could ask and that
the passage answers.
Rules:
- The question must stand alone: name what it asks about; never use "it", "this" or "they"
  without saying what they are.
- The question must need this passage: avoid general-knowledge questions.
- "quote" must be copied word for word from the passage: the shortest sentence or sentences
  that answer the question.
- "answer" is a short answer in your own words.
Reply with a JSON object only, no commentary:
{{"question": "...", "quote": "...", "answer": "..."}}

Passage:
\"\"\"
{passage}
\"\"\""""

_FENCE = re.compile(r"^```(?:json)?\s*|\s*```$", re.IGNORECASE)
_SLUG = re.compile(r"[^a-z0-9]+")
_MAX_SLUG = 80


class DroppedDraft(BaseModel):
    """A draft that did not become an eval item.

    Attributes:
        doc: The document the passage came from.
        passage: Index of the passage within the document's chosen passages.
        kind: ``unresolved`` (the quote is not in the document) or ``malformed`` (the reply
            was not the requested JSON, or not a valid judgment).
        detail: What was wrong.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    doc: str
    passage: int
    kind: Literal["unresolved", "malformed"]
    detail: str


class DraftResult(BaseModel):
    """The drafts and what was dropped on the way.

    Attributes:
        judgments: The drafts, unreviewed (``meta["reviewed"] = False``).
        asked: Number of requests made to the model.
        dropped: Every dropped draft with why.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    judgments: tuple[Judgment, ...]
    asked: int
    dropped: tuple[DroppedDraft, ...]

    @property
    def unresolved_count(self) -> int:
        """Drafts dropped because their quote does not resolve in their document."""
        return sum(1 for item in self.dropped if item.kind == "unresolved")

    @property
    def malformed_count(self) -> int:
        """Drafts dropped because the reply was unusable."""
        return sum(1 for item in self.dropped if item.kind == "malformed")

    def summary(self) -> str:
        """One line: asked, drafted, dropped by kind."""
        return (
            f"asked {self.asked}, drafted {len(self.judgments)}, dropped "
            f"{self.unresolved_count} with a quote not in the document and "
            f"{self.malformed_count} unusable replies"
        )


def split_passages(text: str, max_chars: int) -> list[str]:
    """Paragraphs of ``text`` packed greedily into passages of at most ``max_chars`` characters.

    A paragraph longer than ``max_chars`` is cut at the last whitespace before the limit.
    """
    if max_chars < 1:
        raise EvalSetError(f"passage length must be at least 1, got {max_chars}")
    pieces: list[str] = []
    for paragraph in re.split(r"\n\s*\n", text):
        block = paragraph.strip()
        while len(block) > max_chars:
            cut = block.rfind(" ", 0, max_chars + 1)
            cut = cut if cut > 0 else max_chars
            pieces.append(block[:cut].strip())
            block = block[cut:].strip()
        if block:
            pieces.append(block)
    passages: list[str] = []
    for piece in pieces:
        if passages and len(passages[-1]) + 2 + len(piece) <= max_chars:
            passages[-1] = passages[-1] + "\n\n" + piece
        else:
            passages.append(piece)
    return passages


def _spread(count: int, wanted: int) -> list[int]:
    """``wanted`` indices spread evenly over ``range(count)`` (all of them when fewer)."""
    if wanted >= count:
        return list(range(count))
    return (
        [round(i * (count - 1) / max(1, wanted - 1)) for i in range(wanted)] if wanted > 1 else [0]
    )


def _slug(doc: str) -> str:
    slug = _SLUG.sub("-", doc.casefold()).strip("-") or "doc"
    if len(slug) > _MAX_SLUG:
        digest = hashlib.sha256(doc.encode("utf-8")).hexdigest()[:8]
        slug = slug[:_MAX_SLUG].rstrip("-") + "-" + digest
    return slug


def _parse_reply(reply: str) -> dict[str, Any]:
    text = _FENCE.sub("", reply.strip())
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end <= start:
        raise ValueError("the reply holds no JSON object")
    try:
        data = json.loads(text[start : end + 1])
    except json.JSONDecodeError as error:
        raise ValueError(f"the reply is not valid JSON ({error.msg})") from None
    if not isinstance(data, dict):
        raise ValueError("the reply is not a JSON object")
    for key in ("question", "quote"):
        if not isinstance(data.get(key), str) or not data[key].strip():
            raise ValueError(f"the reply has no {key!r} text")
    if data.get("answer") is not None and not isinstance(data["answer"], str):
        raise ValueError("'answer' is not text")
    return data


def draft_questions(
    corpus: Mapping[str, str],
    ask: Callable[[str], str],
    *,
    per_doc: int = 3,
    passage_chars: int = 2_000,
    id_prefix: str = "gen",
    meta: Mapping[str, Any] | None = None,
) -> DraftResult:
    """Ask a model for one question per passage, up to ``per_doc`` passages per document.

    Args:
        corpus: Document id to text (a ``Corpus`` works).
        ask: The model: prompt in, reply out. It is asked for a JSON object with
            ``question``, ``quote`` (verbatim from the passage) and ``answer``.
        per_doc: Passages (so questions) per document, spread evenly through it.
        passage_chars: Longest passage shown to the model.
        id_prefix: Prefix of the drafts' query ids (``<prefix>-<doc slug>-<n>``).
        meta: Extra ``meta`` for every draft (e.g. the model name).

    Returns:
        The drafts (in corpus order) and the dropped ones with why.

    Raises:
        EvalSetError: ``per_doc`` below 1 or an invalid ``id_prefix``.
    """
    if per_doc < 1:
        raise EvalSetError(f"per_doc must be at least 1, got {per_doc}")
    if _SLUG.sub("-", id_prefix.casefold()).strip("-") != id_prefix:
        raise EvalSetError(f"id prefix {id_prefix!r} must be lowercase kebab-case")
    extra = dict(meta or {})
    drafts: list[Judgment] = []
    dropped: list[DroppedDraft] = []
    used_ids: set[str] = set()
    asked = 0
    for doc in sorted(corpus):
        text = corpus[doc]
        passages = split_passages(text, passage_chars)
        for number, index in enumerate(_spread(len(passages), per_doc), start=1):
            asked += 1
            reply = ask(_PROMPT.format(doc=doc, passage=passages[index]))
            try:
                data = _parse_reply(reply)
            except ValueError as error:
                dropped.append(
                    DroppedDraft(doc=doc, passage=number, kind="malformed", detail=str(error))
                )
                continue
            spans, _ = resolve_quote(text, data["quote"])
            if not spans:
                shown = " ".join(data["quote"].split())[:60]
                dropped.append(
                    DroppedDraft(
                        doc=doc,
                        passage=number,
                        kind="unresolved",
                        detail=f"quote {shown!r} is not in the document",
                    )
                )
                continue
            query_id = f"{id_prefix}-{_slug(doc)}-{number}"
            while query_id in used_ids:
                query_id += "-" + hashlib.sha256(query_id.encode()).hexdigest()[:4]
            answer = data.get("answer")
            try:
                judgment = Judgment.model_validate(
                    {
                        "query_id": query_id,
                        "query": " ".join(data["question"].split()),
                        "gold": [{"doc": doc, "quote": data["quote"]}],
                        "answer": answer.strip()
                        if isinstance(answer, str) and answer.strip()
                        else None,
                        "meta": {**extra, "reviewed": False, "source": "generated"},
                    }
                )
            except ValidationError as error:
                dropped.append(
                    DroppedDraft(
                        doc=doc,
                        passage=number,
                        kind="malformed",
                        detail=format_validation_error(error),
                    )
                )
                continue
            used_ids.add(query_id)
            drafts.append(judgment)
    return DraftResult(judgments=tuple(drafts), asked=asked, dropped=tuple(dropped))
