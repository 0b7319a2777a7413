"""Judgments are read in Unicode NFC; quotes still resolve to offsets into the document as read."""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import pytest

from groundkit.judgments import GoldQuote, Judgment, JudgmentError
from groundkit.judgments.corpus import Corpus
from groundkit.judgments.gold import load_judgments, resolve_judgments, resolve_quote


def nfd(text: str) -> str:
    return unicodedata.normalize("NFD", text)


QUOTE = "Le café est fermé à midi."
DOCUMENT = "Horaires\n\nLe café est fermé à midi. Réouverture à 14 h.\n"


def _judgment(query_id: str, quote: str, doc: str = "cafés/horaires.md") -> Judgment:
    return Judgment(
        query_id=query_id, query="Quand ferme le café ?", gold=(GoldQuote(doc=doc, quote=quote),)
    )


def test_quotes_and_ids_are_normalised_when_read(tmp_path: Path) -> None:
    assert nfd(QUOTE) != QUOTE
    judgment = _judgment("q", nfd(QUOTE), doc=nfd("cafés/horaires.md"))
    assert judgment.gold[0].quote == QUOTE
    assert judgment.gold[0].doc == "cafés/horaires.md"
    path = tmp_path / "judgments.jsonl"
    record = {"query_id": "q", "query": "?", "gold": [{"doc": nfd("é.md"), "quote": nfd(QUOTE)}]}
    path.write_text(json.dumps(record, ensure_ascii=False) + "\n", encoding="utf-8")
    [loaded] = load_judgments(path)
    assert (loaded.gold[0].doc, loaded.gold[0].quote) == ("é.md", QUOTE)


def test_nfd_and_nfc_copies_of_a_quote_are_one_quote(tmp_path: Path) -> None:
    # In one judgment: the same quote twice, refused like any repeated quote.
    path = tmp_path / "judgments.jsonl"
    record = {
        "query_id": "q",
        "query": "?",
        "gold": [{"doc": "a.md", "quote": QUOTE}, {"doc": "a.md", "quote": nfd(QUOTE)}],
    }
    path.write_text(json.dumps(record, ensure_ascii=False) + "\n", encoding="utf-8")
    with pytest.raises(JudgmentError, match=r"judgments\.jsonl:1: q: .*gold\[1\] repeats"):
        load_judgments(path)
    # In two judgments: the same quote, resolved once, to one span.
    corpus = {"cafés/horaires.md": DOCUMENT}
    composed, decomposed = resolve_judgments(
        [_judgment("a", QUOTE), _judgment("b", nfd(QUOTE))], corpus
    )
    assert composed.judgment.gold == decomposed.judgment.gold
    assert composed.spans == decomposed.spans
    [span] = composed.spans
    assert DOCUMENT[span.start : span.end] == QUOTE
    assert composed.quotes[0].method == decomposed.quotes[0].method == "exact"


def test_a_decomposed_document_is_matched_by_an_nfc_quote_at_its_own_offsets() -> None:
    stored = nfd(DOCUMENT)  # e.g. text saved by a tool that writes NFD
    assert len(stored) > len(DOCUMENT)
    [result] = resolve_judgments([_judgment("q", QUOTE)], {"cafés/horaires.md": stored})
    [span] = result.spans
    assert result.quotes[0].method == "tolerant"
    # Offsets are into the document as read: the span covers the decomposed text exactly.
    assert stored[span.start : span.end] == nfd(QUOTE)
    assert (span.start, span.end) == (
        stored.index(nfd(QUOTE)),
        stored.index(nfd(QUOTE)) + len(nfd(QUOTE)),
    )
    # A quote ending on a decomposed letter keeps its combining accent inside the span.
    spans, _ = resolve_quote(stored, "Le café")
    assert [stored[start:end] for start, end in spans] == [nfd("Le café")]


def test_a_document_with_both_forms_gives_every_occurrence() -> None:
    text = f"{QUOTE} Puis {nfd(QUOTE)}"
    spans, method = resolve_quote(text, QUOTE)
    # The exact pass finds the NFC copy; the decomposed copy is the same text once normalised.
    assert method == "exact"
    assert [text[start:end] for start, end in spans] == [QUOTE]
    spans, method = resolve_quote(nfd(text), QUOTE)
    assert method == "tolerant"
    assert [nfd(text)[start:end] for start, end in spans] == [nfd(QUOTE), nfd(QUOTE)]


def test_a_corpus_key_in_nfd_is_found_from_the_nfc_judgment_id() -> None:
    corpus = Corpus.from_texts({nfd("cafés/horaires.md"): DOCUMENT})
    [result] = resolve_judgments([_judgment("q", QUOTE)], corpus)
    [span] = result.spans
    assert span.doc == nfd("cafés/horaires.md")
    assert DOCUMENT[span.start : span.end] == QUOTE
