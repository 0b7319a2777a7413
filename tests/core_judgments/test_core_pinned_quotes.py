"""Occurrences and pinned quotes: a repeated quote counts once; ``start`` pins one occurrence.

The repro of the issue: a quote found twice in its document, one hit covering exactly the first
copy. Before report schema 2.3 both copies were gold characters and ``span_recall@1`` was 0.5;
now the quote counts once, at its best-covered occurrence (1.0), and a quote pinned to the
second copy is not retrieved by a hit on the first (0.0).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError
from tests.core_judgments.test_core_chunk_overlap_metrics import brute_force
from tests.core_judgments.test_core_report import _report_data

from groundkit.judgments import (
    SCHEMA_VERSION,
    GoldQuote,
    Hit,
    Judgment,
    JudgmentError,
    dump_judgments,
    dump_report,
    load_judgments,
    load_report,
    resolve_judgments,
    score_queries,
)
from groundkit.judgments.gold import judgments_fingerprint, judgments_text
from groundkit.judgments.metrics import (
    ChunkSpans,
    GoldItem,
    gold_items_from_resolved,
    split_occurrences,
)
from groundkit.judgments.report import parse_report

DOC = "Intro. The fee is 8 dollars. Middle text here. The fee is 8 dollars. End."
QUOTE = "The fee is 8 dollars."
FIRST = DOC.find(QUOTE)  # 7
SECOND = DOC.find(QUOTE, FIRST + 1)  # 47
SPANS = ["span_recall@1", "span_precision@1", "span_iou@1", "span_iou_chroma@1"]
RANKED = ["recall@1", "hit@1", "mrr"]


def _judgment(start: int | None = None, quote: str = QUOTE, query_id: str = "fee") -> Judgment:
    return Judgment(
        query_id=query_id,
        query="What is the fee?",
        gold=(GoldQuote(doc="fees.md", quote=quote, start=start),),
    )


def _scores(judgment: Judgment, hit: tuple[int, int], text: str = DOC) -> dict[str, float]:
    resolved = resolve_judgments([judgment], {"fees.md": text})
    gold = gold_items_from_resolved(resolved)
    hits = {judgment.query_id: [Hit(doc="fees.md", start=hit[0], end=hit[1], score=1.0)]}
    return score_queries(gold, hits, [*SPANS, *RANKED])[judgment.query_id]


def test_the_repro_positions() -> None:
    assert (FIRST, SECOND) == (7, 47)
    assert DOC[FIRST : FIRST + len(QUOTE)] == DOC[SECOND : SECOND + len(QUOTE)] == QUOTE


def test_a_quote_found_twice_is_credited_once_at_its_best_covered_occurrence() -> None:
    [resolved] = resolve_judgments([_judgment()], {"fees.md": DOC})
    assert [(s.start, s.end) for s in resolved.quotes[0].spans] == [(7, 28), (47, 68)]
    for hit in ((FIRST, FIRST + len(QUOTE)), (SECOND, SECOND + len(QUOTE))):
        row = _scores(_judgment(), hit)
        # Exactly the quoted passage: recall, precision and IoU 1 (span_recall was 0.5).
        assert row == dict.fromkeys([*SPANS, *RANKED], 1.0), hit


def test_half_of_one_copy_is_half_of_the_quote() -> None:
    # The hit covers the second half of the first copy: the first copy is the best covered.
    half = len(QUOTE) // 2
    row = _scores(_judgment(), (FIRST + half, FIRST + len(QUOTE)))
    covered = len(QUOTE) - half
    assert row["span_recall@1"] == pytest.approx(covered / len(QUOTE))
    assert row["span_precision@1"] == 1.0


def test_a_hit_over_both_copies_finds_the_quote_once() -> None:
    # [7, 68): both copies and the text between; the gold is ONE copy (21 characters).
    row = _scores(_judgment(), (FIRST, SECOND + len(QUOTE)))
    assert row["span_recall@1"] == 1.0
    assert row["span_precision@1"] == pytest.approx(len(QUOTE) / (SECOND + len(QUOTE) - FIRST))


def test_a_quote_pinned_to_the_second_occurrence_is_not_found_at_the_first() -> None:
    [resolved] = resolve_judgments([_judgment(start=SECOND)], {"fees.md": DOC})
    assert [(s.start, s.end) for s in resolved.quotes[0].spans] == [(47, 68)]
    assert resolved.quotes[0].method == "exact"
    row = _scores(_judgment(start=SECOND), (FIRST, FIRST + len(QUOTE)))
    assert row == dict.fromkeys([*SPANS, *RANKED], 0.0)
    assert _scores(_judgment(start=SECOND), (SECOND, SECOND + len(QUOTE)))["span_recall@1"] == 1.0
    pinned_first = _scores(_judgment(start=FIRST), (FIRST, FIRST + len(QUOTE)))
    assert pinned_first == dict.fromkeys([*SPANS, *RANKED], 1.0)


def test_the_rule_before_2_3_is_kept_by_split_occurrences() -> None:
    # What reports of schema 2.2 recorded: every occurrence gold characters.
    resolved = resolve_judgments([_judgment()], {"fees.md": DOC})
    old = split_occurrences(gold_items_from_resolved(resolved))
    assert [item.spans for item in old["fee"]] == [
        (("fees.md", 7, 28),),
        (("fees.md", 47, 68),),
    ]
    hits = {"fee": [Hit(doc="fees.md", start=FIRST, end=FIRST + len(QUOTE), score=1.0)]}
    assert score_queries(old, hits, ["span_recall@1"])["fee"]["span_recall@1"] == 0.5
    assert split_occurrences({"q": [GoldItem(grade=2)]}) == {"q": (GoldItem(grade=2),)}


def test_precision_omega_takes_the_occurrence_the_chunker_fits_best() -> None:
    # Chunks [0, 30), [30, 47), [47, 73): the first copy [7, 28) fits its chunk with IoU
    # 21 / 30, the second [47, 68) with 21 / 26: the second is the quote's occurrence, and
    # only its chunk is O (the chunk around the first copy is not charged to the quote).
    gold = {"q": [GoldItem(spans=(("d", 7, 28), ("d", 47, 68)))]}
    chunks = ChunkSpans(docs=[0, 0, 0], starts=[0, 30, 47], ends=[30, 47, 73], doc_ids=("d",))
    row = score_queries(gold, {}, ["precision_omega"], chunks=chunks)["q"]
    assert row["precision_omega"] == pytest.approx(21 / 26)
    expected = brute_force(gold["q"], [], 1, [("d", 0, 30), ("d", 30, 47), ("d", 47, 73)])
    assert row["precision_omega"] == pytest.approx(expected["precision_omega"])


# --- a pin that does not hold ------------------------------------------------------------


def test_a_pin_that_does_not_hold_the_quote_is_a_one_line_error() -> None:
    with pytest.raises(JudgmentError) as raised:
        resolve_judgments([_judgment(start=FIRST + 1)], {"fees.md": DOC})
    error = raised.value
    message = str(error)
    assert error.item_id == "fee"
    assert error.path is None
    assert error.line is None
    assert message.startswith("fee: gold.0: quote pinned at start 8 of 'fees.md' is not there")
    assert "it occurs at start 7, 47" in message
    assert "\n" not in message


def test_a_pin_past_the_end_and_a_quote_nowhere_are_named() -> None:
    with pytest.raises(JudgmentError, match=r"start 500 of 'fees.md' is past the end .*73"):
        resolve_judgments([_judgment(start=500)], {"fees.md": DOC})
    with pytest.raises(JudgmentError, match="it occurs nowhere in the document"):
        resolve_judgments([_judgment(start=0, quote="The fee is 9 dollars.")], {"fees.md": DOC})


def test_a_pin_read_from_a_file_names_the_file_and_the_line(tmp_path: Path) -> None:
    path = tmp_path / "judgments.jsonl"
    good = _judgment(query_id="first").model_dump(mode="json", exclude_defaults=True)
    bad = _judgment(start=9, query_id="second").model_dump(mode="json", exclude_defaults=True)
    path.write_text(json.dumps(good) + "\n\n" + json.dumps(bad) + "\n", encoding="utf-8")
    judgments = load_judgments(path)
    with pytest.raises(JudgmentError) as raised:
        resolve_judgments(judgments, {"fees.md": DOC}, source=path)
    assert raised.value.line == 3
    assert str(raised.value).startswith(f"{path}:3: second: gold.0: quote pinned at start 9")


def test_a_pinned_quote_of_a_missing_document_is_unresolved_as_any_other() -> None:
    [resolved] = resolve_judgments([_judgment(start=3)], {"other.md": DOC})
    assert not resolved.quotes[0].resolved
    assert resolved.quotes[0].unresolved == "missing-document"


# --- tolerance at the pinned offset ------------------------------------------------------

TYPOGRAPHIC = (
    "Intro.  \u201cThe fee\u201d is 8\u00a0dollars\u2014net. "
    "Later: \u201cThe fee\u201d is 8 dollars\u2014net."
)


def test_a_pinned_quote_matches_tolerantly_where_it_is_pinned() -> None:
    quote = '"The fee" is 8 dollars-net.'
    second = TYPOGRAPHIC.rindex("\u201cThe fee")
    [resolved] = resolve_judgments([_judgment(start=second, quote=quote)], {"fees.md": TYPOGRAPHIC})
    [span] = resolved.quotes[0].spans
    assert resolved.quotes[0].method == "tolerant"
    assert (span.start, span.end) == (second, len(TYPOGRAPHIC))
    first = TYPOGRAPHIC.index("\u201c")
    [resolved] = resolve_judgments([_judgment(start=first, quote=quote)], {"fees.md": TYPOGRAPHIC})
    [span] = resolved.quotes[0].spans
    assert TYPOGRAPHIC[span.start : span.end] == "\u201cThe fee\u201d is 8\u00a0dollars\u2014net."


def test_whitespace_at_the_pinned_offset_is_skipped_but_not_text() -> None:
    quote = '"The fee" is 8 dollars-net.'
    first = TYPOGRAPHIC.index("\u201c")
    for start in (first - 2, first - 1):  # the two spaces before the quote
        [resolved] = resolve_judgments(
            [_judgment(start=start, quote=quote)], {"fees.md": TYPOGRAPHIC}
        )
        assert resolved.quotes[0].spans[0].start == first, start
    with pytest.raises(JudgmentError, match="is not there"):
        resolve_judgments([_judgment(start=first + 1, quote=quote)], {"fees.md": TYPOGRAPHIC})
    with pytest.raises(JudgmentError, match="is not there"):
        resolve_judgments([_judgment(start=first - 3, quote=quote)], {"fees.md": TYPOGRAPHIC})


def test_a_pin_inside_a_decomposed_letter_is_refused() -> None:
    text = "Cafe\u0301 prices: the cafe\u0301 fee."  # decomposed é, twice
    start = text.index("cafe\u0301 fee")
    # The NFC quote matches the decomposed text tolerantly, from the pinned offset.
    cafe = _judgment(start=start, quote="caf\u00e9 fee")
    [resolved] = resolve_judgments([cafe], {"fees.md": text})
    assert resolved.quotes[0].method == "tolerant"
    assert resolved.quotes[0].spans[0].end == start + len("cafe\u0301 fee")
    [resolved] = resolve_judgments(
        [_judgment(start=start + 3, quote="\u00e9 fee")], {"fees.md": text}
    )
    assert (resolved.quotes[0].spans[0].start, resolved.quotes[0].spans[0].end) == (
        start + 3,
        start + len("cafe\u0301 fee"),
    )
    # Pinned at the accent itself: the match would begin inside the letter.
    with pytest.raises(JudgmentError, match="is not there"):
        resolve_judgments([_judgment(start=start + 4, quote="\u00e9 fee")], {"fees.md": text})


# --- the model ---------------------------------------------------------------------------


@pytest.mark.parametrize("bad", [-1, "7", 7.0, True, [7]])
def test_start_must_be_a_whole_number_at_least_0(bad: Any) -> None:
    with pytest.raises(ValidationError):
        GoldQuote(doc="fees.md", quote=QUOTE, start=bad)


def test_a_bad_start_in_a_file_is_named_with_its_line(tmp_path: Path) -> None:
    path = tmp_path / "judgments.jsonl"
    record = {"query_id": "fee", "query": "fee?", "gold": [{"doc": "a", "quote": "x", "start": -3}]}
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    with pytest.raises(JudgmentError) as raised:
        load_judgments(path)
    assert raised.value.line == 1
    assert "gold.0.start: Input should be greater than or equal to 0" in str(raised.value)


def test_the_same_text_twice_needs_a_different_pin_on_each() -> None:
    def judgment(*starts: int | None) -> Judgment:
        gold = [{"doc": "fees.md", "quote": QUOTE, "start": start} for start in starts]
        return Judgment.model_validate({"query_id": "fee", "query": "fee?", "gold": gold})

    assert len(judgment(FIRST, SECOND).gold) == 2
    for starts in ((None, None), (FIRST, FIRST), (None, FIRST), (SECOND, None)):
        with pytest.raises(ValidationError, match="repeats an earlier quote"):
            judgment(*starts)


def test_start_travels_through_judgments_files(tmp_path: Path) -> None:
    pinned, plain = _judgment(start=SECOND), _judgment(query_id="plain")
    dump_judgments([pinned, plain], tmp_path / "j.jsonl")
    assert load_judgments(tmp_path / "j.jsonl") == [pinned, plain]
    text = judgments_text([plain])
    assert '"start"' not in text  # unpinned files (and their fingerprints) are unchanged
    assert judgments_fingerprint([pinned]) != judgments_fingerprint([_judgment()])
    schema = GoldQuote.model_json_schema()
    assert "start" in schema["properties"]


# --- brute force with repeated quotes ----------------------------------------------------

copies_st = st.tuples(
    st.integers(1, 12),  # quote length
    st.lists(st.integers(0, 60), min_size=1, max_size=4, unique=True),  # where its copies start
    st.sampled_from(("a", "b")),
)
hit_st = st.tuples(st.sampled_from(("a", "b")), st.integers(0, 70), st.integers(0, 20)).map(
    lambda t: (t[0], t[1], t[1] + t[2])
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    quotes=st.lists(copies_st, min_size=1, max_size=3),
    hits=st.lists(hit_st, max_size=6),
    chunks=st.lists(hit_st, max_size=10),
    k=st.integers(1, 6),
)
def test_repeated_quotes_score_as_the_brute_force(
    quotes: list[tuple[int, list[int], str]],
    hits: list[tuple[str, int, int]],
    chunks: list[tuple[str, int, int]],
    k: int,
) -> None:
    # Each quote: copies of one length at several places (as resolution finds them).
    gold = [
        GoldItem(spans=tuple((doc, start, start + length) for start in sorted(starts)))
        for length, starts, doc in quotes
    ]
    names = [
        *(f"{kind}@{k}" for kind in ("span_recall", "span_precision", "span_iou")),
        "precision_omega",
    ]
    names += [f"span_iou_chroma@{k}", f"span_precision_chroma@{k}"]
    ranked = [Hit(doc=d, start=s, end=e, score=-float(i)) for i, (d, s, e) in enumerate(hits)]
    chunk_hits = [Hit(doc=d, start=s, end=e, score=0.0) for d, s, e in chunks]
    row = score_queries({"q": gold}, {"q": ranked}, names, chunks=chunk_hits)["q"]
    expected = brute_force(gold, hits, k, chunks)
    for name in names:
        assert row[name] == pytest.approx(expected[name], abs=1e-12), name


# --- reports -----------------------------------------------------------------------------


def _repeated_report(version: str, recorded: float = 0.5) -> dict[str, Any]:
    """A report whose quote is found twice and whose hit covers exactly the first copy."""
    data = _report_data()
    data["schema_version"] = version
    data["run"]["headline_metrics"] = ["span_recall@1"]
    data["queries"][0]["gold"] = [
        {"doc": "a.txt", "quote": "alpha", "spans": [[0, 5], [20, 25]], "method": "exact"}
    ]
    baseline = data["stages"][0]
    baseline["queries"][0]["hits"] = [{"doc": "a.txt", "start": 0, "end": 5, "score": 2.5}]
    baseline["queries"][0]["scores"] = {"span_recall@1": recorded}  # 0.5: what 2.2 recorded
    baseline["aggregates"] = {
        "span_recall@1": {"mean": recorded, "low": recorded, "high": recorded, "query_count": 1}
    }
    data["stages"] = [baseline]
    return data


@pytest.mark.parametrize("version", ["1.3", "2.0", "2.2"])
def test_an_older_report_keeps_its_numbers_and_says_its_span_rule(
    tmp_path: Path, version: str
) -> None:
    source = tmp_path / "old.json"
    source.write_text(json.dumps(_repeated_report(version)), encoding="utf-8")
    report = load_report(source)
    assert report.schema_version == version
    assert report.run.span_gold == "every-occurrence"
    assert report.baseline.queries[0].scores == {"span_recall@1": 0.5}  # read, not rescored
    dump_report(report, tmp_path / "new.json")
    written = json.loads((tmp_path / "new.json").read_text(encoding="utf-8"))
    assert written["schema_version"] == SCHEMA_VERSION == "2.4"
    assert written["run"]["span_gold"] == "every-occurrence"  # the rule travels with the numbers
    assert load_report(tmp_path / "new.json").run.span_gold == "every-occurrence"


def test_a_2_3_report_counts_each_quote_once_and_records_a_pin() -> None:
    data = _repeated_report("2.3", recorded=1.0)
    data["queries"][0]["gold"][0]["start"] = 20
    report = parse_report(data)
    assert report.run.span_gold == "best-occurrence"
    assert report.queries[0].gold[0].start == 20
    data["queries"][0]["gold"][0]["start"] = -1
    with pytest.raises(JudgmentError, match="greater than or equal to 0"):
        parse_report(data)
