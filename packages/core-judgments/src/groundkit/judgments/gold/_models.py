"""The judgment data contract: queries with quote-anchored gold evidence.

Judgments are read in Unicode NFC: the model validators normalise every quote, query id and
document id, so the same text typed composed (``é``, U+00E9) or decomposed (``e`` + U+0301)
is one quote, one id and one key wherever judgments are compared, counted or hashed. Quotes
are then found in the document text as read, through its NFC form, and spans stay offsets
into the document as read (see :mod:`groundkit.judgments.gold._resolve`).
"""

from __future__ import annotations

import json
import math
import re
import unicodedata
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from groundkit.judgments._errors import JudgmentError
from groundkit.judgments.files._control import has_control_character

#: The largest grade a judgment may give: grades are stored as 64-bit integers.
MAX_GRADE = 2**63 - 1

__all__ = [
    "MAX_GRADE",
    "UNANSWERABLE",
    "GoldQuote",
    "Judgment",
    "format_validation_error",
    "validate_doc_id",
    "validate_query_id",
]

#: The category of a judgment without gold evidence (and the only category allowed without it).
UNANSWERABLE = "unanswerable"

_QUERY_ID = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
#: Query ids end up in file names and report keys; keep them comfortably below name limits.
MAX_QUERY_ID_LENGTH = 200


def validate_query_id(value: str) -> str:
    """Check the query-id contract: lowercase kebab-case ASCII (``^[a-z0-9]+(?:-[a-z0-9]+)*$``).

    Args:
        value: The candidate query id.

    Returns:
        ``value`` unchanged.

    Raises:
        JudgmentError: The id does not follow the contract.
    """
    if not isinstance(value, str):
        raise JudgmentError(f"query id must be a string, not {type(value).__name__}")
    if _QUERY_ID.fullmatch(value) is None:
        raise JudgmentError(
            f"query id {value!r} is not lowercase kebab-case (letters a-z, digits, single hyphens)"
        )
    if len(value) > MAX_QUERY_ID_LENGTH:
        raise JudgmentError(
            f"query id is {len(value)} characters long (limit {MAX_QUERY_ID_LENGTH})"
        )
    return value


def validate_doc_id(value: str) -> str:
    """Check the document-id contract: a relative POSIX path inside the corpus.

    Refused: empty ids, absolute paths, backslashes, empty, ``.`` or ``..`` components (so also
    leading, trailing or doubled slashes), and NUL or other control characters.

    Args:
        value: The candidate document id, e.g. ``"policies/leave.md"``.

    Returns:
        ``value`` unchanged.

    Raises:
        JudgmentError: The id does not follow the contract.
    """
    if not isinstance(value, str):
        raise JudgmentError(f"document id must be a string, not {type(value).__name__}")
    if value == "":
        raise JudgmentError("document id is empty")
    shown = repr(value)
    if has_control_character(value):
        raise JudgmentError(f"document id {shown} contains a control character")
    if "\\" in value:
        raise JudgmentError(f"document id {shown} contains a backslash; use '/' between folders")
    if value.startswith("/"):
        raise JudgmentError(f"document id {shown} is an absolute path; it must be relative")
    for part in value.split("/"):
        if part in {"", ".", ".."}:
            raise JudgmentError(
                f"document id {shown} has an empty, '.' or '..' component; "
                "it must be a plain relative path inside the corpus"
            )
    return value


def nfc(value: str) -> str:
    """``value`` in Unicode NFC (the form judgments are compared in).

    Args:
        value: Any text.

    Returns:
        ``value`` itself when it is already NFC, else its NFC form.
    """
    if unicodedata.is_normalized("NFC", value):
        return value
    return unicodedata.normalize("NFC", value)


def _plain_json(value: Any, where: str) -> Any:
    """Return a JSON-only deep copy of ``value`` (tuples become lists); refuse anything else."""
    if value is None or isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{where} is {value}, which JSON cannot represent")
        return value
    if isinstance(value, (list, tuple)):
        return [_plain_json(item, f"{where}[{index}]") for index, item in enumerate(value)]
    if isinstance(value, dict):
        copy: dict[str, Any] = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise ValueError(f"{where} has a non-string key {key!r}")
            copy[key] = _plain_json(item, f"{where}.{key}")
        return copy
    raise ValueError(f"{where} holds a {type(value).__name__}, which is not JSON")


