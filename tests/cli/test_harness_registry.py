"""The retriever registry and protocol: plugins by entry point, hooks, and dispatch by kind only."""

from __future__ import annotations

import ast
import textwrap
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pytest
from pydantic import ConfigDict

from groundkit.harness import (
    BASELINE_STAGE,
    Bm25Retriever,
    CallableRetriever,
    EvalSettings,
    HarnessError,
    RetrieverKind,
    RetrieverSettings,
    StageConfig,
    StageFailed,
    evaluate,
    register_retriever,
    run_config_from_dict,
)
from groundkit.harness.retrievers import (
    ChunkHits,
    Query,
    _registry,
    retriever_kind,
    retriever_kinds,
)
from groundkit.harness.run import stage_config_hash
from groundkit.judgments import CharsChunker, GoldQuote, Judgment
from groundkit.judgments.report import check_report

DOCS = {
    "a.txt": "Alpha particles are helium nuclei. They are stopped by a sheet of paper.",
    "b.txt": "Beta particles are electrons. A thin aluminium foil stops them.",
    "c.txt": "Gamma rays are photons. Thick lead shielding reduces them.",
}
JUDGMENTS = [
    Judgment(
        query_id="q-alpha",
        query="What stops alpha particles?",
        gold=(GoldQuote(doc="a.txt", quote="stopped by a sheet of paper"),),
    ),
    Judgment(
        query_id="q-gamma",
        query="What reduces gamma rays?",
        gold=(GoldQuote(doc="c.txt", quote="Thick lead shielding reduces them."),),
    ),
]
HARNESS = Path(__file__).resolve().parents[2] / "packages/cli/src/groundkit/harness"


def _settings(*stages: StageConfig) -> EvalSettings:
    return EvalSettings(
        stages=list(stages), chunker=CharsChunker(size=40, overlap=0), bootstrap={"resamples": 50}
    )


# --- a kind registered in-process ---------------------------------------------------------------


class EchoSettings(RetrieverSettings):
    kind: Literal["test-echo"] = "test-echo"
    doc: str = "a.txt"


