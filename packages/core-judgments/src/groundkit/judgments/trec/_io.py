"""TREC qrels and run files, read and written the way trec_eval understands them.

Accepted input (as trec_eval): fields separated by ASCII whitespace (space, tab, CR, VT, FF,
so CRLF line ends read as LF ones); qrels lines ``query iteration document relevance`` (the
iteration is ignored); run lines ``query iteration document rank score run_id`` (the rank is
checked but not used: rankings are re-derived from the scores). Lines whose first character
is ``#`` are comments in qrels; in runs, a ``#`` after optional leading whitespace starts a
comment. Blank lines are skipped in both (trec_eval rejects them in qrels); a final line
without a newline is read like any other.

Differences, all on input trec_eval would silently misread or that no tool writes on purpose: a
UTF-8 byte order mark at the start of a file is skipped (trec_eval would make it part of the
first query id); a relevance must be a decimal number (``2``, ``-1``, ``1.0``; a fraction is
truncated toward zero like C's ``atol``) that fits in 64 bits; a run line has at least six
fields, and fields after the run id are ignored as trec_eval ignores them (its format reserves
them, and its own test file ``results.trunc`` has some; pass ``extra_fields=False`` to
:func:`read_trec_run` to refuse them); a rank must be a whole number ``>= 0``; a score must be
a finite C floating-point literal (``1.5``, ``-2e-3``; ``nan``, ``inf`` and a value that
overflows a double, such as ``1e400``, are refused, since they cannot be ordered or would
outrank every real score); a document listed twice for the same query is an error at reading
time (trec_eval stops on it when evaluating). Every error is a one-line :class:`JudgmentError`
naming the file and line, ids and fields shown escaped.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import numpy.typing as npt

from groundkit.judgments._errors import JudgmentError
from groundkit.judgments.files._paths import atomic_write_text, read_regular_bytes

__all__ = [
    "Qrels",
    "Run",
    "TrecRun",
    "qrels_text",
    "read_qrels",
    "read_trec_run",
    "trec_ranking",
    "trec_run_text",
    "trec_tie_order",
    "write_qrels",
    "write_trec_run",
]

#: ``{query_id: {doc_id: relevance}}``.
Qrels = Mapping[str, Mapping[str, int]]
#: ``{query_id: {doc_id: score}}``.
Run = Mapping[str, Mapping[str, float]]

_RELEVANCE = re.compile(rb"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)")
_SCORE = re.compile(rb"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_RANK = re.compile(rb"\+?[0-9]+")
_BOM = b"\xef\xbb\xbf"
# The fields of a run line, in trec_eval's order.
_RUN_FIELDS = "query iteration document rank score run_id"


class TrecRun(dict[str, dict[str, float]]):
    """A run read from a file: ``{query_id: {doc_id: score}}`` plus the run id.

    Attributes:
        run_id: The run id of the last content line (as trec_eval reports it), or ``None``.
    """

    def __init__(
        self, scores: Mapping[str, Mapping[str, float]] | None = None, *, run_id: str | None = None
    ) -> None:
        super().__init__({query: dict(docs) for query, docs in (scores or {}).items()})
        self.run_id = run_id


def _read_lines(path: str | Path) -> list[bytes]:
    data = read_regular_bytes(path)
    return data.removeprefix(_BOM).split(b"\n")


def _text(field: bytes, path: str | Path, line: int) -> str:
    try:
        return field.decode("utf-8")
    except UnicodeDecodeError:
        raise JudgmentError("field is not valid UTF-8", path=path, line=line) from None


def _score(field: bytes) -> float | None:
    """The score a field holds, or ``None`` if it is not a finite C floating-point literal."""
    if _SCORE.fullmatch(field) is None:
        return None
    value = float(field)
    return value if math.isfinite(value) else None


def _atol(field: bytes) -> int:
    # C atol semantics on a validated decimal: the integer part, truncated toward zero.
    text = field.decode("ascii")
    integer = text.split(".", 1)[0]
    if integer in ("", "+", "-"):
        return 0
    return int(integer)


def read_qrels(path: str | Path) -> dict[str, dict[str, int]]:
    """Read a TREC qrels file.

    Args:
        path: The qrels file (``query iteration document relevance`` per line).

    Returns:
        ``{query_id: {doc_id: relevance}}`` in file order. Negative relevance means "in the
        pool but unjudged", as in trec_eval.

    Raises:
        JudgmentError: On an unreadable file or a malformed line (names file and line).
    """
    qrels: dict[str, dict[str, int]] = {}
    first_line: dict[tuple[str, str], int] = {}
    for number, raw in enumerate(_read_lines(path), start=1):
        if raw.startswith(b"#"):
            continue
        fields = raw.split()
        if not fields:
            continue
        if len(fields) != 4:
            raise JudgmentError(
                f"expected 4 fields (query iteration document relevance), got {len(fields)}",
                path=path,
                line=number,
            )
        if _RELEVANCE.fullmatch(fields[3]) is None:
            raise JudgmentError(
                f"relevance {_text(fields[3], path, number)!r} is not a number",
                path=path,
                line=number,
            )
        query = _text(fields[0], path, number)
        doc = _text(fields[2], path, number)
        previous = first_line.setdefault((query, doc), number)
        if previous != number:
            raise JudgmentError(
                f"document {doc!r} judged twice for the query (first on line {previous})",
                path=path,
                line=number,
                item_id=query,
            )
        relevance = _atol(fields[3])
        if not -(2**63) <= relevance < 2**63:  # scored as 64-bit integers, like trec_eval's long
            raise JudgmentError(
                f"relevance {_text(fields[3], path, number)!r} is out of range",
                path=path,
                line=number,
            )
        qrels.setdefault(query, {})[doc] = relevance
    return qrels


def read_trec_run(path: str | Path, *, extra_fields: bool = True) -> TrecRun:
    """Read a TREC run file.

    Args:
        path: The run file (``query Q0 document rank score run_id`` per line).
        extra_fields: Accept and ignore fields after the run id, as trec_eval does (its own
            test file ``results.trunc`` has some; the default); ``False``: a line has exactly
            six fields.

    Returns:
        The run (``{query_id: {doc_id: score}}`` in file order) with its ``run_id``.

    Raises:
        JudgmentError: On an unreadable file or a malformed line (names file and line).
    """
    run: dict[str, dict[str, float]] = {}
    run_id: str | None = None
    for number, raw in enumerate(_read_lines(path), start=1):
        fields = raw.split()
        if not fields or fields[0].startswith(b"#"):
            continue
        score = _run_line(fields, path, number, extra_fields)
        query = _text(fields[0], path, number)
        doc = _text(fields[2], path, number)
        docs = run.setdefault(query, {})
        if doc in docs:
            raise JudgmentError(
                f"document {doc!r} retrieved twice for the query",
                path=path,
                line=number,
                item_id=query,
            )
        docs[doc] = score
        run_id = _text(fields[5], path, number)
    return TrecRun(run, run_id=run_id)


def _run_line(fields: list[bytes], path: str | Path, number: int, extra_fields: bool) -> float:
    """Check a run line's shape, rank and score; return the score."""
    if len(fields) < 6:
        raise JudgmentError(
            f"expected at least 6 fields ({_RUN_FIELDS}), got {len(fields)}",
            path=path,
            line=number,
        )
    if len(fields) > 6 and not extra_fields:
        raise JudgmentError(
            f"expected at most 6 fields ({_RUN_FIELDS}), got {len(fields)}: nothing may "
            "follow the run id",
            path=path,
            line=number,
        )
    if _RANK.fullmatch(fields[3]) is None:
        raise JudgmentError(
            f"rank must be a whole number >= 0, got {_text(fields[3], path, number)!r}",
            path=path,
            line=number,
        )
    score = _score(fields[4])
    if score is None:
        raise JudgmentError(
            f"score {_text(fields[4], path, number)!r} is not a finite number",
            path=path,
            line=number,
        )
    return score


