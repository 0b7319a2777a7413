"""Quote resolution: exact and tolerant matching, offsets, repeats, closest passages, hits."""

from __future__ import annotations

import unicodedata

import pytest

from groundkit.judgments import Corpus, GoldQuote, Judgment, JudgmentError, Span, resolve_judgments
from groundkit.judgments.gold import (
    closest_passage,
    locate_text,
    normalize_for_matching,
    resolve_quote,
)

DOC = (
    "Policy 4.2 \u2014 Annual leave\n\n"
    "Employees receive \u201ctwenty\u2011five\u201d days\u00a0of paid leave\u2026 "
    "Unused days can\u2019t be\n   carried over beyond March.\n"
)


def _span_text(text: str, span: tuple[int, int]) -> str:
    return text[span[0] : span[1]]


def test_exact_match_is_preferred() -> None:
    spans, method = resolve_quote(DOC, "Annual leave")
    assert method == "exact"
    assert [_span_text(DOC, span) for span in spans] == ["Annual leave"]


@pytest.mark.parametrize(
    ("quote", "original"),
    [
        (
            'receive "twenty-five" days of paid leave...',
            "receive \u201ctwenty\u2011five\u201d days\u00a0of paid leave\u2026",
        ),
        ("can't be carried over", "can\u2019t be\n   carried over"),
        ("Policy 4.2 - Annual leave Employees", "Policy 4.2 \u2014 Annual leave\n\nEmployees"),
        ("  beyond   March.  ", "beyond March."),
        ("\ufb01ve\u201d days", "five\u201d days"),
    ],
)
def test_tolerant_match_maps_to_original_offsets(quote: str, original: str) -> None:
    spans, method = resolve_quote(DOC, quote)
    assert method == "tolerant"
    assert [_span_text(DOC, span) for span in spans] == [original]


def test_nfc_and_nfd_inputs_match_each_other() -> None:
    composed = "Le caf\u00e9 na\u00efve ouvre."
    decomposed = unicodedata.normalize("NFD", composed)
    spans, method = resolve_quote(composed, "cafe\u0301 nai\u0308ve")
    assert method == "tolerant"
    assert _span_text(composed, spans[0]) == "caf\u00e9 na\u00efve"
    spans, method = resolve_quote(decomposed, "caf\u00e9 na\u00efve")
    assert method == "tolerant"
    assert _span_text(decomposed, spans[0]) == unicodedata.normalize("NFD", "caf\u00e9 na\u00efve")


def test_match_never_splits_an_original_character() -> None:
    # "…" becomes "..." and "é" is one cluster: partial matches inside them are refused.
    assert resolve_quote("wait\u2026 now", "..now") == ([], None)
    assert resolve_quote("cafe\u0301 x", "cafe x") == ([], None)
    text = "wait\u2026 now. and ... now"
    assert resolve_quote(text, "... now") == ([(15, 22)], "exact")  # exact pass wins
    assert resolve_quote(text, "...  now") == ([(4, 9), (15, 22)], "tolerant")


def test_repeated_quote_resolves_to_every_occurrence() -> None:
    text = "aaaa. The cat sat. the cat sat. The cat sat. The\ncat sat."
    spans, method = resolve_quote(text, "The cat sat.")
    assert method == "exact"
    assert spans == [(6, 18), (32, 44)]
    # Non-overlapping occurrences only.
    assert resolve_quote("aaaa", "aa") == ([(0, 2), (2, 4)], "exact")
    # With no exact occurrence, every tolerant occurrence is returned.
    spans, method = resolve_quote("x  y, x\ny, x\u00a0y", "x y")
    assert method == "tolerant"
    assert len(spans) == 3


def test_whole_document_and_unfindable_quotes() -> None:
    assert resolve_quote(DOC, DOC) == ([(0, len(DOC))], "exact")
    assert resolve_quote("short", "much longer quote") == ([], None)
    assert resolve_quote(DOC, "   ") == ([], None)
    assert resolve_quote("", "x") == ([], None)


def test_normalize_for_matching() -> None:
    assert normalize_for_matching("\u201cA\u201d \u2013\u00a0b\u2026\n\tc\u00ad") == '"A" - b... c'


def test_closest_passage_for_a_typo() -> None:
    text = "Intro text here. " * 5 + "The quick brown fox jumps over the lazy dog. " + "Outro. " * 5
    found = closest_passage(text, "the quick brwn fox jumps ovr the lazy dog")
    assert found is not None
    passage, similarity = found
    assert "quick brown fox jumps over the lazy dog" in passage
    assert 0.9 < similarity < 1.0
    assert closest_passage("   ", "x") is None


def test_closest_passage_without_shared_words() -> None:
    found = closest_passage("abc def ghi " * 20, "zzzz qqqq")
    assert found is not None
    assert 0.0 <= found[1] < 0.5


def test_span_validation() -> None:
    span = Span("a.txt", 2, 5)
    assert span.length == 3
    with pytest.raises(JudgmentError, match="invalid span"):
        Span("a.txt", 5, 2)
    with pytest.raises(JudgmentError, match="invalid span"):
        Span("a.txt", -1, 2)


# Judgments against a corpus ------------------------------------------------------------------

