"""The relevance judge's prompt and the parsing of its reply (the 0–3 graded scale).

The scale is the one TREC assessors and UMBRELA use — 0 irrelevant, 1 related, 2 partly
answers, 3 answers — in our own words. ``PROMPT_VERSION`` is part of every cache key: change
the wording and bump it, so no answer to an older prompt is reused for the new one.
"""

from __future__ import annotations

import json
import re
from enum import IntEnum

from groundkit.evalset._errors import EvalSetError

__all__ = ["PROMPT_VERSION", "Grade", "JudgeReplyError", "judge_prompt", "parse_reply"]

PROMPT_VERSION = "relevance-0to3-v1"
"""Version of :func:`judge_prompt`'s wording (part of every cache key)."""

_MAX_REASON = 300


class Grade(IntEnum):
    """How well a passage serves a question (the TREC 0–3 graded scale)."""

    IRRELEVANT = 0
    RELATED = 1
    PARTLY_ANSWERS = 2
    ANSWERS = 3


class JudgeReplyError(EvalSetError):
    """A judge's reply that carries no grade from 0 to 3 (the call counts as failed)."""


_PROMPT = """You assess search results. Read the question and the passage, then say how well \
the passage serves someone who asked the question.

Grades:
0 - irrelevant: the passage has nothing to do with the question.
1 - related: same subject, but it does not help answer the question.
2 - partly answers: it gives part of the answer, or the answer mixed with unclear or \
missing pieces.
3 - answers: a reader could answer the question from this passage alone.

Judge only the passage as written; do not use what you know from elsewhere.

Question:
{query}

Passage:
{passage}

Reply with one JSON object and nothing else: {{"grade": <0, 1, 2 or 3>, "reason": \
"<one short sentence>"}}"""


def judge_prompt(query: str, passage: str) -> str:
    """The prompt asking for the grade of ``passage`` for ``query``."""
    return _PROMPT.format(query=query.strip(), passage=passage.strip())


_OBJECT = re.compile(r"\{.*\}", re.DOTALL)


def parse_reply(reply: str) -> tuple[Grade, str]:
    """Read the grade and reason out of a judge's reply.

    The reply should be the JSON object the prompt asks for; a model that wraps it in prose or
    a code fence is read too (the first ``{...}`` of the text).

    Raises:
        JudgeReplyError: No JSON object with an integer ``grade`` from 0 to 3.
    """
    match = _OBJECT.search(reply)
    shown = " ".join(reply.split())[:80]
    if match is None:
        raise JudgeReplyError(f"judge reply has no JSON object: {shown!r}")
    try:
        data = json.loads(match.group(0), strict=False)  # a raw newline in the reason
    except json.JSONDecodeError:
        raise JudgeReplyError(f"judge reply is not valid JSON: {shown!r}") from None
    grade = data.get("grade") if isinstance(data, dict) else None
    if isinstance(grade, bool) or not isinstance(grade, int) or not 0 <= grade <= 3:
        raise JudgeReplyError(f"judge reply has no grade from 0 to 3: {shown!r}")
    reason = data.get("reason")
    text = " ".join(reason.split())[:_MAX_REASON] if isinstance(reason, str) else ""
    return Grade(grade), text