def trec_ranking(docs: Mapping[str, float]) -> list[tuple[str, float]]:
    """The ranking trec_eval derives from scores: score descending, ties by doc id descending.

    Args:
        docs: ``{doc_id: score}`` of one query.

    Returns:
        ``[(doc_id, score), ...]`` best first.
    """
    return sorted(docs.items(), key=lambda item: (item[1], item[0]), reverse=True)


def trec_tie_order(keys: npt.ArrayLike, scores: npt.ArrayLike) -> npt.NDArray[np.int64]:
    """Positions of ranked hits reordered as trec_eval breaks ties: id descending.

    Each run of equal neighbouring scores is reordered, nothing else moves (a ranking whose
    scores do not descend keeps its order between runs). Every ranking groundkit scores at
    document level goes through this one rule.

    Args:
        keys: The hits' ids, or integer codes that sort as the ids do (``strcmp`` on UTF-8
            sorts as Unicode code points, which is how numpy sorts strings).
        scores: The hits' scores, in rank order.

    Returns:
        The new order, as positions into ``keys``.
    """
    values = np.asarray(scores, dtype=np.float64)
    if values.size < 2:
        return np.arange(values.size, dtype=np.int64)
    ids = np.asarray(keys)
    codes = ids if ids.dtype.kind in "iu" else np.unique(ids, return_inverse=True)[1]
    group = np.concatenate(([0], np.cumsum(values[1:] != values[:-1])))
    return np.lexsort((-codes.astype(np.int64), group)).astype(np.int64)


