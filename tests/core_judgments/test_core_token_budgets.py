"""Token budgets (``recall@Nt``, ``ndcg@Nt``) against a plain brute force, and their errors."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from groundkit.judgments import Hit, JudgmentError, parse_metric, score_queries
from groundkit.judgments.corpus import Tokenizer, load_tokenizer
from groundkit.judgments.metrics import GoldItem, HitTokens, score_table

Span3 = tuple[str, int, int]

WORDS = load_tokenizer("words")


class _CharTokenizer:
    """Every character a token: token budgets become character budgets."""

    name = "chars"
    version = "1"

    def offsets(self, text: str) -> list[tuple[int, int]]:
        return [(i, i + 1) for i in range(len(text))]


class _CountingTokenizer:
    """``words``, counting the texts it is asked to tokenize."""

    name = "counting"
    version = "1"

    def __init__(self) -> None:
        self.calls: list[str] = []

    def offsets(self, text: str) -> list[tuple[int, int]]:
        self.calls.append(text)
        return WORDS.offsets(text)


# ---------------------------------------------------------------- brute force


def _read_within(
    hits: Sequence[Span3], texts: Mapping[str, str], tokenizer: Tokenizer, budget: int
) -> list[Span3]:
    """The hits read within ``budget`` tokens, the last one cut after its remaining tokens."""
    read: list[Span3] = []
    left = budget
    for doc, start, end in hits:
        if left <= 0:
            break
        tokens = tokenizer.offsets(texts[doc][start:end])
        cut = end if len(tokens) <= left else start + tokens[left - 1][1]
        read.append((doc, start, cut))
        left -= len(tokens)
    return read


def _touches(hit: Span3, span: Span3, fraction: float) -> bool:
    shared = len(set(range(hit[1], hit[2])) & set(range(span[1], span[2])))
    same = hit[0] == span[0]
    return same and shared >= 1 and shared >= fraction * (span[2] - span[1])


def _brute(
    gold: Sequence[GoldItem],
    hits: Sequence[Span3],
    texts: Mapping[str, str],
    tokenizer: Tokenizer,
    budget: int,
    fraction: float = 0.0,
) -> tuple[float, float]:
    """``(recall@Nt, ndcg@Nt)`` by hand: credit once, ideal cut at the hits read."""
    read = _read_within(hits, texts, tokenizer, budget)
    credited: set[int] = set()
    dcg = 0.0
    for rank, hit in enumerate(read, start=1):
        new = [
            j
            for j, item in enumerate(gold)
            if j not in credited and any(_touches(hit, span, fraction) for span in item.spans)
        ]
        credited.update(new)
        dcg += max((gold[j].grade for j in new), default=0) / math.log2(rank + 1)
    grades = sorted((item.grade for item in gold), reverse=True)[: len(read)]
    ideal = sum(grade / math.log2(j + 2) for j, grade in enumerate(grades))
    return len(credited) / len(gold), dcg / ideal if ideal else 0.0


def _scores(
    gold: Mapping[str, Sequence[GoldItem]],
    hits: Mapping[str, Sequence[Span3]],
    names: Sequence[str],
    tokens: HitTokens,
    fraction: float = 0.0,
) -> dict[str, dict[str, float]]:
    as_hits = {
        q: [Hit(doc=d, start=s, end=e, score=0.0) for d, s, e in spans] for q, spans in hits.items()
    }
    return score_queries(gold, as_hits, names, tokens=tokens, min_overlap_fraction=fraction)


# ---------------------------------------------------------------- exact values

TEXTS = {"d": "alpha beta gamma delta epsilon zeta eta theta iota kappa"}
#             0     6    11    17    23      31   36  40    46   51
GOLD = {"q": [GoldItem(grade=2, spans=(("d", 17, 22),)), GoldItem(spans=(("d", 46, 50),))]}
HITS = {"q": [("d", 0, 10), ("d", 11, 28), ("d", 40, 55)]}  # 2, 3 and 3 words


@pytest.mark.parametrize(
    ("budget", "recall", "ndcg"),
    [
        (1, 0.0, 0.0),  # alpha
        (3, 0.0, 0.0),  # alpha beta | gamma: delta is the 4th token
        (4, 0.5, 2 / math.log2(3) / (2 + 1 / math.log2(3))),  # ... | gamma delta: m = 2
        (6, 0.5, 2 / math.log2(3) / (2 + 1 / math.log2(3))),  # ... | theta: m = 3, iota not read
        (7, 1.0, (2 / math.log2(3) + 1 / math.log2(4)) / (2 + 1 / math.log2(3))),
        (500, 1.0, (2 / math.log2(3) + 1 / math.log2(4)) / (2 + 1 / math.log2(3))),
    ],
)
def test_words_budget_cuts_the_last_hit_at_a_token_end(
    budget: int, recall: float, ndcg: float
) -> None:
    names = [f"recall@{budget}t", f"ndcg@{budget}t"]
    got = _scores(GOLD, HITS, names, HitTokens(TEXTS))["q"]
    assert got[names[0]] == recall
    assert got[names[1]] == pytest.approx(ndcg, abs=1e-12)
    brute_recall, brute_ndcg = _brute(GOLD["q"], HITS["q"], TEXTS, WORDS, budget)
    assert brute_recall == recall  # the hand figures are the brute force's too
    assert brute_ndcg == pytest.approx(ndcg, abs=1e-12)


def test_the_cut_ends_at_the_token_not_after_the_whitespace() -> None:
    # "epsilon" ends at 30; the gold starts at 30 (the space after it): a cut after the
    # token does not reach it, a whole hit does.
    gold = {"q": [GoldItem(spans=(("d", 30, 31),))]}
    hits = {"q": [("d", 23, 35)]}  # "epsilon zeta": 2 tokens
    one = _scores(gold, hits, ["recall@1t", "recall@2t"], HitTokens(TEXTS))["q"]
    assert one == {"recall@1t": 0.0, "recall@2t": 1.0}


def test_a_hit_without_tokens_is_read_whole_at_no_cost() -> None:
    texts = {"d": "one     two three"}
    gold = {"q": [GoldItem(spans=(("d", 4, 6),)), GoldItem(spans=(("d", 8, 11),))]}
    hits = {"q": [("d", 3, 8), ("d", 8, 11)]}  # whitespace only (0 words), then "two"
    got = _scores(gold, hits, ["recall@1t", "ndcg@1t"], HitTokens(texts))["q"]
    assert got["recall@1t"] == 1.0  # the whitespace hit touches [4, 6) and costs nothing
    recall, ndcg = _brute(gold["q"], hits["q"], texts, WORDS, 1)
    assert got == {"recall@1t": recall, "ndcg@1t": ndcg}


def test_the_pieces_of_a_split_character_count_as_tokens() -> None:
    pytest.importorskip("tiktoken")
    cl100k = load_tokenizer("cl100k_base")
    texts = {"d": "🚀 go"}
    assert cl100k.offsets(texts["d"]) == [(0, 0), (0, 0), (0, 1), (1, 4)]  # the emoji's bytes
    gold = {"q": [GoldItem(spans=(("d", 0, 1),)), GoldItem(spans=(("d", 2, 4),))]}
    hits = {"q": [("d", 0, 4)]}
    names = ["recall@2t", "recall@3t", "recall@4t"]
    got = _scores(gold, hits, names, HitTokens(texts, cl100k))["q"]
    # Two pieces hold no whole character; the third ends the emoji; " go" is the fourth.
    assert got == {"recall@2t": 0.0, "recall@3t": 0.5, "recall@4t": 1.0}


def test_default_tokenizer_is_words() -> None:
    assert HitTokens(TEXTS).tokenizer.name == "words"
    names = ["recall@4t", "ndcg@4t"]
    assert _scores(GOLD, HITS, names, HitTokens(TEXTS)) == _scores(
        GOLD, HITS, names, HitTokens(TEXTS, WORDS)
    )


def test_each_span_is_tokenized_once_and_only_when_read() -> None:
    counting = _CountingTokenizer()
    tokens = HitTokens(TEXTS, counting)
    gold = {"a": GOLD["q"], "b": GOLD["q"]}
    hits = {"a": HITS["q"], "b": HITS["q"][:2]}
    _scores(gold, hits, ["recall@1t", "recall@3t", "ndcg@4t"], tokens)
    assert counting.calls == [TEXTS["d"][0:10], TEXTS["d"][11:28]]  # the third is never reached


def test_token_and_character_budgets_in_one_call() -> None:
    names = ["recall@4t", "recall@12c", "ndcg@12c", "ndcg@4t", "recall@2"]
    got = _scores(GOLD, HITS, names, HitTokens(TEXTS))["q"]
    assert list(got) == names
    assert got["recall@12c"] == 0.0  # [0, 10) + [11, 13): delta not reached
    assert got["recall@4t"] == 0.5


# ---------------------------------------------------------------- properties

_WORD = st.sampled_from(["a", "bb", "ccc", "Ünï", "東京", "🚀", "x1", "e.g.", "(3)", "'s"])
_SPACE = st.sampled_from([" ", "  ", "\n", "\t", " \n "])
_TEXT = st.lists(st.tuples(_WORD, _SPACE), min_size=1, max_size=25).map(
    lambda parts: "".join(w + s for w, s in parts)
)


@st.composite
def _case(draw: st.DrawFn) -> tuple[dict[str, str], list[GoldItem], list[Span3]]:
    texts = {"d0": draw(_TEXT), "d1": draw(_TEXT)}

    def span(min_size: int) -> Span3:
        doc = draw(st.sampled_from(sorted(texts)))
        size = len(texts[doc])
        start = draw(st.integers(0, max(0, size - min_size)))
        return doc, start, draw(st.integers(min(start + min_size, size), size))

    gold = [
        GoldItem(grade=draw(st.integers(1, 3)), spans=tuple(span(1) for _ in range(n)))
        for n in draw(st.lists(st.integers(0, 2), min_size=1, max_size=4))
    ]
    hits = [span(0) for _ in range(draw(st.integers(0, 6)))]
    return texts, gold, hits


@pytest.mark.parametrize("tokenizer_name", ["words", "cl100k_base"])
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=_case(), budget=st.integers(1, 40), fraction=st.sampled_from([0.0, 0.5]))
def test_matches_the_brute_force(
    tokenizer_name: str,
    case: tuple[dict[str, str], list[GoldItem], list[Span3]],
    budget: int,
    fraction: float,
) -> None:
    if tokenizer_name != "words":
        pytest.importorskip("tiktoken")
    tokenizer = load_tokenizer(tokenizer_name)
    texts, gold, hits = case
    names = [f"recall@{budget}t", f"ndcg@{budget}t"]
    got = _scores({"q": gold}, {"q": hits}, names, HitTokens(texts, tokenizer), fraction)["q"]
    recall, ndcg = _brute(gold, hits, texts, tokenizer, budget, fraction)
    assert got[names[0]] == pytest.approx(recall, abs=1e-12)
    assert got[names[1]] == pytest.approx(ndcg, abs=1e-12)
    assert 0.0 <= got[names[1]] <= 1.0


@settings(max_examples=80, deadline=None)
@given(case=_case(), budget=st.integers(1, 60), fraction=st.sampled_from([0.0, 0.5]))
def test_one_token_per_character_gives_the_character_budget(
    case: tuple[dict[str, str], list[GoldItem], list[Span3]], budget: int, fraction: float
) -> None:
    texts, gold, hits = case
    names = [f"recall@{budget}t", f"ndcg@{budget}t", f"recall@{budget}c", f"ndcg@{budget}c"]
    got = _scores({"q": gold}, {"q": hits}, names, HitTokens(texts, _CharTokenizer()), fraction)
    row = got["q"]
    assert row[names[0]] == row[names[2]]
    assert row[names[1]] == row[names[3]]


@settings(max_examples=60, deadline=None)
@given(case=_case(), small=st.integers(1, 20), more=st.integers(0, 20))
def test_recall_never_falls_as_the_budget_grows(
    case: tuple[dict[str, str], list[GoldItem], list[Span3]], small: int, more: int
) -> None:
    texts, gold, hits = case
    names = [f"recall@{small}t", f"recall@{small + more}t"]
    row = _scores({"q": gold}, {"q": hits}, names, HitTokens(texts))["q"]
    assert row[names[0]] <= row[names[1]] + 1e-12


# ---------------------------------------------------------------- names and errors


def test_parse_token_budgets() -> None:
    spec = parse_metric("recall@1024t")
    assert (spec.kind, spec.cutoff, spec.budget_chars, spec.budget_tokens) == (
        "recall",
        None,
        None,
        1024,
    )
    assert spec.budgeted
    assert parse_metric("ndcg@5t").budget_tokens == 5
    assert not parse_metric("ndcg@5").budgeted


_ZEROS = "the budget must be a positive integer without leading zeros"


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("recall@0t", f"metric 'recall@0t': {_ZEROS}"),
        ("ndcg@007t", f"metric 'ndcg@007t': {_ZEROS}"),
        ("recall@t", "unknown metric 'recall@t'"),
        ("recall@-1t", "unknown metric 'recall@-1t'"),
        ("span_recall@5t", "metric 'span_recall@5t': token budgets exist only for recall and ndcg"),
        ("hit@5t", "metric 'hit@5t': token budgets exist only for recall and ndcg"),
        ("mrr@5t", "metric 'mrr@5t' takes no cutoff; use 'mrr'"),
        ("recall@5T", "unknown metric 'recall@5T'"),
    ],
)  # fmt: skip
def test_bad_token_budgets_are_one_line_errors(name: str, message: str) -> None:
    with pytest.raises(JudgmentError) as caught:
        parse_metric(name)
    assert str(caught.value) == message
    assert "\n" not in str(caught.value)


def test_a_token_budget_without_tokens_is_refused() -> None:
    hits = {"q": [Hit(doc="d", start=0, end=5, score=1.0)]}
    with pytest.raises(JudgmentError) as caught:
        score_table(GOLD, hits, ["recall@3", "recall@4t"])
    assert str(caught.value) == (
        "metric 'recall@4t' counts the tokens of the hit texts: pass "
        "tokens=HitTokens(texts, tokenizer)"
    )


def test_a_hit_outside_the_texts_is_refused() -> None:
    hits = {"q": [Hit(doc="elsewhere", start=0, end=5, score=1.0)]}
    with pytest.raises(JudgmentError, match="names document 'elsewhere', which is not in the"):
        score_queries(GOLD, hits, ["recall@4t"], tokens=HitTokens(TEXTS))
