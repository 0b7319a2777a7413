"""`grk eval adjudicate` on the demo: recorded judge, strict kept, cache, kill -9, bad input."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from tests.cli.conftest import report_without_hits

from groundkit.cli import cli
from groundkit.judgments import SCHEMA_VERSION, Corpus, load_report
from groundkit.judgments.report import hit_touches_gold

STAGE = "bm25-chars200"


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("demo")
    result = CliRunner().invoke(
        cli, ["eval", "demo", "--no-dense", "--resamples", "200", "--out", str(out / "d")]
    )
    assert result.exit_code == 0, result.output
    return out / "d" / "report.json"


def _record_answers(report_path: Path, path: Path, k: int) -> int:
    """Grade 3 (by majority 3, 3, 1) for each query's first unjudged hit, 0 for the others."""
    report = load_report(report_path)
    corpus = Corpus.load(report.run.corpus_source or "")
    queries = {q.query_id: q for q in report.queries if q.answerable}
    rows = []
    for result in report.stage(STAGE).queries:
        query = queries[result.query_id]
        unjudged = [h for h in result.hits[:k] if not hit_touches_gold(h, query)]
        for i, hit in enumerate(unjudged):
            rows.append(
                {
                    "query": query.query,
                    "passage": corpus[hit.doc][hit.start : hit.end],
                    "grades": [3, 3, 1] if i == 0 else [0, 1, 0],
                    "reason": "recorded",
                }
            )
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return len(rows)


def _adjudicate(report: Path, tmp: Path, *extra: str) -> tuple[int, str]:
    result = CliRunner().invoke(
        cli,
        [
            "eval", "adjudicate", str(report), "--stage", STAGE, "--k", "3",
            "--out", str(tmp / "adj.json"), "--list", str(tmp / "list.jsonl"), *extra,
        ],
    )  # fmt: skip
    return result.exit_code, result.output


def test_recorded_judge_raises_recall_and_strict_is_unchanged(demo: Path, tmp_path: Path) -> None:
    answers = tmp_path / "answers.jsonl"
    count = _record_answers(demo, answers, 3)
    code, output = _adjudicate(demo, tmp_path, "--judge", f"recorded:{answers}")
    assert code == 0, output
    assert f"judged {count} unjudged hits" in output
    assert f"calls {3 * count} (cached 0, failed 0)" in output
    before, after = load_report(demo), load_report(tmp_path / "adj.json")
    assert after.schema_version == SCHEMA_VERSION
    for old, new in zip(before.stages, after.stages, strict=True):
        assert new.aggregates == old.aggregates  # strict never changes
        assert new.comparisons == old.comparisons
        assert [r.scores for r in new.queries] == [r.scores for r in old.queries]
    stage = after.stage(STAGE)
    assert stage.adjudicated is not None
    strict, adjudicated = stage.aggregates["recall@10"].mean, stage.adjudicated.aggregates
    assert adjudicated["recall@10"].mean > strict
    assert stage.judged["judged@3"] == 1.0
    assert stage.adjudicated.comparisons  # compared with the baseline by the engine
    info = after.adjudication
    assert info is not None
    assert (info.judged_hits, info.calls, info.relevant) == (count, 3 * count, info.relevant)
    lines = [json.loads(x) for x in (tmp_path / "list.jsonl").read_text().splitlines()]
    assert len(lines) == count
    assert sum(1 for x in lines if x["possibly_missing_from_gold"]) == info.relevant > 0
    assert {x["majority"] for x in lines} == {3, 0}
    # A rerun makes no call: the judge's own cache is shared by every command and every
    # output name (the outputs are this command's own kind, so they are replaced).
    assert not (tmp_path / "adj.judge-cache.jsonl").exists()
    code, output = _adjudicate(demo, tmp_path, "--judge", f"recorded:{answers}")
    assert code == 0, output
    assert f"calls 0 (cached {3 * count}, failed 0)" in output


def _state(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--stage", "nope"], "no stage named 'nope'"),
        (["--judge", "http", "--model", "m", "--base-url", "http://127.0.0.1:9/v1",
          "--retries", "0"], "cannot reach model endpoint"),
    ],
)  # fmt: skip
def test_bad_input_exit_2_and_nothing_written(
    demo: Path, tmp_path: Path, args: list[str], message: str
) -> None:
    answers = tmp_path / "answers.jsonl"
    answers.write_text("")
    base = ["eval", "adjudicate", str(demo), "--out", str(tmp_path / "adj.json")]
    base += ["--list", str(tmp_path / "list.jsonl"), "--k", "3"]
    if "--stage" not in args:
        base += ["--stage", STAGE]
    if "--judge" not in args:
        base += ["--judge", f"recorded:{answers}"]
    before = _state(tmp_path)
    result = CliRunner().invoke(cli, base + args)
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert len(result.output.strip().splitlines()) == 1
    assert _state(tmp_path) == before


