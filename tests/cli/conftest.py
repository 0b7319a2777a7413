"""Fixtures of the CLI and harness tests: a throwaway retriever plugin found by entry point."""

from __future__ import annotations

import importlib
import importlib.util
import json
import shutil
import sys
import textwrap
from collections.abc import Callable, Iterator
from importlib import resources
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from click.testing import CliRunner, Result
from tests.cli._chromium import Browser, chromium
from tests.integration.hostile.conftest import FAST, make_dataset

from groundkit.cli import cli as cli_main
from groundkit.judgments import load_report

PLUGIN_MODULE = textwrap.dedent(
    '''
    """A throwaway groundkit retriever plugin: word overlap over the harness's chunks."""

    from typing import Literal

    import numpy as np
    from pydantic import Field

    from groundkit.harness import RetrieverKind, RetrieverSettings
    from groundkit.harness.retrievers import ChunkHits


    class OverlapSettings(RetrieverSettings):
        kind: Literal["throwaway-overlap"] = "throwaway-overlap"
        min_length: int = Field(default=3, gt=0)


    def _words(text, min_length):
        return {w.strip(".,?!;:").lower() for w in text.split() if len(w) >= min_length}


    class OverlapRetriever:
        def __init__(self, settings, context):
            self.settings = settings
            self.chunks = None
            self.queries = []

        def index(self, chunks):
            self.chunks = [_words(t, self.settings.min_length) for t in chunks.texts]

        def search(self, queries, depth):
            self.queries = [_words(q.text, self.settings.min_length) for q in queries]
            out = []
            for words in self.queries:
                scores = np.array([len(words & c) for c in self.chunks], dtype=np.float64)
                order = np.lexsort((np.arange(scores.size), -scores))
                keep = order[scores[order] > 0][:depth]
                out.append(ChunkHits(keep, scores[keep]))
            return out

        def shares_query_term(self, requests):
            return [bool(self.queries[q] & self.chunks[row]) for q, row in requests]


    KIND = RetrieverKind(
        name="throwaway-overlap",
        settings=OverlapSettings,
        build=OverlapRetriever,
        chunked=True,
        summary="word overlap (a test plugin)",
    )
    '''
)

ENTRY_POINTS = "[groundkit.retrievers]\nthrowaway-overlap = throwaway_overlap:KIND\n"
METADATA = "Metadata-Version: 2.1\nName: throwaway-overlap\nVersion: 0.1.0\n"


def write_plugin(site: Path) -> Path:
    """A package and its ``.dist-info`` (with ``entry_points.txt``) in ``site``."""
    site.mkdir(parents=True, exist_ok=True)
    (site / "throwaway_overlap.py").write_text(PLUGIN_MODULE, encoding="utf-8")
    info = site / "throwaway_overlap-0.1.0.dist-info"
    info.mkdir(exist_ok=True)
    (info / "METADATA").write_text(METADATA, encoding="utf-8")
    (info / "entry_points.txt").write_text(ENTRY_POINTS, encoding="utf-8")
    (info / "RECORD").write_text("", encoding="utf-8")
    return site


def report_without_hits(report: Path, folder: Path) -> Path:
    """A copy of ``report`` in ``folder`` (``empty.json``) whose stages keep no hit at all."""
    data = json.loads(report.read_text(encoding="utf-8"))
    for stage in data["stages"]:
        stage.pop("hit_columns", None)  # a 2.0 file keeps its hits here
        for query in stage["queries"]:
            query["hits"] = []
            query["evidence"] = [
                {**e, "first_rank": None, "best_chunk_rank": None} for e in query["evidence"]
            ]
    empty = folder / "empty.json"
    empty.write_text(json.dumps(data), encoding="utf-8")
    return empty


def forget_kind(name: str) -> None:
    """Remove a kind registered by a test (the registry is process-wide)."""
    from groundkit.harness.retrievers import _registry

    with _registry._LOCK:
        _registry._KINDS.pop(name, None)


@pytest.fixture
def plugin_site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The throwaway plugin installed on ``sys.path`` (found by importlib.metadata)."""
    site = write_plugin(tmp_path / "site")
    monkeypatch.syspath_prepend(str(site))
    importlib.invalidate_caches()
    yield site
    forget_kind("throwaway-overlap")
    sys.modules.pop("throwaway_overlap", None)


# --- framework adapters: the demo handbook, and the predictions-file reference -------------------

HitsFor = Callable[[str], list[dict[str, Any]]]


@pytest.fixture
def demo_workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The packaged demo handbook (``handbook/``, ``judgments.jsonl``) in the working folder."""
    with resources.as_file(resources.files("groundkit.harness") / "demo_data") as demo:
        shutil.copytree(demo / "corpus", tmp_path / "handbook")
        shutil.copy(demo / "judgments.jsonl", tmp_path / "judgments.jsonl")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    names = set(sys.modules)
    yield tmp_path
    for name in set(sys.modules) - names:  # the workspace's own modules (rag_*.py)
        if name.startswith("rag_"):
            sys.modules.pop(name, None)