class EchoRetriever:
    """Returns the whole named document for every query, with evidence hooks."""

    encoder_max_tokens = 7

    def __init__(self, settings: EchoSettings, context: Any) -> None:
        self.settings = settings
        self.corpus = context.corpus

    def passages(self) -> list[tuple[str, int, int]]:
        return [(doc, 0, len(text)) for doc, text in self.corpus.items()]

    def search(self, queries: Sequence[Query], depth: int) -> list[list[tuple[str, int, int]]]:
        return [[(self.settings.doc, 0, len(self.corpus[self.settings.doc]))] for _ in queries]

    def tokens_before(self, requests: Sequence[tuple[int, int]]) -> list[int]:
        return [offset // 4 for _, offset in requests]

    def shares_query_term(self, requests: Sequence[tuple[int, int]]) -> list[bool]:
        return [row == 0 for _, row in requests]


@pytest.fixture
def echo_kind() -> Iterator[RetrieverKind]:
    kind = register_retriever(RetrieverKind("test-echo", EchoSettings, EchoRetriever))
    yield kind
    with _registry._LOCK:
        _registry._KINDS.pop("test-echo", None)


def test_builtin_kinds_are_registered_like_plugins() -> None:
    kinds = retriever_kinds()
    assert {"bm25", "dense", "hybrid", "rerank", "command", "callable", "predictions"} <= set(kinds)
    assert kinds["bm25"].chunked
    assert kinds["dense"].chunked
    assert not any(kinds[k].chunked for k in ("hybrid", "rerank", "command", "callable"))
    with pytest.raises(HarnessError, match=r"unknown retriever 'nope' \(kinds: bm25, "):
        retriever_kind("nope")


def test_a_registered_kind_is_validated_run_and_traced(echo_kind: RetrieverKind) -> None:
    stage = StageConfig.model_validate({"name": "echo", "retriever": {"kind": "test-echo"}})
    assert isinstance(stage.retriever, EchoSettings)
    with pytest.raises(ValueError, match="Extra inputs are not permitted"):
        StageConfig.model_validate({"name": "e", "retriever": {"kind": "test-echo", "dcs": 1}})
    with pytest.raises(ValueError, match="brings its own spans"):
        StageConfig.model_validate(
            {"name": "e", "retriever": {"kind": "test-echo"}, "chunker": "document"}
        )
    assert stage_config_hash(stage) == stage_config_hash(
        StageConfig(name="echo", retriever=EchoSettings())
    )
    report = evaluate(DOCS, JUDGMENTS, _settings(stage))
    assert check_report(report.model_dump(mode="json")) == []
    echo = report.stage("echo")
    assert echo.kind == "test-echo"
    assert echo.retriever == {"doc": "a.txt"}
    assert echo.chunk_count == 3  # its passages() are its chunk list
    assert echo.encoder_max_tokens == 7
    alpha = echo.queries[0]
    assert alpha.scores["recall@1"] == 1.0
    trace = alpha.evidence[0]
    # Buckets that need a chunk list and the hooks are measurable for an external stage.
    start = DOCS["a.txt"].index("stopped by")
    assert trace.doc_indexed is True
    assert trace.best_chunk_share == 1.0
    assert trace.best_chunk_rank == 1
    assert trace.tokens_before_quote == start // 4
    assert trace.shares_query_term is True
    gamma = echo.queries[1].evidence[0]
    assert gamma.best_chunk_rank is None  # its chunk (c.txt) was not retrieved
    assert gamma.shares_query_term is False


def test_kinds_that_could_not_be_used_safely_are_refused(echo_kind: RetrieverKind) -> None:
    class Loose(RetrieverSettings):
        model_config = ConfigDict(frozen=True, extra="allow")
        kind: Literal["loose"] = "loose"

    class Misnamed(RetrieverSettings):
        kind: Literal["other"] = "other"

    with pytest.raises(HarnessError, match="frozen and extra='forbid'"):
        register_retriever(RetrieverKind("loose", Loose, EchoRetriever))
    with pytest.raises(HarnessError, match="must default to 'misnamed'"):
        register_retriever(RetrieverKind("misnamed", Misnamed, EchoRetriever))
    with pytest.raises(HarnessError, match="lower-case"):
        register_retriever(RetrieverKind("Bad Name", EchoSettings, EchoRetriever))
    with pytest.raises(HarnessError, match="already registered"):
        register_retriever(RetrieverKind("test-echo", EchoSettings, EchoRetriever))
    with pytest.raises(HarnessError, match="'bm25' is already registered"):
        register_retriever(RetrieverKind("bm25", Bm25Retriever, EchoRetriever))


def test_entry_point_plugin_is_used_by_kind(plugin_site: Path) -> None:
    # Found by importlib.metadata in the .dist-info on sys.path, never imported before.
    config = run_config_from_dict(
        {
            "corpus": "unused",
            "judgments": "unused",
            "chunker": "chars:40",
            "stages": [{"name": "words", "retriever": {"kind": "throwaway-overlap"}}],
        }
    )
    stage = config.stage("words")
    assert type(stage.retriever).__module__ == "throwaway_overlap"
    assert stage.chunker == CharsChunker(size=40, overlap=0)  # a chunked kind gets the chunker
    kind = retriever_kind("throwaway-overlap")
    assert "throwaway-overlap 0.1.0" in kind.origin
    report = evaluate(DOCS, JUDGMENTS, config.settings)
    words = report.stage("words")
    assert words.error is None
    assert words.queries[0].hits[0].doc == "a.txt"
    # The plugin's hook makes "vocabulary mismatch" measurable: "stops" is not "stopped".
    assert words.queries[0].evidence[0].shares_query_term is False
    assert words.queries[1].evidence[0].shares_query_term is True
    with pytest.raises(ValueError, match=r"stages\[0\]\.retriever\.min_lenght: unknown key"):
        run_config_from_dict(
            {
                "corpus": "c",
                "judgments": "j",
                "stages": [
                    {"name": "w", "retriever": {"kind": "throwaway-overlap", "min_lenght": 2}}
                ],
            }
        )


def test_a_broken_plugin_is_named_only_when_its_kind_is_asked_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = tmp_path / "site"
    info = site / "broken_plugin-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: broken-plugin\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[groundkit.retrievers]\nbroken = no_such_pkg:KIND\n")
    monkeypatch.syspath_prepend(str(site))
    assert retriever_kind("bm25").name == "bm25"  # other kinds are not disturbed
    with pytest.raises(HarnessError, match=r"'broken' cannot be loaded \(entry point broken"):
        retriever_kind("broken")


def test_evaluate_has_no_dispatch_on_retriever_kinds() -> None:
    # The pipeline and the stage runner name no built-in kind: a new kind needs no change there.
    kinds = {"bm25", "dense", "hybrid", "rerank", "command", "callable", "predictions"}
    settings_classes = {"Bm25Retriever", "DenseRetriever", "HybridRetriever", "RerankRetriever",
                        "CommandRetriever", "PredictionsRetriever"}  # fmt: skip
    for name in ("run/_pipeline.py", "run/_stage_run.py"):
        tree = ast.parse((HARNESS / name).read_text(encoding="utf-8"))
        strings = {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant)}
        names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
        names |= {a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names}
        assert not (strings & kinds) - {BASELINE_STAGE}, name
        assert not names & settings_classes, name


# --- the callable kind: live objects, factories, hostile targets ------------------------------


def test_live_function_and_stages_argument() -> None:
    def mine(query: str) -> list[tuple[str, int, int]]:
        return [("c.txt", 0, 23)] if "gamma" in query else [("a.txt", 35, 72)]

    report = evaluate(DOCS, JUDGMENTS, stages={"mine": mine})
    assert [s.name for s in report.stages] == ["bm25", "mine"]
    mine_stage = report.stage("mine")
    assert mine_stage.kind == "callable"
    assert mine_stage.retriever["target"].endswith(
        ":test_live_function_and_stages_argument.<locals>.mine"
    )
    assert mine_stage.queries[0].scores["recall@1"] == 1.0


