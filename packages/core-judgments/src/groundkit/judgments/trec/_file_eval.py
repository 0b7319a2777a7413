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

import itertools
import mmap
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

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
_PAD = bytes(8)
_LARGE = 1 << 22  # bytes from which numpy asks for huge pages

_CHUNK = 1 << 18  # bytes per chunk: its temporaries stay small, reused chunk after chunk
_SPAN = 1 << 16  # lines per span of the whole-file passes (small temporaries)
_MAX_DIGITS = 15  # 10**15 < 2**53: the mantissa is exact as a double
_POW10 = np.array([10.0**k for k in range(_MAX_DIGITS + 1)])
_MIX = np.uint64(0x9E3779B97F4A7C15)
_ONES = np.uint64(0xFFFFFFFFFFFFFFFF)
_HIGH_NIBBLES = np.uint64(0xF0F0F0F0F0F0F0F0)
_DIGIT_ZEROS = np.uint64(0x3030303030303030)  # b"00000000" as a big-endian word
_SIXES = np.uint64(0x0606060606060606)


class _NotPlainError(Exception):
    """The file needs the mapping readers (an error to report, or a rare corner)."""


@dataclass
class _Columns:
    query: I64  # provisional query code per line (first seen order)
    words: U64  # (lines, k) document id words
    values: npt.NDArray[np.float64] | I64  # score or relevance per line


def _chunks(handle: BinaryIO) -> Iterator[bytes]:
    """The file's whole lines, about ``_CHUNK`` bytes at a time, each block padded.

    The last line may lack its newline; 8 zero bytes after each block keep every 8-byte
    window in bounds. Read into small blocks, not mapped: no page of the file is faulted
    in, and each block's memory is the allocator's to hand back for the next.
    """
    carry = b""
    while read := handle.read(_CHUNK):
        block = carry + read if carry else read
        cut = block.rfind(b"\n") + 1
        if cut:
            yield b"".join((memoryview(block)[:cut], _PAD))
        carry = block[cut:]
    if carry:
        yield carry + _PAD