class AdapterBench:
    """Helpers of the adapter tests, in the demo workspace (see :func:`adapter_bench`)."""

    def __init__(self, workspace: Path) -> None:
        self.workspace = workspace
        self.judgments = [
            json.loads(line)
            for line in (workspace / "judgments.jsonl").read_text("utf-8").splitlines()
        ]

    def load(self, name: str, source: str) -> ModuleType:
        """Write ``name.py`` into the workspace and import it (the test's own reference)."""
        path = self.workspace / f"{name}.py"
        path.write_text(source, encoding="utf-8")
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec is not None
        assert spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        return module

    def span(self, source: str, text: str, start: int | None, score: float) -> dict[str, Any]:
        """A framework hit as a span of the handbook, from the framework's own offset.

        The reference does not locate text: it trusts the offset the framework recorded and
        checks that the text is there, so the predictions file is an independent account of
        the hits.
        """
        root = (self.workspace / "handbook").resolve()
        path = Path(source)
        doc = (path if path.is_absolute() else self.workspace / path).resolve().relative_to(root)
        body = (root / doc).read_text(encoding="utf-8")
        assert start is not None, f"no recorded offset for a hit of {doc}"
        assert body[start : start + len(text)] == text, f"offset {start} of {doc} not verbatim"
        return {"doc": doc.as_posix(), "start": start, "end": start + len(text), "score": score}

    def run(self, config: str, *flags: str, debug: bool = False) -> Result:
        """``grk eval run --config run.toml FLAGS`` on the handbook (50 resamples)."""
        (self.workspace / "run.toml").write_text(
            'corpus = "handbook"\njudgments = "judgments.jsonl"\n' + config, encoding="utf-8"
        )
        argv = ["eval", "run", "--config", "run.toml", *flags, "--resamples", "50"]
        return CliRunner().invoke(
            cli_main, [*(["--debug"] if debug else []), *argv, "--no-progress"]
        )

    def refusal(self, config: str) -> str:
        """The one line a run of ``config`` refused with (exit 2 asserted, and one line)."""
        result = self.run(config)
        assert result.exit_code == 2, result.output
        lines = [line for line in result.output.splitlines() if line.strip()]
        assert len(lines) == 1, result.output
        return lines[0]

    def compare(self, config: str, stages: dict[str, HitsFor]) -> tuple[int, int]:
        """Run ``config`` with each stage's hits also given as a predictions file; compare.

        For every stage, what ``hits_for(query)`` returns for each judged query is written to
        ``ref-<stage>.jsonl`` and run as a ``--predictions`` stage beside it; every query of
        the stage must have the same hits and the same score on every metric as its
        predictions stage.

        Returns:
            ``(queries, per-query scores)`` compared in all.
        """
        flags: list[str] = []
        for stage, hits_for in stages.items():
            path = self.workspace / f"ref-{stage}.jsonl"
            lines = [
                {"query_id": j["query_id"], "hits": hits_for(j["query"])} for j in self.judgments
            ]
            path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
            flags += ["--predictions", f"ref-{stage}={path.name}"]
        result = self.run(config, *flags)
        assert result.exit_code == 0, result.output
        report = load_report(self.workspace / "groundkit-report.json")
        queries = scores = 0
        for stage in stages:
            mine, ref = report.stage(stage), report.stage(f"ref-{stage}")
            assert mine.error is None
            assert mine.unlocated == []
            assert [q.query_id for q in mine.queries] == [q.query_id for q in ref.queries]
            for got, want in zip(mine.queries, ref.queries, strict=True):
                assert [(h.doc, h.start, h.end) for h in got.hits] == [
                    (h.doc, h.start, h.end) for h in want.hits
                ], got.query_id
                assert got.scores == want.scores, got.query_id
                queries += 1
                scores += len(got.scores)
            # Real retrieval, not empty lists scoring zero on both sides.
            assert mine.aggregates["recall@10"].mean > 0.3, (stage, mine.aggregates["recall@10"])
        return queries, scores


@pytest.fixture
def adapter_bench(demo_workspace: Path) -> AdapterBench:
    """Helpers of the adapter tests in a workspace holding the demo handbook."""
    return AdapterBench(demo_workspace)


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browser]:
    """Headless Chromium for the page tests (skipped when it is not installed)."""
    binary = chromium()
    if binary is None:
        pytest.skip("headless Chromium is not installed (apt-get install chromium)")
    driver = Browser(binary, tmp_path_factory.mktemp("chromium-profile"))
    try:
        yield driver
    finally:
        driver.close()


@pytest.fixture(scope="module")
def local_ray() -> Iterator[Any]:
    """A local Ray instance for one test module (``ray.init(num_cpus=2)``: seconds to start)."""
    import ray

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        yield ray
    finally:
        ray.shutdown()


@pytest.fixture(scope="module")
def two_stage_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A report of the BM25 baseline and whole documents (``whole``) on a small dataset."""
    root = tmp_path_factory.mktemp("two-stage")
    data = make_dataset(root / "data")
    report = root / "run.json"
    result = CliRunner().invoke(
        cli_main,
        [
            "eval", "run", "--corpus", str(data.corpus), "--judgments", str(data.judgments),
            "--report", str(report), "--no-items", "--stage", "whole=bm25@document", *FAST,
        ],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    return report
