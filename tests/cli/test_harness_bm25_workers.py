"""The BM25 stage on all cores: the same index and hits with any number of workers.

A large corpus is analysed in contiguous parts by forked worker processes and merged so that
the flat token array, the offsets and the vocabulary (terms numbered in order of first
appearance) are bit-identical to one process's; many queries are scored in blocks on threads,
the hits identical in order and value to the serial loop. ``workers`` (``auto``: the cores
available) is left out of the settings when not given, and the report records the workers a
stage used (``StageCost.workers``).
"""

from __future__ import annotations

import itertools
import json
import multiprocessing.context
import os
import random
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from pydantic import ValidationError
from tests.cli.test_harness_pipeline import DOCS, JUDGMENTS

from groundkit.cli import cli
from groundkit.harness import Bm25Retriever, EvalSettings, StageConfig, _forked, evaluate
from groundkit.harness._cores import available_cores
from groundkit.harness.retrievers import _bm25, _bm25_workers
from groundkit.harness.retrievers._bm25 import Bm25Index, LexicalAnalyzer
from groundkit.harness.retrievers._bm25_workers import (
    AnalysedPart,
    analyse_in_parts,
    merge_parts,
    plan_parts,
    resolve_workers,
)
from groundkit.harness.run._config import stage_config_hash
from groundkit.judgments import CharsChunker, dump_report, load_report
from groundkit.judgments.report import StageCost

CONFIGS = [
    Bm25Retriever(),
    Bm25Retriever(stopwords=None, stemmer=None),
    Bm25Retriever(stopwords="lucene", stemmer="porter"),
]
_WORDS = [
    "the", "and", "of", "a", "is", "Running", "runners", "RAN", "runs", "café", "Café",
    "naïve", "coöperation", "déjà", "ÉLAN", "数据", "检索", "系统", "x2", "2024", "the_end",
    "fox", "foxes", "jumped", "jumping", "lazy", "dogs", "I", "—", "!", "über", "straße",
]  # fmt: skip


def corpus(count: int = 400, seed: int = 7) -> list[str]:
    """Texts with stopwords, stemmable words, unicode, empty texts and texts of stopwords."""
    rng = random.Random(seed)
    vocabulary = _WORDS + [f"term{i}" for i in range(300)]
    texts = []
    for number in range(count):
        if number % 37 == 0:
            texts.append("")
        elif number % 41 == 0:
            texts.append("the and of a is")  # stopwords only: no token with "en"
        else:
            size = rng.randint(1, 60)
            texts.append(" ".join(rng.choice(vocabulary) for _ in range(size)))
    return texts


@pytest.fixture
def split_small(monkeypatch: pytest.MonkeyPatch) -> None:
    """Split any corpus between processes, however small (the parallel path runs)."""
    monkeypatch.setattr(_bm25_workers, "PARALLEL_MIN_CHARS", 0)
    monkeypatch.setattr(_bm25_workers, "PART_MIN_CHARS", 1)


needs_fork = pytest.mark.skipif(not _forked.can_fork(), reason="no fork here")


@needs_fork
@pytest.mark.usefixtures("split_small")
@pytest.mark.parametrize("workers", [2, 3, 7])
@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: f"{c.stopwords}-{c.stemmer}")
def test_parallel_analysis_is_bit_identical(
    config: Bm25Retriever, workers: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_bm25, "_BATCH_TEXTS", 16)  # several batches in each part
    texts = corpus()
    analyzer = LexicalAnalyzer(config)
    one, one_vocabulary, one_used = analyzer.analyse(texts, 1)
    many, many_vocabulary, used = analyzer.analyse(texts, workers)
    assert (one_used, used) == (1, workers)
    assert many.flat.dtype == one.flat.dtype == np.int32
    assert many.offsets.dtype == one.offsets.dtype == np.int64
    assert many.flat.tobytes() == one.flat.tobytes()
    assert many.offsets.tobytes() == one.offsets.tobytes()
    assert list(many_vocabulary.items()) == list(one_vocabulary.items())  # same numbering
    assert analyzer.tokenize_ids(texts, workers)[0].flat.tobytes() == one.flat.tobytes()


