"""Dense embedding throughput against raw ``SentenceTransformer.encode`` on the same texts.

Run with ``python tests/benchmarks/bench_harness_dense.py [--texts N] [--repeats R]``.

The texts are chunk texts: the first N SciFact documents (title and abstract, as the BEIR
adapter joins them) when /work/shared holds SciFact, else the packaged demo corpus cut into
1000-character chunks overlapping by 200. The model is the packaged all-MiniLM-L6-v2 on the
CPU, loaded once and shared by both sides, so only embedding is timed.

* groundkit: ``DenseIndex`` over the texts with an empty embedding cache (hashing, sorting,
  encoding, one cache shard per group, normalisation), batch size 32.
* reference: ``model.encode(texts, batch_size=32, convert_to_numpy=True)``.

The two alternate R times; each side's best time counts (the machine is shared). Check (exit
status 1 on a miss): groundkit's throughput is at least 0.9x the reference's, and its vectors
equal the reference's normalised vectors to float32 precision.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

MIN_RATIO = 0.9
SCIFACT = Path("/work/shared/data/beir/scifact/corpus.jsonl")


def _texts(count: int) -> tuple[list[str], str]:
    if SCIFACT.is_file():
        texts = []
        with SCIFACT.open(encoding="utf-8") as lines:
            for line in lines:
                row = json.loads(line)
                texts.append(f"{row.get('title', '')}\n\n{row['text']}".strip())
                if len(texts) == count:
                    break
        return texts, f"the first {len(texts)} SciFact documents"
    import importlib.resources

    from groundkit.judgments import CharsChunker
    from groundkit.judgments.corpus import chunk_text

    texts = []
    corpus_dir = importlib.resources.files("groundkit.harness") / "demo_data" / "corpus"
    for path in sorted(corpus_dir.iterdir(), key=lambda p: p.name):
        text = path.read_text(encoding="utf-8")
        chunker = CharsChunker(size=1000, overlap=200)
        texts += [text[start:end] for start, end in chunk_text(text, chunker)]
    return texts[:count], f"{min(count, len(texts))} demo-corpus chunks"


def main(argv: list[str] | None = None) -> int:
    """Measure both sides; return 1 when the ratio or the equality check fails."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--texts", type=int, default=300)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    try:
        from groundkit.harness.dense._loading import load_sentence_transformer
        from groundkit.harness.dense._model import DenseIndex
    except ImportError as error:
        print(f"dense extra missing: {error}")
        return 1
    from groundkit.harness import DenseRetriever

    texts, source = _texts(args.texts)
    model = load_sentence_transformer("all-MiniLM-L6-v2", stage="bench", device="cpu")
    settings = DenseRetriever(batch_size=32, device="cpu")
    model.encode(texts[:64], batch_size=32)  # warm-up: first-call allocations, thread pools
    ours, reference = [], []
    vectors = expected = None
    for _ in range(args.repeats):
        with tempfile.TemporaryDirectory() as cache:
            start = time.perf_counter()
            index = DenseIndex(texts, settings, stage="bench", cache_dir=Path(cache), model=model)
            ours.append(time.perf_counter() - start)
        vectors = index.vectors
        start = time.perf_counter()
        raw = model.encode(texts, batch_size=32, convert_to_numpy=True)
        reference.append(time.perf_counter() - start)
        expected = raw / np.linalg.norm(raw, axis=1, keepdims=True)
    assert vectors is not None
    assert expected is not None
    ratio = min(reference) / min(ours)
    deviation = float(np.max(np.abs(vectors - expected)))
    print(f"texts: {source}, batch size 32, CPU, {args.repeats} alternating runs (best of each)")
    print(
        f"reference SentenceTransformer.encode: {min(reference):.2f} s "
        f"({len(texts) / min(reference):.1f} texts/s); all runs "
        + ", ".join(f"{t:.2f}" for t in reference)
    )
    print(
        f"groundkit DenseIndex (empty cache):   {min(ours):.2f} s "
        f"({len(texts) / min(ours):.1f} texts/s); all runs " + ", ".join(f"{t:.2f}" for t in ours)
    )
    print(f"throughput ratio groundkit/reference: {ratio:.3f} (target >= {MIN_RATIO})")
    print(f"largest difference from the reference's normalised vectors: {deviation:.2e}")
    failed = ratio < MIN_RATIO or deviation > 1e-5
    if failed:
        print("MISSED")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
