"""Outputs as a set (core's OutputSet) and appends that cannot tear (append_line)."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from groundkit.judgments import OutputGuardError, OutputSetError
from groundkit.judgments.files import (
    InputPath,
    OutputPath,
    OutputSet,
    _outputs,
    _paths,
    append_line,
    guard_outputs,
    recover_folder,
    temporary_sibling,
)


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_a_set_is_committed_whole(tmp_path: Path) -> None:
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text("old a")
    b.write_text("old b")
    with OutputSet([a, b]) as outputs:
        outputs.write_text(a, "new a")
        outputs.write_text(b, "new b")
        assert a.read_text() == "old a"  # nothing visible before the commit
        outputs.commit()
    assert (a.read_text(), b.read_text()) == ("new a", "new b")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.json", "b.json"]


def test_a_failure_before_the_commit_keeps_the_old_set(tmp_path: Path) -> None:
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text("old a")
    b.write_text("old b")

    def render() -> None:
        with OutputSet([a, b]) as outputs:
            outputs.write_text(a, "new a")
            raise RuntimeError("rendering b failed")

    with pytest.raises(RuntimeError):
        render()
    assert (a.read_text(), b.read_text()) == ("old a", "old b")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.json", "b.json"]


def test_a_member_not_written_refuses_the_commit(tmp_path: Path) -> None:
    a, b = tmp_path / "a.json", tmp_path / "b.json"

    def write_one() -> None:
        with OutputSet([a, b]) as outputs:
            outputs.write_text(a, "new a")
            outputs.commit()

    with pytest.raises(OutputSetError, match=r"b\.json: the output was not written"):
        write_one()
    assert not a.exists()


def test_an_interrupted_commit_is_finished_by_the_next_writer(tmp_path: Path) -> None:
    # What SIGKILL between two renames leaves: a journal, one member renamed, one not.
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text("old a")
    b.write_text("old b")
    pid = _dead_pid()
    temp_a, temp_b = temporary_sibling(a, pid), temporary_sibling(b, pid)
    temp_b.write_text("new b")
    a.write_text("new a")  # a was renamed already
    journal = tmp_path / f".grk-set-{pid}-0badcafe.json"
    members = [
        {"final": str(a), "temporary": str(temp_a), "folder": False, "backup": None},
        {"final": str(b), "temporary": str(temp_b), "folder": False, "backup": None},
    ]
    journal.write_text(json.dumps({"kind": "groundkit-output-set", "version": 1, "pid": pid,
                                   "members": members, "obsolete": [],
                                   "journals": [str(journal)]}))  # fmt: skip
    with OutputSet([tmp_path / "c.json"]) as outputs:
        assert sorted(outputs.recovered) == [a, b]
        outputs.write_text(tmp_path / "c.json", "c")
        outputs.commit()
    assert (a.read_text(), b.read_text()) == ("new a", "new b")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.json", "b.json", "c.json"]


def test_a_live_writers_journal_and_temporaries_are_left_alone(tmp_path: Path) -> None:
    a = tmp_path / "a.json"
    live = temporary_sibling(a, os.getppid())
    live.write_text("being written")
    journal = tmp_path / f".grk-set-{os.getppid()}-0badcafe.json"
    journal.write_text("{}")
    assert recover_folder(tmp_path) == []
    with OutputSet([a]) as outputs:
        outputs.write_text(a, "mine")
        outputs.commit()
    assert live.exists()
    assert journal.exists()


def test_stale_temporaries_of_killed_writers_are_removed(tmp_path: Path) -> None:
    a = tmp_path / "report.json"
    pid = _dead_pid()
    stale_file = temporary_sibling(a, pid)
    stale_file.write_text("half a report")
    stale_dir = temporary_sibling(a, pid)
    stale_dir.mkdir()
    (stale_dir / "x").write_text("x")
    other = tmp_path / ".unrelated.grk-1-00000000.tmp"  # another output's: not ours to judge
    other.write_text("x")
    with OutputSet([a]) as outputs:
        outputs.write_text(a, "new")
        outputs.commit()
    assert not stale_file.exists()
    assert not stale_dir.exists()
    assert other.exists()


def test_a_folder_member_replaces_an_existing_folder(tmp_path: Path) -> None:
    final = tmp_path / "corpus"
    final.mkdir()
    (final / "old.txt").write_text("old")
    with OutputSet([final], folders=[final]) as outputs:
        (outputs.temporary(final) / "new.txt").write_text("new")
        outputs.commit()
    assert sorted(p.name for p in final.iterdir()) == ["new.txt"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["corpus"]


def test_signals_are_held_during_the_renames(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import signal

    seen: list[str] = []
    a = tmp_path / "a.json"
    real = _outputs._roll_forward

    def roll_forward(members: list[dict[str, object]], obsolete: list[str]) -> None:
        os.kill(os.getpid(), signal.SIGINT)  # delivered only once the renames are done
        seen.append("renamed")
        real(members, obsolete)  # type: ignore[arg-type]

    monkeypatch.setattr(_outputs, "_roll_forward", roll_forward)

    def write() -> None:
        with OutputSet([a]) as outputs:
            outputs.write_text(a, "new")
            outputs.commit()

    with pytest.raises(KeyboardInterrupt):
        write()
    assert seen == ["renamed"]
    assert a.read_text() == "new"


# --- appends ------------------------------------------------------------------------------


@pytest.mark.parametrize("failure", ["short write", "ENOSPC after a partial write", "fsync"])
def test_a_failed_append_leaves_the_file_as_it_was(
    failure: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    record = tmp_path / "record.jsonl"
    append_line(record, '{"line": 1}')
    before = record.read_bytes()
    real_write = os.write

    def short(fd: int, data: bytes) -> int:
        return real_write(fd, data[:5])

    def partial_then_full(fd: int, data: bytes) -> int:
        real_write(fd, data[:5])
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    def fsync(fd: int) -> None:
        raise OSError(errno.EIO, os.strerror(errno.EIO))

    if failure == "short write":
        monkeypatch.setattr(_paths.os, "write", short)
    elif failure == "fsync":
        monkeypatch.setattr(_paths.os, "fsync", fsync)
    else:
        monkeypatch.setattr(_paths.os, "write", partial_then_full)
    with pytest.raises(OSError, match=r"No space|Input/output|space") as caught:
        append_line(record, '{"line": 2, "padding": "' + "x" * 100 + '"}')
    monkeypatch.undo()
    assert record.read_bytes() == before
    if failure == "short write":
        assert caught.value.errno == errno.ENOSPC
        assert "No space left" in str(caught.value)
    append_line(record, '{"line": 3}')
    assert record.read_text().splitlines() == ['{"line": 1}', '{"line": 3}']


def test_append_after_a_torn_line_from_elsewhere_starts_a_new_line(tmp_path: Path) -> None:
    record = tmp_path / "record.jsonl"
    record.write_bytes(b'{"whole": 1}\n{"torn')
    append_line(record, '{"next": 2}')
    assert record.read_bytes() == b'{"whole": 1}\n{"torn\n{"next": 2}\n'


# --- the guard ------------------------------------------------------------------------------


def test_guard_names_both_paths(tmp_path: Path) -> None:
    source = tmp_path / "j.jsonl"
    source.write_text("{}\n")
    with pytest.raises(
        OutputGuardError, match=r"--report .*j\.jsonl: is the same file as --judgments"
    ):
        guard_outputs(
            [OutputPath(source, "--report", "report")], [InputPath(source, "--judgments")]
        )


def test_guard_refuses_an_output_inside_an_input_folder(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    with pytest.raises(OutputGuardError, match="inside the input folder --corpus"):
        guard_outputs(
            [OutputPath(corpus / "r.json", "--report", "report")],
            [InputPath(corpus, "--corpus")],
        )
