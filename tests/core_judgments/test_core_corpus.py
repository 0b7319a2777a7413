"""Corpus loading from folders and JSON Lines, validation errors and fingerprints."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from groundkit.judgments import Corpus, JudgmentError, UnsafePathError

TEXTS = {
    "handbook.txt": "Welcome.\r\nLeave is 25 days.\n",
    "policies/leave.md": "# Leave\n\nCarry over up to 5 days.",
    "policies/ünïcode.txt": "naïve café",
    "empty.txt": "",
}


def _folder(root: Path, texts: dict[str, str] = TEXTS) -> Path:
    for doc, text in texts.items():
        file = root / doc
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_bytes(text.encode("utf-8"))
    return root


def _jsonl(path: Path, *records: object) -> Path:
    path.write_text(
        "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records),
        encoding="utf-8",
    )
    return path


def _symlink(link: Path, target: Path, *, is_dir: bool = False) -> None:
    try:
        link.symlink_to(target, target_is_directory=is_dir)
    except (OSError, NotImplementedError) as error:
        pytest.skip(f"cannot create symbolic links here: {error}")


# Folders -------------------------------------------------------------------------------------


def test_from_directory_reads_text_with_posix_ids(tmp_path: Path) -> None:
    root = _folder(tmp_path / "corpus")
    (root / ".git").mkdir()
    (root / ".git" / "config").write_text("hidden", encoding="utf-8")
    (root / ".DS_Store").write_bytes(b"\x00\x01binary")
    corpus = Corpus.from_directory(root)
    assert list(corpus) == sorted(TEXTS)
    assert dict(corpus) == TEXTS  # line endings kept exactly, offsets index the raw text
    assert corpus.source == str(root)
    assert corpus.total_characters == sum(len(text) for text in TEXTS.values())
    assert "handbook.txt" in corpus
    assert "missing" not in corpus
    assert len(corpus) == 4
    assert "4 documents" in repr(corpus)


def test_load_detects_folder_and_jsonl(tmp_path: Path) -> None:
    folder = Corpus.load(_folder(tmp_path / "corpus"))
    path = _jsonl(tmp_path / "c.jsonl", *({"id": d, "text": t} for d, t in TEXTS.items()))
    from_file = Corpus.load(path)
    assert folder == from_file
    assert folder.fingerprint() == from_file.fingerprint() == Corpus.from_texts(TEXTS).fingerprint()


def test_load_refuses_other_paths(tmp_path: Path) -> None:
    (tmp_path / "corpus.csv").write_text("a,b", encoding="utf-8")
    with pytest.raises(JudgmentError, match=r"a folder of text files or a \.jsonl file"):
        Corpus.load(tmp_path / "corpus.csv")
    with pytest.raises(JudgmentError, match="no such file or folder"):
        Corpus.load(tmp_path / "nothing")
    with pytest.raises(JudgmentError, match="not a folder"):
        Corpus.from_directory(tmp_path / "corpus.csv")


def test_ids_are_nfc_and_normalisation_twins_are_refused(tmp_path: Path) -> None:
    (tmp_path / "cafe\u0301.txt").write_text("x", encoding="utf-8")
    assert list(Corpus.from_directory(tmp_path)) == ["caf\u00e9.txt"]
    (tmp_path / "caf\u00e9.txt").write_text("y", encoding="utf-8")
    if len(list(tmp_path.iterdir())) == 2:  # file systems that normalise names keep one file
        with pytest.raises(JudgmentError, match="once Unicode-normalised"):
            Corpus.from_directory(tmp_path)


def test_bom_is_dropped(tmp_path: Path) -> None:
    (tmp_path / "bom.txt").write_bytes(b"\xef\xbb\xbfhello")
    assert Corpus.from_directory(tmp_path)["bom.txt"] == "hello"


def test_binary_file_is_refused_by_name(tmp_path: Path) -> None:
    _folder(tmp_path)
    (tmp_path / "policies" / "scan.pdf").write_bytes(b"%PDF-1.4\x00\x00binary")
    with pytest.raises(JudgmentError, match="binary file") as caught:
        Corpus.from_directory(tmp_path)
    assert caught.value.item_id == "policies/scan.pdf"
    assert caught.value.path == str(tmp_path / "policies" / "scan.pdf")


def test_non_utf8_file_is_refused_with_line(tmp_path: Path) -> None:
    (tmp_path / "latin.txt").write_bytes("first line\nsecond café".encode("latin-1"))
    with pytest.raises(JudgmentError) as caught:
        Corpus.from_directory(tmp_path)
    assert str(caught.value).startswith(f"{tmp_path / 'latin.txt'}:2: latin.txt: not valid UTF-8")
    assert "0xe9" in str(caught.value)


def test_empty_folder_is_an_error(tmp_path: Path) -> None:
    (tmp_path / ".hidden-only").write_text("x", encoding="utf-8")
    with pytest.raises(JudgmentError, match="no documents in folder"):
        Corpus.from_directory(tmp_path)


def test_symlink_outside_is_refused(tmp_path: Path) -> None:
    root = _folder(tmp_path / "corpus")
    secret = tmp_path / "secret.txt"
    secret.write_text("private", encoding="utf-8")
    _symlink(root / "leak.txt", secret)
    with pytest.raises(UnsafePathError, match="outside the corpus folder") as caught:
        Corpus.from_directory(root)
    assert caught.value.item_id == "leak.txt"


def test_symlinked_folder_outside_is_refused(tmp_path: Path) -> None:
    root = _folder(tmp_path / "corpus")
    elsewhere = _folder(tmp_path / "elsewhere", {"x.txt": "x"})
    _symlink(root / "mounted", elsewhere, is_dir=True)
    with pytest.raises(UnsafePathError, match="outside the corpus folder"):
        Corpus.from_directory(root)


def test_symlinks_inside_the_folder(tmp_path: Path) -> None:
    root = _folder(tmp_path / "corpus")
    _symlink(root / "alias.txt", root / "handbook.txt")
    _symlink(root / "policies-again", root / "policies", is_dir=True)
    corpus = Corpus.from_directory(root)
    assert corpus["alias.txt"] == TEXTS["handbook.txt"]
    # Folder links inside are not followed: their files are loaded from the real location.
    assert not any(doc.startswith("policies-again/") for doc in corpus)


def test_nested_folders_load_what_os_walk_finds(tmp_path: Path) -> None:
    root = tmp_path / "corpus"
    names = ["b/z.txt", "b/a/x.txt", "a.txt", "B.txt", "b/a/c/d.txt", "c/y.txt", "b.txt", "b0/q"]
    _folder(root, {name: name for name in names})
    expected = []
    for folder, dirnames, filenames in os.walk(root):
        dirnames.sort()
        here = Path(folder).relative_to(root).as_posix()
        expected += [name if here == "." else f"{here}/{name}" for name in sorted(filenames)]
    corpus = Corpus.from_directory(root)
    assert len(expected) == len(names)
    assert list(corpus) == sorted(expected)  # ids in code point order, wherever they are
    assert all(corpus[name] == name for name in names)


def test_a_large_file_is_read_whole_and_other_entries_are_skipped(tmp_path: Path) -> None:
    root = _folder(tmp_path / "corpus", {"big.txt": "word " * 100_000, "small.txt": "x"})
    if hasattr(os, "mkfifo"):
        os.mkfifo(root / "pipe")  # a reader would block on it: never opened
    corpus = Corpus.from_directory(root)
    assert list(corpus) == ["big.txt", "small.txt"]
    assert corpus["big.txt"] == "word " * 100_000


# JSON Lines ----------------------------------------------------------------------------------


def test_from_jsonl_ignores_title_and_metadata(tmp_path: Path) -> None:
    path = _jsonl(
        tmp_path / "c.jsonl",
        {"id": "b.txt", "text": "B", "title": "Bee", "metadata": {"url": "x"}},
        "",
        {"id": "a.txt", "text": "A"},
    )
    corpus = Corpus.from_jsonl(path)
    assert dict(corpus) == {"a.txt": "A", "b.txt": "B"}
    assert list(corpus) == ["a.txt", "b.txt"]
    assert corpus.source == str(path)


@pytest.mark.parametrize(
    ("record", "message", "item_id"),
    [
        ({"id": "x.txt", "text": "t", "url": "u"}, "unknown field 'url'", "x.txt"),
        ({"id": "x.txt"}, "missing required field 'text'", "x.txt"),
        ({"text": "t"}, "missing required field 'id'", None),
        ({"id": "../x", "text": "t"}, "document id '../x'", "../x"),
        ({"id": 12, "text": "t"}, "must be a string", None),
        ({"id": "x.txt", "text": ["t"]}, "text must be a string", "x.txt"),
        ({"id": "x.txt", "text": "\ud800"}, "unpaired surrogate", "x.txt"),
        (
            {"id": "first.txt", "text": "again"},
            "duplicate document id (first defined on line 1)",
            "first.txt",
        ),
        ("[]", "expected a JSON object", None),
        ("{bad", "invalid JSON", None),
    ],
)
def test_jsonl_errors_name_file_line_and_id(
    tmp_path: Path, record: object, message: str, item_id: str | None
) -> None:
    path = _jsonl(tmp_path / "c.jsonl", {"id": "first.txt", "text": "ok"}, record)
    with pytest.raises(JudgmentError) as caught:
        Corpus.from_jsonl(path)
    error = caught.value
    assert (error.path, error.line, error.item_id) == (str(path), 2, item_id)
    assert message in str(error)
    assert "\n" not in str(error)


def test_empty_jsonl_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(JudgmentError, match="no documents in file"):
        Corpus.from_jsonl(_jsonl(tmp_path / "c.jsonl"))


# In memory -----------------------------------------------------------------------------------


def test_from_texts_validates_ids_and_texts() -> None:
    with pytest.raises(JudgmentError, match="absolute") as caught:
        Corpus.from_texts({"/etc/passwd": "x"})
    assert caught.value.item_id == "/etc/passwd"
    with pytest.raises(JudgmentError, match="must be a string"):
        Corpus.from_texts({"a.txt": b"bytes"})  # type: ignore[dict-item]
    assert len(Corpus.from_texts({})) == 0


def test_fingerprint_depends_on_ids_and_texts_only() -> None:
    base = Corpus.from_texts({"a": "xy", "b": "z"})
    assert base.fingerprint() == Corpus.from_texts({"b": "z", "a": "xy"}).fingerprint()
    assert len(base.fingerprint()) == 64
    # Moving a character between documents or renaming must change it.
    assert base.fingerprint() != Corpus.from_texts({"a": "x", "b": "yz"}).fingerprint()
    assert base.fingerprint() != Corpus.from_texts({"a": "xy", "c": "z"}).fingerprint()


def test_corpus_is_read_only() -> None:
    corpus = Corpus.from_texts({"a": "x"})
    with pytest.raises(TypeError):
        corpus["b"] = "y"  # type: ignore[index]
    with pytest.raises(KeyError):
        corpus["missing"]
