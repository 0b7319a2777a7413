"""The general-knowledge check: can a model answer the question without any retrieval?

A question whose answer a model produces closed-book (no documents shown) does not test
retrieval: every configuration scores well on it, whatever it retrieves. The check asks the
model, then compares its answer with the reference answer by the Jaccard similarity of their
content words: function words such as "the" or "of" are ignored, and so are the question's
own words (a reply that restates the question around the answer is judged on the answer).
"""

from __future__ import annotations

from collections.abc import Callable

from pydantic import BaseModel, ConfigDict

from groundkit.evalset.filters._text import content_words, jaccard
from groundkit.judgments import Judgment

__all__ = ["Answerer", "ClosedBookResult", "closed_book_check"]

#: A closed-book model: question in, answer text out.
Answerer = Callable[[str], str]


class ClosedBookResult(BaseModel):
    """What the closed-book model answered for one question.

    Attributes:
        query_id: The question's id.
        answer: The model's closed-book answer.
        similarity: Jaccard similarity of content words with the reference answer.
        matches: Whether ``similarity`` reached the threshold.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    query_id: str
    answer: str
    similarity: float
    matches: bool


def closed_book_check(
    judgment: Judgment, answerer: Answerer, *, threshold: float = 0.6
) -> ClosedBookResult | None:
    """Ask ``answerer`` the question and compare its answer with the judgment's answer.

    Args:
        judgment: The eval item; its ``answer`` is the reference.
        answerer: The closed-book model.
        threshold: Jaccard similarity at or above which the answers match.

    Returns:
        The result, or ``None`` when the item has no reference answer or no gold (there is
        nothing to compare with, so the model is not asked).
    """
    if judgment.answer is None or not judgment.answer.strip() or not judgment.gold:
        return None
    reply = answerer(judgment.query)
    # Words of the question say nothing about knowing the answer ("The capital of France is
    # Paris" restates the question around "Paris"), so they are left out on both sides.
    asked = content_words(judgment.query)
    reference = content_words(judgment.answer)
    said = content_words(reply)
    if reference - asked:
        reference, said = reference - asked, said - asked
    similarity = jaccard(said, reference)
    return ClosedBookResult(
        query_id=judgment.query_id,
        answer=reply,
        similarity=similarity,
        matches=similarity >= threshold,
    )
