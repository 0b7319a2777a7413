"""Chunk-level metrics: definitions, a plain reference implementation, properties, errors."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from groundkit.judgments import Hit, JudgmentError, mean_scores, parse_metric, score_queries
from groundkit.judgments.metrics import GoldItem, GoldTable, HitTable, overlaps, score_table

Span3 = tuple[str, int, int]
RANK_METRICS = [
    "recall@1",
    "recall@3",
    "hit@2",
    "precision@3",
    "mrr",
    "ndcg@1",
    "ndcg@4",
    "map",
    "rprec",
]
ALL_METRICS = [
    *RANK_METRICS,
    "span_recall@2",
    "span_precision@2",
    "recall@7c",
    "ndcg@7c",
    "recall@25c",
    "ndcg@25c",
]


# ---------------------------------------------------------------- plain reference implementation


def _touches(hit: Span3, span: Span3, fraction: float) -> bool:
    if hit[0] != span[0]:
        return False
    shared = len(set(range(hit[1], hit[2])) & set(range(span[1], span[2])))
    return shared >= 1 and (fraction == 0.0 or shared >= fraction * (span[2] - span[1]))


def _reference(
    gold: Sequence[GoldItem], hits: Sequence[Span3], metric: str, fraction: float
) -> float:
    spec = parse_metric(metric)
    if spec.budget_chars is not None:
        budget = spec.budget_chars
        read: list[Span3] = []
        used = 0
        for doc, start, end in hits:
            if used >= budget:
                break
            take = min(end - start, budget - used)
            read.append((doc, start, start + take))
            used += take
        inner = "recall" if spec.kind == "recall" else "ndcg"
        if inner == "recall":
            return _reference(gold, read, f"recall@{max(len(read), 1)}", fraction)
        return _reference(gold, read, f"ndcg@{len(read)}", fraction) if read else 0.0
    if spec.kind in ("span_recall", "span_precision"):
        k = spec.cutoff or 0
        hit_chars = {(d, c) for d, s, e in hits[:k] for c in range(s, e)}
        # Report schema 2.3: a quote with several spans (occurrences) is gold once, through
        # its occurrence with the most characters hit (the first among equals); before, every
        # occurrence was gold, and retrieving one copy in full could score 0.5.
        gold_chars: set[tuple[str, int]] = set()
        for item in gold:
            occurrences = [{(d, c) for c in range(s, e)} for d, s, e in item.spans if e > s]
            if occurrences:
                gold_chars |= max(occurrences, key=lambda chars: len(chars & hit_chars))
        shared = len(hit_chars & gold_chars)
        denominator = len(gold_chars) if spec.kind == "span_recall" else len(hit_chars)
        return shared / denominator if denominator else 0.0
    credited: set[int] = set()
    new_counts: list[int] = []
    gains: list[float] = []
    touching: list[bool] = []
    for hit in hits:
        touched = {
            j
            for j, item in enumerate(gold)
            if any(_touches(hit, span, fraction) for span in item.spans)
        }
        new = touched - credited
        credited |= new
        new_counts.append(len(new))
        gains.append(float(max((gold[j].grade for j in new), default=0)))
        touching.append(bool(touched))
    n_gold = len(gold)
    k = spec.cutoff or 0
    if spec.kind == "recall":
        return sum(new_counts[:k]) / n_gold
    if spec.kind == "hit":
        return 1.0 if sum(new_counts[:k]) else 0.0
    if spec.kind == "precision":
        return sum(touching[:k]) / k
    if spec.kind == "mrr":
        return next((1.0 / (i + 1) for i, t in enumerate(touching) if t), 0.0)
    if spec.kind == "ndcg":
        dcg = sum(g / math.log2(i + 2) for i, g in enumerate(gains[:k]))
        ideal_grades = sorted((item.grade for item in gold), reverse=True)[:k]
        idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal_grades))
        return dcg / idcg
    useful = 0
    useful_at: list[int] = []
    ap = 0.0
    for i, count in enumerate(new_counts):
        if count:
            useful += 1
            ap += count * useful / (i + 1)
        useful_at.append(useful)
    if spec.kind == "map":
        return ap / n_gold
    assert spec.kind == "rprec"
    top = min(n_gold, len(hits))
    return (useful_at[top - 1] if top else 0) / n_gold


# ---------------------------------------------------------------- strategies

DOCS = ["a", "b", "c"]
spans_st = st.tuples(st.sampled_from(DOCS), st.integers(0, 30), st.integers(0, 12)).map(
    lambda t: (t[0], t[1], t[1] + t[2])
)
gold_item_st = st.builds(
    GoldItem, grade=st.integers(1, 3), spans=st.lists(spans_st, min_size=0, max_size=3).map(tuple)
)
hits_st = st.lists(spans_st, min_size=0, max_size=8)
query_st = st.tuples(st.lists(gold_item_st, min_size=1, max_size=5), hits_st)


def _hits(spans: Sequence[Span3]) -> list[Hit]:
    return [Hit(doc=d, start=s, end=e, score=-float(i)) for i, (d, s, e) in enumerate(spans)]


# ---------------------------------------------------------------- properties


@given(
    st.integers(0, 40),
    st.integers(0, 15),
    st.integers(0, 40),
    st.integers(0, 15),
    st.sampled_from([0.0, 0.25, 0.5, 1.0]),
)
def test_overlaps_matches_set_intersection(
    a: int, la: int, b: int, lb: int, fraction: float
) -> None:
    expected = _touches(("d", a, a + la), ("d", b, b + lb), fraction)
    assert overlaps(a, a + la, b, b + lb, min_overlap_fraction=fraction) is expected
    # With no fraction the relation is symmetric.
    assert overlaps(a, a + la, b, b + lb) is overlaps(b, b + lb, a, a + la)


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(st.lists(query_st, min_size=1, max_size=6), st.sampled_from([0.0, 0.5]))
def test_vectorised_scores_equal_reference(
    queries: list[tuple[list[GoldItem], list[Span3]]], fraction: float
) -> None:
    gold = {f"q{i}": items for i, (items, _) in enumerate(queries)}
    hits = {f"q{i}": _hits(spans) for i, (_, spans) in enumerate(queries)}
    scores = score_queries(gold, hits, ALL_METRICS, min_overlap_fraction=fraction)
    for i, (items, spans) in enumerate(queries):
        for metric in ALL_METRICS:
            expected = _reference(items, spans, metric, fraction)
            assert scores[f"q{i}"][metric] == pytest.approx(expected, abs=1e-12), metric
            assert 0.0 <= scores[f"q{i}"][metric] <= 1.0 + 1e-12


@settings(max_examples=60, deadline=None)
@given(query_st)
def test_recall_is_monotone_in_k(query: tuple[list[GoldItem], list[Span3]]) -> None:
    items, spans = query
    metrics = [f"recall@{k}" for k in range(1, 10)]
    row = score_queries({"q": items}, {"q": _hits(spans)}, metrics)["q"]
    values = [row[m] for m in metrics]
    assert values == sorted(values)


@settings(max_examples=60, deadline=None)
@given(query_st, st.integers(0, 7))
def test_duplicating_a_hit_never_increases_recall(
    query: tuple[list[GoldItem], list[Span3]], position: int
) -> None:
    items, spans = query
    if not spans:
        return
    position %= len(spans)
    duplicated = [*spans[: position + 1], spans[position], *spans[position + 1 :]]
    metrics = ["recall@3", "recall@100", "map", "ndcg@5"]
    before = score_queries({"q": items}, {"q": _hits(spans)}, metrics)["q"]
    after = score_queries({"q": items}, {"q": _hits(duplicated)}, metrics)["q"]
    for metric in metrics:
        assert after[metric] <= before[metric] + 1e-12


def test_wide_queries_take_the_exact_path() -> None:
    rng = np.random.default_rng(7)
    items = [
        GoldItem(
            grade=int(rng.integers(1, 4)), spans=((str(rng.choice(DOCS)), int(s), int(s) + 3),)
        )
        for s in rng.integers(0, 400, size=90)
    ]
    spans = [
        (str(rng.choice(DOCS)), int(s), int(s) + int(rng.integers(1, 40)))
        for s in rng.integers(0, 400, 60)
    ]
    scores = score_queries(
        {"wide": items, "small": items[:3]},
        {"wide": _hits(spans), "small": _hits(spans)},
        ALL_METRICS,
    )
    for metric in ALL_METRICS:
        assert scores["wide"][metric] == pytest.approx(
            _reference(items, spans, metric, 0.0), abs=1e-12
        )
        assert scores["small"][metric] == pytest.approx(
            _reference(items[:3], spans, metric, 0.0), abs=1e-12
        )


# ---------------------------------------------------------------- worked examples


def test_worked_example() -> None:
    gold = {
        "q": (
            GoldItem(grade=2, spans=(("d1", 10, 20),)),
            GoldItem(grade=1, spans=(("d1", 30, 40), ("d2", 0, 5))),
            GoldItem(grade=1, spans=()),  # unresolved: never credited, still counted
        )
    }
    hits = {"q": [Hit(doc="d1", start=0, end=50, score=3), Hit(doc="d2", start=0, end=3, score=2)]}
    row = score_queries(
        gold,
        hits,
        [
            "recall@1",
            "precision@2",
            "mrr",
            "ndcg@3",
            "map",
            "rprec",
            "recall@15c",
            "ndcg@15c",
            "span_recall@1",
            "span_precision@1",
        ],
    )["q"]
    assert row["recall@1"] == pytest.approx(2 / 3)
    assert row["precision@2"] == 1.0  # the second hit touches an already credited quote
    assert row["mrr"] == 1.0
    assert row["ndcg@3"] == pytest.approx(2 / (2 + 1 / math.log2(3) + 1 / 2))
    assert row["map"] == pytest.approx(2 / 3)
    assert row["rprec"] == pytest.approx(1 / 3)
    assert row["recall@15c"] == pytest.approx(1 / 3)  # first hit cut to [0, 15)
    assert row["ndcg@15c"] == 1.0  # one hit read, its ideal is the best grade
    # Report schema 2.3: the second quote is gold once, at its occurrence the first hit covers
    # ([30, 40) of d1); its copy [0, 5) of d2 is not gold characters (20 / 25 before).
    assert row["span_recall@1"] == pytest.approx(20 / 20)
    assert row["span_precision@1"] == pytest.approx(20 / 50)


def test_missing_queries_score_zero_and_stay_in_the_mean() -> None:
    gold = {"q1": [GoldItem(spans=(("d", 0, 5),))], "q2": [GoldItem(spans=(("d", 0, 5),))]}
    hits = {
        "q1": [Hit(doc="d", start=0, end=5, score=1.0)],
        "unknown": [Hit(doc="d", start=0, end=1, score=1.0)],
    }
    scores = score_queries(gold, hits, ["recall@1", "mrr", "span_recall@1"])
    assert scores["q2"] == {"recall@1": 0.0, "mrr": 0.0, "span_recall@1": 0.0}
    assert list(scores) == ["q1", "q2"]
    assert mean_scores(scores) == {"recall@1": 0.5, "mrr": 0.5, "span_recall@1": 0.5}
    assert score_table(gold, hits, ["mrr"]).mean() == {"mrr": 0.5}


def test_resolved_quote_like_objects_are_accepted() -> None:
    class FakeSpan:
        def __init__(self, doc: str, start: int, end: int) -> None:
            self.doc, self.start, self.end = doc, start, end

    class FakeGold:
        grade = 2

    class FakeResolved:
        gold = FakeGold()
        spans = (FakeSpan("d", 5, 9),)

    scores = score_queries({"q": [FakeResolved()]}, {"q": [FakeSpan("d", 0, 6)]}, ["ndcg@1"])
    assert scores["q"]["ndcg@1"] == 1.0


def test_tables_built_from_arrays_match_objects() -> None:
    docs = ("a", "b")
    gold = GoldTable(
        query_ids=("q",),
        quote_offsets=np.array([0, 2]),
        grades=np.array([1, 3]),
        span_offsets=np.array([0, 1, 2]),
        span_docs=np.array([0, 1]),
        span_starts=np.array([0, 4]),
        span_ends=np.array([3, 8]),
        doc_ids=docs,
    )
    hits = HitTable(
        query_ids=("q",),
        offsets=np.array([0, 2]),
        docs=np.array([1, 0]),
        starts=np.array([5, 10]),
        ends=np.array([6, 12]),
        doc_ids=docs,
    )
    table = score_table(gold, hits, ["ndcg@2", "recall@2"])
    objects = score_queries(
        {"q": [GoldItem(grade=1, spans=(("a", 0, 3),)), GoldItem(grade=3, spans=(("b", 4, 8),))]},
        {"q": [Hit(doc="b", start=5, end=6, score=1), Hit(doc="a", start=10, end=12, score=0)]},
        ["ndcg@2", "recall@2"],
    )
    assert table.to_dict() == objects
    assert objects["q"] == {"ndcg@2": pytest.approx(3 / (3 + 1 / math.log2(3))), "recall@2": 0.5}


# ---------------------------------------------------------------- metric names and errors


@pytest.mark.parametrize(
    ("name", "kind", "cutoff", "budget"),
    [
        ("recall@10", "recall", 10, None),
        ("mrr", "mrr", None, None),
        ("ndcg@2000c", "ndcg", None, 2000),
        ("span_precision@5", "span_precision", 5, None),
        ("rprec", "rprec", None, None),
    ],
)
def test_parse_metric(name: str, kind: str, cutoff: int | None, budget: int | None) -> None:
    spec = parse_metric(name)
    assert (spec.name, spec.kind, spec.cutoff, spec.budget_chars) == (name, kind, cutoff, budget)


@pytest.mark.parametrize(
    ("name", "fragment"),
    [
        ("recal@10", "unknown metric 'recal@10'"),
        ("recall", "needs a cutoff"),
        ("mrr@10", "takes no cutoff"),
        ("recall@0", "without leading zeros"),
        ("recall@010", "without leading zeros"),
        ("hit@100c", "character budgets exist only"),
        ("hit@100t", "token budgets exist only"),
        ("recall@10x", "unknown budget unit"),
        ("NDCG@10", "unknown metric"),
        ("", "unknown metric"),
    ],
)
def test_parse_metric_errors_name_the_metric(name: str, fragment: str) -> None:
    with pytest.raises(JudgmentError, match=fragment):
        parse_metric(name)


def test_score_queries_errors() -> None:
    hits = {"q": [Hit(doc="d", start=0, end=1, score=0.0)]}
    with pytest.raises(JudgmentError, match=r"^q: query has no gold quotes"):
        score_queries({"q": []}, hits, ["mrr"])
    with pytest.raises(JudgmentError, match="unknown metric 'bogus'"):
        score_queries({"q": [GoldItem()]}, hits, ["bogus"])
    with pytest.raises(JudgmentError, match="sequence of metric names"):
        score_queries({"q": [GoldItem()]}, hits, "mrr")
    with pytest.raises(JudgmentError, match="min_overlap_fraction"):
        score_queries({"q": [GoldItem()]}, hits, ["mrr"], min_overlap_fraction=1.5)
    with pytest.raises(JudgmentError, match=r"grade must be an integer >= 1"):
        score_queries({"q": [{"grade": 0}]}, hits, ["mrr"])
    with pytest.raises(JudgmentError, match=r"^q: hit at rank 1 has an invalid span"):
        score_queries(
            {"q": [GoldItem(grade=1, spans=(("d", 0, 3),))]}, {"q": [_Loose("d", 5, 2)]}, ["mrr"]
        )


class _Loose:
    def __init__(self, doc: str, start: int, end: int) -> None:
        self.doc, self.start, self.end = doc, start, end


def test_hit_and_gold_item_validation() -> None:
    with pytest.raises(ValidationError):
        Hit(doc="d", start=5, end=2, score=0.0)
    with pytest.raises(ValidationError):
        Hit(doc="d", start=0, end=2, score=float("nan"))
    with pytest.raises(ValidationError):
        Hit(doc="", start=0, end=2, score=0.0)
    with pytest.raises(ValidationError):
        GoldItem(grade=0)
    with pytest.raises(ValidationError):
        GoldItem(spans=(("d", 4, 2),))
    hit = Hit(doc="d", start=2, end=6, score=1.0)
    assert hit.length == 4
    assert hit.overlaps("d", 5, 9)
    assert not hit.overlaps("e", 5, 9)
    assert not hit.overlaps("d", 5, 9, min_overlap_fraction=0.5)


def test_table_validation_errors() -> None:
    with pytest.raises(JudgmentError, match="query listed twice"):
        HitTable(
            query_ids=("q", "q"),
            offsets=np.array([0, 0, 0]),
            docs=np.array([], dtype=int),
            starts=np.array([], dtype=int),
            ends=np.array([], dtype=int),
            doc_ids=(),
        )
    with pytest.raises(JudgmentError, match="document codes"):
        HitTable(
            query_ids=("q",),
            offsets=np.array([0, 1]),
            docs=np.array([3]),
            starts=np.array([0]),
            ends=np.array([1]),
            doc_ids=("a",),
        )
    with pytest.raises(JudgmentError, match="end before start"):
        HitTable(
            query_ids=("q",),
            offsets=np.array([0, 1]),
            docs=np.array([0]),
            starts=np.array([4]),
            ends=np.array([1]),
            doc_ids=("a",),
        )
    with pytest.raises(JudgmentError, match="offsets must"):
        HitTable(
            query_ids=("q",),
            offsets=np.array([0, 2]),
            docs=np.array([0]),
            starts=np.array([0]),
            ends=np.array([1]),
            doc_ids=("a",),
        )
    with pytest.raises(JudgmentError, match=r"^q: query has no gold quotes"):
        GoldTable(
            query_ids=("q",),
            quote_offsets=np.array([0, 0]),
            grades=np.array([], dtype=int),
            span_offsets=np.array([0]),
            span_docs=np.array([], dtype=int),
            span_starts=np.array([], dtype=int),
            span_ends=np.array([], dtype=int),
            doc_ids=(),
        )
    with pytest.raises(JudgmentError, match="grades must be >= 1"):
        GoldTable(
            query_ids=("q",),
            quote_offsets=np.array([0, 1]),
            grades=np.array([0]),
            span_offsets=np.array([0, 0]),
            span_docs=np.array([], dtype=int),
            span_starts=np.array([], dtype=int),
            span_ends=np.array([], dtype=int),
            doc_ids=(),
        )


def test_gold_items_from_resolved_judgments() -> None:
    from groundkit.judgments import Corpus, GoldQuote, Judgment, resolve_judgments
    from groundkit.judgments.metrics import gold_items_from_resolved

    corpus = Corpus.from_texts({"d1": "one hello world, two hello world.", "d2": "nothing here"})
    judgments = [
        Judgment(
            query_id="q-1",
            query="greeting?",
            gold=(
                GoldQuote(doc="d1", quote="hello world", grade=2),
                GoldQuote(doc="d2", quote="absent text"),
            ),
        ),
        Judgment(query_id="q-2", query="unanswerable?", category="unanswerable"),
    ]
    resolved = resolve_judgments(judgments, corpus)
    items = gold_items_from_resolved(resolved)
    assert list(items) == ["q-1"]
    assert items["q-1"][0] == GoldItem(grade=2, spans=(("d1", 4, 15), ("d1", 21, 32)))
    assert items["q-1"][1].spans == ()
    # The second occurrence alone credits the quote; the unresolved one keeps recall at 1/2.
    hits = {"q-1": [Hit(doc="d1", start=25, end=28, score=1.0)]}
    assert score_queries(items, hits, ["recall@1"]) == {"q-1": {"recall@1": 0.5}}
    # ResolvedQuote objects work directly as gold items.
    direct = {r.judgment.query_id: r.quotes for r in resolved if r.quotes}
    assert score_queries(direct, hits, ["recall@1"]) == {"q-1": {"recall@1": 0.5}}
