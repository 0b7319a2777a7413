"""The corpus: document id -> text, loaded from a folder of text files or from JSON Lines."""

from __future__ import annotations

import errno
import hashlib
import itertools
import os
import stat
import unicodedata
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from groundkit.judgments._errors import JudgmentError, UnsafePathError
from groundkit.judgments.gold._io import iter_jsonl_objects
from groundkit.judgments.gold._models import validate_doc_id

__all__ = ["Corpus"]

_BOM = "\ufeff"
_JSONL_FIELDS = frozenset({"id", "text", "title", "metadata"})


def _check_text(text: object, *, doc: str, path: str | Path | None, line: int | None) -> str:
    if not isinstance(text, str):
        raise JudgmentError(
            f"document text must be a string, not {type(text).__name__}",
            path=path,
            line=line,
            item_id=doc,
        )
    try:
        if not text.isascii():  # ASCII is valid UTF-8; no need to encode a copy to know it
            text.encode("utf-8")
    except UnicodeEncodeError:
        # A lone surrogate ("\ud800" is legal JSON) cannot be written back or hashed as UTF-8.
        raise JudgmentError(
            "document text contains an unpaired surrogate", path=path, line=line, item_id=doc
        ) from None
    if "\x00" in text:
        # The same rule as a folder corpus, where a NUL byte marks a binary file.
        raise JudgmentError(
            "document text contains a NUL character; a corpus holds text only",
            path=path,
            line=line,
            item_id=doc,
        )
    return text


def _check_id(doc: object, *, path: str | Path | None, line: int | None) -> str:
    try:
        return validate_doc_id(doc)  # type: ignore[arg-type]  # runtime check of untrusted input
    except JudgmentError as error:
        raise JudgmentError(
            error.message, path=path, line=line, item_id=doc if isinstance(doc, str) else None
        ) from None


