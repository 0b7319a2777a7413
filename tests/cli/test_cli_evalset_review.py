from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from groundkit.cli import cli
from groundkit.judgments import load_judgments

ROWS = [
    {
        "query_id": "q1",
        "query": "How many days of paid leave do employees get?",
        "gold": [{"doc": "a.md", "quote": "Employees get 25 days of paid leave."}],
    },
    {
        "query_id": "q2",
        "query": "Who approves leave requests for staff?",
        "gold": [{"doc": "a.md", "quote": "Managers approve it."}],
    },
    {
        "query_id": "q3",
        "query": "What does the leave policy say about carry-over?",
        "gold": [{"doc": "a.md", "quote": "Unused days expire."}],
    },
    {
        "query_id": "q4",
        "query": "Is there a policy on office pets at all?",
        "category": "unanswerable",
    },
    {
        "query_id": "q0",
        "query": "Was this one reviewed earlier by someone?",
        "gold": [{"doc": "a.md", "quote": "Earlier."}],
        "meta": {"reviewed": True},
    },
]


@pytest.fixture
def judgments(tmp_path: Path) -> Path:
    path = tmp_path / "set.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in ROWS), encoding="utf-8")
    return path


def _review(judgments: Path, out: Path, keys: str) -> tuple[int, str]:
    result = CliRunner().invoke(
        cli, ["evalset", "review", str(judgments), "--out", str(out)], input=keys
    )
    assert "Traceback" not in result.output, result.output
    return result.exit_code, result.output


def _journal(out: Path) -> list[dict[str, object]]:
    path = out.with_name(out.stem + ".decisions.jsonl")
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_quit_midway_then_resume_to_the_end(judgments: Path, tmp_path: Path) -> None:
    out = tmp_path / "reviewed.jsonl"
    code, output = _review(judgments, out, "at4q")
    assert code == 0, output
    assert "reviewing 4 unreviewed item(s)" in output
    assert "[1/4] q1" in output
    assert "type set to numeric" in output
    assert "run the same command again to resume" in output
    journal = _journal(out)
    assert journal[0]["kind"] == "groundkit-review-journal"
    assert [d["action"] for d in journal[1:]] == ["accept", "mark"]
    partial = {j.query_id: j for j in load_judgments(out)}
    assert set(partial) == {"q0", "q1", "q2", "q3", "q4"}  # nothing lost on quit
    assert partial["q1"].meta["verdict"] == "accept"
    assert "reviewed" not in partial["q2"].meta

    # Second session: resumes at q2 (still marked numeric), then finishes.
    keys = "ruRduplicate of q1\n" + "e\nUnused days expire.\n2\nfixed grade\n" + "s" + "x"
    code, output = _review(judgments, out, keys)
    assert code == 0, output
    assert "resuming: 1/4 decided" in output
    assert "[2/4] q2" in output
    assert "type:     numeric" in output
    assert "undid reject" in output
    assert "all 4 decided" in output
    final = {j.query_id: j for j in load_judgments(out)}
    assert set(final) == {"q0", "q1", "q3"}
    assert final["q3"].meta["verdict"] == "edit"
    assert final["q3"].gold[0].grade == 2
    assert final["q3"].meta["review_note"] == "fixed grade"
    assert final["q3"].meta["reviewed"] is True
    assert all(j.meta["set_version"] == 1 for j in final.values())
    actions = [d["action"] for d in _journal(out)[1:]]
    assert actions == ["accept", "mark", "reject", "undo", "reject", "edit", "skip"]
    assert _journal(out)[5]["note"] == "duplicate of q1"

    # A third run has nothing left to decide but can still undo.
    code, output = _review(judgments, out, "ux")
    assert code == 0
    assert "undid skip" in output


def test_undo_on_a_fresh_review_is_an_error_not_a_crash(judgments: Path, tmp_path: Path) -> None:
    code, output = _review(judgments, tmp_path / "o.jsonl", "uzq")
    assert code == 0
    assert "error: nothing to undo" in output
    assert "unknown key 'z'" in output


def test_edit_of_an_item_without_gold(judgments: Path, tmp_path: Path) -> None:
    out = tmp_path / "o.jsonl"
    code, output = _review(
        judgments, out, "aaa" + "e\n\n" + "eIs there any policy on office pets?\n\nq"
    )
    assert code == 0, output
    assert "no gold quote to edit: reject the item or add evidence" in output
    assert "nothing changed: not edited" in output
    item = {j.query_id: j for j in load_judgments(out)}["q4"]
    assert item.query == "Is there any policy on office pets?"


def test_end_of_input_quits_and_saves(judgments: Path, tmp_path: Path) -> None:
    out = tmp_path / "o.jsonl"
    code, _ = _review(judgments, out, "a")
    assert code == 0
    assert out.exists()
    assert len(_journal(out)) == 2


def test_torn_last_line_is_ignored(judgments: Path, tmp_path: Path) -> None:
    out = tmp_path / "o.jsonl"
    _review(judgments, out, "aq")
    journal = out.with_name("o.decisions.jsonl")
    with journal.open("a") as handle:
        handle.write('{"action": "acc')  # a crash in the middle of a write
    code, output = _review(judgments, out, "q")
    assert code == 0, output
    assert "ignored an incomplete last line" in output
    assert "resuming: 1/4" in output
    assert journal.read_text().endswith("\n")


