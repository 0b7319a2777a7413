"""IoU, Chroma's precision and IoU, and precision Ω against a brute force over character sets.

The brute force works on sets of ``(doc, position)`` characters: unions are set unions, and
Chroma's sum denominators add up the selected spans' lengths one by one (a character
selected twice counts twice). A gold item with several spans is one quote found several times
(report schema 2.3): it enters the gold set through ONE occurrence, the one with the most
characters selected (the first among equals); for ``precision_omega``, the one its touching
chunks fit best (the highest IoU; the first among equals), and only that one selects chunks.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from groundkit.judgments import (
    Hit,
    JudgmentError,
    parse_metric,
)
from groundkit.judgments.metrics import ChunkSpans, GoldItem, score_queries, score_table

Span3 = tuple[str, int, int]
DOCS = ("a", "b")
CUTOFF_KINDS = (
    "span_iou",
    "span_iou_chroma",
    "span_precision_chroma",
    "span_recall",
    "span_precision",
)


def _chars(spans: Sequence[Span3]) -> set[tuple[str, int]]:
    return {(doc, c) for doc, start, end in spans for c in range(start, end)}


def _ratio(numerator: int, denominator: int) -> float:
    return numerator / denominator if denominator > 0 else 0.0


def _touching(chunks: Sequence[Span3], spans: Sequence[Span3]) -> list[Span3]:
    return [
        chunk
        for chunk in chunks
        if any(
            chunk[0] == doc and min(chunk[2], end) - max(chunk[1], start) >= 1
            for doc, start, end in spans
        )
    ]


def _best(spans: Sequence[Span3], score: Callable[[Span3], float]) -> list[Span3]:
    """The occurrence of the highest score, the first among equals (none for no occurrence)."""
    candidates = [span for span in spans if span[2] > span[1]]  # an empty span is no occurrence
    if not candidates:
        return []
    best = max(score(span) for span in candidates)
    return [next(span for span in candidates if score(span) == best)]


def _fit(chunks: Sequence[Span3], span: Span3) -> float:
    o, s = _chars(_touching(chunks, [span])), _chars([span])
    return _ratio(len(o & s), len(o | s))


def brute_force(
    gold: Sequence[GoldItem], hits: Sequence[Span3], k: int, chunks: Sequence[Span3]
) -> dict[str, float]:
    """Every new metric of one query, from character sets."""
    top = list(hits[:k])
    h = _chars(top)
    chosen = [span for item in gold for span in _best(item.spans, lambda o: len(_chars([o]) & h))]
    s = _chars(chosen)
    shared = len(h & s)
    total = sum(end - start for _, start, end in top)  # Chroma: sum, not union
    fitted = [span for item in gold for span in _best(item.spans, lambda o: _fit(chunks, o))]
    o = _chars(_touching(chunks, fitted))
    s_omega = _chars(fitted)
    return {
        f"span_iou@{k}": _ratio(shared, len(h | s)),
        f"span_iou_chroma@{k}": _ratio(shared, total + len(s) - shared),
        f"span_precision_chroma@{k}": _ratio(shared, total),
        f"span_recall@{k}": _ratio(shared, len(s)),
        f"span_precision@{k}": _ratio(shared, len(h)),
        "precision_omega": _ratio(len(o & s_omega), len(o | s_omega)),
    }


def _hits(spans: Sequence[Span3]) -> list[Hit]:
    return [Hit(doc=d, start=s, end=e, score=-float(i)) for i, (d, s, e) in enumerate(spans)]


spans_st = st.tuples(st.sampled_from(DOCS), st.integers(0, 40), st.integers(0, 15)).map(
    lambda t: (t[0], t[1], t[1] + t[2])
)
gold_st = st.lists(
    st.builds(GoldItem, spans=st.lists(spans_st, max_size=3).map(tuple)), min_size=1, max_size=3
)
query_st = st.tuples(gold_st, st.lists(spans_st, max_size=8))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    queries=st.lists(query_st, min_size=1, max_size=4),
    chunks=st.lists(spans_st, max_size=12),
    k=st.integers(1, 9),
)
def test_vectorised_scores_equal_the_brute_force(
    queries: list[tuple[list[GoldItem], list[Span3]]], chunks: list[Span3], k: int
) -> None:
    gold = {f"q{i}": items for i, (items, _) in enumerate(queries)}
    hits = {f"q{i}": _hits(spans) for i, (_, spans) in enumerate(queries)}
    names = [f"{kind}@{k}" for kind in CUTOFF_KINDS] + ["precision_omega"]
    chunk_objects = [Hit(doc=d, start=s, end=e, score=0.0) for d, s, e in chunks]
    scores = score_queries(gold, hits, names, chunks=chunk_objects)
    for i, (items, spans) in enumerate(queries):
        expected = brute_force(items, spans, k, chunks)
        for name in names:
            assert scores[f"q{i}"][name] == pytest.approx(expected[name], abs=1e-12), name
            assert 0.0 <= scores[f"q{i}"][name] <= 1.0


@settings(max_examples=100, deadline=None)
@given(query=query_st, k=st.integers(1, 9))
def test_the_orderings_between_the_conventions_hold(
    query: tuple[list[GoldItem], list[Span3]], k: int
) -> None:
    items, spans = query
    names = [f"{kind}@{k}" for kind in CUTOFF_KINDS]
    row = score_queries({"q": items}, {"q": _hits(spans)}, names)["q"]
    # A sum is at least the union: Chroma's figures never exceed ours.
    assert row[f"span_precision_chroma@{k}"] <= row[f"span_precision@{k}"] + 1e-12
    assert row[f"span_iou_chroma@{k}"] <= row[f"span_iou@{k}"] + 1e-12
    # The union of hits and gold holds each of them.
    assert row[f"span_iou@{k}"] <= min(row[f"span_precision@{k}"], row[f"span_recall@{k}"]) + 1e-12


def test_exact_example_with_overlapping_hits() -> None:
    # Gold [10, 20) in d (|S| = 10). Hits [0, 15) and [12, 30) overlap on [12, 15).
    # |H ∩ S| = |[10, 20)| = 10; |H| = |[0, 30)| = 30; Σ lengths = 15 + 18 = 33.
    # span_iou = 10 / |H ∪ S| = 10 / 30; span_iou_chroma = 10 / (33 + 10 - 10) = 10 / 33;
    # span_precision = 10 / 30; span_precision_chroma = 10 / 33.
    # At k = 1: |H ∩ S| = |[10, 15)| = 5, |H| = Σ = 15: iou = 5 / (15 + 10 - 5) = 5 / 20.
    # Chunks [0, 15), [15, 30), [30, 40): the first two touch the gold; O = [0, 30):
    # precision_omega = |O ∩ S| / |O ∪ S| = 10 / 30.
    gold = {"q": [GoldItem(spans=(("d", 10, 20),))]}
    hits = {"q": _hits([("d", 0, 15), ("d", 12, 30)])}
    chunks = ChunkSpans(docs=[0, 0, 0], starts=[0, 15, 30], ends=[15, 30, 40], doc_ids=("d",))
    names = [
        "span_iou@2",
        "span_iou_chroma@2",
        "span_precision@2",
        "span_precision_chroma@2",
        "span_iou@1",
        "span_iou_chroma@1",
        "precision_omega",
    ]
    row = score_queries(gold, hits, names, chunks=chunks)["q"]
    assert row["span_iou@2"] == pytest.approx(10 / 30)
    assert row["span_iou_chroma@2"] == pytest.approx(10 / 33)
    assert row["span_precision@2"] == pytest.approx(10 / 30)
    assert row["span_precision_chroma@2"] == pytest.approx(10 / 33)
    assert row["span_iou@1"] == pytest.approx(5 / 20)
    assert row["span_iou_chroma@1"] == pytest.approx(5 / 20)
    assert row["precision_omega"] == pytest.approx(10 / 30)


def test_exact_example_with_overlapping_references_and_a_chunk_past_the_gold() -> None:
    # Two quotes [10, 20) and [15, 25) of d: S = [10, 25), |S| = 15 (counted once).
    # A hit in another document e [0, 50) and [20, 40) in d: |H ∩ S| = |[20, 25)| = 5,
    # Σ lengths = 50 + 20 = 70 (the other document's characters count in the sums),
    # |H ∪ S| = 50 + |[10, 40)| = 80. iou = 5 / 80; iou_chroma = 5 / (70 + 15 - 5) = 5 / 80;
    # precision_chroma = 5 / 70.
    # Chunks [0, 10) (touches at 10 only: shares no character, left out), [10, 12), and
    # [24, 60) (shares 24): O = [10, 12) ∪ [24, 60), |O ∩ S| = 2 + 1 = 3,
    # |O ∪ S| = |[10, 60)| = 50: precision_omega = 3 / 50.
    gold = {"q": [GoldItem(spans=(("d", 10, 20),)), GoldItem(spans=(("d", 15, 25),))]}
    hits = {"q": _hits([("e", 0, 50), ("d", 20, 40)])}
    chunks = [Hit(doc="d", start=s, end=e, score=0.0) for s, e in ((0, 10), (10, 12), (24, 60))]
    names = ["span_iou@2", "span_iou_chroma@2", "span_precision_chroma@2", "precision_omega"]
    row = score_queries(gold, hits, names, chunks=chunks)["q"]
    assert row == pytest.approx(
        {
            "span_iou@2": 5 / 80,
            "span_iou_chroma@2": 5 / 80,
            "span_precision_chroma@2": 5 / 70,
            "precision_omega": 3 / 50,
        }
    )


def test_empty_selections_score_zero() -> None:
    gold = {"q": [GoldItem(spans=())]}  # unresolved: |S| = 0
    names = ["span_iou@3", "span_iou_chroma@3", "span_precision_chroma@3", "precision_omega"]
    row = score_queries(gold, {}, names, chunks=[])["q"]
    assert row == dict.fromkeys(names, 0.0)


@pytest.mark.parametrize(
    ("name", "fragment"),
    [
        ("span_iou@0", "positive integer"),
        ("span_iou_chroma@05", "positive integer"),
        ("span_iou", "needs a cutoff"),
        ("span_precision_chroma@2000c", "character budgets exist only for recall and ndcg"),
        ("precision_omega@5", "takes no cutoff; use 'precision_omega'"),
        ("iou@5", "unknown metric 'iou@5'"),
    ],
)
def test_bad_names_are_one_line_errors(name: str, fragment: str) -> None:
    with pytest.raises(JudgmentError) as raised:
        parse_metric(name)
    message = str(raised.value)
    assert fragment in message
    assert "\n" not in message


def test_names_parse_and_only_omega_reads_chunks() -> None:
    assert parse_metric("span_iou@5").cutoff == 5
    assert parse_metric("span_iou_chroma@1").kind == "span_iou_chroma"
    assert not parse_metric("span_precision_chroma@3").needs_chunks
    omega = parse_metric("precision_omega")
    assert (omega.cutoff, omega.budget_chars, omega.needs_chunks) == (None, None, True)


def test_precision_omega_without_chunks_is_refused() -> None:
    gold = {"q": [GoldItem(spans=(("d", 0, 5),))]}
    with pytest.raises(JudgmentError, match="needs the stage's chunk list"):
        score_table(gold, {}, ["recall@1", "precision_omega"])
