"""Benchmark quote resolution on BEIR SciFact (5,183 documents) from ../shared.

Measures, on a corpus built from ``corpus.jsonl`` (title + blank line + text, keyed by safe ids):

* resolving one whole-document quote per document (target: < 0.5 s), and its ratio to a bare
  ``str.find`` loop over the same pairs measured in the same run;
* resolving whitespace/typography-perturbed sentence quotes (the tolerant path);
* reporting the closest passage for typo'd quotes;
* locating hit texts with no document id (``locate_text(corpus, None, ...)``).

Exits 1 when the whole-document target is missed, 0 otherwise (77 when the data is absent).
"""

from __future__ import annotations

import json
import random
import re
import sys
import time
from pathlib import Path

from groundkit.judgments import Corpus, GoldQuote, Judgment, Span, resolve_judgments
from groundkit.judgments.gold import locate_text

SCIFACT = Path(__file__).resolve().parents[3] / "shared" / "data" / "beir" / "scifact"
TARGET_SECONDS = 0.5
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def _safe_id(raw: str) -> str:
    return _UNSAFE.sub("-", raw).strip(".-") or "doc"


def _load_corpus() -> Corpus:
    texts: dict[str, str] = {}
    with (SCIFACT / "corpus.jsonl").open(encoding="utf-8") as handle:
        for line in handle:
            record = json.loads(line)
            texts[_safe_id(record["_id"])] = f"{record['title']}\n\n{record['text']}"
    return Corpus.from_texts(texts)


def _best_of(repeats: int, action: object) -> float:
    assert callable(action)
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        action()
        best = min(best, time.perf_counter() - started)
    return best


def _perturb(quote: str) -> str:
    # Line breaks and doubled spaces where the document has single spaces, curly apostrophes.
    return quote.replace(" ", "\n", 3).replace(" ", "  ", 3).replace("'", "\u2019")


def main() -> int:
    """Run the measurements; return the exit status."""
    if not (SCIFACT / "corpus.jsonl").is_file():
        print(f"SciFact not found at {SCIFACT}; skipping")
        return 77
    started = time.perf_counter()
    corpus = _load_corpus()
    print(
        f"corpus: {len(corpus)} docs, {corpus.total_characters:,} chars, "
        f"built in {time.perf_counter() - started:.2f} s"
    )
    whole = [
        Judgment(query_id=f"q-{i}", query="q", gold=(GoldQuote(doc=doc, quote=corpus[doc]),))
        for i, doc in enumerate(corpus)
    ]

    def baseline() -> None:
        for judgment in whole:
            gold = judgment.gold[0]
            corpus[gold.doc].find(gold.quote)

    reference = _best_of(5, baseline)
    results = resolve_judgments(whole, corpus)
    assert all(result.quotes[0].method == "exact" for result in results)
    assert all(
        result.quotes[0].spans[0].length == len(corpus[result.quotes[0].gold.doc])
        for result in results
    )
    elapsed = _best_of(5, lambda: resolve_judgments(whole, corpus))
    print(
        f"whole-document quotes: {len(whole)} resolved in {elapsed * 1000:.1f} ms "
        f"(target < {TARGET_SECONDS * 1000:.0f} ms); "
        f"ratio to a bare str.find loop: {elapsed / reference:.1f}x"
    )

    rng = random.Random(13)
    docs = rng.sample(list(corpus), 500)
    sentences = []
    for doc in docs:
        parts = [part for part in corpus[doc].split(". ") if len(part) > 60]
        sentences.append((doc, rng.choice(parts) if parts else corpus[doc][:80]))
    perturbed = [
        Judgment(query_id=f"p-{i}", query="q", gold=(GoldQuote(doc=doc, quote=_perturb(s)),))
        for i, (doc, s) in enumerate(sentences)
    ]
    fresh = Corpus.from_texts(dict(corpus))  # no cached normalised documents
    started = time.perf_counter()
    tolerant = resolve_judgments(perturbed, fresh)
    cold = time.perf_counter() - started
    resolved = sum(result.quotes[0].resolved for result in tolerant)
    print(
        f"perturbed sentence quotes: {resolved}/{len(perturbed)} resolved in "
        f"{cold * 1000:.1f} ms (cold: each document normalised once)"
    )

    typos = [
        Judgment(
            query_id=f"t-{i}",
            query="q",
            gold=(GoldQuote(doc=doc, quote=s[:10] + "xq" + s[12:]),),
        )
        for i, (doc, s) in enumerate(sentences[:200])
    ]
    started = time.perf_counter()
    unresolved = resolve_judgments(typos, fresh)
    took = time.perf_counter() - started
    similarities = sorted(result.quotes[0].similarity or 0.0 for result in unresolved)
    print(
        f"typo'd quotes: {len(typos)} closest passages in {took * 1000:.1f} ms, "
        f"median similarity {similarities[len(similarities) // 2]:.3f}"
    )

    hits = [corpus[doc][: rng.randrange(200, 800)] for doc in docs[:200]]
    expected = [
        Span(next(d for d in corpus if corpus[d].startswith(text)), 0, len(text)) for text in hits
    ]
    middles = [sentence for _, sentence in sentences[:200]]
    started = time.perf_counter()
    located = [locate_text(fresh, None, text) for text in hits]
    prefix_time = time.perf_counter() - started
    found_prefix = sum(got == want for got, want in zip(located, expected, strict=True))
    started = time.perf_counter()
    found_middle = sum(locate_text(fresh, None, text) is not None for text in middles)
    middle_time = time.perf_counter() - started
    print(
        f"locate_text without doc id: {found_prefix}/{len(hits)} chunk-at-start hits in "
        f"{prefix_time * 1000:.1f} ms; {found_middle}/{len(middles)} mid-document sentences in "
        f"{middle_time * 1000:.1f} ms ({middle_time / len(middles) * 1000:.2f} ms each)"
    )
    if elapsed >= TARGET_SECONDS:
        print(f"FAILED: whole-document resolution took {elapsed:.3f} s")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
