"""`grk eval run` with stages of any kind: callables on the command line, plugins, bad stages."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from groundkit.cli import cli
from groundkit.cli._defaults import DEFAULT_RESAMPLES
from groundkit.judgments import load_report
from groundkit.judgments.report import BootstrapSettings

FACTS = {
    "leave.md": "Parental leave lasts sixteen weeks at full pay for every new parent.",
    "expenses.md": "Receipts for travel expenses must be filed within thirty days of the trip.",
    "laptops.md": "Every employee receives a laptop that is replaced after four years.",
}
RETRIEVERS = textwrap.dedent(
    """
    DOCS = {
        "leave.md": "Parental leave lasts sixteen weeks at full pay for every new parent.",
        "expenses.md": "Receipts for travel expenses must be filed within thirty days of the trip.",
        "laptops.md": "Every employee receives a laptop that is replaced after four years.",
    }

    def exact(query):
        # The document whose first word the query names, as LangChain-like text hits.
        for doc, text in DOCS.items():
            if doc.split(".")[0] in query.lower():
                return [{"doc": doc, "text": text, "score": 1.0}]
        return []

    def unknown_doc(query):
        return [{"doc": "wiki/other.md", "start": 0, "end": 5}]

    def rewritten(query):
        return [{"doc": "leave.md", "text": "Leave is four months, paid in full."}]

    def explode(query):
        helper_that_fails(query)

    def helper_that_fails(query):
        raise ValueError("the index was built for another corpus")

    class Retriever:
        def search(self, queries, depth):
            return [exact(q.text) for q in queries]

    def make_retriever():
        return Retriever()

    NOT_A_RETRIEVER = {"k": 10}
    """
)


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    lines = []
    for name, fact in FACTS.items():
        (corpus / name).write_text(fact + "\n", encoding="utf-8")
        topic = name.split(".")[0]
        lines.append(
            {
                "query_id": f"q-{topic}",
                "query": f"What about {topic}?",
                "gold": [{"doc": name, "quote": fact}],
            }
        )
    (tmp_path / "judgments.jsonl").write_text(
        "".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8"
    )
    (tmp_path / "my_rag_mod.py").write_text(RETRIEVERS, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run(*args: str, debug: bool = False) -> Result:
    base = ["--corpus", "corpus", "--judgments", "judgments.jsonl", "--resamples", "50"]
    return CliRunner().invoke(cli, [*(["--debug"] if debug else []), "eval", "run", *base, *args])


def one_line(result: Result) -> str:
    lines = [line for line in result.output.strip().splitlines() if line.startswith("error: ")]
    assert len(lines) == 1, result.output
    return lines[0]


@pytest.mark.parametrize(
    "target",
    [
        "my_rag_mod:exact",
        "my_rag_mod:Retriever",
        "my_rag_mod:make_retriever",
        "my_rag_mod.py:exact",
    ],
)
def test_callable_stage_on_the_command_line(workspace: Path, target: str) -> None:
    result = run("--stage", f"mine=callable:{target}")
    assert result.exit_code == 0, result.output
    report = load_report(workspace / "groundkit-report.json")
    mine = report.stage("mine")
    assert mine.kind == "callable"
    assert mine.aggregates["recall@1"].mean == 1.0
    assert mine.unlocated == []


@pytest.mark.parametrize(
    ("spec", "fragment"),
    [
        ("x=callable:no_such_module_xyz:f", "stage 'x': cannot import 'no_such_module_xyz'"),
        ("x=callable:my_rag_mod:missing", "stage 'x': 'my_rag_mod' has no function 'missing'"),
        ("x=callable:my_rag_mod:NOT_A_RETRIEVER", "is a dict, not a retriever"),
        ("x=callable:no-colon", "target 'no-colon' must look like 'package.module:name'"),
        ("x=rerank:bm25", "rerank needs a stage and a model"),
    ],
)
def test_bad_targets_exit_two_in_one_line(workspace: Path, spec: str, fragment: str) -> None:
    result = run("--stage", spec)
    assert result.exit_code == 2, result.output
    assert fragment in one_line(result)
    assert "Traceback" not in result.output
    assert not (workspace / "groundkit-report.json").exists()


@pytest.mark.parametrize(
    ("target", "fragment"),
    [
        ("unknown_doc", "stage 'mine': query 'q-leave': hit 1: unknown document 'wiki/other.md'"),
        (
            "rewritten",
            "stage 'mine': query 'q-leave': hit 1: text not found in document 'leave.md'",
        ),
        (
            "explode",
            "stage 'mine': the callable raised ValueError: the index was built for another",
        ),
    ],
)
def test_failing_stage_exits_one_with_the_report_written(
    workspace: Path, target: str, fragment: str
) -> None:
    result = run(
        "--stage", f"mine=callable:my_rag_mod:{target}", "--stage", "ok=callable:my_rag_mod:exact"
    )
    assert result.exit_code == 1, result.output
    line = one_line(result)
    assert fragment in line, line
    assert "the report was written to" in line
    report = load_report(workspace / "groundkit-report.json")
    assert report.stage("ok").aggregates["recall@1"].mean == 1.0  # the other stages are scored
    assert report.baseline.aggregates
    if target == "rewritten":
        unlocated = report.stage("mine").unlocated
        assert [u.query_id for u in unlocated] == ["q-leave", "q-expenses", "q-laptops"]
        assert report.stage("mine").error is None  # scored, with the gaps listed
        assert "could not be located" in result.output  # the note on the console


def test_debug_shows_the_users_own_traceback(workspace: Path) -> None:
    plain = run("--stage", "mine=callable:my_rag_mod:explode")
    assert plain.exit_code == 1
    assert "Traceback" not in plain.output
    result = run("--stage", "mine=callable:my_rag_mod:explode", debug=True)
    assert result.exit_code == 1
    assert "Traceback" in result.output
    assert "helper_that_fails" in result.output  # the user's frame, not only ours
    assert "my_rag_mod.py" in result.output
    failing_import = run("--stage", "x=callable:no_such_module_xyz:f", debug=True)
    assert failing_import.exit_code == 2
    assert "ModuleNotFoundError" in failing_import.output


def test_stray_print_on_a_command_stdout_fails_the_stage(workspace: Path) -> None:
    script = workspace / "noisy.py"
    script.write_text(
        "import json, sys\nprint('loading index...')\nfor line in sys.stdin:\n"
        "    q = json.loads(line)\n"
        "    print(json.dumps({'query_id': q['query_id'], 'hits': []}))\n",
        encoding="utf-8",
    )
    result = run("--command", f"noisy={sys.executable} {script}")
    assert result.exit_code == 1, result.output
    line = one_line(result)
    assert "stage 'noisy': line 1 of its output: invalid JSON" in line
    assert "print diagnostics to standard error" in line
    assert load_report(workspace / "groundkit-report.json").stage("noisy").error is not None


def test_a_config_error_lists_every_problem(workspace: Path) -> None:
    config = workspace / "groundkit.toml"
    config.write_text(
        'corpus = "corpus"\njudgments = "judgments.jsonl"\ndepht = 3\nlevel = "page"\n'
        '[[stages]]\nname = "wide"\nretriever = { kind = "bm25", k = 1.2 }\n'
        '[[stages]]\nname = "x"\nretriever = { kind = "sparse" }\n',
        encoding="utf-8",
    )
    result = CliRunner().invoke(
        cli, ["eval", "run", "--config", str(config), "--stage", "d=dense:", "--min-overlap", "0.5"]
    )
    assert result.exit_code == 2, result.output
    line = one_line(result)
    for fragment in (
        f"{config}: ",
        "depht: unknown key",
        "level: Input should be 'chunk' or 'document'",
        "stages[0].retriever.k: unknown key",
        "stages[1].retriever: unknown retriever 'sparse'",
    ):
        assert fragment in line, line
    assert "more problem" not in line


def test_flag_problems_name_the_flag(workspace: Path) -> None:
    config = workspace / "run.toml"
    config.write_text('corpus = "corpus"\njudgments = "judgments.jsonl"\ndepht = 3\n', "utf-8")
    result = CliRunner().invoke(
        cli, ["eval", "run", "--config", str(config), "--chunker", "chars:0", "--k", "7"]
    )
    assert result.exit_code == 2
    line = one_line(result)
    assert f"{config}: depht: unknown key" in line
    assert "--chunker chars:0: chunker 'chars:0': size must be positive" in line
    fused = run("--stage", "rr=rerank:nothing:some-model")
    assert "stage 'rr' reads 'nothing', which is not a stage defined before it" in one_line(fused)


def test_help_defaults_come_from_the_models() -> None:
    result = CliRunner().invoke(cli, ["eval", "run", "--help"])
    assert result.exit_code == 0
    text = " ".join(result.output.split())
    assert f"exactly [default: {BootstrapSettings().resamples}]" in text  # --resamples
    assert "[default: chars:1000:200; document at --level document]" in text
    assert "[default: 600]" in text
    assert BootstrapSettings().resamples == DEFAULT_RESAMPLES
    demo = CliRunner().invoke(cli, ["eval", "demo", "--help"])
    assert f"Bootstrap resamples. [default: {DEFAULT_RESAMPLES};" in " ".join(demo.output.split())


def test_an_entry_point_plugin_runs_in_a_real_subprocess(
    workspace: Path, plugin_site: Path
) -> None:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(plugin_site), os.environ.get("PYTHONPATH", "")]),
    }
    command = [
        sys.executable, "-m", "groundkit.cli", "eval", "run", "--corpus", "corpus",
        "--judgments", "judgments.jsonl", "--resamples", "50", "--no-progress",
        "--stage", "words=throwaway-overlap@paragraphs",
    ]  # fmt: skip
    done = subprocess.run(
        command, cwd=workspace, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stdout + done.stderr
    report = load_report(workspace / "groundkit-report.json")
    words = report.stage("words")
    assert words.kind == "throwaway-overlap"
    assert words.chunker_record == {"kind": "paragraphs", "max_chars": 1000}
    assert words.queries[0].hits
    assert report.run.package_versions.get("throwaway-overlap") == "0.1.0"


@pytest.mark.dense
@pytest.mark.slow
def test_demo_rerank_measures_the_diagnosed_rerank_fix(tmp_path: Path) -> None:
    from groundkit.cli.run import _run as _eval_run

    if not _eval_run.dense_ready():
        pytest.skip("the dense extra is not installed")
    out = tmp_path / "demo"
    runner = CliRunner()
    demo = runner.invoke(cli, ["eval", "demo", "--out", str(out), "--resamples", "300"])
    assert demo.exit_code == 0, demo.output
    report = load_report(out / "report.json")
    assert [s.name for s in report.stages][-3:] == ["rerank", "dense", "hybrid"]
    rerank = report.stage("rerank")
    assert rerank.retriever["stage"] == "bm25"
    verdicts = {c.metric: c.verdict for c in rerank.comparisons}
    assert verdicts["recall@10"] == "better"
    record = tmp_path / "record.jsonl"
    diagnosis = runner.invoke(
        cli,
        ["eval", "diagnose", str(out / "report.json"), "--stage", "bm25", "--k", "10",
         "--track-record", str(record)],
    )  # fmt: skip
    assert diagnosis.exit_code == 0, diagnosis.output
    # The knob diagnosis names for its rerank fix is a kind that exists.
    from groundkit.diagnosis import FIX_KNOBS
    from groundkit.harness.retrievers import retriever_kind

    assert 'kind = "rerank"' in FIX_KNOBS["rerank"]
    assert retriever_kind("rerank").name == "rerank"
    items = str(out / "items.jsonl")
    compare = runner.invoke(
        cli,
        ["eval", "compare", items, items, "--stage-a", "bm25", "--stage-b", "rerank",
         "--track-record", str(record), "--applied", "rerank"],
    )  # fmt: skip
    assert compare.exit_code == 0, compare.output
    assert "track record: rerank (named): B measured +" in " ".join(compare.output.split())
    lines = [json.loads(line) for line in record.read_text(encoding="utf-8").splitlines()]
    measured = [line for line in lines if line.get("fix") == "rerank" and "measured" in line]
    assert len(measured) == 1
    assert measured[0]["measured"] > 0