CORPUS = Corpus.from_texts(
    {
        "handbook.txt": DOC,
        "faq.md": "Q: Can I carry leave over?\nA: Only until March.\nA: Only until March.",
        "blank.txt": "   \n",
    }
)


def _judgment(*gold: GoldQuote) -> Judgment:
    return Judgment(query_id="q-1", query="Leave?", gold=gold)


def test_resolve_judgments_reports_every_quote() -> None:
    judgment = _judgment(
        GoldQuote(doc="handbook.txt", quote="can't be carried over"),
        GoldQuote(doc="faq.md", quote="Only until March.", grade=2),
        GoldQuote(doc="missing.txt", quote="anything"),
        GoldQuote(doc="faq.md", quote="Only untill Marhc"),
        GoldQuote(doc="blank.txt", quote="text"),
    )
    unanswerable = Judgment(query_id="q-2", query="?", category="unanswerable")
    [resolved, nothing] = resolve_judgments([judgment, unanswerable], CORPUS)
    assert nothing.quotes == ()
    assert nothing.spans == ()
    tolerant, repeated, missing, typo, blank = resolved.quotes
    assert tolerant.method == "tolerant"
    assert tolerant.resolved
    assert tolerant.reason is None
    assert repeated.method == "exact"
    assert len(repeated.spans) == 2
    assert repeated.gold.grade == 2
    assert not missing.resolved
    assert missing.closest is None
    assert missing.similarity is None
    assert missing.reason == "document 'missing.txt' is not in the corpus"
    assert not typo.resolved
    assert typo.closest == "Only until March."
    assert typo.similarity is not None
    assert 0.8 < typo.similarity < 1.0
    assert typo.reason is not None
    assert "closest passage similarity" in typo.reason
    assert blank.closest is None
    assert blank.reason is not None
    assert "blank" in blank.reason
    assert resolved.unresolved == (missing, typo, blank)
    assert len(resolved.spans) == 3
    for span in resolved.spans:
        assert 0 <= span.start < span.end <= len(CORPUS[span.doc])


def test_same_quote_with_another_grade_keeps_its_grade() -> None:
    first = _judgment(GoldQuote(doc="faq.md", quote="Only until March."))
    second = Judgment(
        query_id="q-2",
        query="x",
        gold=[GoldQuote(doc="faq.md", quote="Only until March.", grade=3)],
    )
    results = resolve_judgments([first, second], CORPUS)
    assert [r.quotes[0].gold.grade for r in results] == [1, 3]
    assert results[0].quotes[0].spans == results[1].quotes[0].spans


def test_decomposed_doc_ids_find_the_composed_document() -> None:
    corpus = Corpus.from_texts({"caf\u00e9.txt": "menu of the day"})
    [resolved] = resolve_judgments(
        [_judgment(GoldQuote(doc="cafe\u0301.txt", quote="menu"))], corpus
    )
    assert resolved.spans == (Span("caf\u00e9.txt", 0, 4),)
    assert locate_text(corpus, "cafe\u0301.txt", "day") == Span("caf\u00e9.txt", 12, 15)


def test_plain_mapping_is_accepted_as_corpus() -> None:
    [resolved] = resolve_judgments([_judgment(GoldQuote(doc="a.txt", quote="b"))], {"a.txt": "abc"})
    assert resolved.spans == (Span("a.txt", 1, 2),)


# Locating hit texts --------------------------------------------------------------------------


def test_locate_text_with_a_document() -> None:
    assert locate_text(CORPUS, "faq.md", "Only until March.") == Span("faq.md", 30, 47)
    span = locate_text(CORPUS, "handbook.txt", "can't be carried over")
    assert span is not None
    assert DOC[span.start : span.end] == "can\u2019t be\n   carried over"
    assert locate_text(CORPUS, "faq.md", "not there") is None
    assert locate_text(CORPUS, "nope.txt", "Only") is None
    assert locate_text(CORPUS, "faq.md", " ") is None


def test_locate_text_without_a_document() -> None:
    # Whole document and document start: found through the prefix index.
    assert locate_text(CORPUS, None, CORPUS["faq.md"]) == Span("faq.md", 0, len(CORPUS["faq.md"]))
    assert locate_text(CORPUS, None, "Policy 4.2") == Span("handbook.txt", 0, 10)
    # Middle of a document, exact then tolerant.
    assert locate_text(CORPUS, None, "until March") == Span("faq.md", 35, 46)
    span = locate_text(CORPUS, None, '"twenty-five" days of')
    assert span is not None
    assert span.doc == "handbook.txt"
    assert DOC[span.start : span.end] == "\u201ctwenty\u2011five\u201d days\u00a0of"
    # Never across two documents.
    assert locate_text(CORPUS, None, "March.\x00   ") is None
    assert locate_text(CORPUS, None, "absent text") is None


def test_locate_text_prefers_document_starts_then_id_order() -> None:
    corpus = Corpus.from_texts({"b.txt": "same words", "a.txt": "the same words"})
    assert locate_text(corpus, None, "same words") == Span("b.txt", 0, 10)
    assert locate_text(corpus, None, "same word") == Span("b.txt", 0, 9)
    assert locate_text(corpus, None, "ame words") == Span("a.txt", 5, 14)
    corpus = Corpus.from_texts({"c.txt": "x same words", "d.txt": "the same words"})
    assert locate_text(corpus, None, "same words") == Span("c.txt", 2, 12)
