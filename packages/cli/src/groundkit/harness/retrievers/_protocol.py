"""The retriever protocol: what a stage of any kind gives the harness, and what it gets.

A retriever has one required method, ``search(queries, depth)``, returning for each query its
hits in rank order (best first). A hit may be given

* as a span of the corpus: a ``(doc, start, end[, score])`` tuple, a ``{"doc", "start",
  "end", "score"}`` dict or an object with ``doc``/``start``/``end`` (and ``score``);
* as text and its source document: ``{"doc", "text", "score"}``, a LangChain ``Document``
  (``page_content``, ``metadata["source"]``), a LlamaIndex ``NodeWithScore`` or ``TextNode``,
  a Haystack ``Document`` (``content``, ``meta``), or a plain string. The harness locates the
  text in its document (exact, then whitespace- and typography-tolerant, see
  :func:`groundkit.judgments.gold.locate_text`); a hit that cannot be located is left out of the
  ranking, counted and listed in the report (``StageReport.unlocated``), never dropped
  silently;
* for a ``chunked`` kind, as rows of the :class:`ChunkSet` its ``index`` received, one
  :class:`ChunkHits` per query (the fast path of BM25, dense and vector-index stages).

``None`` for a query means the retriever did not answer it (it scores zero, stays in the mean
and is marked ``missing``).

Optional hooks feed the evidence traces that ``grk eval diagnose`` reads; without them the
matching trace fields are ``None`` ("not measurable"), never zero:

* ``index(chunks)``: called once before ``search`` for chunked kinds;
* ``passages()``: for other kinds, the passages the retriever's own index holds (hit-likes or a
  :class:`ChunkSet`). With it, ``doc_indexed``, ``best_chunk_share`` and ``best_chunk_rank``
  become measurable (buckets "document never indexed", "split by the chunker");
* ``shares_query_term(requests)``: ``(query number, passage row)`` pairs to booleans (bucket
  "vocabulary mismatch", lexical retrievers);
* ``tokens_before(requests)``: ``(passage row, character offset)`` pairs to the number of
  encoder tokens before that offset, with ``encoder_max_tokens`` (bucket "beyond the encoder's
  window", neural encoders).

Passage rows are rows of the chunk set given to ``index``, or of what ``passages()`` returned.

Two more optional members feed the stage's cost record (``StageReport.cost``), which the
harness measures itself around every kind:

* ``searches_each_query = True``: the retriever is given one query per ``search`` call and each
  call is timed (per-query latency); otherwise it gets the whole batch once and its latency is
  the batch's seconds attributed evenly;
* ``usage()``: what it counted, ``{"embedding_calls": n, "model_calls": n, "tokens": n}`` (any
  of them; a count it does not return is recorded as not measured).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    from groundkit.harness.run._ranking import ChunkTable, RankedRun

__all__ = [
    "LOAD_MODEL_PHASE",
    "ChunkHits",
    "ChunkSet",
    "Query",
    "QueryHits",
    "Retriever",
    "RunSettingsView",
    "RunView",
    "SharedWorkView",
    "StageContext",
    "StageResult",
    "UpstreamStage",
]

LOAD_MODEL_PHASE = "load model"
"""The progress phase of loading a stage's model (``<stage>: load model``): the harness times
it as the stage's model load, apart from its index and search time."""

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class Query:
    """One query of the batch a retriever searches.

    Attributes:
        query_id: The judgments' query id.
        text: The question.
    """

    query_id: str
    text: str


@dataclass(frozen=True, eq=False)
class ChunkSet:
    """Passages of the corpus, as columns: row ``i`` is ``texts[i]``, a span of a document.

    Attributes:
        doc_ids: The corpus's document ids (codes index into them).
        doc_codes: Document code of each passage.
        starts: Start offset of each passage in its document.
        ends: End offset (exclusive).
        texts: The passage texts.
    """

    doc_ids: tuple[str, ...]
    doc_codes: IntArray
    starts: IntArray
    ends: IntArray
    texts: Sequence[str]

    def __len__(self) -> int:
        return len(self.texts)

    def doc(self, row: int) -> str:
        """The document id of passage ``row``."""
        return self.doc_ids[int(self.doc_codes[row])]


@dataclass(frozen=True, eq=False)
class ChunkHits:
    """One query's hits as rows of the stage's :class:`ChunkSet`, best first.

    Attributes:
        rows: Passage rows.
        scores: The retriever's score of each (same length).
    """

    rows: IntArray
    scores: FloatArray

    def __post_init__(self) -> None:
        rows = np.asarray(self.rows, dtype=np.int64).reshape(-1)
        scores = np.asarray(self.scores, dtype=np.float64).reshape(-1)
        if rows.shape != scores.shape:
            raise ValueError(f"{rows.size} rows but {scores.size} scores")
        object.__setattr__(self, "rows", rows)
        object.__setattr__(self, "scores", scores)


