"""What a stage cost to run: time, latency per query, model use, memory and (priced) money.

Added in report schema 1.3. ``None`` always means *not measured* (or, for ``usd``, *not
priced*), never zero: groundkit never invents a price, so ``usd`` is set only from a price the
user gave in the stage's configuration.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

__all__ = [
    "COST_FIGURES",
    "MEASURED_FIGURES",
    "LatencyBasis",
    "MemoryMethod",
    "StageCost",
    "StagePrice",
]

LatencyBasis = Literal["per_query", "batch"]
"""How per-query latencies were obtained: each query timed alone (``per_query``), or one
timed batch attributed evenly to its queries (``batch``: then p50 = p95 = p99)."""

MemoryMethod = Literal["rss_peak_reset", "rss_delta"]
"""How ``peak_memory_bytes`` was measured: the kernel's resident-set high-water mark reset at
the start of the stage (``rss_peak_reset``, Linux), or the resident set after the stage minus
before it (``rss_delta``, a lower bound of the peak)."""

_FROZEN = ConfigDict(frozen=True, extra="forbid")


class StagePrice(BaseModel):
    """Prices the user gives for a stage, in US dollars; each one given adds its term.

    Attributes:
        usd_per_query: Price of one searched query.
        usd_per_call: Price of one embedding or model call (a text embedded, a pair scored).
        usd_per_million_tokens: Price of a million tokens sent to a model.
    """

    model_config = _FROZEN
    usd_per_query: float | None = Field(default=None, ge=0.0, allow_inf_nan=False)
    usd_per_call: float | None = Field(default=None, ge=0.0, allow_inf_nan=False)
    usd_per_million_tokens: float | None = Field(default=None, ge=0.0, allow_inf_nan=False)

    @model_validator(mode="after")
    def _some_price(self) -> StagePrice:
        rates = (self.usd_per_query, self.usd_per_call, self.usd_per_million_tokens)
        if all(rate is None for rate in rates):
            raise ValueError(
                "a price names at least one of usd_per_query, usd_per_call, usd_per_million_tokens"
            )
        return self


_SECONDS = Field(default=None, ge=0.0, allow_inf_nan=False)
_COUNT = Field(default=None, ge=0)


class StageCost(BaseModel):
    """Cost and latency of one stage (``None``: not measured for this stage).

    Attributes:
        setup_seconds: Seconds building the stage's retriever before any indexing: importing
            its code, calling a framework object's factory (which may build a whole store).
        model_load_seconds: Seconds loading a model (read from disk, moved to the device);
            not counted in ``index_seconds`` or ``search_seconds``.
        index_seconds: Seconds building the stage's index (chunking and ``index()``; for a
            stage that brings its own passages, reading them), model loading excluded.
        search_seconds: Seconds in the retriever's search, every query together.
        tokenize_seconds: Seconds in a model's tokenizer (chunks and queries), when the
            stage times it apart (dense stages); on a worker thread when tokenization
            overlaps encoding, so it may overlap ``encode_seconds``.
        encode_seconds: Seconds in a model's forward passes (chunks and queries, the copy of
            the vectors off the device included), when the stage times them (dense stages).
        vector_search_seconds: Seconds scoring the query vectors against the chunk vectors
            and selecting the top hits (part of ``search_seconds``), when the stage times it.
        latency_basis: How the per-query latencies were obtained (:data:`LatencyBasis`).
        latency_p50: Median seconds per query.
        latency_p95: 95th percentile of seconds per query.
        latency_p99: 99th percentile of seconds per query.
        queries: Number of queries searched.
        embedding_calls: Texts embedded by the stage (chunks and queries; cached ones are not).
        model_calls: Other model calls (a query-passage pair scored by a reranker...).
        tokens: Tokens sent to a model, when the retriever counts them.
        characters_indexed: Characters of the passages indexed.
        chunks_indexed: Passages indexed.
        cached_passages: Passages whose embeddings were read from a cache instead of computed
            (all of them: the index time is a cache read).
        workers: The most processes or threads the stage ran its own work on at once, when
            the retriever says or the stage's chunks were cut by worker processes (schema
            2.4; the built-in BM25 stage: 1 when it analysed and searched on one core, more
            when a large corpus was analysed by worker processes or many queries were scored
            on threads; any chunked stage that cut a large corpus: the processes that cut
            it). Its results do not depend on it.
        peak_memory_bytes: Peak resident memory the stage added to the process.
        memory_method: How the peak was measured (:data:`MemoryMethod`).
        price: The price the user gave (``None``: unpriced).
        usd: Cost from ``price`` and the counts above (``None``: unpriced, or a priced count
            not measured).
    """

    model_config = _FROZEN
    setup_seconds: float | None = _SECONDS
    model_load_seconds: float | None = _SECONDS
    index_seconds: float | None = _SECONDS
    search_seconds: float | None = _SECONDS
    tokenize_seconds: float | None = _SECONDS
    encode_seconds: float | None = _SECONDS
    vector_search_seconds: float | None = _SECONDS
    latency_basis: LatencyBasis | None = None
    latency_p50: float | None = _SECONDS
    latency_p95: float | None = _SECONDS
    latency_p99: float | None = _SECONDS
    queries: int | None = _COUNT
    embedding_calls: int | None = _COUNT
    model_calls: int | None = _COUNT
    tokens: int | None = _COUNT
    characters_indexed: int | None = _COUNT
    chunks_indexed: int | None = _COUNT
    cached_passages: int | None = _COUNT
    workers: int | None = Field(default=None, ge=1)
    peak_memory_bytes: int | None = _COUNT
    memory_method: MemoryMethod | None = None
    price: StagePrice | None = None
    usd: float | None = Field(default=None, ge=0.0, allow_inf_nan=False)

    @model_validator(mode="after")
    def _consistent(self) -> StageCost:
        quantiles = [self.latency_p50, self.latency_p95, self.latency_p99]
        given = [q for q in quantiles if q is not None]
        if given and len(given) != 3:
            raise ValueError("latency_p50, latency_p95 and latency_p99 go together")
        if given and not given[0] <= given[1] <= given[2]:
            raise ValueError(
                f"latency quantiles must rise (p50 <= p95 <= p99), got {given[0]}, {given[1]}, "
                f"{given[2]}"
            )
        if given and self.latency_basis is None:
            raise ValueError("latency quantiles need their latency_basis")
        if (self.peak_memory_bytes is None) != (self.memory_method is None):
            raise ValueError("peak_memory_bytes and memory_method go together")
        cached, chunks = self.cached_passages, self.chunks_indexed
        if cached is not None and chunks is not None and cached > chunks:
            raise ValueError(f"cached_passages ({cached}) exceeds chunks_indexed ({chunks})")
        if self.usd is not None and self.price is None:
            raise ValueError("usd is only set from a price the user gave (price is missing)")
        return self

    def figure(self, name: str) -> float | None:
        """The figure called ``name`` (a field of this model), as a number or ``None``."""
        value = getattr(self, name, None)
        if isinstance(value, bool) or not isinstance(value, int | float):
            return None
        return float(value)


COST_FIGURES = (
    "setup_seconds",
    "model_load_seconds",
    "index_seconds",
    "search_seconds",
    "tokenize_seconds",
    "encode_seconds",
    "vector_search_seconds",
    "latency_p50",
    "latency_p95",
    "latency_p99",
    "embedding_calls",
    "model_calls",
    "tokens",
    "characters_indexed",
    "chunks_indexed",
    "cached_passages",
    "peak_memory_bytes",
    "usd",
)
"""The numeric figures of :class:`StageCost` (what a cost guardrail can name)."""

MEASURED_FIGURES = (
    "setup_seconds",
    "model_load_seconds",
    "index_seconds",
    "search_seconds",
    "tokenize_seconds",
    "encode_seconds",
    "vector_search_seconds",
    "latency_p50",
    "latency_p95",
    "latency_p99",
    "peak_memory_bytes",
)
"""The figures measured by the clock or the kernel: they vary between two runs of the same
configuration and data (the counts do not)."""
