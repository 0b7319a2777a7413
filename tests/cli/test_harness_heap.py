"""Freed heap memory goes back to the system after a stage's array work (glibc's malloc_trim).

The trim is checked on glibc's own heap (blocks freed but kept resident, then handed back),
and its place in a run: after each stage's near-duplicate marking, before its hit objects.
"""

from __future__ import annotations

import ctypes
import sys
from typing import Any

import pytest

from groundkit.harness import Bm25Retriever, EvalSettings, _heap, evaluate
from groundkit.harness.analysis._duplicates import DuplicateFinder
from groundkit.harness.run import _cost, _results
from groundkit.judgments import GoldQuote, Judgment, QueryResult

_BLOCK = 64 * 1024  # under glibc's smallest mmap threshold: taken from the heap
_BLOCKS = 1024  # 64 MiB


def _resident_kib() -> int:
    (resident,) = _cost._status_kib("VmRSS")  # the cost meter's own reading
    assert resident is not None
    return resident


@pytest.mark.skipif(_heap._malloc_trim() is None, reason="no malloc_trim in this C library")
def test_a_trim_hands_the_freed_heap_pages_back() -> None:
    libc = ctypes.CDLL(None)
    libc.malloc.restype = ctypes.c_void_p
    libc.malloc.argtypes = [ctypes.c_size_t]
    libc.free.argtypes = [ctypes.c_void_p]
    blocks = [libc.malloc(_BLOCK) for _ in range(_BLOCKS)]
    try:
        assert all(blocks)
        for block in blocks:
            ctypes.memset(block, 1, _BLOCK)  # resident
        for block in blocks[:-1]:  # the last one keeps the heap's top from shrinking by itself
            libc.free(block)
        held = _resident_kib()
        assert _heap.release_free_heap() is True
        released = held - _resident_kib()
    finally:
        libc.free(blocks[-1])
    # 64 MiB were freed but resident: at least half of it goes back (the rest of the process
    # may allocate meanwhile, another thread of a test worker, say).
    assert released >= _BLOCK * _BLOCKS // 2 // 1024, released


def test_elsewhere_nothing_is_done(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "platform", "darwin")
    _heap._malloc_trim.cache_clear()
    try:
        assert _heap.release_free_heap() is False
    finally:
        monkeypatch.undo()
        _heap._malloc_trim.cache_clear()


def test_each_stage_trims_after_its_array_work_before_its_hits(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    events: list[str] = []
    marking = DuplicateFinder.duplicates_in_lists
    validate = QueryResult.model_validate

    def marked(self: DuplicateFinder, *args: Any) -> Any:
        events.append("marked")
        return marking(self, *args)

    def trimmed() -> bool:
        events.append("trimmed")
        return True

    def built(data: Any) -> Any:
        if events[-1] != "hits":
            events.append("hits")
        return validate(data)

    monkeypatch.setattr(DuplicateFinder, "duplicates_in_lists", marked)
    monkeypatch.setattr(_results, "release_free_heap", trimmed)
    monkeypatch.setattr(QueryResult, "model_validate", built)
    docs = {"a.md": "Cats purr when they are content.", "b.md": "Dogs bark at strangers."}
    judgments = [
        Judgment(query_id="q", query="Do cats purr?", gold=(GoldQuote(doc="a.md", quote="purr"),))
    ]
    settings = EvalSettings.model_validate({"bootstrap": {"resamples": 200}})
    report = evaluate(docs, judgments, settings, stages={"again": Bm25Retriever(k1=1.2)})
    assert [stage.name for stage in report.stages] == ["bm25", "again"]
    assert events == ["marked", "trimmed", "hits"] * 2