def test_factory_class_and_object_targets(tmp_path: Path) -> None:
    module = tmp_path / "targets.py"
    module.write_text(
        textwrap.dedent(
            """
            class Searcher:
                def __init__(self):
                    self.calls = 0
                def search(self, queries, depth):
                    self.calls += 1
                    return [[{"doc": "b.txt", "text": "aluminium foil"}] for _ in queries]

            def make():
                return Searcher()

            def make_function(prefix="x"):
                return lambda query: [("a.txt", 0, 5)]

            INSTANCE = Searcher()
            NUMBER = 42

            def broken_factory():
                raise ConnectionError("vector store unreachable")
            """
        ),
        encoding="utf-8",
    )
    for attr in ("Searcher", "make", "INSTANCE", "make_function"):
        stage = StageConfig(name="t", retriever=CallableRetriever(target=f"{module}:{attr}"))
        result = evaluate(DOCS, JUDGMENTS, _settings(stage)).stage("t")
        assert result.error is None, attr
        assert result.queries[0].hits, attr
    with pytest.raises(
        HarnessError, match=r"stage 't': '.*targets\.py:NUMBER' is a int, not a retriever"
    ):
        evaluate(DOCS, JUDGMENTS, _settings(
            StageConfig(name="t", retriever=CallableRetriever(target=f"{module}:NUMBER"))
        ))  # fmt: skip
    failed = evaluate(DOCS, JUDGMENTS, _settings(
        StageConfig(name="t", retriever=CallableRetriever(target=f"{module}:broken_factory"))
    )).stage("t")  # fmt: skip
    assert failed.error is not None
    assert "ConnectionError: vector store unreachable" in failed.error


def test_a_target_that_does_not_import_keeps_the_users_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad_module.py"
    bad.write_text("import no_such_dependency_xyz\n", encoding="utf-8")
    stage = StageConfig(name="t", retriever=CallableRetriever(target=f"{bad}:search"))
    with pytest.raises(
        HarnessError, match=r"stage 't': cannot import .*ModuleNotFoundError"
    ) as raised:
        evaluate(DOCS, JUDGMENTS, _settings(stage))
    assert isinstance(raised.value.__cause__, ModuleNotFoundError)  # for --debug
    assert "\n" not in str(raised.value)


def test_retriever_raising_or_returning_garbage_fails_only_its_stage() -> None:
    class Raising:
        def search(self, queries: Sequence[Query], depth: int) -> list[Any]:
            raise KeyError("index shard 3")

    class Short:
        def search(self, queries: Sequence[Query], depth: int) -> list[Any]:
            return [[]]

    class BadRows:
        def search(self, queries: Sequence[Query], depth: int) -> list[Any]:
            return [ChunkHits(np.array([0]), np.array([1.0])) for _ in queries]

    report = evaluate(
        DOCS, JUDGMENTS, stages={"raising": Raising(), "short": Short(), "rows": BadRows()}
    )
    raising = report.stage("raising")
    assert "KeyError: 'index shard 3'" in (raising.error or "")
    assert (
        report.stage("short").error == "stage 'short': search() returned 1 hit lists for 2 queries"
    )
    assert "ChunkHits need the chunk set" in (report.stage("rows").error or "")
    assert report.baseline.error is None
    assert report.baseline.queries
    failures: list[StageFailed] = []
    evaluate(DOCS, JUDGMENTS, stages={"raising": Raising()}, failures=failures)
    assert [f.stage for f in failures] == ["raising"]
    assert isinstance(failures[0].__cause__, KeyError)


@pytest.mark.parametrize(
    ("code", "where"),
    [
        ("def search(query):\n    raise SystemExit(0)\n", "the callable called sys.exit(0)"),
        (
            "class S:\n    def search(self, queries, depth):\n        import sys; sys.exit(4)\n"
            "def make():\n    return S()\n",
            "the retriever called sys.exit(4)",
        ),
        ("def make():\n    raise SystemExit('bye')\n", "called sys.exit('bye')"),
    ],
)
def test_sys_exit_in_user_code_fails_the_stage_not_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: str, where: str
) -> None:
    # sys.exit inside a retriever ended the whole run with exit 0 and no report; it is the
    # stage's failure like any exception: the other stages are scored and reported.
    module = f"exiting_{abs(hash(code))}"  # one module per case: imports are cached
    (tmp_path / f"{module}.py").write_text(code, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    target = f"{module}:search" if "def search(query)" in code else f"{module}:make"
    stage = StageConfig(name="mine", retriever=CallableRetriever(target=target))
    report = evaluate(DOCS, JUDGMENTS, EvalSettings(stages=[stage], bootstrap={"resamples": 50}))
    failed = report.stage("mine")
    assert failed.error is not None
    assert where in failed.error
    assert report.stage("bm25").error is None
    assert report.stage("bm25").queries