class GoldQuote(BaseModel):
    """One piece of gold evidence: a verbatim passage of a corpus document.

    Attributes:
        doc: Document id (relative POSIX path inside the corpus), in Unicode NFC.
        quote: The passage, copied from the document, in Unicode NFC (normalised when read);
            resolution tolerates differences in whitespace, Unicode normalisation and
            typographic quotes or dashes.
        grade: Graded relevance, 1 (relevant) or more (more relevant), at most ``MAX_GRADE``
            (2**63 - 1).
        start: Pins the quote to ONE occurrence: the character offset (``>= 0``) where it
            starts in its document, or ``None`` (the default: every occurrence). Offsets count
            Unicode code points of the document as groundkit reads it (the UTF-8 text, a
            leading byte-order mark dropped, line endings kept, NOT normalised to NFC): the
            offsets of spans and hits. The quote must be found there, exactly or by the
            tolerant match beginning there, else resolution raises an error.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    doc: str = Field(strict=True)
    quote: str = Field(strict=True)
    # 64-bit: grades go into int64 arrays (metrics, qrels); a larger one is refused here, with
    # the judgment's line and id, rather than overflow later.
    grade: int = Field(default=1, ge=1, le=MAX_GRADE, strict=True)
    start: int | None = Field(default=None, ge=0, strict=True)

    @field_validator("doc")
    @classmethod
    def _check_doc(cls, value: str) -> str:
        return validate_doc_id(nfc(value))

    @field_validator("quote")
    @classmethod
    def _check_quote(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("quote is empty or only whitespace")
        return nfc(value)


class Judgment(BaseModel):
    """A query and the gold evidence that answers it.

    Attributes:
        query_id: Unique lowercase kebab-case id (``^[a-z0-9]+(?:-[a-z0-9]+)*$``), checked
            in Unicode NFC.
        query: The question, as a user would ask it.
        category: Free label (``"normal"`` by default). ``"unanswerable"`` is special: it is
            required exactly when ``gold`` is empty.
        gold: The quotes that answer the query; any one of them is acceptable evidence.
        answer: Reference answer, if any.
        qtype: Question type label (e.g. ``"factoid"``), if any.
        meta: Extra JSON data (strings, numbers, booleans, null, lists and string-keyed objects).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    query_id: str = Field(strict=True)
    query: str = Field(strict=True)
    category: str = Field(default="normal", strict=True)
    gold: tuple[GoldQuote, ...] = ()
    answer: str | None = Field(default=None, strict=True)
    qtype: str | None = Field(default=None, strict=True)
    meta: dict[str, Any] = Field(default_factory=dict)

    @field_validator("query_id")
    @classmethod
    def _check_query_id(cls, value: str) -> str:
        return validate_query_id(nfc(value))

    @field_validator("query")
    @classmethod
    def _check_query(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("query is empty or only whitespace")
        return value

    @field_validator("category", "qtype")
    @classmethod
    def _check_label(cls, value: str | None) -> str | None:
        if value is not None and (
            not value or value != value.strip() or has_control_character(value)
        ):
            raise ValueError(
                f"label {value!r} must be non-empty, without surrounding spaces or control "
                "characters"
            )
        return value

    @field_validator("meta", mode="before")
    @classmethod
    def _check_meta(cls, value: Any) -> Any:
        if not isinstance(value, dict):
            return value  # pydantic reports the type error itself
        return _plain_json(value, "meta")

    @model_validator(mode="after")
    def _check_gold_contract(self) -> Judgment:
        if not self.gold and self.category != UNANSWERABLE:
            raise ValueError(
                f"no gold quotes but category is {self.category!r}: a judgment without gold "
                f"must have category {UNANSWERABLE!r}"
            )
        if self.gold and self.category == UNANSWERABLE:
            raise ValueError(
                f"category {UNANSWERABLE!r} but {len(self.gold)} gold quote(s): "
                "an unanswerable judgment must have no gold"
            )
        # The same text twice is one quote, unless each copy is pinned to its own occurrence.
        starts: dict[tuple[str, str], list[int | None]] = {}
        for index, gold in enumerate(self.gold):
            earlier = starts.setdefault((gold.doc, gold.quote), [])
            if earlier and (gold.start is None or None in earlier or gold.start in earlier):
                raise ValueError(
                    f"gold[{index}] repeats an earlier quote of {gold.doc!r} (quotes are "
                    "compared in Unicode NFC; the same text twice needs a different 'start' "
                    "on each)"
                )
            earlier.append(gold.start)
        return self

    @property
    def answerable(self) -> bool:
        """Whether the judgment has gold evidence (it is not ``"unanswerable"``)."""
        return bool(self.gold)

    def __hash__(self) -> int:
        # The default frozen-model hash fails on the (unhashable) meta dict.
        return hash(
            (
                self.query_id,
                self.query,
                self.category,
                self.gold,
                self.answer,
                self.qtype,
                json.dumps(self.meta, sort_keys=True),
            )
        )


def format_validation_error(error: ValidationError) -> str:
    """Render a pydantic ``ValidationError`` as one readable line: ``field: message; ...``.

    Args:
        error: The error raised by a model validation.

    Returns:
        One line naming each failing field (dotted path, e.g. ``gold.0.doc``) and its problem.
    """
    parts: list[str] = []
    for item in error.errors(include_url=False):
        location = ".".join(str(part) for part in item["loc"])
        kind = item["type"]
        message = str(item["msg"])
        if message.startswith(("Value error, ", "Assertion failed, ")):
            message = message.split(", ", 1)[1]
        if kind == "extra_forbidden":
            parts.append(f"unknown field {location!r}")
        elif kind == "missing":
            parts.append(f"missing required field {location!r}")
        elif location:
            parts.append(f"{location}: {message}")
        else:
            parts.append(message)
    return "; ".join(parts)
