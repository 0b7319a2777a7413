"""What a run knows while it runs (:class:`RunContext`) and what each stage produced."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from groundkit.harness._chunking import cut_corpus
from groundkit.harness._errors import HarnessError, StageFailed
from groundkit.harness.analysis._evidence import StageChunks
from groundkit.harness.retrievers._protocol import ChunkSet, RunView
from groundkit.harness.run._config import EvalSettings, StageConfig
from groundkit.harness.run._ranking import ChunkTable, RankedRun
from groundkit.harness.run._tokenizer import run_tokenizer
from groundkit.judgments import Corpus, canonical_json
from groundkit.judgments.corpus import uses_tokenizer
from groundkit.judgments.report import StageCost, UnlocatedHit

__all__ = [
    "PreparedRun",
    "ProgressCallback",
    "RunContext",
    "SharedWork",
    "StageOutcome",
    "run_context",
]

ProgressCallback = Callable[[str, int, int], None]
"""``progress(phase, done, total)``: phases are ``load``, ``resolve``, then per stage
``<stage>: chunk``, ``<stage>: index``, ``<stage>: load model`` (a dense or rerank stage's
model), ``<stage>: embed``, ``<stage>: retrieve``,
``<stage>: score``, and finally ``compare``. ``total`` may be 0 when there is nothing to do."""

IntArray = npt.NDArray[np.int64]

# Kinds whose results follow from their settings alone (no user code, no outside service).
_REUSABLE_KINDS = frozenset({"bm25", "dense", "hybrid"})


@dataclass
class SharedWork:
    """Work that later runs on the same corpus reuse (the arms of a sweep).

    A run keeps its chunk lists and indexes here; a sweep hands the same instance to every
    arm, so each distinct chunker cuts the corpus once and each BM25 index is built once per
    chunk set and settings (embeddings are shared through the on-disk embedding cache).
    A stage configured exactly as one already run (same settings, same upstream stages, same
    judgments) is not run again: its outcome and report are reused under its own name (the
    baseline, in every arm of a sweep). ``counts`` says how much work was actually done:
    ``chunkings``, ``bm25_indexes``, ``embeddings`` (chunk texts sent to a model),
    ``stages_run`` and ``stages_reused``.
    """

    corpus_fingerprint: str | None = None
    chunks: dict[str, tuple[ChunkSet, StageChunks]] = field(default_factory=dict)
    passages: dict[int, tuple[ChunkSet, StageChunks]] = field(default_factory=dict)
    indexes: dict[str, tuple[object, Any]] = field(default_factory=dict)
    stages: dict[str, tuple[Any, Any, Any]] = field(default_factory=dict)
    counts: dict[str, int] = field(
        default_factory=lambda: {
            "chunkings": 0,
            "bm25_indexes": 0,
            "embeddings": 0,
            "stages_run": 0,
            "stages_reused": 0,
        }
    )

    def bind(self, fingerprint: str) -> None:
        """Tie the work to one corpus (a second corpus is refused: its chunks would differ).

        Raises:
            HarnessError: The work was done on another corpus.
        """
        if self.corpus_fingerprint is None:
            self.corpus_fingerprint = fingerprint
        elif self.corpus_fingerprint != fingerprint:
            raise HarnessError("shared work belongs to another corpus; start a new SharedWork")

    def count(self, what: str, amount: int = 1) -> None:
        """Add ``amount`` to the count of ``what``."""
        self.counts[what] = self.counts.get(what, 0) + amount

    def index(self, key: str, source: object, build: Callable[[], Any]) -> tuple[Any, bool]:
        """The index stored under ``key`` for ``source``, built by ``build()`` the first time.

        ``source`` (the chunk set indexed) is kept with the index and must be the same object:
        the key names settings, the object pins the chunks. Returns the index and whether it
        was built now.
        """
        found = self.indexes.get(key)
        if found is not None and found[0] is source:
            return found[1], False
        built = build()
        self.indexes[key] = (source, built)
        return built, True


@dataclass
class RunContext:
    """The corpus, queries and settings of a run, with the chunk lists built so far."""

    corpus: Corpus
    doc_ids: tuple[str, ...]
    doc_codes: dict[str, int]
    texts: list[str]
    doc_lengths: IntArray
    settings: EvalSettings
    query_ids: list[str]
    queries: list[str]
    known_queries: dict[str, bool]
    progress: ProgressCallback | None
    embedding_cache_dir: Path | None
    shared: SharedWork = field(default_factory=SharedWork)
    judgments_key: str = ""

    @property
    def passage_tables(self) -> dict[int, tuple[ChunkSet, StageChunks]]:
        """Chunk set (by ``id``) to its chunk table: how a stage's passages are recognised."""
        return self.shared.passages

    def report(self, phase: str, done: int, total: int) -> None:
        """Forward progress to the callback, if any."""
        if self.progress is not None:
            self.progress(phase, done, total)

    def chunks_for(self, stage: StageConfig) -> tuple[ChunkSet, StageChunks, int]:
        """The stage's chunks, cut once per distinct chunker of the run (and shared work).

        A chunker that counts tokens counts the run's tokenizer's (and is keyed by it too).
        A large corpus is cut on every available core
        (:func:`~groundkit.harness._chunking.cut_corpus`).

        Returns:
            The chunk set, its table, and the processes that cut it now (0: cut before).
        """
        assert stage.chunker is not None
        key = stage.chunker.model_dump_json()
        tokenizer = None
        if uses_tokenizer(stage.chunker):
            tokenizer = run_tokenizer(self.settings)
            key = f"{key} {tokenizer.name} {tokenizer.version}"
        cached = self.shared.chunks.get(key)
        if cached is not None:
            return (*cached, 0)
        self.report(f"{stage.name}: chunk", 0, 1)
        table, workers = cut_corpus(self.texts, stage.chunker, tokenizer)
        cached = (self.chunk_set(table), StageChunks.build(table, len(self.doc_ids)))
        self.shared.chunks[key] = cached
        self.shared.passages[id(cached[0])] = cached
        self.shared.count("chunkings")
        self.report(f"{stage.name}: chunk", 1, 1)
        return (*cached, workers)

    def stage_key(self, stage: StageConfig, earlier: Mapping[str, str | None]) -> str | None:
        """What a stage's results depend on (``None``: the stage is not reusable).

        Its settings (not its name), the run's scoring settings, the judgments, and the keys of
        the stages it reads.
        """
        upstream = [earlier.get(name) for name in stage.retriever.upstream_stages()]
        if stage.retriever.kind not in _REUSABLE_KINDS or any(u is None for u in upstream):
            return None
        # Which stage is the baseline moves no stage's results: not part of the key.
        unused = {"stages", "embedding_cache_dir", "baseline"}
        settings = self.settings.model_dump(mode="json", exclude=unused)
        config = stage.model_dump(mode="json")
        config.pop("name", None)
        record = {
            "stage": config,
            "settings": settings,
            "upstream": upstream,
            "queries": self.judgments_key,
        }
        return canonical_json(record)

    def chunk_set(self, table: ChunkTable, texts: Sequence[str] | None = None) -> ChunkSet:
        """A public :class:`ChunkSet` view of a chunk table (texts cut from the corpus)."""
        if texts is None:
            docs, starts, ends = table.docs.tolist(), table.starts.tolist(), table.ends.tolist()
            texts = [self.texts[d][s:e] for d, s, e in zip(docs, starts, ends, strict=True)]
        return ChunkSet(
            doc_ids=self.doc_ids,
            doc_codes=table.docs,
            starts=table.starts,
            ends=table.ends,
            texts=texts,
        )


