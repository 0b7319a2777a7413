"""A query's hits held as columns (``HitList``): the same hits as a list of objects, smaller.

Every read (iteration, indexing, slicing, equality, pickling, dumping) is checked against the
list of :class:`ReportHit` objects it was made from, on generated lists; bad values are
refused as the objects refuse them; and the memory it saves is measured.
"""

from __future__ import annotations

import copy
import pickle
import tracemalloc
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from groundkit.judgments import QueryResult
from groundkit.judgments.report import HitList, ReportHit, hit_fields

_HIT = st.builds(
    ReportHit,
    doc=st.sampled_from(["a.md", "b.md", "dir/c.md", "é.md"]),
    start=st.integers(0, 10**9),
    end=st.integers(0, 10**9),
    score=st.floats(allow_nan=False, allow_infinity=False),  # JSON has neither
    duplicate_of=st.none() | st.integers(-5, 200),
    adjudicated_grade=st.none() | st.integers(0, 3),
)


@settings(max_examples=150, deadline=None)
@given(hits=st.lists(_HIT, max_size=30), cut=st.tuples(st.integers(-40, 40), st.integers(-40, 40)))
def test_a_hit_list_reads_as_the_objects_it_was_made_from(
    hits: list[ReportHit], cut: tuple[int, int]
) -> None:
    result = QueryResult(query_id="q", hits=hits)
    held = result.hits
    assert isinstance(held, HitList)
    assert len(held) == len(hits)
    assert list(held) == hits
    assert [held[i] for i in range(-len(hits), len(hits))] == hits + hits
    for step in (1, 2, -1):
        assert list(held[cut[0] : cut[1] : step]) == hits[cut[0] : cut[1] : step]
        assert held[cut[0] : cut[1] : step] == hits[cut[0] : cut[1] : step]
    assert held == hits
    assert hit_fields(held) == hit_fields(hits)
    assert pickle.loads(pickle.dumps(result)) == result
    assert copy.deepcopy(result) == result
    assert QueryResult.model_validate_json(result.model_dump_json()) == result
    assert result.model_dump()["hits"] == [hit.model_dump() for hit in hits]
    assert hash(held) == hash(QueryResult(query_id="q", hits=list(hits)).hits)


def test_a_changed_hit_makes_the_lists_unequal() -> None:
    hits = [ReportHit(doc="a.md", start=0, end=5, score=1.0, duplicate_of=None)] * 2
    held = HitList.from_hits(hits)
    for change in ({"doc": "b.md"}, {"end": 6}, {"score": 1.5}, {"duplicate_of": 1}):
        other = [hits[0], hits[1].model_copy(update=change)]
        assert held != other
        assert held != HitList.from_hits(other)
    assert held != hits[:1]
    assert held != "not hits"
    assert held != [{"doc": "a.md"}, {"doc": "a.md"}]


def test_its_columns_cannot_be_written_through_it() -> None:
    starts = np.array([0, 10])
    held = HitList(["a.md"], [0, 0], starts, starts + 5, [2.0, 1.0])
    with pytest.raises(ValueError, match="read-only"):
        held._start[0] = 99
    assert held[0].start == 0
    starts[0] = 7  # the caller's own array stays the caller's
    assert starts[0] == 7


def test_indexing_past_the_end_raises_as_a_list() -> None:
    held = HitList.from_hits([ReportHit(doc="a.md", start=0, end=5, score=1.0)])
    with pytest.raises(IndexError):
        held[1]
    with pytest.raises(IndexError):
        held[-2]


def test_a_hit_read_back_has_the_fields_set_a_dict_gives() -> None:
    given_as_dict = {"doc": "a.md", "start": 0, "end": 5, "score": 1.0}
    read = QueryResult.model_validate({"query_id": "q", "hits": [given_as_dict]}).hits[0]
    assert read.model_fields_set == set(given_as_dict)