class Corpus(Mapping[str, str]):
    """Read-only mapping from document id to document text, ordered by id.

    Document ids are relative POSIX paths (``handbook.txt``, ``policies/leave.md``); character
    offsets of spans and hits index into these exact texts (line endings are kept as stored).

    Build one with :meth:`from_directory`, :meth:`from_jsonl`, :meth:`load` (either, detected)
    or :meth:`from_texts`.
    """

    __slots__ = ("_derived", "_fingerprint", "_texts", "_total", "source")

    def __init__(self, texts: Mapping[str, str], *, source: str | None = None) -> None:
        """Wrap already validated texts; prefer the ``from_*`` constructors, which validate."""
        self._texts: dict[str, str] = {doc: texts[doc] for doc in sorted(texts)}
        self._setup(source)

    @classmethod
    def _owning(cls, texts: dict[str, str], *, source: str | None) -> Corpus:
        """A corpus that takes over a dict built by one of its constructors.

        When the ids already come in order (a JSON Lines file written in id order), the dict
        is kept as it is: a large corpus never has a second table, even for a moment.
        """
        corpus = cls.__new__(cls)
        in_order = all(a < b for a, b in itertools.pairwise(texts))
        corpus._texts = texts if in_order else {doc: texts[doc] for doc in sorted(texts)}
        corpus._setup(source)
        return corpus

    def _setup(self, source: str | None) -> None:
        self._total = sum(len(text) for text in self._texts.values())
        self._fingerprint: str | None = None
        #: Data derived from the texts (normalised copies, search indexes), filled on demand by
        #: the resolution functions; internal, never part of equality or the fingerprint.
        self._derived: dict[str, Any] = {}
        self.source = source

    # Mapping protocol ---------------------------------------------------------------------

    def __getitem__(self, doc: str) -> str:
        return self._texts[doc]

    def __iter__(self) -> Iterator[str]:
        return iter(self._texts)

    def __len__(self) -> int:
        return len(self._texts)

    def __contains__(self, doc: object) -> bool:
        return doc in self._texts

    def __repr__(self) -> str:
        return f"Corpus({len(self)} documents, {self._total} characters, source={self.source!r})"

    # Properties ---------------------------------------------------------------------------

    @property
    def total_characters(self) -> int:
        """Sum of the lengths (in characters) of all documents."""
        return self._total

    def fingerprint(self) -> str:
        """SHA-256 (hex) over the sorted ids and their texts; independent of the source format.

        Returns:
            64 lowercase hexadecimal characters.
        """
        if self._fingerprint is None:
            digest = hashlib.sha256()
            for doc, text in self._texts.items():
                # Length-prefixed fields: no choice of ids and texts can produce the same stream.
                for field in (doc.encode("utf-8"), text.encode("utf-8")):
                    digest.update(len(field).to_bytes(8, "big"))
                    digest.update(field)
            self._fingerprint = digest.hexdigest()
        return self._fingerprint

    # Constructors -------------------------------------------------------------------------

    @classmethod
    def from_texts(cls, texts: Mapping[str, str], *, source: str | None = None) -> Corpus:
        """Build a corpus from a mapping of document id to text (ids and texts are validated).

        Args:
            texts: Document id -> text.
            source: Where the texts came from, for messages.

        Returns:
            The corpus.

        Raises:
            JudgmentError: An id breaks the document-id contract or a text is not a string.
        """
        checked: dict[str, str] = {}
        for doc, text in texts.items():
            doc_id = _check_id(doc, path=None, line=None)
            checked[doc_id] = _check_text(text, doc=doc_id, path=None, line=None)
        return cls._owning(checked, source=source)

    @classmethod
    def from_jsonl(cls, path: str | Path) -> Corpus:
        """Load a corpus from JSON Lines: one ``{"id": ..., "text": ...}`` object per line.

        ``"title"`` and ``"metadata"`` may be present and are ignored (the text is what is
        searched and what offsets refer to); any other field is an error, as are duplicate ids.
        The file is read one line at a time. Blank lines are skipped.

        Args:
            path: The ``.jsonl`` file.

        Returns:
            The corpus.

        Raises:
            JudgmentError: The first problem, naming the file, the line and the id.
        """
        texts: dict[str, str] = {}
        first_line: dict[str, int] = {}
        for number, data in iter_jsonl_objects(path):
            raw_id = data.get("id")
            shown_id = raw_id if isinstance(raw_id, str) else None
            unknown = sorted(set(data) - _JSONL_FIELDS)
            if unknown:
                raise JudgmentError(
                    f"unknown field {unknown[0]!r} (allowed: id, text, title, metadata)",
                    path=path,
                    line=number,
                    item_id=shown_id,
                )
            for required in ("id", "text"):
                if required not in data:
                    raise JudgmentError(
                        f"missing required field {required!r}",
                        path=path,
                        line=number,
                        item_id=shown_id,
                    )
            doc = _check_id(raw_id, path=path, line=number)
            previous = first_line.setdefault(doc, number)
            if previous != number:
                raise JudgmentError(
                    f"duplicate document id (first defined on line {previous})",
                    path=path,
                    line=number,
                    item_id=doc,
                )
            texts[doc] = _check_text(data["text"], doc=doc, path=path, line=number)
        if not texts:
            raise JudgmentError("no documents in file", path=path)
        return cls._owning(texts, source=os.fspath(path))

    @classmethod
    def from_directory(cls, path: str | Path) -> Corpus:
        """Load every regular file below a folder as one UTF-8 document.

        The document id is the file's path relative to the folder, with ``/`` separators, in
        Unicode NFC (file systems may return decomposed names).
        Hidden files and folders (name starting with ``.``) are skipped. Every other file must be
        UTF-8 text: binary files (containing NUL bytes) and other encodings are refused with an
        error naming the file. A leading UTF-8 byte-order mark is dropped; line endings are kept.
        Symbolic links that lead outside the folder are refused; a link to a folder inside it is
        not followed (its files are already loaded from their real location).

        Args:
            path: The corpus folder.

        Returns:
            The corpus.

        Raises:
            JudgmentError: The folder is missing or empty, or a file is unreadable or not text.
            UnsafePathError: A symbolic link points outside the folder.
        """
        root = Path(path)
        if not root.is_dir():
            raise JudgmentError("not a folder", path=root)
        resolved_root = root.resolve()
        texts: dict[str, str] = {}
        for folder, dirnames, entries in _walk(os.fspath(root)):
            here = Path(folder)
            _prune_folders(resolved_root, here, dirnames)
            # Plain strings, and the file's type from the folder listing (no stat call for a
            # regular file): pathlib and a stat per file cost more than the reading.
            # ``location`` and ``prefix + name`` are the strings of ``here / name`` and of its
            # path relative to the folder.
            base = os.fspath(here)
            relative = here.relative_to(root).as_posix()
            prefix = "" if relative == "." else relative + "/"
            for entry in sorted(entries, key=_name):
                name = entry.name
                if name.startswith("."):
                    continue
                location = name if base == "." else os.path.join(base, name)  # noqa: PTH118
                # macOS may hand back decomposed (NFD) names; ids are always NFC so that they
                # match the ids typed in judgments.
                doc = unicodedata.normalize("NFC", prefix + name)
                if not _regular(entry) and not _is_document(
                    resolved_root, here, name, location, doc
                ):
                    continue
                if doc in texts:
                    raise JudgmentError(
                        "two files have this name once Unicode-normalised (NFC); rename one",
                        path=location,
                        item_id=doc,
                    )
                texts[_check_id(doc, path=location, line=None)] = _read_document(location, doc)
        if not texts:
            raise JudgmentError("no documents in folder", path=root)
        return cls._owning(texts, source=os.fspath(root))

    @classmethod
    def load(cls, path: str | Path) -> Corpus:
        """Load a corpus from a folder (:meth:`from_directory`) or a ``.jsonl`` file.

        Args:
            path: A folder of text files, or a JSON Lines file.

        Returns:
            The corpus.

        Raises:
            JudgmentError: The path is neither, or its content is invalid.
        """
        candidate = Path(path)
        if candidate.is_dir():
            return cls.from_directory(candidate)
        if candidate.suffix.lower() == ".jsonl":
            return cls.from_jsonl(candidate)
        if not candidate.exists():
            raise JudgmentError("no such file or folder", path=candidate)
        raise JudgmentError("a corpus is a folder of text files or a .jsonl file", path=candidate)


