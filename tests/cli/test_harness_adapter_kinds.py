"""The framework kinds and the FAISS option without their libraries: settings, missing extras."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from groundkit.cli import cli
from groundkit.harness import (
    DenseRetriever,
    HaystackRetriever,
    LangChainRetriever,
    LlamaIndexRetriever,
    StageConfig,
)
from groundkit.harness.retrievers import retriever_kinds
from groundkit.harness.run import stage_config_hash

FRAMEWORK_MODULES = {
    "langchain": ("langchain_core", "langchain_core.retrievers", "langchain_core.vectorstores"),
    "llamaindex": (
        "llama_index",
        "llama_index.core",
        "llama_index.core.base",
        "llama_index.core.base.base_retriever",
        "llama_index.core.indices",
        "llama_index.core.indices.base",
    ),
    "haystack": (
        "haystack",
        "haystack.core",
        "haystack.core.pipeline",
        "haystack.core.pipeline.base",
    ),
}
PACKAGES = {
    "langchain": "langchain-core",
    "llamaindex": "llama-index-core",
    "haystack": "haystack-ai",
}


@pytest.fixture
def tiny(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "corpus").mkdir()
    (tmp_path / "corpus" / "leave.md").write_text("Parental leave lasts sixteen weeks.\n", "utf-8")
    line = {
        "query_id": "q1",
        "query": "How long is leave?",
        "gold": [{"doc": "leave.md", "quote": "sixteen weeks"}],
    }
    (tmp_path / "judgments.jsonl").write_text(json.dumps(line) + "\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _run(*args: str) -> Result:
    base = ["eval", "run", "--corpus", "corpus", "--judgments", "judgments.jsonl"]
    return CliRunner().invoke(cli, [*base, "--resamples", "20", "--no-progress", *args])


def _error(result: Result) -> str:
    lines = [line for line in result.output.splitlines() if line.startswith("error: ")]
    assert len(lines) == 1, result.output
    return lines[0]


def test_the_framework_kinds_are_registered_and_bring_their_own_spans() -> None:
    kinds = retriever_kinds()
    for name, package in PACKAGES.items():
        assert not kinds[name].chunked
        assert kinds[name].packages == (package,)
    stage = StageConfig.model_validate(
        {"name": "lc", "retriever": {"kind": "langchain", "target": "my_rag:retriever"}}
    )
    assert stage.retriever == LangChainRetriever(target="my_rag:retriever")
    assert stage_config_hash(stage) == stage_config_hash(
        StageConfig(name="lc", retriever=LangChainRetriever(target="my_rag:retriever"))
    )
    assert HaystackRetriever(target="a:b").query_inputs == ["query", "text"]
    assert LlamaIndexRetriever(target="a:b").similarity_top_k is None


@pytest.mark.parametrize(
    ("retriever", "fragment"),
    [
        ({"kind": "langchain", "target": "no-colon"}, "must look like 'package.module:name'"),
        ({"kind": "langchain", "target": "a:b", "k": 0}, "greater than 0"),
        ({"kind": "llamaindex", "target": "a:b", "top_k": 3}, "top_k: unknown key"),
        ({"kind": "haystack", "target": "a:b", "query_inputs": []}, "at least 1 item"),
        ({"kind": "dense", "nlist": 8}, "nlist applies to index = 'faiss-ivf' only"),
        ({"kind": "dense", "index": "faiss-ivf", "nlist": 4, "nprobe": 8}, "cannot exceed nlist"),
        ({"kind": "dense", "index": "hnsw"}, "'exact', 'faiss-flat' or 'faiss-ivf'"),
    ],
)
def test_settings_problems_are_configuration_errors(
    tiny: Path, retriever: dict[str, object], fragment: str
) -> None:
    inline = ", ".join(f"{k} = {json.dumps(v)}" for k, v in retriever.items())
    (tiny / "run.toml").write_text(
        f'corpus = "corpus"\njudgments = "judgments.jsonl"\n[[stages]]\nname = "x"\n'
        f"retriever = {{ {inline} }}\n",
        encoding="utf-8",
    )
    result = CliRunner().invoke(cli, ["eval", "run", "--config", "run.toml"])
    assert result.exit_code == 2, result.output
    assert fragment in _error(result)


def test_a_framework_kind_takes_no_chunker(tiny: Path) -> None:
    result = _run("--stage", "x=haystack:my_rag:p@paragraphs")
    assert result.exit_code == 2
    assert "a haystack stage brings its own spans; drop @CHUNKER" in _error(result)


@pytest.mark.parametrize("kind", sorted(FRAMEWORK_MODULES))
def test_a_missing_extra_is_one_line_naming_it(
    tiny: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    for module in FRAMEWORK_MODULES[kind]:
        monkeypatch.setitem(sys.modules, module, None)
    result = _run("--stage", f"x={kind}:not_imported_before_the_check:obj")
    assert result.exit_code == 2, result.output
    assert _error(result) == (
        f"error: stage 'x': the {kind} kind needs {PACKAGES[kind]}: "
        f"pip install 'groundkit-cli[{kind}]'"
    )
    assert not (tiny / "groundkit-report.json").exists()


@pytest.mark.parametrize("index", ["faiss-flat", "faiss-ivf"])
def test_a_missing_faiss_is_one_line_before_anything_is_embedded(
    tiny: Path, monkeypatch: pytest.MonkeyPatch, index: str
) -> None:
    monkeypatch.setitem(sys.modules, "faiss", None)
    (tiny / "run.toml").write_text(
        'corpus = "corpus"\njudgments = "judgments.jsonl"\n[[stages]]\nname = "d"\n'
        f'retriever = {{ kind = "dense", index = "{index}", model = "no/such-model" }}\n',
        encoding="utf-8",
    )
    result = CliRunner().invoke(cli, ["eval", "run", "--config", "run.toml"])
    assert result.exit_code == 2, result.output
    # The model is never loaded: the extra is checked when the stage is built.
    assert _error(result) == (
        f"error: stage 'd': index = '{index}' needs faiss-cpu: pip install 'groundkit-cli[faiss]'"
    )


def test_groundkit_never_imports_a_framework_it_is_not_asked_for() -> None:
    code = textwrap.dedent(
        """
        import sys
        from groundkit.cli import cli
        from groundkit.harness import StageConfig, evaluate
        for kind in ("langchain", "llamaindex", "haystack"):
            StageConfig.model_validate({"name": "x", "retriever": {"kind": kind, "target": "a:b"}})
        dense = {"kind": "dense", "index": "faiss-ivf"}
        StageConfig.model_validate({"name": "d", "retriever": dense})
        frameworks = ("langchain_core", "llama_index", "haystack", "faiss")
        print([name for name in frameworks if name in sys.modules])
        """
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_dense_settings_default_to_the_exact_search() -> None:
    settings = DenseRetriever()
    assert settings.index == "exact"
    assert (settings.nlist, settings.nprobe) == (None, None)
