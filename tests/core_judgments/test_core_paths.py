"""Path safety: portable names, case collisions, containment (symlinks) and atomic writes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from groundkit.judgments import UnsafePathError
from groundkit.judgments.files import (
    MAX_COMPONENT_BYTES,
    atomic_write_bytes,
    atomic_write_files,
    atomic_write_text,
    ensure_within,
    find_case_collisions,
    validate_path_component,
)


def _symlink(link: Path, target: Path, *, is_dir: bool = False) -> None:
    try:
        link.symlink_to(target, target_is_directory=is_dir)
    except (OSError, NotImplementedError) as error:  # Windows without the privilege
        pytest.skip(f"cannot create symbolic links here: {error}")


@pytest.mark.parametrize(
    "good",
    [
        "report.json",
        "leave-policy",
        "Café ☕.txt",
        "con-report.txt",
        "console",
        "COM10",
        "LPT0",
        ".hidden",
        "a" * 255,
        "é" * 127,
    ],
)
def test_portable_names_pass(good: str) -> None:
    assert validate_path_component(good) == good


@pytest.mark.parametrize(
    ("bad", "reason"),
    [
        ("", "empty"),
        (".", "refers to a folder"),
        ("..", "refers to a folder"),
        ("a/b", "separator"),
        ("a\\b", "separator"),
        ("a\x00b", "control"),
        ("tab\there", "control"),
        ("line\nbreak", "control"),
        ("a\u2028b", "control"),
        ("what?", "forbidden on Windows"),
        ("a<b>", "forbidden on Windows"),
        ('say "hi"', "forbidden on Windows"),
        ("c:drive", "forbidden on Windows"),
        ("pipe|name", "forbidden on Windows"),
        ("star*", "forbidden on Windows"),
        ("trailing.", "ends with a dot or a space"),
        ("trailing ", "ends with a dot or a space"),
        ("CON", "reserved device name"),
        ("con", "reserved device name"),
        ("Nul.txt", "reserved device name"),
        ("nul.tar.gz", "reserved device name"),
        ("NUL .txt", "reserved device name"),
        ("aux", "reserved device name"),
        ("prn.json", "reserved device name"),
        ("COM1", "reserved device name"),
        ("lpt9.log", "reserved device name"),
        ("COM\u00b9", "reserved device name"),
        ("lpt\u00b3.txt", "reserved device name"),
        ("CONIN$", "reserved device name"),
        ("a" * 256, "256 UTF-8 bytes"),
        ("é" * 128, "256 UTF-8 bytes"),
        ("\U0001f600" * 64, "256 UTF-8 bytes"),
        ("\ud800", "not valid Unicode"),
    ],
)
def test_unsafe_names_are_refused(bad: str, reason: str) -> None:
    with pytest.raises(UnsafePathError, match=reason) as caught:
        validate_path_component(bad)
    assert "\n" not in str(caught.value)


def test_byte_budget_leaves_room_for_a_suffix() -> None:
    name = "q" * 252
    assert validate_path_component(name) == name
    with pytest.raises(UnsafePathError, match="limit 251"):
        validate_path_component(name, max_bytes=MAX_COMPONENT_BYTES - len(".txt"))


def test_length_counts_the_decomposed_form() -> None:
    # 100 "ǖ" are 200 UTF-8 bytes but 300 UTF-16 units decomposed (as HFS+ stores them).
    with pytest.raises(UnsafePathError, match="300 UTF-16 units"):
        validate_path_component("\u01d6" * 100)
    assert validate_path_component("\u01d6" * 85) == "\u01d6" * 85


def test_non_string_component() -> None:
    with pytest.raises(UnsafePathError, match="must be a string"):
        validate_path_component(3)  # type: ignore[arg-type]


# Case collisions -----------------------------------------------------------------------------


def test_case_and_normalisation_collisions() -> None:
    names = [
        "Report.txt",
        "other.txt",
        "report.TXT",
        "café.md",
        "cafe\u0301.md",
        "Straße",
        "STRASSE",
    ]
    assert find_case_collisions(names) == [
        ("Report.txt", "report.TXT"),
        ("café.md", "cafe\u0301.md"),
        ("Straße", "STRASSE"),
    ]


def test_folder_collisions_and_identical_names() -> None:
    assert find_case_collisions(["docs/a.txt", "Docs/b.txt", "docs/a.txt"]) == [("docs", "Docs")]
    assert find_case_collisions(["a", "b", "a"]) == []
    assert find_case_collisions([]) == []


def test_each_collision_reported_once() -> None:
    assert find_case_collisions(["X/1", "x/2", "x/3", "X/4"]) == [("X", "x")]


# Containment ---------------------------------------------------------------------------------


def test_ensure_within_accepts_inside_paths(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    assert ensure_within(tmp_path, tmp_path / "sub" / "new.json") == (
        tmp_path.resolve() / "sub" / "new.json"
    )
    assert ensure_within(tmp_path, Path("relative.txt")) == tmp_path.resolve() / "relative.txt"
    assert ensure_within(tmp_path, tmp_path) == tmp_path.resolve()
    assert ensure_within(tmp_path, tmp_path / "a" / ".." / "b") == tmp_path.resolve() / "b"


@pytest.mark.parametrize(
    "escape", ["../outside.txt", "sub/../../outside.txt", "missing/../../x", "/etc/passwd"]
)
def test_ensure_within_refuses_dot_dot_and_absolute(tmp_path: Path, escape: str) -> None:
    root = tmp_path / "root"
    (root / "sub").mkdir(parents=True)
    with pytest.raises(UnsafePathError, match="outside") as caught:
        ensure_within(root, Path(escape))
    assert caught.value.path == escape


def test_ensure_within_refuses_symlink_escape(tmp_path: Path) -> None:
    root = tmp_path / "root"
    outside = tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    _symlink(root / "linked", outside, is_dir=True)
    with pytest.raises(UnsafePathError, match="outside"):
        ensure_within(root, root / "linked" / "file.txt")
    # A dangling link as the last component still points outside.
    _symlink(root / "dangling.txt", outside / "not-yet.txt")
    with pytest.raises(UnsafePathError, match="outside"):
        ensure_within(root, root / "dangling.txt")


def test_ensure_within_follows_links_that_stay_inside(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    _symlink(tmp_path / "alias", tmp_path / "real", is_dir=True)
    assert ensure_within(tmp_path, tmp_path / "alias" / "f") == tmp_path.resolve() / "real" / "f"


def test_ensure_within_resolves_a_symlinked_root(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    _symlink(tmp_path / "root-link", tmp_path / "real", is_dir=True)
    found = ensure_within(tmp_path / "root-link", tmp_path / "real" / "x.txt")
    assert found == tmp_path.resolve() / "real" / "x.txt"


# Atomic writes -------------------------------------------------------------------------------


def test_atomic_write_text_and_bytes(tmp_path: Path) -> None:
    target = tmp_path / "out.txt"
    atomic_write_text(target, "line one\nlínea dos\n")
    assert target.read_bytes() == "line one\nlínea dos\n".encode()  # no newline translation
    atomic_write_bytes(target, b"\x00\x01")
    assert target.read_bytes() == b"\x00\x01"
    assert [p.name for p in tmp_path.iterdir()] == ["out.txt"]


@pytest.mark.skipif(os.name != "posix", reason="POSIX permission bits")
def test_atomic_write_uses_normal_permissions(tmp_path: Path) -> None:
    umask = os.umask(0o022)
    try:
        atomic_write_text(tmp_path / "f.txt", "x")
    finally:
        os.umask(umask)
    assert (tmp_path / "f.txt").stat().st_mode & 0o777 == 0o644


def test_atomic_write_failure_keeps_old_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "keep.txt"
    target.write_text("old", encoding="utf-8")

    def broken_fsync(descriptor: int) -> None:
        raise OSError("fsync failed")

    monkeypatch.setattr(os, "fsync", broken_fsync)
    with pytest.raises(OSError, match="fsync failed"):
        atomic_write_text(target, "new")
    monkeypatch.undo()
    assert target.read_text(encoding="utf-8") == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["keep.txt"]


def test_atomic_write_to_missing_folder_fails_cleanly(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        atomic_write_text(tmp_path / "missing" / "f.txt", "x")
    assert list(tmp_path.iterdir()) == []


def test_atomic_write_files_writes_a_set(tmp_path: Path) -> None:
    first, second = tmp_path / "run.trec", tmp_path / "qrels.trec"
    first.write_text("old run", encoding="utf-8")
    atomic_write_files({first: "new run\n", second: b"qrels\n"})
    assert first.read_text(encoding="utf-8") == "new run\n"
    assert second.read_bytes() == b"qrels\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["qrels.trec", "run.trec"]


def test_atomic_write_files_failure_before_the_renames_changes_nothing(tmp_path: Path) -> None:
    # The second file cannot be written: the first keeps its old content, no temporary stays.
    first = tmp_path / "run.trec"
    first.write_text("old run", encoding="utf-8")
    with pytest.raises(FileNotFoundError):
        atomic_write_files({first: "new run", tmp_path / "missing" / "qrels.trec": "x"})
    assert first.read_text(encoding="utf-8") == "old run"
    assert [p.name for p in tmp_path.iterdir()] == ["run.trec"]


def test_atomic_write_with_a_long_name(tmp_path: Path) -> None:
    target = tmp_path / ("n" * 255)
    atomic_write_text(target, "fits")
    assert target.read_text(encoding="utf-8") == "fits"


def test_append_line_creates_appends_and_confines_a_torn_line(tmp_path: Path) -> None:
    from groundkit.judgments.files import append_line

    target = tmp_path / "log.jsonl"
    assert append_line(target, '{"a": 1}') is True
    assert append_line(target, '{"b": 2}') is False
    assert target.read_bytes() == b'{"a": 1}\n{"b": 2}\n'
    # A line cut short by a crash stays on its own line; the next append starts afresh.
    with target.open("ab") as handle:
        handle.write(b'{"c": ')
    append_line(target, '{"d": 4}')
    assert target.read_bytes().splitlines() == [b'{"a": 1}', b'{"b": 2}', b'{"c": ', b'{"d": 4}']


def test_append_line_reports_an_unwritable_folder(tmp_path: Path) -> None:
    from groundkit.judgments.files import append_line

    with pytest.raises(FileNotFoundError):
        append_line(tmp_path / "missing" / "log.jsonl", "x")