def test_report_without_hits(demo: Path, tmp_path: Path) -> None:
    empty = report_without_hits(demo, tmp_path)
    result = CliRunner().invoke(
        cli,
        ["eval", "adjudicate", str(empty), "--stage", STAGE, "--judge", "recorded:x",
         "--out", str(tmp_path / "a.json"), "--list", str(tmp_path / "l.jsonl")],
    )  # fmt: skip
    assert result.exit_code == 2, result.output
    assert "the report has no hits to judge" in result.output
    assert not (tmp_path / "a.json").exists()
    assert not (tmp_path / "l.jsonl").exists()


SLOW_JUDGE = """
import time
from pathlib import Path

def judge(query, passage):
    with Path(__file__).with_name("calls.log").open("a") as log:
        log.write("x\\n")
    time.sleep(0.02)
    return 2
"""


def test_kill_9_then_rerun_loses_or_repeats_nothing(demo: Path, tmp_path: Path) -> None:
    (tmp_path / "slowjudge.py").write_text(SLOW_JUDGE)
    cache = tmp_path / "cache.jsonl"
    command = [
        sys.executable, "-m", "groundkit.cli", "eval", "adjudicate", str(demo),
        "--stage", STAGE, "--k", "3", "--judge", "python:slowjudge:judge",
        "--concurrency", "2", "--cache", str(cache),
        "--out", str(tmp_path / "adj.json"), "--list", str(tmp_path / "list.jsonl"),
    ]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if cache.exists() and len(cache.read_bytes().splitlines()) >= 40:
            break
        time.sleep(0.05)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    assert not (tmp_path / "adj.json").exists()
    finished = {
        (row["key"], row["repeat"])
        for line in cache.read_bytes().splitlines()
        if (row := _row(line)) is not None
    }
    assert len(finished) >= 40
    calls_before = len((tmp_path / "calls.log").read_text().splitlines())
    rerun = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
    assert rerun.returncode == 0, rerun.stderr
    rows = [r for line in cache.read_bytes().splitlines() if (r := _row(line)) is not None]
    keys = [(r["key"], r["repeat"]) for r in rows]
    assert len(keys) == len(set(keys))  # nothing repeated
    assert finished <= set(keys)  # nothing lost
    info = load_report(tmp_path / "adj.json").adjudication
    assert info is not None
    assert info.cached >= len(finished)
    assert info.calls + info.cached == 3 * info.judged_hits
    calls_after = len((tmp_path / "calls.log").read_text().splitlines())
    assert calls_after - calls_before == info.calls


def _row(line: bytes) -> dict[str, object] | None:
    try:
        row = json.loads(line)
    except ValueError:
        return None  # the torn line of the kill
    return row if isinstance(row, dict) else None


def test_a_judge_that_decides_nothing_fails_the_run_and_writes_nothing(
    demo: Path, tmp_path: Path
) -> None:
    # A recorded judge with no answer for any hit: every call fails. That is no adjudication:
    # exit 1 naming the commonest failure, and no adjudicated report or list is written.
    answers = tmp_path / "answers.jsonl"
    answers.write_text("")
    before = _state(tmp_path)
    code, output = _adjudicate(demo, tmp_path, "--judge", f"recorded:{answers}")
    assert code == 1, output
    assert "the judge decided 0 of" in output
    assert "commonest failure" in output
    assert "no recorded answer" in output
    assert len(output.strip().splitlines()) == 1
    assert _state(tmp_path) == before
    # Asked for: a share the judge did not reach fails too; --min-success 0 accepts anything.
    recorded = tmp_path / "some.jsonl"
    count = _record_answers(demo, recorded, 3)
    lines = recorded.read_text().splitlines(keepends=True)
    recorded.write_text("".join(lines[: len(lines) // 2]))  # answers for about half the hits
    code, output = _adjudicate(
        demo, tmp_path, "--judge", f"recorded:{recorded}", "--min-success", "0.9"
    )
    assert code == 1, output
    assert "needed" in output
    code, output = _adjudicate(
        demo, tmp_path, "--judge", f"recorded:{answers}", "--min-success", "0"
    )
    assert code == 0, output
    assert count > 0
