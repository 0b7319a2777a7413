"""Measuring what a stage costs, in the one place every retriever kind passes through.

:func:`groundkit.harness.run._stage_run.run_stage` opens a :class:`CostMeter` around each stage:
it times the index build and the search, takes the peak resident memory, reads the counts a
retriever keeps (its optional ``usage()`` hook) and prices them only with the price the user
gave. No kind measures itself: a kind only *declares* what it counts.
"""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from groundkit.harness.retrievers._protocol import LOAD_MODEL_PHASE
from groundkit.judgments.report import MemoryMethod, StageCost, StagePrice

__all__ = ["PHASE_KEYS", "USAGE_KEYS", "CostMeter", "latency_quantiles", "priced"]

USAGE_KEYS = ("embedding_calls", "model_calls", "tokens", "cached_passages", "workers")
"""The counts a retriever's ``usage()`` hook may return (each a non-negative integer;
``workers``, the most processes or threads the stage ran on at once, at least 1)."""
PHASE_KEYS = ("tokenize_seconds", "encode_seconds", "vector_search_seconds")
"""The seconds a retriever's ``phase_seconds()`` hook may return: phases inside its own
index and search that the meter cannot see from outside (a dense stage's tokenizer, forward
passes and vector search). Each a finite non-negative number, or ``None``: not timed."""

_PROC = Path("/proc/self")


def _status_kib(*field_names: str) -> tuple[int | None, ...]:
    """Fields of ``/proc/self/status`` in KiB, read in one pass (``None``: not there)."""
    found: dict[str, int] = {}
    try:
        with (_PROC / "status").open(encoding="ascii") as handle:
            for line in handle:
                name, _, rest = line.partition(":")
                if name in field_names:
                    found[name] = int(rest.split()[0])
    except (OSError, ValueError, IndexError):
        return tuple(None for _ in field_names)
    return tuple(found.get(name) for name in field_names)


# A reset high-water mark above the resident set by more than this was not reset: the kernel
# (or a sandbox's) accepted the write and kept the old peak.
_RESET_SLACK_KIB = 4096


class _Memory:
    """Peak resident memory over a stretch of the run (Linux ``/proc``; elsewhere ``None``).

    The kernel's high-water mark (``VmHWM``) is reset to the current resident set when the
    stretch starts (``/proc/self/clear_refs``), so the peak read at the end is this stage's
    own peak, not the process's since it started. The reset is checked: a high-water mark
    still above the resident set right after it was not reset (a sandboxed ``/proc`` may take
    the write and keep the old peak, which then showed as a stage's peak: an earlier
    stretch's, or a library's, gigabytes). Where the reset is refused or does not take, the
    resident set after minus before is recorded instead (a lower bound), and said so.
    """

    def __init__(self) -> None:
        (self.before,) = _status_kib("VmRSS")
        self.method: MemoryMethod | None = None
        if self.before is None:
            return
        self.method = "rss_delta"
        try:
            (_PROC / "clear_refs").write_text("5", encoding="ascii")
        except OSError:
            return
        resident, high = _status_kib("VmRSS", "VmHWM")
        if resident is not None and high is not None and high - resident <= _RESET_SLACK_KIB:
            self.method, self.before = "rss_peak_reset", resident

    def peak_bytes(self) -> int | None:
        if self.before is None or self.method is None:
            return None
        (after,) = _status_kib("VmHWM" if self.method == "rss_peak_reset" else "VmRSS")
        if after is None:
            return None
        return max(0, after - self.before) * 1024


def latency_quantiles(seconds: Sequence[float]) -> tuple[float, float, float] | None:
    """p50, p95 and p99 of per-query seconds (linear interpolation; ``None`` for no query).

    A descriptive summary of measured times, not an inference: nothing here is a test.
    """
    if not seconds:
        return None
    p50, p95, p99 = np.quantile(np.asarray(seconds, dtype=np.float64), [0.5, 0.95, 0.99])
    # Rounded once, in order, so that p50 <= p95 <= p99 survives the rounding.
    values = sorted(round(float(v), 9) for v in (p50, p95, p99))
    return values[0], values[1], values[2]


def priced(price: StagePrice | None, counts: Mapping[str, int | None]) -> float | None:
    """US dollars from the user's ``price`` and the stage's counts.

    ``None`` when there is no price, or when a priced count was not measured (a price per
    token for a retriever that does not count tokens is not turned into zero).
    """
    if price is None:
        return None
    terms = (
        (price.usd_per_query, counts.get("queries"), 1.0),
        (price.usd_per_call, _calls(counts), 1.0),
        (price.usd_per_million_tokens, counts.get("tokens"), 1e-6),
    )
    total = 0.0
    for rate, count, scale in terms:
        if rate is None:
            continue
        if count is None:
            return None
        total += rate * count * scale
    return round(total, 9) if math.isfinite(total) else None


def _calls(counts: Mapping[str, int | None]) -> int | None:
    embedding, model = counts.get("embedding_calls"), counts.get("model_calls")
    if embedding is None and model is None:
        return None
    return (embedding or 0) + (model or 0)


