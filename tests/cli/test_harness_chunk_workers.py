"""Chunking a large corpus on several processes: the table one process gives, whatever fails.

Every chunker kind is cut on 2, 3 and 7 processes (the size thresholds lowered so that a small
corpus is split) and compared span by span with :func:`groundkit.judgments.corpus.chunk_corpus`
(an independent path: one loop over the corpus with no parts and no arrays). Workers that die,
raise or are interrupted are attacked as in ``test_harness_bm25_workers``.
"""

from __future__ import annotations

import multiprocessing
import os
import random

import pytest
from tests.cli.test_harness_pipeline import DOCS, JUDGMENTS

from groundkit.harness import Bm25Retriever, EvalSettings, StageConfig, _chunking, _forked, evaluate
from groundkit.harness._chunking import cut_corpus
from groundkit.judgments import CharsChunker
from groundkit.judgments.corpus import (
    ChunkerConfig,
    DocumentChunker,
    ParagraphsChunker,
    SentencesChunker,
    TokensChunker,
    chunk_corpus,
)
from groundkit.judgments.corpus._tokenizer_base import WordsTokenizer

needs_fork = pytest.mark.skipif(not _forked.can_fork(), reason="no fork on this platform")

_WORDS = [
    "cats",
    "purr",
    "sleep",
    "dogs",
    "bark",
    "refund",
    "window",
    "thirty",
    "days",
    "servers",
    "patched",
    "advisory",
]


def corpus(count: int, seed: int = 5) -> list[str]:
    """Documents of sentences, blank-line paragraphs and markdown headings, some empty."""
    rng = random.Random(seed)
    texts = []
    for _ in range(count):
        blocks = []
        for _ in range(rng.randint(0, 4)):
            sentences = (
                " ".join(rng.choices(_WORDS, k=rng.randint(1, 14))).capitalize() + "."
                for _ in range(rng.randint(1, 5))
            )
            heading = "## Part\n" if rng.random() < 0.3 else ""
            blocks.append(heading + " ".join(sentences))
        texts.append("\n\n".join(blocks))
    return texts


CONFIGS: list[ChunkerConfig] = [
    DocumentChunker(),
    CharsChunker(size=40, overlap=7),
    TokensChunker(size=6, overlap=2),
    SentencesChunker(max_sentences=2, max_chars=90),
    SentencesChunker(max_sentences=None, max_tokens=9),
    ParagraphsChunker(max_chars=120),
    ParagraphsChunker(max_tokens=15),
]


@pytest.fixture
def split_small(monkeypatch: pytest.MonkeyPatch) -> None:
    """Split even a corpus of a few hundred characters, one document a part if need be."""
    lowered = {
        kind: (None if floor is None else 0) for kind, floor in _chunking.CHUNK_MIN_CHARS.items()
    }
    monkeypatch.setattr(_chunking, "CHUNK_MIN_CHARS", lowered)
    monkeypatch.setattr(_chunking, "CHUNK_PART_CHARS", 1)


def _spans(texts: list[str], config: ChunkerConfig) -> list[tuple[int, int, int]]:
    """The reference: ``chunk_corpus`` over the texts keyed by their code."""
    chunks = chunk_corpus({str(code): text for code, text in enumerate(texts)}, config)
    return [(int(c.doc), c.start, c.end) for c in chunks]


def _table(texts: list[str], config: ChunkerConfig, workers: int) -> tuple[list[object], int]:
    table, used = cut_corpus(texts, config, None, workers)
    return list(
        zip(table.docs.tolist(), table.starts.tolist(), table.ends.tolist(), strict=True)
    ), used


@needs_fork
@pytest.mark.usefixtures("split_small")
@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: repr(c))
@pytest.mark.parametrize("workers", [2, 3, 7])
def test_parallel_chunks_are_the_serial_chunks(config: ChunkerConfig, workers: int) -> None:
    texts = corpus(60)
    reference = _spans(texts, config)
    assert len(reference) > 60 or config.kind == "document"
    table, used = _table(texts, config, workers)
    assert table == reference
    assert used == (1 if config.kind == "document" else workers)
    assert _table(texts, config, 1) == (reference, 1)


def test_a_small_corpus_is_cut_here() -> None:
    texts = corpus(60)
    config = SentencesChunker()
    assert _table(texts, config, 8) == (_spans(texts, config), 1)


