"""Question types: a regex heuristic, optionally overruled by a model, never over a person.

Types, from most to least specific (the heuristic tries them in this order and the first
pattern that matches decides): ``summarisation``, ``comparative``, ``tabular``, ``numeric``,
``multi-hop``, and ``factoid`` for everything else.

Who set a type is recorded in ``meta["qtype_source"]``: ``"heuristic"`` or ``"model"`` when
the classifier set it, ``"person"`` when a reviewer did. A type without that key was written by
hand in the judgments file, so it counts as a person's. A person's type is kept unless
``overwrite=True``; a type the classifier set earlier is recomputed.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict

from groundkit.judgments import Judgment

__all__ = [
    "QTYPE_SOURCE_KEY",
    "QUESTION_TYPES",
    "UNLABELLED",
    "Classifier",
    "Label",
    "heuristic_type",
    "normalise_type",
    "type_distribution",
]

#: Known question types, most specific first.
QUESTION_TYPES: tuple[str, ...] = (
    "summarisation",
    "comparative",
    "tabular",
    "numeric",
    "multi-hop",
    "factoid",
)
#: The bucket of :func:`type_distribution` for items without a type.
UNLABELLED = "unlabelled"
#: ``meta`` key recording who set ``qtype``.
QTYPE_SOURCE_KEY = "qtype_source"

LabelSource = Literal["heuristic", "model", "person"]

_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "summarisation",
        re.compile(
            r"\b(summari[sz](e|es|ing|ation)|summary|overview|outline|gist|in a nutshell|"
            r"tl;?dr|main (points|ideas|themes)|key (points|takeaways|ideas)|"
            r"what is (this|the) (document|section|page|article|policy) about)\b"
        ),
    ),
    (
        "comparative",
        re.compile(
            r"\b(compare[sd]?|comparing|comparison|contrast|differ(s|ed|ence|ences|ent)?|"
            r"versus|vs\.?|similarit(y|ies)|(more|less|fewer) \w+ than|"
            r"\w+er than|same as|which is (better|worse|larger|smaller|faster|slower))\b"
        ),
    ),
    (
        "tabular",
        re.compile(r"\b(table|tabular|column|columns|row|rows|spreadsheet|chart|csv)\b"),
    ),
    (
        "numeric",
        re.compile(
            r"\b(how (many|much|long|often|old|far|big|large|high|tall|fast)|"
            r"what (percentage|percent|number|amount|rate|ratio|fraction|proportion|year|"
            r"share|total|sum|average|maximum|minimum|limit)|number of|percent(age)?|"
            r"in which year|what is the (cap|ceiling|minimum|maximum|limit))\b"
        ),
    ),
    (
        "multi-hop",
        re.compile(
            r"\b(both\b.+\band|and (then|also)|as well as|in turn|whose|"
            r"the (one|person|team|group|company|document|policy|author|country|city) "
            r"(that|which|who)|of the \w+ (that|which|who))\b"
        ),
    ),
)

_PROMPT = """Classify the question into exactly one type.
Types:
- summarisation: asks for a summary, overview or the main points of a text
- comparative: compares two or more things, or asks how they differ
- tabular: asks about a table, its rows, columns or cells
- numeric: the answer is a number, amount, percentage, duration or year
- multi-hop: needs two or more facts chained together to answer
- factoid: a single fact (who, what, where, when) stated in one place
Reply with the type name only.

Question: {question}
Type:"""


def heuristic_type(question: str) -> str:
    """The type the regex heuristic gives ``question`` (``factoid`` when nothing matches)."""
    text = " ".join(question.casefold().split())
    for name, pattern in _PATTERNS:
        if pattern.search(text):
            return name
    return "factoid"


def normalise_type(reply: str) -> str | None:
    """A model's reply as a known type, or ``None`` when it is not one.

    Accepts the type name alone, with surrounding spaces, quotes, a trailing full stop,
    any case, ``summarization`` for ``summarisation`` and ``multi hop``/``multihop`` for
    ``multi-hop``; anything else (a sentence, two types, an unknown word) is refused.
    """
    text = reply.strip().strip("`'\".:;!*").strip().casefold()
    text = re.sub(r"^type\s*:\s*", "", text)
    text = text.replace("summarization", "summarisation")
    text = re.sub(r"^multi[\s_]?hop$", "multi-hop", text)
    return text if text in QUESTION_TYPES else None


class Label(BaseModel):
    """A question type and who chose it.

    Attributes:
        qtype: One of :data:`QUESTION_TYPES` (or a person's own label).
        source: ``heuristic``, ``model`` or ``person``.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    qtype: str
    source: LabelSource


def _person_set(judgment: Judgment) -> bool:
    return judgment.qtype is not None and judgment.meta.get(QTYPE_SOURCE_KEY, "person") == "person"


class Classifier:
    """Labels questions with a type.

    Args:
        model: A callable taking a prompt and returning the model's reply. Its reply is used
            only when it names one known type; otherwise the heuristic decides.
        overwrite: Replace types a person set too (by default they are kept).

    Attributes:
        model_replies: Replies accepted from the model so far.
        model_fallbacks: Replies refused (the heuristic decided instead) so far.
    """

    def __init__(
        self, model: Callable[[str], str] | None = None, *, overwrite: bool = False
    ) -> None:
        self.model = model
        self.overwrite = overwrite
        self.model_replies = 0
        self.model_fallbacks = 0

    def label(self, question: str) -> Label:
        """The type of ``question``, from the model when its reply is valid, else the heuristic."""
        if self.model is not None:
            accepted = normalise_type(self.model(_PROMPT.format(question=question)))
            if accepted is not None:
                self.model_replies += 1
                return Label(qtype=accepted, source="model")
            self.model_fallbacks += 1
        return Label(qtype=heuristic_type(question), source="heuristic")

    def classify_one(self, judgment: Judgment) -> Judgment:
        """``judgment`` with its type set (a person's type is kept unless ``overwrite``)."""
        if _person_set(judgment) and not self.overwrite:
            return judgment
        label = self.label(judgment.query)
        meta = {**judgment.meta, QTYPE_SOURCE_KEY: label.source}
        return judgment.model_copy(update={"qtype": label.qtype, "meta": meta})

    def classify(self, judgments: Iterable[Judgment]) -> list[Judgment]:
        """Every judgment with its type set, in input order."""
        return [self.classify_one(judgment) for judgment in judgments]


def type_distribution(judgments: Sequence[Judgment] | Iterable[Judgment]) -> dict[str, int]:
    """Count per question type, most frequent first; items without a type under ``unlabelled``."""
    counts = Counter(judgment.qtype or UNLABELLED for judgment in judgments)
    return dict(sorted(counts.items(), key=lambda item: (-item[1], item[0])))
