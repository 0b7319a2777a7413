"""Cutting a run's corpus into chunks: on every available core for a large corpus.

Chunking is Python work (regular expressions, a tokenizer's offsets) that holds the interpreter
lock, so a large corpus is cut into contiguous ranges of documents and the ranges after the
first are chunked by forked workers (:func:`~groundkit.harness._forked.run_in_parts`). Each
document is cut by :func:`groundkit.judgments.corpus.chunk_text` alone, whatever process cuts
it, and the ranges are joined in order: the chunk table is the one a single process gives
(the same spans as :func:`~groundkit.judgments.corpus.chunk_corpus`).

Only the ``words`` tokenizer (the default) is used in a forked worker: a model tokenizer may
keep a thread pool of its own, which a forked child does not inherit in a usable state.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from groundkit.harness._cores import available_cores
from groundkit.harness._forked import plan_parts, run_in_parts
from groundkit.harness.run._ranking import ChunkTable
from groundkit.judgments.corpus import ChunkerConfig, Tokenizer, chunk_text, uses_tokenizer

__all__ = ["CHUNK_MIN_CHARS", "CHUNK_PART_CHARS", "cut_corpus"]

IntArray = npt.NDArray[np.int64]

CHUNK_MIN_CHARS: dict[str, int | None] = {
    "document": None,
    "chars": 16_000_000,
    "tokens": 4_000_000,
    "sentences": 4_000_000,
    "paragraphs": 4_000_000,
}
"""Characters from which a chunker's work is split between processes (``None``: never; a
``document`` chunk is one slice). Measured on 2 idle cores, synthetic documents of 1,360
characters, best of 3, one process against two: ``chars`` (1,000 characters, overlap 100)
4 M characters 20 -> 22 ms, 8 M 41 -> 37 ms, 16 M 88 -> 65 ms, 64 M 368 -> 254 ms;
``sentences`` 4 M 145 -> 88 ms, 64 M 2.42 -> 1.28 s; ``tokens`` (256, overlap 32) 4 M
103 -> 65 ms, 64 M 1.69 -> 0.90 s. The thresholds sit where two processes gain clearly."""
CHUNK_PART_CHARS = 2_000_000
"""The least characters a range of documents is given."""


def cut_corpus(
    texts: Sequence[str],
    config: ChunkerConfig,
    tokenizer: Tokenizer | None,
    workers: int | None = None,
) -> tuple[ChunkTable, int]:
    """The chunk table of the corpus, and the processes that cut it.

    Args:
        texts: The documents' texts, by document code.
        config: The chunker settings.
        tokenizer: Whose tokens the chunker counts (``None``: ``words``).
        workers: The most processes to use (default: the available cores).

    Returns:
        The chunks, document by document in code order and each document's in text order
        (the table of :func:`~groundkit.judgments.corpus.chunk_corpus`), and the processes
        that cut them (1: this one alone).
    """
    floor = CHUNK_MIN_CHARS.get(config.kind, CHUNK_MIN_CHARS["tokens"])
    forkable = tokenizer is None or tokenizer.name == "words" or not uses_tokenizer(config)
    parts = [(0, len(texts))]
    if floor is not None and forkable:
        lengths = np.fromiter(map(len, texts), np.int64, len(texts))
        wanted = available_cores() if workers is None else workers
        parts = plan_parts(lengths, wanted, min_chars=floor, part_chars=CHUNK_PART_CHARS)

    def cut(first: int, last: int) -> tuple[IntArray, IntArray]:
        return _cut(texts, config, tokenizer, first, last)

    cuts = run_in_parts(cut, parts)  # one part: cut here, nothing forked
    counts = np.concatenate([c for c, _ in cuts])
    spans = np.concatenate([s for _, s in cuts]).reshape(-1, 2)
    docs = np.repeat(np.arange(len(texts), dtype=np.int64), counts)
    table = ChunkTable(docs=docs, starts=spans[:, 0].copy(), ends=spans[:, 1].copy())
    return table, len(parts)


def _cut(
    texts: Sequence[str],
    config: ChunkerConfig,
    tokenizer: Tokenizer | None,
    first: int,
    last: int,
) -> tuple[IntArray, IntArray]:
    """Chunks of ``texts[first:last]``: each text's count, and their flat ``start, end`` pairs."""
    spans = [chunk_text(text, config, tokenizer) for text in texts[first:last]]
    counts = np.fromiter(map(len, spans), np.int64, len(spans))
    flat = itertools.chain.from_iterable(itertools.chain.from_iterable(spans))
    return counts, np.fromiter(flat, np.int64, 2 * int(counts.sum()))
