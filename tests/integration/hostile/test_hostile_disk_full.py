"""A full disk in the middle of a write: a real small tmpfs where the machine allows mounting one.

The outputs live on a tmpfs of a few hundred KiB, filled up to leave one page free, so the
write phase of each command runs out of space. The command must exit 2 with one line naming
the output, leave the earlier outputs as they were (appends: no torn line) and no temporary.
"""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.integration.hostile.conftest import FAST, Tally, check_case, grk, make_dataset

_PAGE = 4096


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    mount = tmp_path / "small"
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=512k", "tmpfs", os.fspath(mount)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here ({done.stderr.strip() or 'not root'})")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", os.fspath(mount)], check=False, capture_output=True)


def fill(mount: Path, leave: int = _PAGE) -> None:
    """Fill the file system, then free ``leave`` bytes (whole pages)."""
    filler = mount / ".filler"
    descriptor = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        while True:
            try:
                os.write(descriptor, b"\0" * _PAGE)
            except OSError:
                break
        size = os.fstat(descriptor).st_size
        os.ftruncate(descriptor, max(0, size - leave))
    finally:
        os.close(descriptor)


@pytest.fixture
def data(tmp_path: Path):  # type: ignore[no-untyped-def]
    return make_dataset(tmp_path / "data")


def test_eval_run_out_of_space_keeps_the_old_set(
    small_disk: Path, data, old_run: Path, tally: Tally
) -> None:  # type: ignore[no-untyped-def]
    outputs = [small_disk / "run.json", small_disk / "run.items.jsonl", small_disk / "run.html"]
    for path in outputs:
        shutil.copy(old_run / path.name, path)
    fill(small_disk)
    check_case(
        tally, "disk full",
        ["eval", "run", "--corpus", data.corpus, "--judgments", data.judgments,
         "--report", outputs[0], "--html", outputs[2], *FAST],
        inputs=[data.corpus, data.judgments], outputs=outputs,
        place=["No space left on device", "earlier outputs are unchanged"],
    )  # fmt: skip


def test_filter_out_of_space(small_disk: Path, data, tally: Tally) -> None:  # type: ignore[no-untyped-def]
    kept = small_disk / "kept.jsonl"
    kept.write_text(
        '{"query_id": "old", "query": "Old?", "gold": [], "category": "unanswerable"}\n'
    )
    fill(small_disk, leave=0)
    check_case(
        tally, "disk full",
        ["evalset", "filter", data.judgments, "-o", kept, "--rejected", small_disk / "rej.jsonl"],
        inputs=[data.judgments], outputs=[kept, small_disk / "rej.jsonl"],
        place=["No space left on device"],
    )  # fmt: skip


def test_report_html_out_of_space(small_disk: Path, old_run: Path, tally: Tally) -> None:
    page = small_disk / "page.html"
    shutil.copy(old_run / "run.html", page)
    fill(small_disk)
    check_case(
        tally, "disk full", ["eval", "report", old_run / "run.json", "--html", page],
        inputs=[old_run / "run.json"], outputs=[page], place=["page.html", "No space left"],
    )  # fmt: skip


# No free page: the line (about 3 KB) meets only the slack of the record's last page, a
# real short write that must be rolled back.
@pytest.mark.parametrize("leave", [0])
def test_track_record_append_out_of_space_leaves_whole_lines(
    leave: int, small_disk: Path, old_run: Path, tally: Tally
) -> None:
    record = small_disk / "record.jsonl"
    assert grk("eval", "diagnose", old_run / "run.json", "--track-record", record).exit_code == 0
    fill(small_disk, leave=leave)
    check_case(
        tally, "disk full", ["eval", "diagnose", old_run / "run.json", "--track-record", record],
        inputs=[old_run / "run.json"], outputs=[record],
        place=["record.jsonl", "No space left"],
    )  # fmt: skip
    assert record.read_bytes().endswith(b"\n")


@pytest.mark.parametrize("leave", [0, _PAGE])
def test_review_journal_out_of_space(leave: int, small_disk: Path, data, tally: Tally) -> None:  # type: ignore[no-untyped-def]
    out = small_disk / "reviewed.jsonl"
    fill(small_disk, leave=leave)
    journal = small_disk / "reviewed.decisions.jsonl"
    result = grk("evalset", "review", data.judgments, "-o", out, input="aaaa")
    clean = result.exit_code == 2 and "Traceback" not in result.output
    tally.record("disk full", "refused cleanly" if clean else "traceback")
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert "No space left" in result.output.splitlines()[-1]
    assert not journal.exists() or journal.read_bytes().endswith(b"\n") or not journal.read_bytes()
    assert not out.exists()


def test_beir_adapt_out_of_space_leaves_nothing(
    small_disk: Path, tmp_path: Path, tally: Tally
) -> None:
    from tests.integration.hostile.test_hostile_beir import DOCS, write_dataset

    docs = [*DOCS, *({"_id": f"n{i}", "text": "words " * 200} for i in range(300))]
    import json

    source = write_dataset(tmp_path / "beir", corpus="".join(json.dumps(d) + "\n" for d in docs))
    out = small_disk / "adapted"
    check_case(
        tally, "disk full", ["beir", "adapt", source, out], inputs=[source], outputs=[out],
        place=["No space left on device"],
    )  # fmt: skip
    assert not [p for p in small_disk.iterdir() if ".grk-" in p.name]


def _write_page(path: Path) -> None:
    with path.open("wb") as handle:
        handle.write(b"x" * _PAGE)
        handle.flush()
        os.fsync(handle.fileno())


def test_fill_really_fills(small_disk: Path) -> None:
    fill(small_disk, leave=0)
    with pytest.raises(OSError, match="No space left") as caught:
        _write_page(small_disk / "more")
    assert caught.value.errno == errno.ENOSPC
