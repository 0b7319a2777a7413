"""trec_eval from the files, vectorised: no Python object per line.

:func:`evaluate_trec_files` gives exactly what :func:`read_qrels`, :func:`read_trec_run` and
:func:`evaluate_trec` give, at the speed of trec_eval's C binary on large files. The files are
tokenised with numpy in chunks; ids become big-endian 64-bit words (zero-padded, so comparing
the words compares the ids byte by byte, as ``strcmp`` and Python's ``str`` order do); scores
of up to 15 digits are parsed exactly (an integer mantissa below 2**53 divided by an exact
power of ten is the correctly rounded value, as ``float`` gives), others one by one with
``float``. Whenever a file is not plainly well formed (non-ASCII or NUL bytes, a line with
the wrong number of fields, a rank or score the fast grammar does not cover and the reader's
own grammar rejects, a document twice for a query, a hash collision) the mapping readers run
instead, so every error and every corner keeps its one definition there.
"""

from __future__ import annotations

import mmap
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from groundkit.judgments._errors import JudgmentError
from groundkit.judgments.files._paths import open_regular
from groundkit.judgments.trec._eval import (
    _NONPOOL,
    _UNJUDGED,
    TrecEvalResult,
    _evaluate_ranked,
    _Rankings,
    evaluate_trec,
)
from groundkit.judgments.trec._io import (
    _RANK,
    _RELEVANCE,
    _atol,
    _score,
    read_qrels,
    read_trec_run,
)
from groundkit.judgments.trec._select import _select
from groundkit.judgments.trec._zscores import ZScores

__all__ = ["evaluate_trec_files"]

U64 = npt.NDArray[np.uint64]
I64 = npt.NDArray[np.int64]
_Data = bytes | mmap.mmap

_CHUNK = 1 << 24
_MAX_DIGITS = 15  # 10**15 < 2**53: the mantissa is exact as a double
_POW10 = np.array([10.0**k for k in range(_MAX_DIGITS + 1)])
_MIX = np.uint64(0x9E3779B97F4A7C15)


class _NotPlainError(Exception):
    """The file needs the mapping readers (an error to report, or a rare corner)."""


@dataclass
class _Columns:
    query: I64  # provisional query code per line (first seen order)
    words: U64  # (lines, k) document id words
    values: npt.NDArray[np.float64] | I64  # score or relevance per line


def _chunks(data: _Data) -> Iterator[tuple[int, int]]:
    start, size = 0, len(data)
    while start < size:
        end = min(start + _CHUNK, size)
        if end < size:
            cut = data.rfind(b"\n", start, end)
            end = cut + 1 if cut >= start else (data.find(b"\n", end) + 1 or size)
        yield start, end
        start = end


