"""A BM25 stage on all cores: chunk analysis in forked processes, query blocks on threads.

Analysis (regular expression, lower case, stopwords, stemming) is Python work that holds the
interpreter lock, so a large corpus is cut into contiguous parts analysed by forked worker
processes: a child inherits the texts (nothing is pickled on the way in) and sends back its
part's flat token array, the number of tokens of each text and its terms in the order it met
them. :func:`merge_parts` numbers the terms again part after part, so the merged vocabulary,
flat array and offsets are bit-identical to one process analysing every text in order.

Scoring a query is NumPy work on the whole corpus (its sparse sums and selection release the
lock), so many queries against a large index are scored in blocks on a thread pool; the
results are collected in query order, identical to the serial loop.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

from groundkit.harness._cores import available_cores
from groundkit.harness._forked import plan_parts as split_evenly
from groundkit.harness._forked import run_in_parts

__all__ = [
    "PARALLEL_MIN_CHARS",
    "PART_MIN_CHARS",
    "SEARCH_MIN_WORK",
    "AnalysedPart",
    "analyse_in_parts",
    "merge_parts",
    "plan_parts",
    "resolve_workers",
    "search_threads",
]

WorkersSetting = int | Literal["auto"] | None

PARALLEL_MIN_CHARS = 32_000_000
"""Characters from which the analysis is split between processes. Measured on 2 cores (best
of 5, SciFact's documents, repeated for the larger sizes; the analysis with array operations,
:mod:`._bm25_terms`): one process analyses about 28 million characters a second, and two
workers gain little before tens of millions, for much more processor time (7.8 M: 0.28 ->
0.21 s, processor 0.28 -> 0.40 s; 15.6 M: 0.41 -> 0.40 s; 31 M: 0.72 -> 0.63 s; 62 M: 1.61 ->
1.09 s, processor 2.04 s; 125 M: 2.49 -> 1.81 s). The word-by-word analysis this replaced
gained from 2 million characters (SciFact: 0.52 -> 0.35 s)."""
PART_MIN_CHARS = 8_000_000
"""The least characters a part is given: a corpus just over the threshold gets fewer parts
than there are cores rather than parts too small to pay for their process."""
SEARCH_MIN_WORK = 50_000_000
"""Queries times indexed chunks from which the queries are scored on several threads. Only
part of a query's scoring releases the interpreter lock: on 2 cores, 10,000 queries against
100,000 documents took 6.5 s on one thread and 5.4 s on two (30% more processor time); 300
queries against 5,000 chunks gain nothing (21 ms either way), so small searches stay on one."""
_SEARCH_BLOCK = 64
"""Queries a thread scores at a time."""


@dataclass(frozen=True)
class AnalysedPart:
    """One contiguous part of the texts, analysed with its own term numbering.

    Attributes:
        flat: The part's token ids (local: ``terms[i]`` is term ``i``), text after text.
        lengths: Tokens of each text of the part.
        terms: The part's terms in the order it met them.
    """

    flat: npt.NDArray[np.int32]
    lengths: npt.NDArray[np.int64]
    terms: list[str]


Analyse = Callable[[Sequence[str]], AnalysedPart]


def resolve_workers(setting: WorkersSetting) -> int:
    """The workers a BM25 stage may use: ``None`` or ``"auto"``: the available cores."""
    if setting is None or setting == "auto":
        return available_cores()
    return max(1, int(setting))


def plan_parts(
    lengths: npt.NDArray[np.int64],
    workers: int,
    *,
    min_chars: int | None = None,
    part_chars: int | None = None,
) -> list[tuple[int, int]]:
    """The parts of a corpus to analyse (:func:`~groundkit.harness._forked.plan_parts`).

    Args:
        lengths: Characters of each text.
        workers: The most parts wanted.
        min_chars: Characters from which the texts are split (default
            :data:`PARALLEL_MIN_CHARS`).
        part_chars: The least characters a part is given (default :data:`PART_MIN_CHARS`).
    """
    return split_evenly(
        lengths,
        workers,
        min_chars=PARALLEL_MIN_CHARS if min_chars is None else min_chars,
        part_chars=PART_MIN_CHARS if part_chars is None else part_chars,
    )


def analyse_in_parts(
    analyse: Analyse, texts: Sequence[str], parts: Sequence[tuple[int, int]]
) -> list[AnalysedPart]:
    """Each part of ``texts`` analysed: the first here, the others in forked workers.

    A worker that cannot be started, dies or hangs is replaced by analysing its part here
    (:func:`~groundkit.harness._forked.run_in_parts`): the result never depends on the workers.
    """
    return run_in_parts(lambda first, last: analyse(texts[first:last]), parts)


def merge_parts(
    parts: Sequence[AnalysedPart],
) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.int64], dict[str, int]]:
    """The flat token array, tokens per text and vocabulary of the parts, in part order.

    Each part's terms are numbered again in the order the parts met them: a term takes the id
    of its first appearance in the earliest part holding it, exactly as one pass over every
    text in order numbers it, so the result is bit-identical to analysing the texts at once.
    """
    # One output array, each part's ids written into its place: no per-part temporaries and no
    # concatenation. The first part's numbering is already the merged one.
    sizes = [part.flat.size for part in parts]
    flat = np.empty(sum(sizes), dtype=np.int32)
    vocabulary: dict[str, int] = {}
    start = 0
    for part, size in zip(parts, sizes, strict=True):
        target = flat[start : start + size]
        if not vocabulary:
            vocabulary = dict(zip(part.terms, range(len(part.terms)), strict=True))
            target[:] = part.flat
        else:
            ids = (vocabulary.setdefault(term, len(vocabulary)) for term in part.terms)
            remap = np.fromiter(ids, np.int32, len(part.terms))
            # Every local id is below len(terms), so "wrap" wraps nothing; the default "raise"
            # buffers the output (0.63 s against 0.028 s for 8.3 M ids into fresh memory).
            np.take(remap, part.flat, out=target, mode="wrap")
        start += size
    lengths = np.concatenate([part.lengths for part in parts]) if parts else np.zeros(0, np.int64)
    return flat, lengths.astype(np.int64, copy=False), vocabulary


def search_threads(workers: int, queries: int, chunks: int) -> int:
    """Threads to score ``queries`` queries against ``chunks`` chunks (1: the serial loop)."""
    if workers <= 1 or queries * chunks < SEARCH_MIN_WORK:
        return 1
    return max(1, min(workers, -(-queries // _SEARCH_BLOCK)))


def blocks(count: int) -> Iterator[range]:
    """The query numbers ``0 .. count - 1`` in blocks of :data:`_SEARCH_BLOCK`."""
    for first in range(0, count, _SEARCH_BLOCK):
        yield range(first, min(first + _SEARCH_BLOCK, count))