def _walk(top: str) -> Iterator[tuple[str, list[str], list[os.DirEntry[str]]]]:
    """``os.walk(top)`` from the top down, each folder's other entries as ``os.DirEntry``.

    The same folders in the same order as ``os.walk`` (the caller may prune the names of the
    subfolders in place; a link to a folder is listed, not followed); the entries keep the
    type the folder listing gave, so that a regular file needs no stat call.

    Raises:
        JudgmentError: A folder cannot be listed.
    """
    pending = [top]
    while pending:
        folder = pending.pop()
        try:
            with os.scandir(folder) as listing:
                entries = list(listing)
        except OSError as error:
            _raise_walk_error(error)
        folders: list[str] = []
        others: list[os.DirEntry[str]] = []
        for entry in entries:
            try:
                is_folder = entry.is_dir()
            except OSError:
                is_folder = False
            if is_folder:
                folders.append(entry.name)
            else:
                others.append(entry)
        yield folder, folders, others
        below = (os.path.join(folder, name) for name in folders)  # noqa: PTH118
        pending.extend(reversed([path for path in below if not os.path.islink(path)]))  # noqa: PTH114


def _name(entry: os.DirEntry[str]) -> str:
    return entry.name


def _regular(entry: os.DirEntry[str]) -> bool:
    """Whether the entry is a regular file (not a link), by the folder listing when it says."""
    try:
        return entry.is_file(follow_symlinks=False)
    except OSError:
        return False


def _prune_folders(resolved_root: Path, here: Path, dirnames: list[str]) -> None:
    """Drop hidden folders and links to folders inside the corpus from the walk, in place."""
    for name in list(dirnames):
        child = here / name
        if name.startswith(".") or (
            child.is_symlink() and _inside(resolved_root, child, child.as_posix())
        ):
            dirnames.remove(name)
    dirnames.sort()


def _is_document(resolved_root: Path, here: Path, name: str, location: str, doc: str) -> bool:
    """Whether the entry ``name`` of ``here`` (at ``location``) is a regular file to load."""
    try:
        mode: int | None = os.lstat(location).st_mode
    except PermissionError:
        raise JudgmentError(
            "cannot read this entry (permission denied on its folder)",
            path=location,
            item_id=doc,
        ) from None
    except (OSError, ValueError):
        mode = None  # let pathlib decide below, exactly as for a link
    if mode is None or stat.S_ISLNK(mode):
        file = here / name
        if file.is_symlink():
            _inside(resolved_root, file, doc)
        return file.is_file()
    return stat.S_ISREG(mode)  # sockets, fifos, device files: not documents


def _raise_walk_error(error: OSError) -> None:
    raise JudgmentError(f"cannot read folder: {error.strerror or error}", path=error.filename)


def _inside(resolved_root: Path, link: Path, doc: str) -> bool:
    try:
        target = link.resolve(strict=True)
    except FileNotFoundError:
        return True  # a dangling link is no document; skipped by the caller
    except (OSError, RuntimeError) as error:
        # RuntimeError: Python 3.11 reports a symbolic link loop that way.
        reason = (
            "a symbolic link loop"
            if isinstance(error, RuntimeError) or getattr(error, "errno", None) == errno.ELOOP
            else (error.strerror or str(error))
        )
        raise JudgmentError(
            f"cannot follow this symbolic link: {reason}", path=link, item_id=doc
        ) from None
    if target != resolved_root and not target.is_relative_to(resolved_root):
        raise UnsafePathError(
            f"symbolic link points outside the corpus folder (to {target})",
            path=link,
            item_id=doc,
        )
    return True


def _read_document(file: str, doc: str) -> str:
    try:
        data = _read_bytes(file)
    except OSError as error:
        raise JudgmentError(
            f"cannot read file: {error.strerror or error}", path=file, item_id=doc
        ) from None
    if b"\x00" in data:
        raise JudgmentError(
            "binary file (contains NUL bytes); a corpus holds UTF-8 text files only",
            path=file,
            item_id=doc,
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        raise JudgmentError(
            f"not valid UTF-8 (byte 0x{data[error.start]:02x} at offset {error.start}); "
            "convert the file to UTF-8",
            path=file,
            line=line,
            item_id=doc,
        ) from None
    return text.removeprefix(_BOM)


_READ_CHUNK = 1 << 17
_READ_FLAGS = os.O_RDONLY | getattr(os, "O_BINARY", 0)  # no newline translation on Windows


def _read_bytes(file: str) -> bytes:
    """A file's bytes with plain system calls (a file object costs more than the reading)."""
    handle = os.open(file, _READ_FLAGS)
    try:
        chunks: list[bytes] = []
        while chunk := os.read(handle, _READ_CHUNK):
            chunks.append(chunk)
    finally:
        os.close(handle)
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)