class _Chunk:
    """Whole lines of a file: their bytes, and every 8-byte window as a big-endian word."""

    def __init__(self, data: _Data, begin: int, end: int) -> None:
        text = data[begin:end]
        if not text.isascii() or b"\0" in text:  # ids must compare as bytes and as str alike
            raise _NotPlainError
        if isinstance(data, mmap.mmap) and hasattr(mmap, "MADV_DONTNEED"):
            # Read once: let the mapped pages go, so the file is not held in memory too.
            start = begin - begin % mmap.PAGESIZE
            data.madvise(mmap.MADV_DONTNEED, start, end - start)
        self.data = text + bytes(8)  # the padding keeps every window in bounds
        self.size = end - begin
        self.bytes = np.frombuffer(self.data, dtype=np.uint8)
        self.windows = np.ndarray((self.size + 1,), dtype=">u8", buffer=self.data, strides=(1,))

    def tokens(self) -> tuple[I64, I64, I64, I64]:
        """Token starts and ends, each line's first token index and token count."""
        text = self.bytes[: self.size]
        space = np.ones(self.size + 2, dtype=bool)  # framed by spaces: edges alternate
        # What bytes.split() splits on: space, and tab to carriage return (9..13).
        np.less_equal(np.subtract(text, 9, dtype=np.uint8), 4, out=space[1:-1])
        space[1:-1] |= text == 32
        edges = np.flatnonzero(space[1:] != space[:-1])
        starts, ends = edges[0::2], edges[1::2]
        newlines = np.flatnonzero(self.bytes[: self.size] == 10)
        before = np.searchsorted(starts, newlines)  # tokens of the lines before each newline
        bounds = np.concatenate(([0], before, [len(starts)])).astype(np.int64)
        return starts, ends, bounds[:-1], np.diff(bounds)

    def words(self, starts: I64, ends: I64) -> U64:
        """Each token as big-endian 64-bit words, zero-padded (byte order = word order)."""
        lengths = ends - starts
        k = max(1, -(-int(lengths.max(initial=0)) // 8))
        out = np.empty((len(starts), k), dtype=np.uint64)
        ones = np.uint64(0xFFFFFFFFFFFFFFFF)
        for column in range(k):
            left = lengths - 8 * column
            word = self.windows[np.minimum(starts + 8 * column, self.size)].astype(np.uint64)
            shift = (8 * (8 - np.clip(left, 1, 8))).astype(np.uint64)
            out[:, column] = np.where(left > 0, word & (ones << shift), 0)
        return out

    def text(self, start: int, end: int) -> bytes:
        return self.data[start:end]

    def numbers(
        self, starts: I64, ends: I64, fraction: bool
    ) -> tuple[npt.NDArray[np.float64], I64, npt.NDArray[np.bool_]]:
        """Tokens ``[+-]digits[.digits]`` (a dot only with ``fraction``), parsed exactly.

        Returns the float values, the signed integer mantissas and which tokens were covered
        (the others are left to the reader's own grammar).
        """
        lengths = ends - starts
        n = len(starts)
        mantissa = np.zeros(n, dtype=np.int64)
        digits = np.zeros(n, dtype=np.int64)
        decimals = np.zeros(n, dtype=np.int64)
        dots = np.zeros(n, dtype=np.int64)
        bad = np.zeros(n, dtype=bool)
        first = self.bytes[starts]
        for column in range(int(lengths.max(initial=0))):
            char = self.bytes[np.minimum(starts + column, self.size)]
            inside = column < lengths
            digit = inside & (char >= 48) & (char <= 57)
            dot = inside & (char == 46) if fraction else np.zeros(n, dtype=bool)
            allowed = digit | dot | ~inside
            if column == 0:
                allowed |= (char == 45) | (char == 43)
            bad |= ~allowed
            mantissa = np.where(digit, mantissa * 10 + (char.astype(np.int64) - 48), mantissa)
            digits += digit
            decimals += digit & (dots > 0)
            dots += dot
        ok = ~bad & (dots <= 1) & (digits >= 1) & (digits <= _MAX_DIGITS)
        mantissa = np.where(ok, np.where(first == 45, -mantissa, mantissa), 0)
        values = mantissa / _POW10[np.where(ok, decimals, 0)]
        return values, mantissa, ok


def _read_run(
    data: _Data, codes: dict[bytes, int], extra_fields: bool
) -> tuple[_Columns, str | None]:
    # A run line has six fields: at least 12 bytes with its newline.
    parts = _Builder(len(data) // 12 + 1, np.float64)
    run_id: str | None = None
    for begin, end in _chunks(data):
        chunk = _Chunk(data, begin, end)
        starts, ends, first, counts = chunk.tokens()
        lead, sizes = first[counts > 0], counts[counts > 0]
        is_content = chunk.bytes[starts[lead]] != 35  # a first field starting with '#': a comment
        content = lead[is_content]
        sizes = sizes[is_content]
        if (sizes < 6).any() or (not extra_fields and (sizes > 6).any()):
            raise _NotPlainError
        if not len(content):
            continue
        queries = _query_codes(chunk, starts[content], ends[content], codes)
        _check_ranks(chunk, starts[content + 3], ends[content + 3])
        field = content + 4
        scores, _, ok = chunk.numbers(starts[field], ends[field], True)
        for row in np.flatnonzero(~ok).tolist():
            score = _score(chunk.text(starts[field[row]], ends[field[row]]))
            if score is None:
                raise _NotPlainError
            scores[row] = score
        parts.add(queries, chunk.words(starts[content + 2], ends[content + 2]), scores)
        last = int(content[-1]) + 5
        run_id = chunk.text(starts[last], ends[last]).decode("ascii")
    return parts.columns(), run_id


def _check_ranks(chunk: _Chunk, starts: I64, ends: I64) -> None:
    """Raise :class:`_NotPlainError` unless every rank is a whole number ``>= 0``."""
    _, _, ok = chunk.numbers(starts, ends, False)
    ok &= chunk.bytes[starts] != 45  # no minus sign (a plus sign is allowed)
    for row in np.flatnonzero(~ok).tolist():
        if _RANK.fullmatch(chunk.text(int(starts[row]), int(ends[row]))) is None:
            raise _NotPlainError


def _read_qrels(data: _Data, codes: dict[bytes, int]) -> _Columns:
    parts = _Builder(len(data) // 8 + 1, np.int64)  # four fields: at least 8 bytes a line
    for begin, end in _chunks(data):
        chunk = _Chunk(data, begin, end)
        starts, ends, first, counts = chunk.tokens()
        line_starts = np.concatenate(([0], np.flatnonzero(chunk.bytes[: chunk.size] == 10) + 1))
        comment = chunk.bytes[line_starts] == 35  # a line starting with '#' (padding: no)
        keep = (counts > 0) & ~comment
        if (counts[keep] != 4).any():
            raise _NotPlainError
        content = first[keep]
        if not len(content):
            continue
        queries = _query_codes(chunk, starts[content], ends[content], codes)
        field = content + 3
        _, levels, ok = chunk.numbers(starts[field], ends[field], False)
        for row in np.flatnonzero(~ok).tolist():
            token = chunk.text(starts[field[row]], ends[field[row]])
            level = _atol(token) if _RELEVANCE.fullmatch(token) else None
            if level is None or not -(2**63) <= level < 2**63:
                raise _NotPlainError
            levels[row] = level
        parts.add(queries, chunk.words(starts[content + 2], ends[content + 2]), levels)
    return parts.columns()


def _query_codes(chunk: _Chunk, starts: I64, ends: I64, codes: dict[bytes, int]) -> I64:
    """Provisional query codes per line: one dict look-up per run of equal ids."""
    words = chunk.words(starts, ends)
    change = np.concatenate(([True], (words[1:] != words[:-1]).any(axis=1)))
    firsts = np.flatnonzero(change)
    found = [
        codes.setdefault(chunk.text(s, e), len(codes))
        for s, e in zip(starts[firsts].tolist(), ends[firsts].tolist(), strict=True)
    ]
    return np.repeat(np.asarray(found, dtype=np.int64), np.diff(np.append(firsts, len(starts))))


class _Builder:
    """Columns filled chunk by chunk into arrays sized for the most lines the file can hold.

    Untouched pages of a large ``np.empty``/``np.zeros`` are never backed by memory, so the
    generous bound costs nothing, and no chunk is copied twice.
    """

    def __init__(self, capacity: int, dtype: type[np.float64] | type[np.int64]) -> None:
        self.query = np.empty(capacity, dtype=np.int64)
        self.values: npt.NDArray[np.float64] | I64 = np.empty(capacity, dtype=dtype)  # type: ignore[assignment]
        self.words = np.zeros((capacity, 1), dtype=np.uint64)
        self.size = 0

    def add(self, query: I64, words: U64, values: npt.NDArray[np.float64] | I64) -> None:
        at, n, k = self.size, len(query), words.shape[1]
        if k > self.words.shape[1]:  # a longer id than any before: widen (rare)
            wider = np.zeros((len(self.query), k), dtype=np.uint64)
            wider[:at, : self.words.shape[1]] = self.words[:at]
            self.words = wider
        self.query[at : at + n] = query
        self.values[at : at + n] = values
        self.words[at : at + n, :k] = words
        self.size += n

    def columns(self) -> _Columns:
        return _Columns(self.query[: self.size], self.words[: self.size], self.values[: self.size])


def _hash(query: I64, words: U64) -> U64:
    """A 64-bit mix of (query, document); equal keys, equal hashes (matches are verified)."""
    mixed = query.astype(np.uint64) * _MIX
    for column in range(words.shape[1]):
        mixed = (mixed ^ words[:, column]) * _MIX
        mixed ^= mixed >> np.uint64(29)
    return mixed


def _padded(words: U64, k: int) -> U64:
    return np.pad(words, ((0, 0), (0, k - words.shape[1]))) if words.shape[1] < k else words


def _order(query: I64, scores: npt.NDArray[np.float64], words: U64) -> I64:
    """Lines in evaluation order: query code, score descending, document id descending."""
    n = len(query)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    change = np.flatnonzero(query[1:] != query[:-1]) + 1
    segment_starts = np.concatenate(([0], change))
    segment_codes = query[segment_starts]
    if len(np.unique(segment_codes)) == len(segment_codes):  # each query in one block
        lengths = np.diff(np.append(segment_starts, n))
        by_code = np.argsort(segment_codes)
        shift = segment_starts[by_code] - (np.cumsum(lengths[by_code]) - lengths[by_code])
        order = np.arange(n) + np.repeat(shift, lengths[by_code])
    else:
        order = np.argsort(query, kind="stable")
    q, s = query[order], scores[order]
    same_query = q[1:] == q[:-1]
    if (same_query & (s[1:] > s[:-1])).any():  # not in score order: sort (rare in practice)
        order = order[np.lexsort((-s, q))]
        q, s = query[order], scores[order]
        same_query = q[1:] == q[:-1]
    tie = same_query & (s[1:] == s[:-1])
    if tie.any():
        # Only the runs of equal scores are reordered, by document id descending.
        member = np.zeros(n, dtype=bool)
        member[1:] |= tie
        member[:-1] |= tie
        tied = np.flatnonzero(member)
        group = np.searchsorted(np.flatnonzero(~tie) + 1, tied, side="right")
        tied_words = words[order[tied]]
        keys = [~tied_words[:, c] for c in range(words.shape[1] - 1, -1, -1)]
        order[tied] = order[tied][np.lexsort((*keys, group))]
    return np.asarray(order, dtype=np.int64)


_PREFIX_BITS = 24  # a 16 MiB table of hash prefixes screens the run lines


def _relevance_codes(run: _Columns, qrels: _Columns, run_words: U64, qrels_words: U64) -> I64:
    """Each run line's relevance code (file order), checking both files for duplicates."""
    judged_hash = _hash(qrels.query, qrels_words)
    by_hash = np.argsort(judged_hash)
    sorted_hash = judged_hash[by_hash]
    if (sorted_hash[1:] == sorted_hash[:-1]).any():  # a document judged twice (or a collision)
        raise _NotPlainError
    run_hash = _hash(run.query, run_words)
    if (np.diff(np.sort(run_hash)) == 0).any():  # retrieved twice (or a collision)
        raise _NotPlainError
    # Only the run lines whose hash prefix some judged line has are looked up.
    shift = np.uint64(64 - _PREFIX_BITS)
    prefixes = np.zeros(1 << _PREFIX_BITS, dtype=bool)
    prefixes[(sorted_hash >> shift).astype(np.int64)] = True
    lines = np.flatnonzero(prefixes[(run_hash >> shift).astype(np.int64)])
    judged = lines[:0]
    if len(sorted_hash):
        position = np.minimum(np.searchsorted(sorted_hash, run_hash[lines]), len(sorted_hash) - 1)
        found = sorted_hash[position] == run_hash[lines]
        lines, judged = lines[found], by_hash[position[found]]
    # A hash match is a candidate only: the ids themselves must be equal.
    equal = (qrels.query[judged] == run.query[lines]) & (
        qrels_words[judged] == run_words[lines]
    ).all(axis=1)
    lines, judged = lines[equal], judged[equal]
    levels = np.asarray(qrels.values, np.int64)[judged]
    codes = np.full(len(run.query), _NONPOOL, dtype=np.int64)
    codes[lines] = np.where(levels >= 0, levels, _UNJUDGED)
    return codes


def _rankings_from_columns(
    names: list[str], run: _Columns, qrels: _Columns, all_queries: bool, max_per_query: int | None
) -> _Rankings:
    k = max(run.words.shape[1], qrels.words.shape[1])
    run_words, qrels_words = _padded(run.words, k), _padded(qrels.words, k)
    codes = _relevance_codes(run, qrels, run_words, qrels_words)
    order = _order(run.query, np.asarray(run.values, np.float64), run_words)
    del run_words
    query = run.query[order]
    if max_per_query is not None:
        starts = np.searchsorted(query, query)
        keep = np.flatnonzero(np.arange(len(query)) - starts < max_per_query)
        order, query = order[keep], query[keep]
    n_names = len(names)
    has_qrels = np.bincount(qrels.query, minlength=n_names) > 0
    has_run = np.bincount(run.query, minlength=n_names) > 0
    evaluated = has_qrels & (has_run | all_queries)
    n_evaluated = int(evaluated.sum())
    row = np.cumsum(evaluated) - 1
    kept = evaluated[query]
    order, query = order[kept], query[kept]
    offsets = np.zeros(n_evaluated + 1, dtype=np.int64)
    np.cumsum(np.bincount(row[query], minlength=n_evaluated), out=offsets[1:])
    levels = np.asarray(qrels.values, np.int64)
    judged = (levels >= 0) & evaluated[qrels.query]
    return _Rankings(
        [names[i] for i in np.flatnonzero(evaluated).tolist()],
        codes[order],
        offsets,
        row[qrels.query[judged]].astype(np.int64),
        levels[judged],
    )


@contextmanager
def _mapped(path: str | Path) -> Iterator[_Data]:
    """The file's bytes, memory-mapped (read once, never copied whole)."""
    with open_regular(path) as handle:
        try:
            mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
        except (ValueError, OSError):  # an empty file cannot be mapped
            yield handle.read()
            return
        try:
            yield mapped
        finally:
            mapped.close()


def _fast_rankings(
    qrels_path: str | Path,
    run_path: str | Path,
    all_queries: bool,
    max_per_query: int | None,
    extra_fields: bool,
) -> tuple[_Rankings, str | None] | None:
    codes: dict[bytes, int] = {}
    try:
        with _mapped(qrels_path) as data:
            qrels = _read_qrels(data, codes)
        with _mapped(run_path) as data:
            run, run_id = _read_run(data, codes, extra_fields)
        # Query codes become ranks in byte order, which is the order of their str ids.
        names = sorted(codes)
        rank = np.empty(len(names), dtype=np.int64)
        rank[[codes[name] for name in names]] = np.arange(len(names))
        qrels.query, run.query = rank[qrels.query], rank[run.query]
        text = [name.decode("ascii") for name in names]
        return _rankings_from_columns(text, run, qrels, all_queries, max_per_query), run_id
    except _NotPlainError:
        return None


def evaluate_trec_files(
    qrels_path: str | Path,
    run_path: str | Path,
    measures: Sequence[str] | None = None,
    *,
    all_queries: bool = False,
    relevance_level: int = 1,
    max_per_query: int | None = None,
    extra_fields: bool = True,
    zscores: ZScores | None = None,
) -> TrecEvalResult:
    """Evaluate a run file against a qrels file, as trec_eval does.

    The same result as ``evaluate_trec(read_qrels(qrels_path), read_trec_run(run_path),
    ...)``, without building a Python object per line.

    Args:
        qrels_path: The qrels file.
        run_path: The run file.
        measures: Measure requests (``None`` = ``["official"]``), as :func:`evaluate_trec`.
        all_queries: Evaluate every qrels query (trec_eval ``-c``).
        relevance_level: Minimum relevance counted as relevant (trec_eval ``-l``).
        max_per_query: Keep only the first documents of each ranking (trec_eval ``-M``).
        extra_fields: Accept and ignore run fields after the run id, as trec_eval does
            (see :func:`read_trec_run`).
        zscores: Report each value as a z-score against these (trec_eval ``-Z``, see
            :func:`read_zscores`).

    Returns:
        Per-query values and the summary.

    Raises:
        JudgmentError: An unreadable or malformed file (names file and line), an unknown
            measure, or no query with both judgments and a ranking.
    """
    valid = relevance_level >= 0 and (max_per_query is None or max_per_query >= 0)
    # Invalid options: the mapping path reports them, after any file error, as it always has.
    fast = (
        _fast_rankings(qrels_path, run_path, all_queries, max_per_query, extra_fields)
        if valid
        else None
    )
    if fast is None:
        return evaluate_trec(
            read_qrels(qrels_path),
            read_trec_run(run_path, extra_fields=extra_fields),
            measures,
            all_queries=all_queries,
            relevance_level=relevance_level,
            max_per_query=max_per_query,
            zscores=zscores,
        )
    ranked, run_id = fast
    if isinstance(measures, str):
        measures = [measures]
    selected = _select(measures)
    if not ranked.query_ids:
        raise JudgmentError("no query has both relevance judgments and a ranking")
    return _evaluate_ranked(ranked, selected, relevance_level, run_id, zscores)
