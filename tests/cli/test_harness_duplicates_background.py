"""Shingle sets built beside the run: the same sets and answers, whatever the worker does.

A stage whose hits will cover most of its chunks has their sets built by a forked worker while
it indexes and searches (``DuplicateFinder.prefetch_in_background``). The cached sets and
every ``duplicate_of`` must be the ones this process would build; a worker that fails, dies
or hangs is replaced by building here; a run that ends early leaves no worker behind.
"""

from __future__ import annotations

import multiprocessing
import os
import time
from typing import Any

import numpy as np
import pytest
from tests.cli.test_harness_duplicates import _cached_equal, _near_copies
from tests.cli.test_harness_pipeline import DOCS, JUDGMENTS, _settings, _strip_volatile

from groundkit.harness import _forked, evaluate
from groundkit.harness.analysis import _duplicates
from groundkit.harness.analysis._duplicates import DuplicateFinder
from groundkit.judgments import CharsChunker, DocumentChunker
from groundkit.judgments.report import report_to_json

needs_fork = pytest.mark.skipif(not _forked.can_fork(), reason="no fork here")


def _spans(corpus: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    docs = np.repeat(np.arange(len(corpus), dtype=np.int64), 2)
    starts = np.tile(np.asarray([0, 5], dtype=np.int64), len(corpus))
    ends = np.asarray([len(corpus[d]) for d in docs.tolist()], dtype=np.int64)
    return docs, starts, ends


def _no_worker_left() -> bool:
    return not [child for child in multiprocessing.active_children() if child.is_alive()]


@pytest.fixture
def small_enough(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_duplicates, "_BACKGROUND_CHARS", 0)
    monkeypatch.setattr(_duplicates, "available_cores", lambda: 2)


@needs_fork
@pytest.mark.usefixtures("small_enough")
def test_the_worker_builds_the_sets_this_process_would(monkeypatch: pytest.MonkeyPatch) -> None:
    corpus = _near_copies(30)
    docs, starts, ends = _spans(corpus)
    serial = DuplicateFinder(corpus)
    serial.prefetch(docs, starts, ends)
    finder = DuplicateFinder(corpus)
    assert finder.prefetch_in_background(docs, starts, ends)
    assert not finder._cache  # nothing built here yet

    def refuse(*args: Any) -> Any:
        raise AssertionError("shingled here, not by the worker")

    monkeypatch.setattr(DuplicateFinder, "_shingle", refuse)  # the worker is forked already
    bounds = np.asarray([0, 40, 90, docs.size], dtype=np.int64)
    assert finder.duplicates_in_lists(docs, starts, ends, bounds) == serial.duplicates_in_lists(
        docs, starts, ends, bounds
    )
    _cached_equal(finder, serial)
    assert finder._frequency is not None
    assert serial._frequency is not None
    np.testing.assert_array_equal(finder._frequency, serial._frequency)
    assert _no_worker_left()


@needs_fork
@pytest.mark.usefixtures("small_enough")
def test_a_worker_that_dies_or_hangs_is_replaced_by_building_here(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    corpus = _near_copies(12)
    docs, starts, ends = _spans(corpus)
    serial = DuplicateFinder(corpus)
    serial.prefetch(docs, starts, ends)
    parent = os.getpid()
    built_here = DuplicateFinder._built_here

    def dying(self: DuplicateFinder, keys: Any) -> Any:
        if os.getpid() != parent:
            os._exit(3)
        return built_here(self, keys)

    monkeypatch.setattr(DuplicateFinder, "_built_here", dying)
    finder = DuplicateFinder(corpus)
    assert finder.prefetch_in_background(docs, starts, ends)
    finder.prefetch(docs, starts, ends)
    _cached_equal(finder, serial)

    def hanging(self: DuplicateFinder, keys: Any) -> Any:
        if os.getpid() != parent:
            time.sleep(3600)
        return built_here(self, keys)

    monkeypatch.setattr(DuplicateFinder, "_built_here", hanging)
    monkeypatch.setattr(_forked, "GRACE_SECONDS", 0.5)
    finder = DuplicateFinder(corpus)
    began = time.monotonic()
    assert finder.prefetch_in_background(docs, starts, ends)
    finder.prefetch(docs, starts, ends)
    assert time.monotonic() - began < 30
    _cached_equal(finder, serial)
    assert _no_worker_left()


@needs_fork
@pytest.mark.usefixtures("small_enough")
def test_closing_kills_a_worker_whose_sets_are_not_wanted(monkeypatch: pytest.MonkeyPatch) -> None:
    parent = os.getpid()

    def hanging(self: DuplicateFinder, keys: Any) -> Any:
        if os.getpid() != parent:
            time.sleep(3600)
        raise AssertionError("built here")

    monkeypatch.setattr(DuplicateFinder, "_built_here", hanging)
    corpus = _near_copies(5)
    finder = DuplicateFinder(corpus)
    assert finder.prefetch_in_background(*_spans(corpus))
    assert not _no_worker_left()
    finder.close()
    assert _no_worker_left()
    finder.close()  # twice is fine


def test_no_worker_on_one_core_for_little_text_or_twice(monkeypatch: pytest.MonkeyPatch) -> None:
    corpus = _near_copies(5)
    monkeypatch.setattr(_duplicates, "available_cores", lambda: 1)
    assert not DuplicateFinder(corpus).prefetch_in_background(*_spans(corpus))
    monkeypatch.setattr(_duplicates, "available_cores", lambda: 2)
    assert not DuplicateFinder(corpus).prefetch_in_background(*_spans(corpus))  # 2 M chars
    if not _forked.can_fork():
        return
    monkeypatch.setattr(_duplicates, "_BACKGROUND_CHARS", 0)
    finder = DuplicateFinder(corpus)
    finder.prefetch(*_spans(corpus))
    assert not finder.prefetch_in_background(*_spans(corpus))  # all built already
    finder = DuplicateFinder(corpus)
    assert finder.prefetch_in_background(*_spans(corpus))
    assert not finder.prefetch_in_background(*_spans(corpus))  # one worker at a time
    finder.close()


def _report(level: str, chunker: Any) -> dict[str, object]:
    report = evaluate(DOCS, JUDGMENTS, _settings(chunker=chunker, level=level))
    assert any(h.duplicate_of for s in report.stages for q in s.queries for h in q.hits)
    return _strip_volatile(report_to_json(report))


@needs_fork
@pytest.mark.parametrize(
    ("level", "chunker"),
    [("document", DocumentChunker()), ("chunk", CharsChunker(size=60, overlap=10))],
)
def test_a_run_with_the_worker_reports_what_one_without_it_does(
    level: str, chunker: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    started: list[int] = []
    original = DuplicateFinder.prefetch_in_background

    def counted(self: DuplicateFinder, *args: Any) -> bool:
        started.append(1 if original(self, *args) else 0)
        return bool(started[-1])

    monkeypatch.setattr(DuplicateFinder, "prefetch_in_background", counted)
    without = _report(level, chunker)
    assert started == [0]  # far below the size that pays for a worker
    monkeypatch.setattr(_duplicates, "_BACKGROUND_CHARS", 0)
    monkeypatch.setattr(_duplicates, "available_cores", lambda: 2)
    assert _report(level, chunker) == without
    assert started == [0, 1]
    assert _no_worker_left()


@needs_fork
@pytest.mark.usefixtures("small_enough")
def test_ctrl_c_while_waiting_for_the_worker_kills_it(monkeypatch: pytest.MonkeyPatch) -> None:
    import multiprocessing.connection

    parent = os.getpid()
    built_here = DuplicateFinder._built_here

    def slow(self: DuplicateFinder, keys: Any) -> Any:
        if os.getpid() != parent:
            time.sleep(3600)
        return built_here(self, keys)

    def interrupted(self: Any, timeout: float = 0.0) -> bool:
        raise KeyboardInterrupt

    monkeypatch.setattr(DuplicateFinder, "_built_here", slow)
    corpus = _near_copies(5)
    finder = DuplicateFinder(corpus)
    assert finder.prefetch_in_background(*_spans(corpus))
    monkeypatch.setattr(multiprocessing.connection.Connection, "poll", interrupted)
    with pytest.raises(KeyboardInterrupt):
        finder.prefetch(*_spans(corpus))
    assert _no_worker_left()