@needs_fork
@pytest.mark.usefixtures("split_small")
def test_a_term_first_met_in_a_later_part_keeps_its_first_place() -> None:
    # "zeta" is met first in the last part, "alpha" in the first and again in the last: the
    # merged numbering is the order of first appearance over all texts, as one pass gives.
    texts = ["alpha beta", "gamma", "delta gamma", "zeta alpha", "beta zeta"]
    analyzer = LexicalAnalyzer(Bm25Retriever(stopwords=None, stemmer=None))
    columns, vocabulary, used = analyzer.analyse(texts, 3)
    assert used == 3
    assert list(vocabulary) == ["alpha", "beta", "gamma", "delta", "zeta"]
    assert columns.flat.tolist() == [0, 1, 2, 3, 2, 4, 0, 1, 4]
    assert columns.offsets.tolist() == [0, 2, 3, 5, 7, 9]


@needs_fork
@pytest.mark.usefixtures("split_small")
def test_parts_without_terms_merge_as_one_pass() -> None:
    # The first part holds only stopwords: the first part with terms numbers them from 0.
    texts = ["the a of", "", "alpha beta", "the", "beta gamma alpha", "delta"]
    analyzer = LexicalAnalyzer(Bm25Retriever(stemmer=None))
    columns, vocabulary, used = analyzer.analyse(texts, 6)
    one, serial, _ = analyzer.analyse(texts, 1)
    assert used > 1
    assert vocabulary == serial == {"alpha": 0, "beta": 1, "gamma": 2, "delta": 3}
    assert columns.flat.dtype == one.flat.dtype == np.int32
    assert columns.flat.tobytes() == one.flat.tobytes()
    assert columns.offsets.tolist() == one.offsets.tolist() == [0, 0, 0, 2, 2, 5, 6]


def _part(texts: Sequence[str]) -> AnalysedPart:
    return LexicalAnalyzer(Bm25Retriever())._part(texts)


@needs_fork
def test_a_worker_that_dies_is_replaced_by_the_parent() -> None:
    parent = os.getpid()

    def dying(texts: Sequence[str]) -> AnalysedPart:
        if os.getpid() != parent:
            os._exit(3)  # the worker dies before it sends its part
        return _part(texts)

    texts = corpus(120)
    parts = [(0, 40), (40, 80), (80, 120)]
    merged = merge_parts(analyse_in_parts(dying, texts, parts))
    reference = merge_parts([_part(texts)])
    assert merged[0].tobytes() == reference[0].tobytes()
    assert merged[1].tobytes() == reference[1].tobytes()
    assert merged[2] == reference[2]