def test_an_empty_corpus_has_no_chunks() -> None:
    table, used = cut_corpus([], CharsChunker(), None, 4)
    assert (table.docs.size, table.starts.size, table.ends.size, used) == (0, 0, 0, 1)


class _ModelTokenizer(WordsTokenizer):
    """A tokenizer that is not ``words``: it may keep threads a forked child cannot use."""

    @property
    def name(self) -> str:
        return "model"


@needs_fork
@pytest.mark.usefixtures("split_small")
def test_a_model_tokenizer_is_used_in_this_process_only() -> None:
    texts = corpus(40)
    table, used = cut_corpus(texts, TokensChunker(size=6), _ModelTokenizer(), 4)
    assert used == 1
    assert table.docs.size == len(_spans(texts, TokensChunker(size=6)))
    # A chunker that counts no tokens does not use it, and is split.
    assert cut_corpus(texts, CharsChunker(size=50, overlap=5), _ModelTokenizer(), 4)[1] == 4


@needs_fork
@pytest.mark.usefixtures("split_small")
def test_a_worker_that_dies_is_replaced_by_the_parent(monkeypatch: pytest.MonkeyPatch) -> None:
    parent = os.getpid()
    cut = _chunking.chunk_text  # type: ignore[attr-defined]

    def dying(*args: object) -> object:
        if os.getpid() != parent:
            os._exit(3)
        return cut(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(_chunking, "chunk_text", dying)
    texts = corpus(50)
    config = SentencesChunker(max_sentences=2)
    assert _table(texts, config, 3) == (_spans(texts, config), 3)


@needs_fork
@pytest.mark.usefixtures("split_small")
def test_an_error_in_a_worker_is_quiet_and_raised_here(
    monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    # The worker ends quietly; the parent cuts its part, meets the same error and raises it.
    def failing(text: str, *args: object) -> object:
        if "boom" in text:
            raise ValueError("boom")
        return [(0, len(text))]

    monkeypatch.setattr(_chunking, "chunk_text", failing)
    texts = [*corpus(30), "boom"]
    with pytest.raises(ValueError, match="boom"):
        cut_corpus(texts, CharsChunker(), None, 3)
    assert "Traceback" not in capfd.readouterr().err
    assert not [child for child in multiprocessing.active_children() if child.is_alive()]


@needs_fork
@pytest.mark.usefixtures("split_small")
def test_an_error_here_stops_every_worker(monkeypatch: pytest.MonkeyPatch) -> None:
    parent = os.getpid()
    cut = _chunking.chunk_text  # type: ignore[attr-defined]

    def slow_workers_failing_parent(*args: object) -> object:
        if os.getpid() != parent:
            import time

            time.sleep(3600)
        if args[0] == texts[0]:
            raise KeyboardInterrupt
        return cut(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(_chunking, "chunk_text", slow_workers_failing_parent)
    texts = corpus(30)
    with pytest.raises(KeyboardInterrupt):
        cut_corpus(texts, CharsChunker(), None, 3)
    assert not [child for child in multiprocessing.active_children() if child.is_alive()]


def _settings(*retrievers: Bm25Retriever) -> EvalSettings:
    return EvalSettings.model_validate(
        {
            "stages": [
                StageConfig(name="bm25" if n == 0 else f"bm25-{n}", retriever=r)
                for n, r in enumerate(retrievers)
            ],
            "chunker": SentencesChunker(max_sentences=1),
            "bootstrap": {"resamples": 200, "seed": 3},
        }
    )


@needs_fork
def test_the_report_records_the_chunking_processes(
    split_small: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_chunking, "available_cores", lambda: 2)
    settings = _settings(Bm25Retriever(workers=1), Bm25Retriever(k1=1.2, workers=1))
    report = evaluate(DOCS, JUDGMENTS, settings)
    first, second = report.stage("bm25"), report.stage("bm25-1")
    assert first.cost is not None
    assert second.cost is not None
    # The first stage cut the chunks on two processes; the second reused them.
    assert (first.cost.workers, second.cost.workers) == (2, 1)
    monkeypatch.setattr(_chunking, "available_cores", lambda: 1)
    serial = evaluate(DOCS, JUDGMENTS, settings)
    assert serial.stage("bm25").cost.workers == 1  # type: ignore[union-attr]
    for name in ("bm25", "bm25-1"):
        hits = [q.hits for q in report.stage(name).queries]
        assert hits == [q.hits for q in serial.stage(name).queries]
