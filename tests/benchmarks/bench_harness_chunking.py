"""Cutting a large corpus into chunks on every core against one process cutting it.

Run with ``python tests/benchmarks/bench_harness_chunking.py [--documents N] [--repeats N]``.

The corpus is generated (no download): ``--documents`` documents (default 100,000) of about
1,680 characters each, in blank-line paragraphs of sentences, some under a markdown heading.
Each chunker kind that a run splits (``chars``, ``tokens``, ``sentences``, ``paragraphs``) is
cut by ``cut_corpus`` on one process and on the available cores, best of ``--repeats``; the
two chunk tables must be equal (and equal to ``chunk_corpus`` on the first 2,000 documents,
an independent path).

Check (exit status 1 on a miss): the tables are equal; with two cores or more, every kind
whose threshold (``CHUNK_MIN_CHARS``) the corpus reaches is cut on several processes, and in
at most 0.85x the one-process time.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from groundkit.harness._chunking import CHUNK_MIN_CHARS, cut_corpus
from groundkit.harness._cores import available_cores
from groundkit.harness.run._ranking import ChunkTable
from groundkit.judgments.corpus import (
    CharsChunker,
    ChunkerConfig,
    ParagraphsChunker,
    SentencesChunker,
    TokensChunker,
    chunk_corpus,
)

MAX_RATIO = 0.85
KINDS: list[ChunkerConfig] = [
    CharsChunker(size=1000, overlap=100),
    TokensChunker(size=256, overlap=32),
    SentencesChunker(max_sentences=5),
    ParagraphsChunker(max_chars=1000),
]
_SYLLABLES = [c + v for c in "bcdfghklmnprstvz" for v in "aeiou"]


def documents(count: int, seed: int = 0) -> list[str]:
    """``count`` documents of about 1,680 characters."""
    rng = np.random.default_rng(seed)
    words = sorted(
        {"".join(rng.choice(_SYLLABLES, int(rng.integers(1, 4)))) for _ in range(30_000)}
    )
    picks = iter(rng.choice(len(words), count * 420).tolist())
    lengths = iter(rng.integers(8, 28, count * 15).tolist())
    texts = []
    for doc in range(count):
        paragraphs = []
        for part in range(3):
            sentences = []
            for _ in range(5):
                sentence = " ".join(words[next(picks)] for _ in range(next(lengths)))
                sentences.append(sentence.capitalize() + ".")
            heading = "## Section\n" if (doc + part) % 4 == 0 else ""
            paragraphs.append(heading + " ".join(sentences))
        texts.append("\n\n".join(paragraphs))
    return texts


def _best(
    texts: list[str], config: ChunkerConfig, workers: int, repeats: int
) -> tuple[float, ChunkTable, int]:
    best = float("inf")
    for _ in range(repeats):
        began = time.perf_counter()
        table, used = cut_corpus(texts, config, None, workers)
        best = min(best, time.perf_counter() - began)
    return best, table, used


def main(argv: list[str]) -> int:
    """Measure, print and check; return the exit status."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--documents", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    texts = documents(args.documents)
    cores = available_cores()
    chars = sum(map(len, texts))
    print(f"{len(texts):,} documents, {chars / 1e6:.1f} M characters, {cores} cores")
    misses = []
    for config in KINDS:
        one, serial, _ = _best(texts, config, 1, args.repeats)
        many, parallel, used = _best(texts, config, cores, args.repeats)
        same = all(
            np.array_equal(getattr(serial, f), getattr(parallel, f))
            for f in ("docs", "starts", "ends")
        )
        sample = chunk_corpus({str(i): t for i, t in enumerate(texts[:2000])}, config)
        head = int(np.searchsorted(serial.docs, 2000))
        reference = [(int(c.doc), c.start, c.end) for c in sample]
        ours = list(
            zip(
                serial.docs[:head].tolist(),
                serial.starts[:head].tolist(),
                serial.ends[:head].tolist(),
                strict=True,
            )
        )
        ratio = many / one
        equal = same and ours == reference
        print(
            f"{config.kind:>10}: 1 process {one:6.2f} s, {used} processes {many:6.2f} s "
            f"({ratio:.2f}x), {serial.docs.size:,} chunks, tables equal {equal}"
        )
        if not equal:
            misses.append(f"{config.kind}: tables differ")
        floor = CHUNK_MIN_CHARS[config.kind]
        if cores >= 2 and floor is not None and chars >= floor and used < 2:
            misses.append(f"{config.kind}: {chars:,} characters cut on one process")
        if used >= 2 and ratio > MAX_RATIO:
            misses.append(f"{config.kind}: {ratio:.2f}x > {MAX_RATIO}x")
    print("missed:" if misses else "met", *misses)
    return 1 if misses else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