def _phase_seconds(retriever: Any) -> dict[str, float]:
    """What the retriever's optional ``phase_seconds()`` hook timed (unknown keys ignored)."""
    hook = getattr(retriever, "phase_seconds", None)
    if not callable(hook):
        return {}
    raw = hook()
    if not isinstance(raw, Mapping):
        return {}
    out: dict[str, float] = {}
    for key in PHASE_KEYS:
        value = raw.get(key)
        if isinstance(value, bool) or not isinstance(value, int | float):
            continue
        if math.isfinite(value) and value >= 0:
            out[key] = round(float(value), 6)
    return out


def _usage(retriever: Any) -> dict[str, int | None]:
    """What the retriever's optional ``usage()`` hook counted (unknown keys are ignored)."""
    hook = getattr(retriever, "usage", None)
    if not callable(hook):
        return {}
    raw = hook()
    if not isinstance(raw, Mapping):
        return {}
    out: dict[str, int | None] = {}
    for key in USAGE_KEYS:
        value = raw.get(key)
        least = 1 if key == "workers" else 0
        if isinstance(value, int | np.integer) and not isinstance(value, bool) and value >= least:
            out[key] = int(value)
    return out


@dataclass
class CostMeter:
    """The cost record of one stage, filled while it runs.

    Attributes:
        price: The user's price for the stage (``None``: unpriced).
    """

    price: StagePrice | None = None
    setup_seconds: float | None = None
    model_load_seconds: float | None = None
    index_seconds: float | None = None
    search_seconds: float | None = None
    latencies: list[float] = field(default_factory=list)
    basis: str | None = None
    chunks: int | None = None
    characters: int | None = None
    _memory: _Memory = field(default_factory=_Memory)
    _load_started: float | None = None
    _loads: dict[str, float] = field(default_factory=dict)  # model load seconds per step
    _step: str = "setup"
    _chunk_workers: int = 0  # processes that cut the stage's chunks (0: cut by another stage)

    @contextlib.contextmanager
    def setting_up(self) -> Any:
        """Time building the retriever (imports, a framework factory)."""
        start = time.perf_counter()
        self._step = "setup"
        try:
            yield
        finally:
            self.setup_seconds = (self.setup_seconds or 0.0) + time.perf_counter() - start

    @contextlib.contextmanager
    def indexing(self) -> Any:
        """Time the index build (added up when the build comes in several steps)."""
        start = time.perf_counter()
        self._step = "index"
        try:
            yield
        finally:
            self.index_seconds = (self.index_seconds or 0.0) + time.perf_counter() - start
            self._step = "search"

    def observe(self, phase: str, done: int, total: int) -> None:
        """Follow the stage's progress: a model load (``load model``) is timed on its own."""
        if phase != LOAD_MODEL_PHASE:
            return
        now = time.perf_counter()
        if done < total:
            self._load_started = now
        elif self._load_started is not None:
            seconds = now - self._load_started
            self._loads[self._step] = self._loads.get(self._step, 0.0) + seconds
            self.model_load_seconds = (self.model_load_seconds or 0.0) + seconds
            self._load_started = None

    def _without_load(self, step: str, seconds: float | None) -> float | None:
        """``seconds`` of a step less the model loading done inside it."""
        if seconds is None:
            return None
        return max(0.0, seconds - self._loads.get(step, 0.0))

    def chunked_on(self, workers: int) -> None:
        """Record the processes that cut the stage's chunks (0: another stage cut them)."""
        self._chunk_workers = max(self._chunk_workers, workers)

    def passages(self, texts: Sequence[str] | None) -> None:
        """Count the passages the stage indexed."""
        if texts is not None:
            self.chunks = len(texts)
            self.characters = sum(len(text) for text in texts)

    def searched(self, seconds: float, per_query: Sequence[float] | None, count: int) -> None:
        """Record the search: ``per_query`` seconds when each query was timed alone.

        A model loaded during the search (on first use) is not search time.
        """
        seconds = self._without_load("search", seconds) or 0.0
        self.search_seconds = seconds
        if per_query is not None:
            self.latencies, self.basis = list(per_query), "per_query"
        elif count:
            self.latencies, self.basis = [seconds / count] * count, "batch"

    def record(self, retriever: Any, queries: int) -> StageCost:
        """The stage's :class:`StageCost` (call once, after the search)."""
        peak = self._memory.peak_bytes()
        usage = _usage(retriever)
        if self._chunk_workers > 1:  # chunking is part of the stage's index work
            usage["workers"] = max(usage.get("workers") or 1, self._chunk_workers)
        quantiles = latency_quantiles(self.latencies)
        counts: dict[str, int | None] = {"queries": queries, **usage}
        return StageCost.model_validate(
            {
                "setup_seconds": _rounded(self._without_load("setup", self.setup_seconds)),
                "model_load_seconds": _rounded(self.model_load_seconds),
                "index_seconds": _rounded(self._without_load("index", self.index_seconds)),
                "search_seconds": _rounded(self.search_seconds),
                **_phase_seconds(retriever),
                "latency_basis": self.basis if quantiles else None,
                "latency_p50": quantiles[0] if quantiles else None,
                "latency_p95": quantiles[1] if quantiles else None,
                "latency_p99": quantiles[2] if quantiles else None,
                "queries": queries,
                **usage,
                "characters_indexed": self.characters,
                "chunks_indexed": self.chunks,
                "peak_memory_bytes": peak,
                "memory_method": self._memory.method if peak is not None else None,
                "price": self.price,
                "usd": priced(self.price, counts),
            }
        )


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 6)