def _check_field(value: str, what: str, path: str | Path | None) -> str:
    if not value or any(char in value for char in " \t\n\r\x0b\x0c") or value.startswith("#"):
        raise JudgmentError(f"{what} {value!r} cannot be written as a TREC field", path=path)
    return value


def qrels_text(qrels: Qrels, *, path: str | Path | None = None) -> str:
    """The text of a qrels file, queries and documents sorted (what :func:`write_qrels` writes).

    Args:
        qrels: ``{query_id: {doc_id: relevance}}``.
        path: The file it is meant for, named in errors.

    Returns:
        One ``query 0 document relevance`` line per judgment.

    Raises:
        JudgmentError: If an id is empty, starts with ``#`` or contains whitespace, or a
            relevance is not an integer.
    """
    lines: list[str] = []
    for query in sorted(qrels):
        _check_field(query, "query id", path)
        for doc in sorted(qrels[query]):
            relevance = qrels[query][doc]
            if isinstance(relevance, bool) or not isinstance(relevance, int):
                raise JudgmentError(
                    f"relevance {relevance!r} is not an integer", path=path, item_id=query
                )
            lines.append(f"{query} 0 {_check_field(doc, 'document id', path)} {relevance}\n")
    return "".join(lines)


def write_qrels(qrels: Qrels, path: str | Path) -> None:
    """Write a qrels file atomically, queries and documents sorted.

    Args:
        qrels: ``{query_id: {doc_id: relevance}}``.
        path: Destination.

    Raises:
        JudgmentError: If an id is empty, starts with ``#`` or contains whitespace, or a
            relevance is not an integer.
    """
    atomic_write_text(Path(path), qrels_text(qrels, path=path))


def trec_run_text(run: Run, *, run_id: str | None = None, path: str | Path | None = None) -> str:
    """The text of a run file, in trec_eval's ranking order (what :func:`write_trec_run` writes).

    Args:
        run: ``{query_id: {doc_id: score}}``.
        run_id: The run id column; defaults to ``run.run_id`` for a :class:`TrecRun`, else
            ``"groundkit"``.
        path: The file it is meant for, named in errors.

    Returns:
        One ``query Q0 document rank score run_id`` line per document, ranks from 1, scores
        written so that they read back exactly.

    Raises:
        JudgmentError: On an id that cannot be a TREC field or a NaN score.
    """
    name = run_id if run_id is not None else getattr(run, "run_id", None) or "groundkit"
    _check_field(name, "run id", path)
    lines: list[str] = []
    for query in sorted(run):
        _check_field(query, "query id", path)
        for rank, (doc, score) in enumerate(trec_ranking(run[query]), start=1):
            if score != score:
                raise JudgmentError(f"score of {doc!r} is NaN", path=path, item_id=query)
            doc_field = _check_field(doc, "document id", path)
            lines.append(f"{query} Q0 {doc_field} {rank} {float(score)!r} {name}\n")
    return "".join(lines)


def write_trec_run(run: Run, path: str | Path, *, run_id: str | None = None) -> None:
    """Write a run file atomically, in trec_eval's ranking order with ranks from 1.

    Args:
        run: ``{query_id: {doc_id: score}}``.
        path: Destination.
        run_id: The run id column; defaults to ``run.run_id`` for a :class:`TrecRun`, else
            ``"groundkit"``.

    Raises:
        JudgmentError: On an id that cannot be a TREC field or a NaN score.
    """
    atomic_write_text(Path(path), trec_run_text(run, run_id=run_id, path=path))
