"""Words and their 64-bit ids, found with array operations over a text's code points.

The words are exactly those of ``text.split()`` (the whitespace of ``str.isspace``), whatever
the script; a word's id is a polynomial hash of its code points (with its length), the same
wherever the word is and whatever batch it is hashed in. Near-duplicate marking
(:mod:`groundkit.harness.analysis._duplicates`) builds its shingles from these ids, and BM25's
analysis (:mod:`groundkit.harness.retrievers._bm25_terms`) its words' ids with
:func:`span_ids`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

__all__ = [
    "BASE",
    "MIX_1",
    "MIX_2",
    "MIX_3",
    "batch_word_ids",
    "code_points",
    "finalize",
    "powers_of_base",
    "span_ids",
    "whitespace",
]

U64Array = npt.NDArray[np.uint64]
IntArray = npt.NDArray[np.int64]

# Odd multipliers: multiplication by them is a bijection on 64-bit integers.
BASE = np.uint64(0x100000001B3)
MIX_1 = np.uint64(0x9E3779B97F4A7C15)
MIX_2 = np.uint64(0xC2B2AE3D27D4EB4F)
MIX_3 = np.uint64(0xBF58476D1CE4E5B9)

# The whitespace of str.split() (str.isspace) besides the ASCII characters 9-13 and 28-32; a
# test checks this list against every code point.
_OTHER_WHITESPACE = np.array(
    [0x85, 0xA0, 0x1680, *range(0x2000, 0x200B), 0x2028, 0x2029, 0x202F, 0x205F, 0x3000],
    dtype=np.uint32,
)


def finalize(x: U64Array) -> U64Array:
    """A bijective 64-bit mix that spreads every input bit over every output bit."""
    x = x ^ (x >> np.uint64(30))
    x *= MIX_3
    x ^= x >> np.uint64(27)
    x *= MIX_2
    x ^= x >> np.uint64(31)
    return x


def whitespace(codes: npt.NDArray[np.unsignedinteger]) -> npt.NDArray[np.bool_]:
    """Which code points ``str.split()`` splits on."""
    space: npt.NDArray[np.bool_] = codes == 32
    # Unsigned subtraction wraps code points below the range to large values.
    space |= (codes - codes.dtype.type(9)) <= 4
    space |= (codes - codes.dtype.type(28)) <= 3
    high = np.flatnonzero(codes >= 0x85)
    if high.size:
        space[high] = np.isin(codes[high], _OTHER_WHITESPACE)
    return space


def code_points(text: str) -> npt.NDArray[np.unsignedinteger]:
    """The code points of a text, one array element each.

    One byte each when the text is ASCII, two when every code point is in the Basic
    Multilingual Plane (one UTF-16 unit each), four otherwise.
    """
    if text.isascii():
        return np.frombuffer(text.encode("ascii"), dtype=np.uint8)
    units = text.encode("utf-16-le", "surrogatepass")
    if len(units) == 2 * len(text):  # no pair of surrogates: each unit is a code point
        return np.frombuffer(units, dtype=np.uint16)
    return np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)


def powers_of_base(count: int) -> U64Array:
    """``BASE ** i`` modulo 2**64 for ``i`` in ``0 .. count - 1``."""
    powers = np.empty(count, dtype=np.uint64)
    powers[0] = 1
    powers[1:] = BASE
    np.multiply.accumulate(powers, out=powers)
    return powers


def span_ids(
    codes: npt.NDArray[np.unsignedinteger],
    starts: IntArray,
    ends: IntArray,
    powers: U64Array | None = None,
) -> U64Array:
    """The 64-bit id of each span ``codes[starts[i] : ends[i]]``.

    The id is a hash of the span's code points and length, the same wherever the span is and
    whatever array it is in.

    Args:
        codes: Code points.
        starts: Start of each span.
        ends: End of each span.
        powers: ``BASE ** i`` for at least ``codes.size + 1`` values of ``i``
            (:func:`powers_of_base`; made here when not given).
    """
    n = int(codes.size)
    if powers is None or powers.size < n + 1:
        powers = powers_of_base(n + 1)
    # Position-independent polynomial hashes from prefix sums: with p[i] = sum of c[k] B^k
    # for k < i, (p[e] - p[s]) B^(n - s) B^-n is the sum of c[k] B^(k - s) over the span, the
    # same wherever the span is and whatever the array (uint64 arithmetic wraps around modulo
    # 2**64, where B, odd, has an inverse).
    prefix = np.empty(n + 1, dtype=np.uint64)
    prefix[0] = 0
    np.multiply(codes, powers[:n], out=prefix[1:])
    np.cumsum(prefix[1:], out=prefix[1:])
    hashes = (prefix[ends] - prefix[starts]) * powers[n - starts]
    hashes *= np.uint64(pow(int(BASE), -n, 1 << 64))
    # The length in too: a code point 0 adds nothing to the sum.
    return finalize(hashes + (ends - starts).astype(np.uint64) * MIX_1)


def batch_word_ids(pieces: Sequence[str]) -> tuple[U64Array, IntArray]:
    """Word ids of the words of some texts, in order, and each text's word count."""
    # Whitespace around and between the texts: every word then starts and ends inside one text.
    codes = code_points(" " + " ".join(pieces) + " ")
    in_word = ~whitespace(codes)
    edges = np.flatnonzero(in_word[1:] != in_word[:-1]) + 1
    starts, ends = edges[0::2], edges[1::2]
    ids = span_ids(codes, starts, ends)
    sizes = np.fromiter(map(len, pieces), np.int64, len(pieces))
    bounds = np.empty(len(pieces) + 1, dtype=np.int64)
    bounds[0] = 1
    np.cumsum(sizes + 1, out=bounds[1:])
    counts = np.diff(np.searchsorted(starts, bounds))
    return ids, counts.astype(np.int64)
