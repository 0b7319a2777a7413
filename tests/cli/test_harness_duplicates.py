"""Duplicate hits: the vectorised finder agrees with a brute-force definition."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from groundkit.harness.analysis._duplicates import JACCARD_THRESHOLD, DuplicateFinder


def _shingles(text: str) -> set[tuple[str, ...]]:
    words = text.casefold().split()
    if len(words) < 3:
        return {tuple(words)} if words else set()
    return {tuple(words[i : i + 3]) for i in range(len(words) - 2)}


def _brute_force(texts: list[str]) -> list[int | None]:
    out: list[int | None] = []
    for j, text in enumerate(texts):
        found = None
        for i in range(j):
            same = text.casefold().split() == texts[i].casefold().split() and text.split()
            a, b = _shingles(texts[i]), _shingles(text)
            union = len(a | b)
            if same or (union and len(a & b) >= JACCARD_THRESHOLD * union):
                found = i + 1
                break
        out.append(found)
    return out


words = st.sampled_from(["alpha", "Beta", "beta", "gamma", "delta", "eps", "zeta", "eta"])
texts = st.lists(words, min_size=0, max_size=30).map(" ".join)


@settings(max_examples=100, deadline=None)
@given(st.lists(texts, min_size=1, max_size=12), st.integers(0, 3))
def test_matches_brute_force(base: list[str], copies: int) -> None:
    # Add near copies (one word changed in a long text) so that the threshold is exercised.
    corpus = list(base)
    for text in base[:copies]:
        parts = text.split()
        if parts:
            parts[len(parts) // 2] = "omega"
        corpus.append(" ".join(parts))
    finder = DuplicateFinder(corpus)
    codes = np.arange(len(corpus), dtype=np.int64)
    starts = np.zeros(len(corpus), dtype=np.int64)
    ends = np.asarray([len(t) for t in corpus], dtype=np.int64)
    assert finder.duplicate_of(codes, starts, ends) == _brute_force(corpus)


def test_near_copy_of_a_long_text() -> None:
    long = " ".join(f"word{i}" for i in range(60))
    near = long.replace("word30 ", "changed ")  # 3 of 58 shingles differ: 55/61 = 0.902
    far = near.replace("word10 ", "other ")  # 6 differ: 52/64 = 0.81
    nearer = long + " extra"  # 58 of 59 shingles shared
    corpus = [long, "unrelated text here", far, near, nearer, long.upper()]
    finder = DuplicateFinder(corpus)
    result = finder.duplicate_of(
        np.arange(6), np.zeros(6, dtype=np.int64), np.asarray([len(t) for t in corpus])
    )
    assert result == [None, None, None, 1, 1, 1]


def test_whitespace_is_that_of_str_split() -> None:
    from groundkit.harness.analysis._word_hashes import whitespace as _whitespace

    every = np.arange(0x110000, dtype=np.uint32)
    expected = np.fromiter((chr(c).isspace() for c in range(0x110000)), np.bool_, 0x110000)
    assert np.array_equal(_whitespace(every), expected)
    assert np.array_equal(_whitespace(every[:128].astype(np.uint8)), expected[:128])


unicode_words = st.sampled_from(
    ["straße", "STRASSE", "Strasse", "ΣΊΣΥΦΟΣ", "σίσυφος", "ǅ", "ǆ", "😀", "a\x00", "a", "İ", "i̇"]
)
unicode_spaces = st.sampled_from([" ", "\u00a0", "\u2003", "\x1c", "\x85", "\u3000", "\u200b"])


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.lists(st.tuples(unicode_words | words, unicode_spaces), max_size=12).map(
            lambda parts: "".join(w + s for w, s in parts)
        ),
        min_size=1,
        max_size=10,
    )
)
def test_non_ascii_text_matches_brute_force(corpus: list[str]) -> None:
    # Case folding that changes lengths (ß -> ss), astral code points, NUL, and every kind of
    # Unicode whitespace, including U+200B, which str.split() does not split on.
    finder = DuplicateFinder(corpus)
    codes = np.arange(len(corpus), dtype=np.int64)
    ends = np.asarray([len(t) for t in corpus], dtype=np.int64)
    result = finder.duplicate_of(codes, np.zeros(len(corpus), dtype=np.int64), ends)
    assert result == _brute_force(corpus)


def _near_copies(count: int) -> list[str]:
    base = [" ".join(f"w{i}x{j}" for j in range(40)) for i in range(count)]
    out = []
    for text in base:
        out += [text, text.replace("x5 ", "y5 "), text.upper(), text[: len(text) // 2]]
    return out


def test_whole_run_matches_list_by_list(monkeypatch: pytest.MonkeyPatch) -> None:
    import groundkit.harness.analysis._duplicates as module

    corpus = _near_copies(6)
    rng = np.random.default_rng(3)
    lists = []
    for _ in range(12):
        docs = rng.integers(0, len(corpus), size=int(rng.integers(0, 15))).astype(np.int64)
        starts = np.asarray([int(rng.integers(0, 5)) for _ in docs], dtype=np.int64)
        ends = np.asarray([len(corpus[d]) for d in docs], dtype=np.int64)
        lists.append((docs, starts, ends))
    expected = [_brute_force([corpus[d][s:e] for d, s, e in zip(*x, strict=True)]) for x in lists]
    assert sum(rank is not None for ranks in expected for rank in ranks) > 5
    bounds = np.cumsum([0, *(x[0].size for x in lists)]).astype(np.int64)
    flat = [np.concatenate([x[i] for x in lists]) for i in range(3)]
    # Small batches and sort groups: words hashed in different batches must get the same ids.
    monkeypatch.setattr(module, "_BATCH_CHARS", 300)
    monkeypatch.setattr(module, "_SPANS_PER_SORT", 4)
    assert (
        DuplicateFinder(corpus).duplicates_in_lists(flat[0], flat[1], flat[2], bounds) == expected
    )
    # Spans cached by earlier builds (another order key table) give the same answers.
    finder = DuplicateFinder(corpus)
    finder.prefetch(flat[0][:20], flat[1][:20], flat[2][:20])
    assert [finder.duplicate_of(*x) for x in lists] == expected


def _cached_equal(got: DuplicateFinder, expected: DuplicateFinder) -> None:
    assert got._cache.keys() == expected._cache.keys()
    for key, (text_hash, shingles, prefix) in expected._cache.items():
        entry = got._cache[key]
        assert entry[0] == text_hash
        np.testing.assert_array_equal(entry[1], shingles)
        np.testing.assert_array_equal(entry[2], prefix)


def test_threaded_shingling_gives_the_serial_sets(monkeypatch: pytest.MonkeyPatch) -> None:
    # Where processes cannot be forked, a large run's batches are shingled on a thread per
    # core (here the run is below the forked size); each span's set depends only on its text
    # and the order key table, so every cached entry equals the serial one.
    from concurrent.futures import ThreadPoolExecutor

    import groundkit.harness.analysis._duplicates as module
    import groundkit.harness.analysis._similar_sets as similar

    corpus = _near_copies(40)
    keys = [(d, s, len(t)) for d, t in enumerate(corpus) for s in (0, 7)]
    serial = DuplicateFinder(corpus)
    serial._build(keys)
    pools: list[int] = []

    class Counted(ThreadPoolExecutor):
        def __init__(self, workers: int, **kwargs: Any) -> None:
            pools.append(workers)
            super().__init__(workers, **kwargs)

    monkeypatch.setattr(module, "_THREADED_CHARS", 0)
    monkeypatch.setattr(module, "_HASH_CHARS", 256)  # many batches
    monkeypatch.setattr(module, "available_cores", lambda: 4)
    monkeypatch.setattr(similar, "available_cores", lambda: 4)
    monkeypatch.setattr(similar, "ThreadPoolExecutor", Counted)
    threaded = DuplicateFinder(corpus)
    threaded._build(keys)
    assert pools == [4]
    _cached_equal(threaded, serial)


def test_forked_shingling_gives_the_serial_sets(monkeypatch: pytest.MonkeyPatch) -> None:
    # A large run's spans are cut into parts shingled by forked workers: every cached entry,
    # and every answer, equals the one-process build's.
    import groundkit.harness.analysis._duplicates as module

    corpus = _near_copies(60)
    keys = [(d, s, len(t)) for d, t in enumerate(corpus) for s in (0, 7, 31)]
    serial = DuplicateFinder(corpus)
    serial._build(keys)
    parts_run: list[list[tuple[int, int]]] = []
    forked = module.run_in_parts

    def counted(work: Any, parts: list[tuple[int, int]]) -> Any:
        parts_run.append(list(parts))
        return forked(work, parts)

    monkeypatch.setattr(module, "_FORKED_CHARS", 0)
    monkeypatch.setattr(module, "_FORKED_PART_CHARS", 1000)
    monkeypatch.setattr(module, "_HASH_CHARS", 700)  # several batches a part
    monkeypatch.setattr(module, "available_cores", lambda: 3)
    monkeypatch.setattr(module, "run_in_parts", counted)
    parted = DuplicateFinder(corpus)
    parted._build(keys)
    assert len(parts_run) == 1
    assert len(parts_run[0]) == 3
    assert parts_run[0][0][0] == 0
    assert parts_run[0][-1][1] == len(keys)
    _cached_equal(parted, serial)
    docs = np.asarray([d for d, _, _ in keys], dtype=np.int64)
    starts = np.asarray([s for _, s, _ in keys], dtype=np.int64)
    ends = np.asarray([e for _, _, e in keys], dtype=np.int64)
    bounds = np.asarray([0, 60, len(keys)], dtype=np.int64)
    expected = serial.duplicates_in_lists(docs, starts, ends, bounds)  # all cached: no build
    assert DuplicateFinder(corpus).duplicates_in_lists(docs, starts, ends, bounds) == expected
    assert any(rank is not None for ranks in expected for rank in ranks)
    assert len(parts_run) == 2  # the whole run went through the workers too


def test_a_small_run_is_shingled_in_this_process(monkeypatch: pytest.MonkeyPatch) -> None:
    import groundkit.harness.analysis._duplicates as module

    def refuse(*args: Any) -> Any:
        raise AssertionError("forked for a small run")

    monkeypatch.setattr(module, "available_cores", lambda: 8)
    monkeypatch.setattr(module, "run_in_parts", refuse)
    corpus = _near_copies(10)
    DuplicateFinder(corpus)._build([(d, 0, len(t)) for d, t in enumerate(corpus)])


def test_equal_hashes_of_different_texts_are_not_duplicates() -> None:
    corpus = ["one two three", "four five six", "one two three", "ONE two  THREE"]
    finder = DuplicateFinder(corpus)
    codes, starts = np.arange(4), np.zeros(4, dtype=np.int64)
    ends = np.asarray([len(t) for t in corpus])
    finder.prefetch(codes, starts, ends)
    # Every text hash made equal: only the comparison of the words can tell the texts apart.
    for key, (_, shingles, prefix) in list(finder._cache.items()):
        finder._cache[key] = (7, shingles, prefix)
    assert finder.duplicate_of(codes, starts, ends) == [None, None, 1, 1]


def _reference_lists(
    corpus: list[str], lists: list[list[tuple[int, int, int]]]
) -> list[list[int | None]]:
    """The definition applied list by list to the hit texts (no hashing, no filtering)."""
    return [_brute_force([corpus[d][s:e] for d, s, e in hits]) for hits in lists]


many_words = st.sampled_from([f"t{i}" for i in range(40)]) | words


def _near_copy_corpus(draw: st.DrawFn) -> list[str]:
    # Long enough texts (up to 120 words) that a few edits land on both sides of the threshold.
    texts = st.lists(many_words, min_size=0, max_size=120).map(" ".join)
    base = draw(st.lists(texts, min_size=1, max_size=4))
    corpus = list(base)
    for text in base:
        parts = text.split()
        for _ in range(draw(st.integers(0, 2))):
            edited = list(parts)
            for _ in range(draw(st.integers(0, 3))):
                if edited:
                    edited[draw(st.integers(0, len(edited) - 1))] = draw(many_words)
            corpus.append(draw(st.sampled_from([" ", "  ", "\n"])).join(edited))
    return corpus


@st.composite
def _runs_of_lists(draw: st.DrawFn) -> tuple[list[str], list[list[tuple[int, int, int]]]]:
    corpus = _near_copy_corpus(draw)
    # Spans: whole texts, cut anywhere (inside words too), empty, repeated in and across lists.
    spans = [(d, 0, len(t)) for d, t in enumerate(corpus)]
    for _ in range(draw(st.integers(0, 12))):
        d = draw(st.integers(0, len(corpus) - 1))
        start = draw(st.integers(0, len(corpus[d])))
        spans.append((d, start, draw(st.integers(start, len(corpus[d])))))
    lists = draw(st.lists(st.lists(st.sampled_from(spans), max_size=14), min_size=1, max_size=8))
    return corpus, lists


@settings(max_examples=150, deadline=None)
@given(_runs_of_lists(), st.booleans())
def test_whole_runs_match_a_reference_implementation(
    case: tuple[list[str], list[list[tuple[int, int, int]]]], small_batches: bool
) -> None:
    import groundkit.harness.analysis._duplicates as module
    import groundkit.harness.analysis._similar_sets as similar

    corpus, lists = case
    flat = [hit for hits in lists for hit in hits]
    docs, starts, ends = (np.asarray([h[i] for h in flat], dtype=np.int64) for i in range(3))
    bounds = np.cumsum([0, *map(len, lists)]).astype(np.int64)
    with pytest.MonkeyPatch.context() as patch:
        if small_batches:
            # Every batching and grouping path: lookups, sort groups, sketch buckets.
            patch.setattr(similar, "_BATCH_SLOTS", 7)
            patch.setattr(module, "_SPANS_PER_SORT", 2)
            patch.setattr(similar, "_SETS_PER_SORT", 2)
            patch.setattr(similar, "_BUCKETS", 4)
            # Shingled on threads, a few spans a batch.
            patch.setattr(module, "_THREADED_CHARS", 0)
            patch.setattr(module, "_HASH_CHARS", 8)
            patch.setattr(similar, "available_cores", lambda: 3)
        result = DuplicateFinder(corpus).duplicates_in_lists(docs, starts, ends, bounds)
    assert result == _reference_lists(corpus, lists)


def test_copies_across_versions_are_marked_in_every_list() -> None:
    # Five versions of one text, one word changed in each: every pair is a near copy (192 of
    # 204 shingles shared); a text with two more words changed is a near copy of its source but
    # not of the other versions (186 of 210).
    base = [f"term{i}" for i in range(200)]
    corpus = []
    for version in range(5):
        edited = list(base)
        edited[10 + 30 * version] = f"edit{version}"
        corpus.append(" ".join(edited))
    corpus.append(corpus[0].replace("term50 ", "x ").replace("term80 ", "y "))
    order = ([0, 1, 2], [4, 3], [2, 2, 0], [5, 0, 1])
    lists = [[(v, 0, len(corpus[v])) for v in versions] for versions in order]
    flat = [hit for hits in lists for hit in hits]
    docs, starts, ends = (np.asarray([h[i] for h in flat], dtype=np.int64) for i in range(3))
    bounds = np.cumsum([0, *map(len, lists)]).astype(np.int64)
    result = DuplicateFinder(corpus).duplicates_in_lists(docs, starts, ends, bounds)
    assert result == [[None, 1, 1], [None, 1], [None, 1, 1], [None, 1, 2]]
    assert result == _reference_lists(corpus, lists)


def test_exactly_at_the_threshold() -> None:
    # 21 words (19 shingles); the last word changed: 18 shared of 20, Jaccard exactly 0.9;
    # the last two changed: 17 of 21.
    text = " ".join(f"n{i}" for i in range(21))
    at = text.replace("n20", "other")
    below = text.replace("n19 n20", "other words")
    corpus = [text, below, at]
    lists = [[(0, 0, len(text)), (1, 0, len(below)), (2, 0, len(at))]]
    flat = lists[0]
    docs, starts, ends = (np.asarray([h[i] for h in flat], dtype=np.int64) for i in range(3))
    bounds = np.asarray([0, 3], dtype=np.int64)
    result = DuplicateFinder(corpus).duplicates_in_lists(docs, starts, ends, bounds)
    assert result == [[None, None, 1]] == _reference_lists(corpus, lists)


@pytest.mark.parametrize(
    ("largest", "buckets"), [(200, 512), (255, 1), (256, 1), (70_000, 512), (70_000, 1)]
)
def test_the_sketch_test_on_threads_gives_the_serial_answer(
    monkeypatch: pytest.MonkeyPatch, largest: int, buckets: int
) -> None:
    # Pairs are tested in batches on a thread per core, with the narrowest counts that hold
    # the largest set (uint8 below 256 elements): the bound each pair gets is the one
    # computed from the sets directly, bucket by bucket.
    import groundkit.harness.analysis._similar_sets as module

    monkeypatch.setattr(module, "_BUCKETS", buckets)  # one bucket: counts up to the set's size
    rng = np.random.default_rng(largest)
    sizes = rng.integers(1, largest + 1, size=40)
    sizes[0] = largest
    base = rng.integers(0, 1 << 50, size=largest, dtype=np.uint64)
    # Half of each set from a common base (pairs well below the threshold), or all but a few
    # elements (near copies, above it).
    shared = [size // 2 if i % 2 else size - size // 25 for i, size in enumerate(sizes.tolist())]
    sets = [
        np.unique(np.r_[base[:kept], rng.integers(0, 1 << 50, size - kept, np.uint64)])
        for size, kept in zip(sizes.tolist(), shared, strict=True)
    ]
    sizes = np.asarray([len(s) for s in sets], dtype=np.int64)
    pairs = np.asarray([(a, b) for a in range(40) for b in range(a)], dtype=np.int64)

    def bound(a: int, b: int) -> int:
        buckets = module._BUCKETS - 1
        first = np.bincount((sets[a] & np.uint64(buckets)).astype(np.int64), minlength=buckets + 1)
        second = np.bincount((sets[b] & np.uint64(buckets)).astype(np.int64), minlength=buckets + 1)
        return int(np.minimum(first, second).sum())

    expected = np.asarray(
        [
            bound(a, b) >= module.JACCARD_THRESHOLD * (sizes[a] + sizes[b] - bound(a, b))
            for a, b in pairs.tolist()
        ]
    )
    monkeypatch.setattr(module, "available_cores", lambda: 1)
    serial = module._may_be_similar(sets, sizes, pairs)
    monkeypatch.setattr(module, "available_cores", lambda: 4)
    monkeypatch.setattr(module, "_BATCH_SLOTS", 3 * module._BUCKETS)  # 3 pairs a batch
    threaded = module._may_be_similar(sets, sizes, pairs)
    np.testing.assert_array_equal(serial, expected)
    np.testing.assert_array_equal(threaded, expected)
    assert expected.any()
    assert not expected.all()


def test_a_word_has_one_id_whatever_the_width_of_its_batch() -> None:
    from groundkit.harness.analysis._word_hashes import batch_word_ids, code_points

    # ASCII (one byte a code point), the Basic Multilingual Plane (two), beyond it (four).
    batches = [["naive word"], ["naive word é"], ["naive word 🙂"], ["naive word \ud800"]]
    assert [code_points(" ".join(b)).dtype.itemsize for b in batches] == [1, 2, 4, 2]
    ids = [batch_word_ids(b)[0][:2].tolist() for b in batches]
    assert ids[1:] == ids[:1] * 3