def test_torn_header_starts_afresh(judgments: Path, tmp_path: Path) -> None:
    out = tmp_path / "o.jsonl"
    journal = out.with_name("o.decisions.jsonl")
    journal.write_text('{"kind": "groundkit-rev')
    code, output = _review(judgments, out, "aq")
    assert code == 0, output
    assert "reviewing 4 unreviewed item(s)" in output
    assert [d["action"] for d in _journal(out)[1:]] == ["accept"]


def test_empty_journal_gets_a_header(judgments: Path, tmp_path: Path) -> None:
    out = tmp_path / "o.jsonl"
    out.with_name("o.decisions.jsonl").write_text("")
    _review(judgments, out, "aq")
    assert _journal(out)[0]["kind"] == "groundkit-review-journal"


def test_corrupt_journal_line_is_an_input_error(judgments: Path, tmp_path: Path) -> None:
    out = tmp_path / "o.jsonl"
    _review(judgments, out, "aq")
    journal = out.with_name("o.decisions.jsonl")
    journal.write_text(journal.read_text() + '{"action": "dance"}\n')
    code, output = _review(judgments, out, "q")
    assert code == 2
    assert "o.decisions.jsonl:3: not a review decision" in output


def test_journal_of_other_judgments_is_refused(judgments: Path, tmp_path: Path) -> None:
    out = tmp_path / "o.jsonl"
    _review(judgments, out, "aq")
    judgments.write_text(judgments.read_text().replace("paid leave", "annual leave"))
    code, output = _review(judgments, out, "q")
    assert code == 2
    assert "belongs to other judgments" in output
    assert len(output.strip().splitlines()) == 1


def test_nothing_to_review(tmp_path: Path) -> None:
    path = tmp_path / "done.jsonl"
    path.write_text(json.dumps(ROWS[-1]) + "\n")
    code, output = _review(path, tmp_path / "o.jsonl", "")
    assert code == 0
    assert "nothing to review" in output


def test_out_must_differ_from_input(judgments: Path) -> None:
    code, output = _review(judgments, judgments, "q")
    assert code == 2
    assert "is the same file as JUDGMENTS" in output


def test_default_output_is_beside_the_input(judgments: Path) -> None:
    code, _ = _review(judgments, judgments.with_name("set.reviewed.jsonl"), "aq")
    assert code == 0
    result = CliRunner().invoke(cli, ["evalset", "review", str(judgments)], input="q")
    assert result.exit_code == 0
    assert "resuming: 1/4" in result.output


@pytest.mark.slow
def test_real_terminal_session_quit_and_resume(judgments: Path, tmp_path: Path) -> None:
    pexpect = pytest.importorskip("pexpect")
    out = tmp_path / "tty.jsonl"
    command = [
        sys.executable,
        "-m",
        "groundkit.cli",
        "evalset",
        "review",
        str(judgments),
        "--out",
        str(out),
    ]

    session = pexpect.spawn(
        command[0], command[1:], encoding="utf-8", timeout=20, dimensions=(40, 200)
    )
    session.expect_exact("[1/4] q1")
    session.send("a")  # a single key, no Enter: read in raw mode by click.getchar
    session.expect_exact("[2/4] q2")
    session.send("q")
    session.expect(pexpect.EOF)
    session.close()
    assert session.exitstatus == 0
    assert [d["action"] for d in _journal(out)[1:]] == ["accept"]

    session = pexpect.spawn(
        command[0], command[1:], encoding="utf-8", timeout=20, dimensions=(40, 200)
    )
    session.expect_exact("resuming: 1/4 decided")
    session.expect_exact("[2/4] q2")
    session.send("r")
    session.expect_exact("[3/4] q3")
    session.send("\x03")  # Ctrl-C: the decision before it is already on disk
    session.expect(pexpect.EOF)
    session.close()
    assert session.exitstatus == 130
    assert [d["action"] for d in _journal(out)[1:]] == ["accept", "reject"]
    assert {j.query_id for j in load_judgments(out)} == {"q0", "q1", "q3", "q4"}


@pytest.mark.slow
def test_subprocess_without_a_terminal_reads_keys_from_stdin(
    judgments: Path, tmp_path: Path
) -> None:
    out = tmp_path / "piped.jsonl"
    command = [
        sys.executable,
        "-m",
        "groundkit.cli",
        "evalset",
        "review",
        str(judgments),
        "--out",
        str(out),
    ]
    # A new session has no controlling terminal, as under some CI runners and cron.
    first = subprocess.run(
        command, input="as", capture_output=True, text=True, start_new_session=True, timeout=60
    )
    assert first.returncode == 0, first.stderr
    assert "run the same command again to resume" in first.stdout
    second = subprocess.run(
        command, input="ra", capture_output=True, text=True, start_new_session=True, timeout=60
    )
    assert second.returncode == 0, second.stderr
    assert "resuming: 2/4 decided" in second.stdout
    assert "4/4 decided (2 accept, 0 edit, 1 reject, 1 skip)" in second.stdout
    assert {j.query_id for j in load_judgments(out)} == {"q0", "q1", "q4"}