@pytest.mark.parametrize(
    ("hit", "where"),
    [
        ({"doc": "a.md", "start": -1, "end": 5, "score": 1.0}, "hits.0.start"),
        ({"doc": "a.md", "start": 0, "end": 5, "score": "x"}, "hits.0.score"),
        ({"doc": 3, "start": 0, "end": 5, "score": 1.0}, "hits.0.doc"),
        ({"doc": "a.md", "start": 0, "end": 5, "score": 1, "adjudicated_grade": 4}, "hits.0"),
        ({"doc": "a.md", "start": 0, "end": 5, "score": 1, "rank": 1}, "hits.0.rank"),
    ],
)
def test_bad_hits_are_refused_where_they_are(hit: dict[str, Any], where: str) -> None:
    with pytest.raises(ValidationError) as raised:
        QueryResult.model_validate({"query_id": "q", "hits": [hit]})
    assert raised.value.error_count() == 1
    location = ".".join(map(str, raised.value.errors()[0]["loc"]))
    assert location.startswith(where)


@pytest.mark.parametrize(
    ("columns", "message"),
    [
        ({"doc": [0, 0]}, "differ in length"),
        ({"doc": [2]}, "not in the list"),
        ({"start": [-1]}, "hit 1: start must be >= 0"),
        ({"end": [-3]}, "hit 1: end must be >= 0"),
        ({"adjudicated_grades": {0: 4}}, "adjudicated_grade must be 0-3"),
        ({"duplicate_of": {1: 1}}, "no hit at position 1"),
    ],
)
def test_columns_that_no_hit_could_hold_are_refused(columns: dict[str, Any], message: str) -> None:
    arguments: dict[str, Any] = {"doc": [0], "start": [0], "end": [5], "score": [1.0]}
    arguments.update(columns)
    with pytest.raises(ValueError, match=message):
        HitList(["a.md", "b.md"], **arguments)


def test_a_pickled_list_takes_only_the_documents_it_names() -> None:
    corpus_ids = [f"doc-{i:06d}.md" for i in range(100_000)]  # a stage shares the corpus's ids
    held = HitList(corpus_ids, [7, 99_999], [0, 10], [5, 20], [2.0, 1.0])
    data = pickle.dumps(held)
    assert len(data) < 2_000
    assert pickle.loads(data) == held
    assert [hit.doc for hit in pickle.loads(data)] == ["doc-000007.md", "doc-099999.md"]


def test_a_run_of_hits_takes_a_fraction_of_the_objects_memory() -> None:
    # 300 queries x 100 hits, as a stage builds them (views of its arrays, ids shared).
    queries, depth = 300, 100
    rng = np.random.default_rng(0)
    ids = [f"doc-{i}.md" for i in range(5_000)]
    docs = rng.integers(0, len(ids), queries * depth)
    starts = rng.integers(0, 10_000, queries * depth)
    scores = rng.random(queries * depth)

    def measured(build: Any) -> tuple[int, Any]:
        tracemalloc.start()
        try:
            before = tracemalloc.get_traced_memory()[0]
            made = build()
            return tracemalloc.get_traced_memory()[0] - before, made
        finally:
            tracemalloc.stop()

    def as_columns() -> list[HitList]:
        rows = [slice(q * depth, (q + 1) * depth) for q in range(queries)]
        return [HitList(ids, docs[r], starts[r], starts[r] + 500, scores[r]) for r in rows]

    def as_objects() -> list[list[ReportHit]]:
        flat = zip(docs.tolist(), starts.tolist(), scores.tolist(), strict=True)
        hits = [ReportHit(doc=ids[d], start=s, end=s + 500, score=x) for d, s, x in flat]
        return [hits[q * depth : (q + 1) * depth] for q in range(queries)]

    columns_bytes, columns = measured(as_columns)
    objects_bytes, objects = measured(as_objects)
    assert all(c == o for c, o in zip(columns, objects, strict=True))
    assert columns_bytes * 5 < objects_bytes, (columns_bytes, objects_bytes)
