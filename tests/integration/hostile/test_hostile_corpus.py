"""Hostile corpora: folders and JSON Lines files that must be refused naming the place."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from tests.integration.hostile.conftest import FAST, Dataset, Tally, check_case, jsonl


def _jsonl_corpus(dataset: Dataset, lines: bytes) -> Path:
    path = dataset.root / "corpus.jsonl"
    path.write_bytes(lines)
    return path


def _good_lines() -> bytes:
    return jsonl(
        {"id": name, "text": (Path("x") / name).name and text}
        for name, text in {
            "refunds.md": "The refund window is thirty days.",
            "leave.md": "Everyone gets twenty-five days of annual leave.",
        }.items()
    ).encode()


# Folder corpora: a mutation of the corpus folder -> what the error names.
FOLDER_CASES: dict[str, tuple[Callable[[Path], None], list[str]]] = {
    "binary file": (
        lambda c: (c / "image.png").write_bytes(b"\x89PNG\x00\x00"),
        ["image.png", "binary"],
    ),
    "latin-1 file": (lambda c: (c / "old.txt").write_bytes(b"caf\xe9\n"), ["old.txt", "UTF-8"]),
    "utf-16 file": (lambda c: (c / "w.txt").write_bytes("hé".encode("utf-16")), ["w.txt"]),
    "link outside": (lambda c: (c / "out.md").symlink_to("/etc/hostname"), ["out.md", "outside"]),
    "folder link outside": (lambda c: (c / "etc").symlink_to("/etc"), ["etc", "outside"]),
    "self link": (lambda c: (c / "loop.md").symlink_to(c / "loop.md"), ["loop.md", "loop"]),
    "two-link loop": (
        lambda c: ((c / "a.md").symlink_to(c / "b.md"), (c / "b.md").symlink_to(c / "a.md")),
        ["loop"],
    ),
    "name with backslash": (lambda c: (c / "a\\b.md").write_text("x"), ["a\\b.md"]),
    "control char name": (lambda c: (c / "tab\there.md").write_text("x"), ["tab\\there.md"]),
    "nfc twins": (
        lambda c: ((c / "caf\u00e9.md").write_text("x"), (c / "cafe\u0301.md").write_text("y")),
        ["NFC"],
    ),
}
# JSON Lines corpora: the file's bytes -> what the error names.
JSONL_CASES: dict[str, tuple[bytes, list[str]]] = {
    "invalid json": (b'{"id": "a.md", \n', ["corpus.jsonl:1", "invalid JSON"]),
    "array": (b"[]\n", ["corpus.jsonl:1", "JSON object"]),
    "missing text": (b'{"id": "a.md"}\n', ["corpus.jsonl:1", "a.md", "text"]),
    "missing id": (b'{"text": "x"}\n', ["corpus.jsonl:1", "'id'"]),
    "numeric id": (b'{"id": 5, "text": "x"}\n', ["corpus.jsonl:1"]),
    "unsafe id": (b'{"id": "../a.md", "text": "x"}\n', ["corpus.jsonl:1"]),
    "text not a string": (b'{"id": "a.md", "text": 3}\n', ["corpus.jsonl:1", "a.md", "string"]),
    "unknown field": (b'{"id": "a.md", "text": "x", "body": "y"}\n', ["corpus.jsonl:1", "body"]),
    "duplicate id": (
        b'{"id": "a.md", "text": "x"}\n{"id": "a.md", "text": "y"}\n',
        ["corpus.jsonl:2", "a.md", "duplicate"],
    ),
    "nul in text": (b'{"id": "a.md", "text": "x\\u0000y"}\n', ["corpus.jsonl:1", "a.md", "NUL"]),
    "lone surrogate": (b'{"id": "a.md", "text": "x\\ud800"}\n', ["corpus.jsonl:1", "surrogate"]),
    "not utf-8": (b'{"id": "a.md", "text": "caf\xe9"}\n', ["corpus.jsonl:1", "UTF-8"]),
    "empty": (b"", ["corpus.jsonl", "no documents"]),
    "nan": (b'{"id": "a.md", "text": "x", "metadata": {"s": NaN}}\n', ["corpus.jsonl:1"]),
}  # fmt: skip

READERS = {
    "eval run": lambda d, c, out: [
        "eval", "run", "--corpus", c, "--judgments", d.judgments, "--report", out, *FAST,
    ],
    "evalset filter": lambda d, c, out: [
        "evalset", "filter", d.judgments, "--corpus", c, "-o", out.with_name("kept.jsonl"),
    ],
}  # fmt: skip


@pytest.mark.parametrize("reader", sorted(READERS))
@pytest.mark.parametrize("case", sorted(FOLDER_CASES))
def test_hostile_corpus_folders(
    case: str, reader: str, dataset: Dataset, tmp_path: Path, tally: Tally
) -> None:
    mutate, places = FOLDER_CASES[case]
    mutate(dataset.corpus)
    out = tmp_path / "r.json"
    check_case(
        tally,
        "corpus",
        READERS[reader](dataset, dataset.corpus, out),
        inputs=[dataset.corpus, dataset.judgments],
        outputs=[out, out.with_name("kept.jsonl")],
        place=places,
    )


@pytest.mark.parametrize("reader", sorted(READERS))
@pytest.mark.parametrize("case", sorted(JSONL_CASES))
def test_hostile_corpus_jsonl(
    case: str, reader: str, dataset: Dataset, tmp_path: Path, tally: Tally
) -> None:
    content, places = JSONL_CASES[case]
    corpus = _jsonl_corpus(dataset, content)
    out = tmp_path / "r.json"
    check_case(
        tally,
        "corpus",
        READERS[reader](dataset, corpus, out),
        inputs=[corpus, dataset.judgments],
        outputs=[out, out.with_name("kept.jsonl")],
        place=places,
    )


@pytest.mark.parametrize("kind", ["fifo", "missing", "empty folder", "plain file", "device"])
def test_corpus_that_is_not_a_corpus(
    kind: str, dataset: Dataset, tmp_path: Path, tally: Tally
) -> None:
    target = tmp_path / "c.jsonl"
    place = "c.jsonl"
    if kind == "fifo":
        os.mkfifo(target)
    elif kind == "empty folder":
        target = tmp_path / "empty"
        target.mkdir()
        place = "no documents"
    elif kind == "plain file":
        target = tmp_path / "c.txt"
        target.write_text("not a corpus")
        place = "c.txt"
    elif kind == "device":
        target = Path(os.devnull)
        place = os.devnull
    out = tmp_path / "r.json"
    check_case(
        tally,
        "corpus",
        [
            "eval",
            "run",
            "--corpus",
            target,
            "--judgments",
            dataset.judgments,
            "--report",
            out,
            *FAST,
        ],
        inputs=[dataset.judgments],
        outputs=[out],
        place=place,
    )


def test_special_files_inside_a_folder_are_skipped_not_waited_on(
    dataset: Dataset, tmp_path: Path, tally: Tally
) -> None:
    os.mkfifo(dataset.corpus / "pipe.md")
    (dataset.corpus / ".hidden.md").write_text("hidden")
    out = tmp_path / "r.json"
    check_case(
        tally,
        "corpus",
        ["eval", "run", "--corpus", dataset.corpus, "--judgments", dataset.judgments,
         "--report", out, *FAST],
        inputs=[dataset.judgments],
        exit_code=0,
    )  # fmt: skip


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root")
def test_unreadable_subfolder_names_it(tally: Tally) -> None:
    # Root reads everything: the command runs in a child process as 'nobody', on data in a
    # folder that user may enter.
    import shutil
    import subprocess
    import sys
    import tempfile

    from tests.integration.hostile.conftest import make_dataset

    base = Path(tempfile.mkdtemp(prefix="grk-unreadable-", dir="/tmp"))
    try:
        base.chmod(0o777)
        dataset = make_dataset(base / "data")
        for folder, dirnames, filenames in os.walk(base):
            for name in dirnames:
                (Path(folder) / name).chmod(0o755)
            for name in filenames:
                (Path(folder) / name).chmod(0o644)
        locked = dataset.corpus / "locked"
        locked.mkdir()
        (locked / "secret.md").write_text("x")
        locked.chmod(0o000)
        out = base / "r.json"
        # Everything is imported first: nobody may not read the interpreter's own folders.
        code = (
            "import os, sys; from groundkit.cli import main; import groundkit.cli._main;"
            "import groundkit.harness;"
            "os.setgid(65534); os.setuid(65534); main(sys.argv[1:])"
        )
        done = subprocess.run(
            [sys.executable, "-c", code, "eval", "run", "--corpus", str(dataset.corpus),
             "--judgments", str(dataset.judgments), "--report", str(out), *FAST],
            capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
        if "ModuleNotFoundError" in done.stderr or "PermissionError" in done.stderr:
            pytest.skip(f"the child could not start as nobody: {done.stderr[-200:]}")
        clean = done.returncode == 2 and "Traceback" not in done.stderr
        tally.record("corpus", "refused cleanly" if clean else "traceback")
        assert done.returncode == 2, done.stderr
        assert "Traceback" not in done.stderr
        assert done.stderr.count("\n") == 1
        assert "locked" in done.stderr
        assert not out.exists()
    finally:
        for folder, dirnames, _ in os.walk(base):
            for name in dirnames:
                (Path(folder) / name).chmod(0o755)
        shutil.rmtree(base, ignore_errors=True)
