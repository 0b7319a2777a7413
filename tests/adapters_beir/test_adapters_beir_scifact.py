"""Adapting the real BEIR SciFact (from ../shared; skipped when it is absent)."""

from __future__ import annotations

import json
from pathlib import Path

from groundkit.adapters.beir import adapt_beir_dataset
from groundkit.judgments import Corpus, load_judgments, resolve_judgments


def test_scifact_test_split(scifact_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "scifact"
    calls: list[tuple[int, int]] = []
    report = adapt_beir_dataset(scifact_dir, out, progress=lambda d, t: calls.append((d, t)))

    assert report.document_count == 5183
    assert report.query_count == 300
    assert report.relevance_pair_count == 339
    assert report.mapped_document_ids == report.mapped_query_ids == {}
    assert report.id_map_path == (out / "id_map.json").absolute()
    assert calls[0] == (0, 5183)
    assert calls[-1] == (5183, 5183)

    corpus = Corpus.from_directory(out / "corpus")
    assert len(corpus) == 5183
    assert corpus.total_characters == report.total_characters
    judgments = load_judgments(out / "judgments.jsonl")
    assert len(judgments) == 300
    assert sum(len(j.gold) for j in judgments) == 339
    resolved = resolve_judgments(judgments, corpus)
    for item in resolved:
        for quote in item.quotes:
            assert quote.method == "exact"
            assert [(s.doc, s.start, s.end) for s in quote.spans] == [
                (quote.gold.doc, 0, len(corpus[quote.gold.doc]))
            ]

    # Spot-check one document against the source record.
    with (scifact_dir / "corpus.jsonl").open(encoding="utf-8") as handle:
        first = json.loads(handle.readline())
    expected = f"{first['title']}\n\n{first['text']}" if first["title"] else first["text"]
    assert corpus[f"{first['_id']}.txt"] == expected