def run_context(view: RunView) -> RunContext:
    """The harness's run context behind a stage's view of it (built-in kinds read all of it).

    Raises:
        HarnessError: The view is not the harness's own context (a kind built outside a run).
    """
    if not isinstance(view, RunContext):
        raise HarnessError(f"a built-in kind needs the harness's run context, not {view!r}")
    return view


@dataclass
class PreparedRun:
    """A built-in stage's result already in columns (predictions files, fusion)."""

    run: RankedRun
    unlocated: list[UnlocatedHit] = field(default_factory=list)


@dataclass
class StageOutcome:
    """What one stage produced: its ranked hits, chunk list, evidence hooks and timings."""

    config: StageConfig
    doc_ids: tuple[str, ...] = ()
    run: RankedRun | None = None
    chunks: StageChunks | None = None
    passages: ChunkSet | None = None
    table_rows: IntArray | None = None  # passage row -> chunk table row (None: the same)
    passage_rows: IntArray | None = None  # chunk table row -> a passage row (None: the same)
    chunk_count: int | None = None
    indexed_documents: int | None = None
    encoder_max_tokens: int | None = None
    retriever_info: dict[str, Any] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)
    cost: StageCost | None = None
    error: str | None = None
    failure: StageFailed | None = None
    unlocated: list[UnlocatedHit] = field(default_factory=list)
    tokens_before: Callable[[list[tuple[int, int, int]]], list[int]] | None = None
    shares_term: Callable[[list[tuple[int, int]]], list[bool]] | None = None