QueryHits = ChunkHits | Sequence[Any] | None
"""One query's result: chunk rows, a list of hits (spans or text), or ``None`` (no answer)."""


@runtime_checkable
class Retriever(Protocol):
    """What a stage's retriever does: search a batch of queries (hooks: see the module)."""

    def search(self, queries: Sequence[Query], depth: int) -> Sequence[QueryHits]:
        """Hits of each query, best first, at most ``depth`` (more are cut).

        Args:
            queries: The answerable queries of the judgments, in their order.
            depth: Hits kept per query.

        Returns:
            One entry per query, in the same order.
        """
        ...


class RunSettingsView(Protocol):
    """The run's settings a kind may read (the run's config model has them all)."""

    @property
    def executor(self) -> str:
        """Where dense stages embed: ``local`` or ``ray``."""
        ...

    @property
    def ray_address(self) -> str | None:
        """The Ray cluster the ``ray`` executor joins."""
        ...


class SharedWorkView(Protocol):
    """Work later runs on the same corpus reuse (the arms of a sweep), as a kind uses it."""

    def count(self, what: str, amount: int = 1) -> None:
        """Add ``amount`` to the count of ``what`` (``embeddings``, ``bm25_indexes``...)."""
        ...

    def index(self, key: str, source: object, build: Callable[[], Any]) -> tuple[Any, bool]:
        """The index stored under ``key`` for ``source``, built once; and whether it was."""
        ...


class RunView(Protocol):
    """What a kind may read of the run it belongs to.

    The harness's run context satisfies it; the protocol is declared here so that the contract
    of a kind does not depend on the run that drives it.
    """

    @property
    def settings(self) -> RunSettingsView:
        """The run's settings."""
        ...

    @property
    def shared(self) -> SharedWorkView:
        """Work shared with later runs on the same corpus."""
        ...

    def chunk_set(self, table: ChunkTable, texts: Sequence[str] | None = None) -> ChunkSet:
        """A :class:`ChunkSet` view of a chunk table (texts cut from the corpus)."""
        ...


class StageResult(Protocol):
    """What an earlier stage produced, as a later stage reads it."""

    @property
    def run(self) -> RankedRun | None:
        """Its ranked hits in columns (``None``: it failed or returned none)."""
        ...

    @property
    def doc_ids(self) -> Sequence[str]:
        """Document ids, by the document numbers of its ranked hits."""
        ...


@dataclass(frozen=True, eq=False)
class UpstreamStage:
    """An earlier stage of the run, as a later stage (hybrid, rerank) reads it.

    Attributes:
        name: The stage name.
        error: Why it failed, when it did (it then has no hits).
        passages: The stage's passages when it has a chunk list (else ``None``).
    """

    name: str
    error: str | None
    passages: ChunkSet | None
    outcome: StageResult = field(repr=False)

    def hits(self, query: int) -> list[tuple[str, int, int, float]] | None:
        """Query number ``query``'s recorded hits, ``(doc, start, end, score)`` in rank order.

        ``None`` when the stage did not answer the query (or failed).
        """
        run = self.outcome.run
        if run is None or not run.returned[query]:
            return None
        rows = run.rows(query)
        doc_ids = self.outcome.doc_ids
        return [
            (doc_ids[d], s, e, c)
            for d, s, e, c in zip(
                run.docs[rows].tolist(),
                run.starts[rows].tolist(),
                run.ends[rows].tolist(),
                run.scores[rows].tolist(),
                strict=True,
            )
        ]


@dataclass(frozen=True, eq=False)
class StageContext:
    """What a retriever kind's ``build`` receives about the run and the stage.

    Attributes:
        stage: The stage name.
        corpus: Document id to text.
        depth: Hits kept per query.
        level: ``chunk`` or ``document``.
        cache_dir: The run's embedding cache folder (``None``: the user cache).
        known_queries: Every judged query id, mapped to whether it is answerable.
    """

    stage: str
    corpus: Mapping[str, str]
    depth: int
    level: str
    cache_dir: Path | None
    known_queries: Mapping[str, bool]
    run: RunView = field(repr=False)
    _progress: Callable[[str, int, int], None] = field(repr=False)
    _upstream: Callable[[str], UpstreamStage] = field(repr=False)

    def progress(self, phase: str, done: int, total: int) -> None:
        """Report progress of a phase of this stage (``index``, ``embed``, ``retrieve``...)."""
        self._progress(phase, done, total)

    def upstream(self, name: str) -> UpstreamStage:
        """An earlier stage's results.

        Raises:
            StageFailed: That stage failed (so this one cannot run).
        """
        return self._upstream(name)