class _Chunk:
    """Whole lines of a file: their bytes, and every 8-byte window as a big-endian word."""

    def __init__(self, data: bytes) -> None:
        # Ids must compare as bytes and as str alike: ASCII, no NUL byte.
        if not data.isascii() or data.find(b"\0", 0, len(data) - 8) >= 0:
            raise _NotPlainError
        self.data = data
        self.size = len(data) - 8
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
    handle: BinaryIO, codes: dict[bytes, int], extra_fields: bool
) -> tuple[_Columns, str | None]:
    # A run line has six fields: at least 12 bytes with its newline.
    parts = _Builder(_size(handle) // 12 + 1, np.float64)
    run_id: str | None = None
    for data in _chunks(handle):
        chunk = _Chunk(data)
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
    # Ranks of one to eight digits, checked eight bytes at a time: within the token every
    # byte's high nibble is 3 and stays 3 with 6 added to it (0x30..0x39); the rest (longer,
    # signed or malformed ranks) go through the general grammar below.
    lengths = ends - starts
    inside = _ONES << (8 * (8 - np.clip(lengths, 1, 8))).astype(np.uint64)
    word = chunk.windows[starts].astype(np.uint64) & inside
    zeros = _DIGIT_ZEROS & inside
    high = (word + (_SIXES & inside)) & _HIGH_NIBBLES
    digits = ((word & _HIGH_NIBBLES) == zeros) & (high == zeros)
    rest = np.flatnonzero(~(digits & (lengths >= 1) & (lengths <= 8)))
    if not len(rest):
        return
    starts, ends = starts[rest], ends[rest]
    _, _, ok = chunk.numbers(starts, ends, False)
    ok &= chunk.bytes[starts] != 45  # no minus sign (a plus sign is allowed)
    for row in np.flatnonzero(~ok).tolist():
        if _RANK.fullmatch(chunk.text(int(starts[row]), int(ends[row]))) is None:
            raise _NotPlainError


def _read_qrels(handle: BinaryIO, codes: dict[bytes, int]) -> _Columns:
    parts = _Builder(_size(handle) // 8 + 1, np.int64)  # four fields: at least 8 bytes a line
    for data in _chunks(handle):
        chunk = _Chunk(data)
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


def _column(n: int, dtype: type[np.generic], width: int = 0) -> Any:
    """A zeroed array of ``n`` items (rows of ``width`` when given) for a large column.

    A large one is anonymous memory straight from the kernel, not from numpy's allocator,
    which asks the kernel for huge pages for arrays of 4 MiB and more: the pages of such a
    column are faulted in as it is written, once, and huge ones measured about three times
    the kernel time of small ones doing so (on the machine the benchmark ran on). Pages
    never written are never backed.
    """
    shape = (n, width) if width else (n,)
    size = n * max(width, 1) * np.dtype(dtype).itemsize
    if size < max(_LARGE, 1):
        return np.zeros(shape, dtype=dtype)
    return np.frombuffer(mmap.mmap(-1, size), dtype=dtype).reshape(shape)


class _Builder:
    """Columns filled chunk by chunk into arrays sized for the most lines the file can hold.

    Untouched pages of a :func:`_column` are never backed by memory, so the generous bound
    costs nothing, and no chunk is copied twice.
    """

    def __init__(self, capacity: int, dtype: type[np.float64] | type[np.int64]) -> None:
        self.query: I64 = _column(capacity, np.int64)
        self.values: npt.NDArray[np.float64] | I64 = _column(capacity, dtype)
        self.words: U64 = _column(capacity, np.uint64, 1)
        self.size = 0

    def add(self, query: I64, words: U64, values: npt.NDArray[np.float64] | I64) -> None:
        at, n, k = self.size, len(query), words.shape[1]
        if k > self.words.shape[1]:  # a longer id than any before: widen (rare)
            wider = _column(len(self.query), np.uint64, k)
            wider[:at, : self.words.shape[1]] = self.words[:at]
            self.words = wider
        self.query[at : at + n] = query
        self.values[at : at + n] = values
        self.words[at : at + n, :k] = words
        self.size += n

    def columns(self) -> _Columns:
        return _Columns(self.query[: self.size], self.words[: self.size], self.values[: self.size])


def _spans(n: int, step: int = _SPAN) -> Iterator[slice]:
    """Consecutive slices of at most ``step`` items covering ``range(n)``."""
    return (slice(at, min(at + step, n)) for at in range(0, n, step))


def _hash(query: I64, words: U64) -> U64:
    """A 64-bit mix of (query, document); equal keys, equal hashes (matches are verified)."""
    out = np.empty(len(query), dtype=np.uint64)
    for span in _spans(len(query)):  # small temporaries, reused span after span
        mixed = query[span].astype(np.uint64) * _MIX
        for column in range(words.shape[1]):
            mixed ^= words[span, column]
            mixed *= _MIX
            mixed ^= mixed >> np.uint64(29)
        out[span] = mixed
    return out


def _padded(words: U64, k: int) -> U64:
    return np.pad(words, ((0, 0), (0, k - words.shape[1]))) if words.shape[1] < k else words


def _query_spans(lengths: I64) -> Iterator[tuple[slice, slice]]:
    """Spans of whole groups of grouped lines, about ``_SPAN`` lines each (or one group).

    Yields the span's lines and its groups, as slices.
    """
    ends = np.cumsum(lengths)
    total = int(ends[-1]) if len(ends) else 0
    cuts = np.unique(np.searchsorted(ends, np.arange(_SPAN, total, _SPAN))) + 1
    bounds = [0, *cuts.tolist()]
    if bounds[-1] != len(lengths):
        bounds.append(len(lengths))
    for a, b in itertools.pairwise(bounds):
        yield slice(int(ends[a - 1]) if a else 0, int(ends[b - 1])), slice(a, b)


def _grouped(query: I64) -> tuple[I64, I64, I64 | None]:
    """How the lines group by query code, codes ascending, file order within a query.

    Returns each group's length, and either where each group starts in the file (each query
    in one block of lines) and ``None``, or an unused array and the grouped order itself.
    """
    n = len(query)
    change = np.flatnonzero(query[1:] != query[:-1]) + 1
    segment_starts = np.concatenate(([0], change)).astype(np.int64)
    segment_codes = query[segment_starts] if n else segment_starts[:0]
    if len(np.unique(segment_codes)) != len(segment_codes):  # a query in several blocks
        return np.bincount(query), segment_starts, np.argsort(query, kind="stable")
    lengths = np.diff(np.append(segment_starts, n)) if n else segment_starts[:0]
    by_code = np.argsort(segment_codes)
    return lengths[by_code], segment_starts[by_code], None


def _span_order(query: I64, scores: npt.NDArray[np.float64], words: U64) -> I64:
    """Lines grouped by query in evaluation order: score descending, document id descending."""
    order = np.arange(len(query))
    same_query = query[1:] == query[:-1]
    if (same_query & (scores[1:] > scores[:-1])).any():  # not in score order (rare in practice)
        order = np.lexsort((-scores, query))
        scores = scores[order]
    tie = same_query & (scores[1:] == scores[:-1])
    if tie.any():
        # Only the runs of equal scores are reordered, by document id descending.
        member = np.zeros(len(query), dtype=bool)
        member[1:] |= tie
        member[:-1] |= tie
        tied = np.flatnonzero(member)
        group = np.searchsorted(np.flatnonzero(~tie) + 1, tied, side="right")
        tied_words = words[order[tied]]
        keys = [~tied_words[:, c] for c in range(words.shape[1] - 1, -1, -1)]
        order[tied] = order[tied][np.lexsort((*keys, group))]
    return order


# A table of one bit per hash prefix screens the run lines: about 128 bits per judged line
# (few false hits), 16 MiB at most.
_PREFIX_BITS = 27


class _Judged:
    """The qrels' (query, document) pairs, looked up by hash; duplicates refused."""

    def __init__(self, qrels: _Columns, k: int) -> None:
        self.query, self.words = qrels.query, _padded(qrels.words, k)
        self.levels = np.asarray(qrels.values, np.int64)
        judged_hash = _hash(self.query, self.words)
        self.by_hash = np.argsort(judged_hash)
        self.hashes = judged_hash[self.by_hash]
        if (self.hashes[1:] == self.hashes[:-1]).any():  # judged twice (or a collision)
            raise _NotPlainError
        bits = min(_PREFIX_BITS, max(10, len(self.hashes).bit_length() + 7))
        self.shift = np.uint64(64 - bits)
        self.prefixes = np.zeros(1 << (bits - 3), np.uint8)
        prefix = self.hashes >> self.shift
        np.bitwise_or.at(self.prefixes, (prefix >> 3).astype(np.int64), self._bit(prefix))

    @staticmethod
    def _bit(prefix: U64) -> npt.NDArray[np.uint8]:
        return np.left_shift(1, (prefix & np.uint64(7)).astype(np.uint8), dtype=np.uint8)

    def codes(self, query: I64, words: U64, hashes: U64) -> I64:
        """The relevance code of each line (``_NONPOOL`` when not judged)."""
        codes = np.full(len(query), _NONPOOL, dtype=np.int64)
        if not len(self.hashes):
            return codes
        # Only the lines whose hash prefix some judged line has are looked up.
        prefix = hashes >> self.shift
        lines = np.flatnonzero(self.prefixes[(prefix >> 3).astype(np.int64)] & self._bit(prefix))
        position = np.minimum(np.searchsorted(self.hashes, hashes[lines]), len(self.hashes) - 1)
        found = self.hashes[position] == hashes[lines]
        lines, judged = lines[found], self.by_hash[position[found]]
        # A hash match is a candidate only: the ids themselves must be equal.
        equal = (self.query[judged] == query[lines]) & (self.words[judged] == words[lines]).all(
            axis=1
        )
        lines, levels = lines[equal], self.levels[judged[equal]]
        codes[lines] = np.where(levels >= 0, levels, _UNJUDGED)
        return codes


def _ranked_codes(run: _Columns, qrels: _Columns) -> tuple[I64, I64]:
    """Lines in evaluation order, and the relevance code of each in that order.

    The order is query code, score descending, document id descending. The lines are taken
    a span of whole queries at a time, so that every temporary stays small. Raises
    :class:`_NotPlainError` when a query retrieves a document twice (or two of its hashes
    collide) or a document is judged twice.
    """
    words = _padded(run.words, qrels.words.shape[1])
    judged = _Judged(qrels, words.shape[1])
    scores = np.asarray(run.values, np.float64)
    lengths, starts, grouped = _grouped(run.query)
    order: I64 = _column(len(run.query), np.int64)
    codes: I64 = _column(len(run.query), np.int64)
    ends = np.cumsum(lengths)
    for span, groups in _query_spans(lengths):
        if grouped is None:  # each group's lines are consecutive, from its start on
            shift = starts[groups] - (ends[groups] - lengths[groups])
            lines = np.repeat(shift, lengths[groups]) + np.arange(span.start, span.stop)
        else:
            lines = grouped[span]
        query, line_words = run.query[lines], np.take(words, lines, axis=0)
        hashes = _hash(query, line_words)
        check = np.sort(hashes)
        if (check[1:] == check[:-1]).any():  # retrieved twice (or a collision)
            raise _NotPlainError
        within = _span_order(query, scores[lines], line_words)
        order[span] = lines[within]
        codes[span] = judged.codes(query, line_words, hashes)[within]
    return order, codes


def _rankings_from_columns(
    names: list[str], run: _Columns, qrels: _Columns, all_queries: bool, max_per_query: int | None
) -> _Rankings:
    order, codes = _ranked_codes(run, qrels)
    n_names = len(names)
    has_qrels = np.bincount(qrels.query, minlength=n_names) > 0
    lines_of = np.bincount(run.query, minlength=n_names)
    evaluated = has_qrels & ((lines_of > 0) | all_queries)
    if max_per_query is not None or not evaluated[lines_of > 0].all():
        # Keep each ranking's first documents, of the evaluated queries only.
        query = run.query[order]
        starts = np.searchsorted(query, query)
        limit = len(query) if max_per_query is None else max_per_query
        keep = np.flatnonzero((np.arange(len(query)) - starts < limit) & evaluated[query])
        codes, query = codes[keep], query[keep]
        lines_of = np.bincount(query, minlength=n_names)
    offsets = np.zeros(int(evaluated.sum()) + 1, dtype=np.int64)
    np.cumsum(lines_of[evaluated], out=offsets[1:])
    levels = np.asarray(qrels.values, np.int64)
    judged = (levels >= 0) & evaluated[qrels.query]
    row = np.cumsum(evaluated) - 1
    return _Rankings(
        [names[i] for i in np.flatnonzero(evaluated).tolist()],
        codes,
        offsets,
        row[qrels.query[judged]].astype(np.int64),
        levels[judged],
    )


def _size(handle: BinaryIO) -> int:
    return os.fstat(handle.fileno()).st_size


def _fast_rankings(
    qrels_path: str | Path,
    run_path: str | Path,
    all_queries: bool,
    max_per_query: int | None,
    extra_fields: bool,
) -> tuple[_Rankings, str | None] | None:
    codes: dict[bytes, int] = {}
    try:
        with open_regular(qrels_path) as handle:
            qrels = _read_qrels(handle, codes)
        with open_regular(run_path) as handle:
            run, run_id = _read_run(handle, codes, extra_fields)
        # Query codes become ranks in byte order, which is the order of their str ids.
        names = sorted(codes)
        rank = np.empty(len(names), dtype=np.int64)
        rank[[codes[name] for name in names]] = np.arange(len(names))
        qrels.query = rank[qrels.query]
        for span in _spans(len(run.query)):  # in place: no second column of the run's size
            run.query[span] = rank[run.query[span]]
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
