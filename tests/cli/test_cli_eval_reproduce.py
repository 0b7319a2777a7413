"""`grk eval reproduce REPORT` and `reproduce_report` (issue 14, item 4).

Done when: it passes on a fresh `grk eval demo` report; after a corpus file is edited it refuses
before rerunning (the fingerprint), and with --force it fails naming the query and metric.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

import groundkit.harness.run._reproduce as reproduce_module
from groundkit.cli import cli
from groundkit.harness import (
    EvalSettings,
    HarnessError,
    ReproductionRefusedError,
    evaluate,
    reproduce_report,
)
from groundkit.harness.run import MismatchKind
from groundkit.judgments import Corpus, dump_report, load_judgments, load_report
from groundkit.judgments.gold import judgments_fingerprint
from groundkit.judgments.report import check_report


def invoke(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


def snapshot(folder: Path) -> dict[Path, bytes]:
    return {p: p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def demo_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh `grk eval demo` report (BM25 stages only: no model needed)."""
    out = tmp_path_factory.mktemp("demo")
    result = invoke("eval", "demo", "--no-dense", "--out", str(out))
    assert result.exit_code == 0, result.output
    return out / "report.json"


@pytest.fixture
def workspace(tmp_path: Path) -> dict[str, Any]:
    """The demo handbook copied to a folder of its own, and a report run on the copy."""
    with resources.as_file(resources.files("groundkit.harness") / "demo_data") as demo:
        shutil.copytree(demo / "corpus", tmp_path / "corpus")
        shutil.copy(demo / "judgments.jsonl", tmp_path / "judgments.jsonl")
    report = tmp_path / "report.json"
    result = invoke(
        "eval",
        "run",
        "--corpus",
        str(tmp_path / "corpus"),
        "--judgments",
        str(tmp_path / "judgments.jsonl"),
        "--report",
        str(report),
        "--no-items",
    )
    assert result.exit_code == 0, result.output
    return {"root": tmp_path, "report": report, "corpus": tmp_path / "corpus"}


def edit_corpus(workspace: dict[str, Any]) -> tuple[str, Path]:
    """Add a paragraph repeating a query the baseline ranks first to a document not its gold.

    Returns the query id and the edited file: the new paragraph outranks the gold, so that
    query's mrr falls.
    """
    report = load_report(workspace["report"])
    texts = {q.query_id: q for q in report.queries}
    chosen = next(r for r in report.baseline.queries if r.scores["mrr"] == 1.0)
    info = texts[chosen.query_id]
    gold_docs = {g.doc for g in info.gold}
    target = next(
        p
        for p in sorted(workspace["corpus"].rglob("*.md"))
        if p.relative_to(workspace["corpus"]).as_posix() not in gold_docs
    )
    added = "\n\n" + " ".join([info.query] * 3) + "\n"
    target.write_text(target.read_text(encoding="utf-8") + added, encoding="utf-8")
    return chosen.query_id, target


def test_a_fresh_demo_report_reproduces(demo_report: Path) -> None:
    before = snapshot(demo_report.parent)
    result = invoke("eval", "reproduce", str(demo_report))
    assert result.exit_code == 0, result.output
    report = load_report(demo_report)
    scores = sum(len(q.scores) for s in report.stages for q in s.queries)
    assert scores > 1000
    assert (
        f"reproduced: all {scores} per-query scores of {len(report.stages)} stage(s) on "
        f"{report.answerable_count} queries are identical"
    ) in result.output
    assert snapshot(demo_report.parent) == before  # nothing written


def test_reproduce_from_python_returns_a_typed_result(demo_report: Path) -> None:
    outcome = reproduce_report(demo_report)
    assert outcome.identical
    assert outcome.differences == ()
    assert outcome.mismatches == ()
    recorded = load_report(demo_report)
    assert outcome.compared == sum(len(q.scores) for s in recorded.stages for q in s.queries)
    assert [s.name for s in outcome.report.stages] == [s.name for s in recorded.stages]
    assert outcome.report.run.config == recorded.run.config
    assert check_report(outcome.report.model_dump(mode="json")) == []