@needs_fork
def test_a_worker_that_hangs_is_killed_and_replaced_by_the_parent(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A worker forked while another thread held a lock it needs can block forever: the run
    # waits for it only until the deadline, then kills it and analyses its part itself.
    import time

    monkeypatch.setattr(_forked, "GRACE_SECONDS", 0.5)
    parent = os.getpid()

    def hanging(texts: Sequence[str]) -> AnalysedPart:
        if os.getpid() != parent:
            time.sleep(3600)
        return _part(texts)

    texts = corpus(90)
    began = time.monotonic()
    merged = merge_parts(analyse_in_parts(hanging, texts, [(0, 30), (30, 60), (60, 90)]))
    assert time.monotonic() - began < 30
    reference = merge_parts([_part(texts)])
    assert merged[0].tobytes() == reference[0].tobytes()
    assert merged[1].tobytes() == reference[1].tobytes()
    assert merged[2] == reference[2]
    assert not [child for child in multiprocessing.active_children() if child.is_alive()]


@needs_fork
@pytest.mark.parametrize("error", [OSError, AssertionError])
def test_a_worker_that_cannot_start_is_replaced_by_the_parent(
    error: type[Exception], monkeypatch: pytest.MonkeyPatch
) -> None:
    # No process left (OSError), or a daemonic process may have no child (AssertionError).
    def refuse(self: object) -> None:
        raise error("no more processes")

    monkeypatch.setattr(multiprocessing.context.ForkProcess, "start", refuse)
    texts = corpus(90)
    merged = merge_parts(analyse_in_parts(_part, texts, [(0, 30), (30, 60), (60, 90)]))
    assert merged[0].tobytes() == merge_parts([_part(texts)])[0].tobytes()


def test_parts_are_contiguous_balanced_and_only_for_large_corpora(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    lengths = np.asarray([100] * 10 + [1000] + [0] * 5 + [100] * 10, dtype=np.int64)
    parts = plan_parts(lengths, 3, min_chars=0, part_chars=1)
    assert parts[0][0] == 0
    assert parts[-1][1] == lengths.size
    assert all(a[1] == b[0] for a, b in itertools.pairwise(parts))
    assert 1 < len(parts) <= 3
    # Below the threshold, with one worker, or parts smaller than their least: one part.
    assert plan_parts(lengths, 3, min_chars=int(lengths.sum()) + 1, part_chars=1) == [(0, 26)]
    assert plan_parts(lengths, 1, min_chars=0, part_chars=1) == [(0, 26)]
    assert plan_parts(lengths, 8, min_chars=0, part_chars=1600) == [(0, 26)]
    assert len(plan_parts(lengths, 8, min_chars=0, part_chars=1500)) == 2
    assert plan_parts(np.zeros(0, np.int64), 4, min_chars=0, part_chars=1) == [(0, 0)]
    monkeypatch.setattr(_forked, "can_fork", lambda: False)
    assert plan_parts(lengths, 3, min_chars=0, part_chars=1) == [(0, 26)]


def test_workers_auto_are_the_available_cores() -> None:
    assert resolve_workers(None) == resolve_workers("auto") == available_cores() >= 1
    assert resolve_workers(1) == 1
    assert resolve_workers(5) == 5


@pytest.mark.usefixtures("split_small")
@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: f"{c.stopwords}-{c.stemmer}")
def test_search_on_threads_is_the_serial_search(
    config: Bm25Retriever, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_bm25_workers, "SEARCH_MIN_WORK", 0)
    monkeypatch.setattr(_bm25_workers, "_SEARCH_BLOCK", 3)  # many blocks
    texts = corpus(300)
    rng = random.Random(3)
    queries = [" ".join(rng.sample([*_WORDS, "term5", "term77", "zzz"], 3)) for _ in range(40)]
    queries += ["", "the and", "zzz unknown"]
    serial = Bm25Index(texts, config.model_copy(update={"workers": 1}))
    threaded = Bm25Index(texts, config.model_copy(update={"workers": 3}))
    seen: list[tuple[int, int]] = []
    one = serial.search(queries, 10)
    many = threaded.search(queries, 10, progress=lambda _p, done, total: seen.append((done, total)))
    assert serial.workers == 1
    assert threaded.workers == 3
    assert len(one) == len(many) == len(queries)
    for (ids_a, scores_a), (ids_b, scores_b) in zip(one, many, strict=True):
        assert ids_a.dtype == ids_b.dtype == np.int64
        assert ids_a.tobytes() == ids_b.tobytes()
        assert scores_a.tobytes() == scores_b.tobytes()
    assert seen[-1] == (len(queries), len(queries))
    assert [done for done, _ in seen] == sorted(done for done, _ in seen)


def test_few_queries_are_scored_on_this_thread() -> None:
    assert _bm25_workers.search_threads(4, 10, 1000) == 1
    assert _bm25_workers.search_threads(1, 10**6, 10**6) == 1
    assert _bm25_workers.search_threads(4, 10_000, 100_000) == 4


def test_workers_left_out_of_the_settings_when_not_given() -> None:
    settings = Bm25Retriever()
    assert settings.workers is None
    dumped = settings.model_dump(mode="json")
    assert dumped == {
        "kind": "bm25",
        "k1": 1.5,
        "b": 0.75,
        "method": "lucene",
        "stopwords": "en",
        "stemmer": "english",
    }
    assert "workers" not in settings.model_dump_json()
    stage = StageConfig(name="bm25", retriever=settings, chunker=CharsChunker())
    before = StageConfig.model_validate(stage.model_dump(mode="json"))
    assert stage_config_hash(stage) == stage_config_hash(before)
    # Given, it is recorded (and read back); "auto" too.
    for value in (2, "auto"):
        given = Bm25Retriever(workers=value)
        assert given.model_dump(mode="json")["workers"] == value
        assert Bm25Retriever.model_validate(given.model_dump(mode="json")) == given
    assert stage_config_hash(stage) != stage_config_hash(
        StageConfig(name="bm25", retriever=Bm25Retriever(workers=2), chunker=CharsChunker())
    )


@pytest.mark.parametrize("value", [0, -1, "two", "Auto", True, 1.5, [2]])
def test_bad_workers_are_refused(value: object) -> None:
    with pytest.raises(ValidationError, match="whole number of cores >= 1"):
        Bm25Retriever(workers=value)


@pytest.mark.parametrize("value", ["0", "-2", '"many"', "true", "2.0"])
def test_bad_workers_in_a_config_file_exit_2_naming_the_stage_and_key(
    tmp_path: Path, value: str
) -> None:
    (tmp_path / "corpus").mkdir()
    (tmp_path / "corpus" / "a.txt").write_text("Laptops must use full-disk encryption.\n")
    judgment = {"query_id": "q", "query": "laptop", "gold": [{"doc": "a.txt", "quote": "Laptops"}]}
    (tmp_path / "j.jsonl").write_text(json.dumps(judgment) + "\n")
    config = tmp_path / "c.toml"
    config.write_text(
        'corpus = "corpus"\njudgments = "j.jsonl"\n[[stages]]\nname = "bm25"\n'
        f'retriever = {{kind = "bm25", workers = {value}}}\n',
        encoding="utf-8",
    )
    result = CliRunner().invoke(
        cli, ["eval", "run", "--config", str(config), "--report", str(tmp_path / "r.json")]
    )
    assert result.exit_code == 2, result.output
    assert len(result.output.strip().splitlines()) == 1
    assert "stages[0].retriever.workers: give 'auto' or a whole number" in result.output
    assert not (tmp_path / "r.json").exists()


def _settings(*retrievers: Bm25Retriever) -> EvalSettings:
    stages = [
        StageConfig(name="bm25" if n == 0 else f"bm25-{n}", retriever=r)
        for n, r in enumerate(retrievers)
    ]
    return EvalSettings.model_validate(
        {
            "stages": stages,
            "chunker": CharsChunker(size=80, overlap=10),
            "bootstrap": {"resamples": 200, "seed": 3},
        }
    )


@needs_fork
def test_the_report_records_the_workers(
    tmp_path: Path, split_small: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_bm25_workers, "SEARCH_MIN_WORK", 10**12)  # analysis only
    report = evaluate(
        DOCS, JUDGMENTS, _settings(Bm25Retriever(workers=1), Bm25Retriever(k1=1.2, workers=2))
    )
    one, two = report.stage("bm25"), report.stage("bm25-1")
    assert one.cost is not None
    assert two.cost is not None
    assert (one.cost.workers, two.cost.workers) == (1, 2)
    dump_report(report, tmp_path / "r.json")
    assert load_report(tmp_path / "r.json").stage("bm25-1").cost.workers == 2  # type: ignore[union-attr]
    # Hits do not depend on the workers.
    again = evaluate(DOCS, JUDGMENTS, _settings(Bm25Retriever(workers=1), Bm25Retriever(k1=1.2)))
    assert [q.hits for q in again.stage("bm25-1").queries] == [q.hits for q in two.queries]


def test_a_small_corpus_records_one_worker() -> None:
    report = evaluate(DOCS, JUDGMENTS, _settings(Bm25Retriever()))
    cost = report.stage("bm25").cost
    assert cost is not None
    assert cost.workers == 1


def test_stage_cost_workers_is_at_least_one() -> None:
    assert StageCost().workers is None
    assert StageCost(workers=4).workers == 4
    with pytest.raises(ValidationError):
        StageCost(workers=0)