def test_an_edited_corpus_is_refused_before_rerunning(
    workspace: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    recorded = load_report(workspace["report"]).run.corpus_fingerprint
    edit_corpus(workspace)
    now = Corpus.load(workspace["corpus"]).fingerprint()
    result = invoke("eval", "reproduce", str(workspace["report"]))
    assert result.exit_code == 2, result.output
    assert result.output.strip() == (
        f"error: {workspace['report']}: not the inputs the report was run on: corpus "
        f"fingerprint {recorded[:12]}… recorded, {now[:12]}… now; pass --force to rerun anyway"
    )

    def no_rerun(*args: object, **kwargs: object) -> None:
        raise AssertionError("the rerun started")

    monkeypatch.setattr(reproduce_module, "evaluate_loaded", no_rerun)
    with pytest.raises(ReproductionRefusedError) as refused:
        reproduce_report(workspace["report"])
    [mismatch] = refused.value.mismatches
    assert mismatch.kind is MismatchKind.CORPUS
    assert (mismatch.recorded, mismatch.now) == (recorded, now)


def test_force_reruns_and_fails_naming_the_query_and_metric(workspace: dict[str, Any]) -> None:
    query_id, _ = edit_corpus(workspace)
    result = invoke("eval", "reproduce", str(workspace["report"]), "--force", "--json")
    assert result.exit_code == 1, result.output
    data = json.loads(result.output)
    assert data["identical"] is False
    assert [m["kind"] for m in data["mismatches"]] == ["corpus"]
    found = {(d["query_id"], d["stage"], d["metric"]): d for d in data["differences"]}
    mrr = found[(query_id, "bm25", "mrr")]
    assert mrr["recorded"] == 1.0
    assert mrr["now"] < 1.0
    assert (
        mrr["message"] == f"query {query_id!r}, stage 'bm25', mrr: 1.0 recorded, {mrr['now']!r} now"
    )

    shown = invoke("eval", "reproduce", str(workspace["report"]), "--force", "--show", "500")
    assert shown.exit_code == 1
    assert "warning: corpus fingerprint" in shown.output
    assert "not reproduced:" in shown.output
    assert query_id in shown.output
    assert "mrr" in shown.output

    # A tolerance as wide as the metrics' range counts every score as the same.
    wide = invoke("eval", "reproduce", str(workspace["report"]), "--force", "--tolerance", "1")
    assert wide.exit_code == 0, wide.output


def test_edited_judgments_are_refused_naming_the_judgments(workspace: dict[str, Any]) -> None:
    path = workspace["root"] / "judgments.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])
    first["query"] += " (reworded)"
    path.write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n", encoding="utf-8")
    now = judgments_fingerprint(load_judgments(path))
    result = invoke("eval", "reproduce", str(workspace["report"]))
    assert result.exit_code == 2
    assert "judgments fingerprint" in result.output
    assert f"{now[:12]}… now" in result.output
    assert "corpus fingerprint" not in result.output


def test_another_package_version_is_refused(workspace: dict[str, Any]) -> None:
    report = load_report(workspace["report"])
    versions = {**report.run.package_versions, "groundkit-cli": "0.0.0.dev1"}
    changed = report.model_copy(
        update={"run": report.run.model_copy(update={"package_versions": versions})}
    )
    dump_report(changed, workspace["report"])
    result = invoke("eval", "reproduce", str(workspace["report"]))
    assert result.exit_code == 2
    from groundkit.cli import __version__

    assert f"groundkit-cli 0.0.0.dev1 recorded, {__version__} now" in result.output
    forced = invoke("eval", "reproduce", str(workspace["report"]), "--force")
    assert forced.exit_code == 0, forced.output  # same numbers: only the version differs


def test_report_out_writes_through_the_output_guard(workspace: dict[str, Any]) -> None:
    root: Path = workspace["root"]
    again = root / "again.json"
    result = invoke("eval", "reproduce", str(workspace["report"]), "--report-out", str(again))
    assert result.exit_code == 0, result.output
    rerun = load_report(again)
    assert rerun.run.command is not None
    assert rerun.run.command[:3] == ["grk", "eval", "reproduce"]
    before = snapshot(root)
    over_input = invoke(
        "eval", "reproduce", str(workspace["report"]), "--report-out", str(workspace["report"])
    )
    assert over_input.exit_code == 2
    assert "REPORT" in over_input.output
    foreign = root / "notes.json"
    foreign.write_text('{"mine": true}\n', encoding="utf-8")
    before[foreign] = foreign.read_bytes()
    refused = invoke("eval", "reproduce", str(workspace["report"]), "--report-out", str(foreign))
    assert refused.exit_code == 2
    assert snapshot(root) == before


def test_a_report_made_in_python_needs_its_inputs_named(workspace: dict[str, Any]) -> None:
    root: Path = workspace["root"]
    corpus = Corpus.load(workspace["corpus"])
    judgments = load_judgments(root / "judgments.jsonl")
    report = evaluate(corpus, judgments, EvalSettings())
    dump_report(report, root / "python.json")
    missing = invoke("eval", "reproduce", str(root / "python.json"))
    assert missing.exit_code == 2
    assert "records no corpus path" in missing.output
    assert "--corpus" in missing.output
    with pytest.raises(HarnessError, match="records no judgments path"):
        reproduce_report(root / "python.json", corpus=workspace["corpus"])
    named = invoke(
        "eval",
        "reproduce",
        str(root / "python.json"),
        "--corpus",
        str(workspace["corpus"]),
        "--judgments",
        str(root / "judgments.jsonl"),
    )
    assert named.exit_code == 0, named.output


def test_a_moved_corpus_is_named_and_can_be_given(workspace: dict[str, Any]) -> None:
    root: Path = workspace["root"]
    moved = root / "moved"
    workspace["corpus"].rename(moved)
    result = invoke("eval", "reproduce", str(workspace["report"]))
    assert result.exit_code == 2
    assert f"the recorded corpus {str(workspace['corpus'])!r} is not there" in result.output
    assert "looked from the report's folder" in result.output
    assert "(--corpus, or corpus= in Python)" in result.output
    given = invoke("eval", "reproduce", str(workspace["report"]), "--corpus", str(moved))
    assert given.exit_code == 0, given.output  # same texts: the same fingerprint


def test_real_subprocess(workspace: dict[str, Any]) -> None:
    env = {**os.environ, "NO_COLOR": "1"}
    command = [sys.executable, "-m", "groundkit.cli", "eval", "reproduce", str(workspace["report"])]
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "reproduced: all" in done.stdout
    edit_corpus(workspace)
    refused = subprocess.run(command, capture_output=True, text=True, env=env, timeout=300)
    assert refused.returncode == 2
    assert refused.stdout == ""
    assert len(refused.stderr.strip().splitlines()) == 1
    assert "Traceback" not in refused.stderr


def test_a_report_is_read_from_any_folder_and_travels_with_its_inputs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Run from the project's folder with relative inputs, the report in a subfolder.
    project = tmp_path / "project"
    with resources.as_file(resources.files("groundkit.harness") / "demo_data") as demo:
        shutil.copytree(demo / "corpus", project / "corpus")
        shutil.copy(demo / "judgments.jsonl", project / "judgments.jsonl")
    (project / "runs").mkdir()
    monkeypatch.chdir(project)
    made = invoke(
        "eval", "run", "--corpus", "corpus", "--judgments", "judgments.jsonl",
        "--report", "runs/today.json", "--no-items", "--resamples", "200",
    )  # fmt: skip
    assert made.exit_code == 0, made.output
    run = load_report(project / "runs" / "today.json").run
    assert (run.corpus_source, run.corpus_from_report) == ("corpus", "../corpus")
    assert run.judgments_from_report == "../judgments.jsonl"
    # From another folder: the recorded "corpus" is not there, the report's path is.
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    report = project / "runs" / "today.json"
    again = invoke("eval", "reproduce", str(report))
    assert again.exit_code == 0, again.output
    assert "reproduced: all" in again.output
    page = invoke("eval", "report", str(report), "--html", str(elsewhere / "page.html"))
    assert page.exit_code == 0, page.output
    assert "is not on this machine" not in (elsewhere / "page.html").read_text()
    # The whole project copied elsewhere (the old one gone): still found, from the copy.
    copy = tmp_path / "copy"
    shutil.copytree(project, copy)
    shutil.rmtree(project)
    moved = invoke("eval", "reproduce", str(copy / "runs" / "today.json"))
    assert moved.exit_code == 0, moved.output
