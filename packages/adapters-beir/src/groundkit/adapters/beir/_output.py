"""The output folder: checks that write nothing, then writes that can be rolled back.

Layout: ``corpus/<document id>.txt``, ``judgments.jsonl`` and ``id_map.json`` (how BEIR's ids
became groundkit's: core's :class:`~groundkit.judgments.IdMap`). :func:`check_output` and
:func:`check_targets` run before anything is written. :class:`OutputWriter` records every
folder and file it creates, so a failure half-way (a full disk, a corpus file that changed
between the two reading passes, an interrupt) removes them again and leaves the output folder
as it was.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections import deque
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from groundkit.adapters.beir._errors import BeirError
from groundkit.judgments import ID_MAP_FILE_NAME, JudgmentError, atomic_write_bytes, ensure_within

__all__ = [
    "CORPUS_DIR_NAME",
    "ID_MAP_NAME",
    "JUDGMENTS_NAME",
    "OutputLayout",
    "OutputWriter",
    "check_output",
    "check_targets",
]

CORPUS_DIR_NAME = "corpus"
JUDGMENTS_NAME = "judgments.jsonl"
ID_MAP_NAME = ID_MAP_FILE_NAME

# Each atomic write fsyncs its file; a few threads overlap those waits (they release the GIL),
# which makes writing thousands of small files several times faster than one at a time.
_WRITER_THREADS = 16
# Bounded look-ahead: the texts waiting to be written stay a small, fixed amount of memory.
_MAX_IN_FLIGHT = 128
# Progress is reported at the start, the end, and about every 0.5% of the documents.
_PROGRESS_STEPS = 200


@dataclass(frozen=True, slots=True)
class OutputLayout:
    """Where the adapted dataset goes."""

    root: Path
    corpus_dir: Path
    judgments_path: Path
    id_map_path: Path

    @classmethod
    def of(cls, output_dir: Path) -> OutputLayout:
        """The layout below ``output_dir``."""
        return cls(
            output_dir,
            output_dir / CORPUS_DIR_NAME,
            output_dir / JUDGMENTS_NAME,
            output_dir / ID_MAP_NAME,
        )


def _first_existing_ancestor(path: Path) -> Path:
    current = path.absolute()
    while not (current.exists() or current.is_symlink()) and current.parent != current:
        current = current.parent
    return current


def _check_file_slot(path: Path, what: str) -> None:
    if path.is_symlink():
        raise BeirError(f"{what} is a symbolic link; refusing to write through it", path=path)
    if path.exists() and not path.is_file():
        kind = "a folder" if path.is_dir() else "not a regular file"
        raise BeirError(f"{what} exists and is {kind}", path=path)


def check_output(layout: OutputLayout) -> None:
    """Refuse an output folder that cannot receive the adapted dataset cleanly.

    Writes nothing. Refused: an output path that is a file (or a broken link); a missing
    output folder whose nearest existing ancestor is not a writable folder; a ``corpus`` that
    is a symbolic link, not a folder, or a non-empty folder (two datasets would mix);
    ``judgments.jsonl`` or ``id_map.json`` that is a symbolic link or not a regular file.

    Args:
        layout: The output layout.

    Raises:
        BeirError: The first problem found, naming the path.
    """
    root = layout.root
    if root.is_symlink() and not root.exists():
        raise BeirError("output path is a broken symbolic link", path=root)
    if root.exists() and not root.is_dir():
        raise BeirError("output path exists and is not a folder", path=root)
    if not root.exists():
        ancestor = _first_existing_ancestor(root)
        if not ancestor.is_dir():
            raise BeirError(
                f"cannot create the output folder: {ancestor} is not a folder", path=root
            )
        if not os.access(ancestor, os.W_OK | os.X_OK):
            raise BeirError(f"cannot create the output folder: {ancestor} is not writable")
        return
    if not os.access(root, os.W_OK | os.X_OK):
        raise BeirError("output folder is not writable", path=root)
    corpus = layout.corpus_dir
    if corpus.is_symlink():
        raise BeirError("corpus is a symbolic link; refusing to write through it", path=corpus)
    if corpus.exists():
        if not corpus.is_dir():
            raise BeirError("corpus exists and is not a folder", path=corpus)
        with os.scandir(corpus) as entries:
            if next(entries, None) is not None:
                raise BeirError(
                    "corpus folder is not empty; adapting into it would mix two datasets "
                    "(choose a new output folder or empty this one)",
                    path=corpus,
                )
        if not os.access(corpus, os.W_OK | os.X_OK):
            raise BeirError("corpus folder is not writable", path=corpus)
    _check_file_slot(layout.judgments_path, JUDGMENTS_NAME)
    _check_file_slot(layout.id_map_path, ID_MAP_NAME)


def _within(root: Path, candidate: Path) -> Path:
    try:
        return ensure_within(root, candidate)
    except JudgmentError as error:
        raise BeirError(error.message, path=error.path, line=error.line) from None


def check_targets(layout: OutputLayout, file_names: Iterable[str]) -> None:
    """Second barrier, independent of id validation: every target resolves inside the output.

    Each path is resolved with symbolic links followed (core's ``ensure_within``); a corpus
    file must land directly in the resolved ``corpus`` folder under the resolved output folder.

    Raises:
        BeirError: A target resolves elsewhere.
    """
    # Absolute candidates: ensure_within reads a relative candidate as relative to its root.
    root = layout.root.absolute()
    corpus_dir = layout.corpus_dir.absolute()
    corpus = _within(root, corpus_dir)
    _within(root, layout.judgments_path.absolute())
    _within(root, layout.id_map_path.absolute())
    for name in file_names:
        resolved = _within(corpus, corpus_dir / name)
        if resolved.parent != corpus:
            raise BeirError(
                f"document file name {name!r} does not resolve to a file directly in the "
                "corpus folder",
                path=layout.corpus_dir,
            )


class OutputWriter:
    """Creates the output; :meth:`rollback` removes everything this writer created."""

    def __init__(self, layout: OutputLayout) -> None:
        """Prepare to write ``layout`` (nothing is created yet)."""
        self.layout = layout
        self._created_dirs: list[Path] = []
        self._written: list[Path] = []
        self._lock = threading.Lock()

    def _make_dir(self, folder: Path) -> None:
        if folder.is_dir():
            return
        folder.mkdir()
        self._created_dirs.append(folder)

    def prepare(self) -> None:
        """Create the output folder (and missing parents) and ``corpus/``.

        Raises:
            BeirError: A folder cannot be created, or ``corpus`` became a symbolic link.
        """
        missing: list[Path] = []
        current = self.layout.root.absolute()
        while not (current.exists() or current.is_symlink()):
            missing.append(current)
            current = current.parent
        try:
            for folder in reversed(missing):
                self._make_dir(folder)
            self._make_dir(self.layout.corpus_dir)
        except OSError as error:
            raise BeirError(
                f"cannot create folder: {error.strerror or error}", path=error.filename
            ) from None
        if self.layout.corpus_dir.is_symlink():
            raise BeirError(
                "corpus is a symbolic link; refusing to write through it",
                path=self.layout.corpus_dir,
            )

    def _record(self, path: Path) -> None:
        with self._lock:
            self._written.append(path)

    def write_file(self, path: Path, data: bytes) -> None:
        """Write one file atomically and remember it for :meth:`rollback`.

        Raises:
            BeirError: The file cannot be written.
        """
        existed = path.exists()
        try:
            atomic_write_bytes(path, data)
        except OSError as error:
            raise BeirError(f"cannot write file: {error.strerror or error}", path=path) from None
        if not existed:
            self._record(path)

    def remember(self, path: Path) -> None:
        """Mark a file written by someone else (e.g. ``dump_judgments``) as ours to remove."""
        self._record(path)

    def write_corpus(
        self,
        documents: Iterable[tuple[str, str]],
        total: int,
        progress: Callable[[int, int], None] | None,
    ) -> int:
        """Write ``(file name, text)`` pairs into ``corpus/``, each file atomically.

        Args:
            documents: The files to write, streamed (read lazily from the source).
            total: The number of documents expected, for progress.
            progress: Called with ``(written, total)``.

        Returns:
            The number of files written.

        Raises:
            BeirError: A file cannot be written (or ``documents`` raised it).
        """
        step = max(1, total // _PROGRESS_STEPS)
        done = 0
        if progress is not None:
            progress(0, total)
        pending: deque[tuple[Path, Future[None]]] = deque()

        def settle_oldest() -> None:
            nonlocal done
            path, future = pending.popleft()
            try:
                future.result()
            except OSError as error:
                raise BeirError(
                    f"cannot write file: {error.strerror or error}", path=path
                ) from None
            self._record(path)
            done += 1
            if progress is not None and (done % step == 0 or done == total):
                progress(done, total)

        with ThreadPoolExecutor(_WRITER_THREADS, thread_name_prefix="beir-write") as pool:
            try:
                for name, text in documents:
                    path = self.layout.corpus_dir / name
                    pending.append((path, pool.submit(atomic_write_bytes, path, text.encode())))
                    if len(pending) >= _MAX_IN_FLIGHT:
                        settle_oldest()
                while pending:
                    settle_oldest()
            finally:
                # On failure: let the writes already started finish, and remember those that
                # succeeded so that rollback removes them too.
                for path, future in pending:
                    if not future.cancel() and future.exception() is None:
                        self._record(path)
        return done

    def rollback(self) -> None:
        """Remove every file and folder this writer created (best effort, never raises)."""
        with self._lock:
            written, self._written = self._written, []
        for path in reversed(written):
            with contextlib.suppress(OSError):
                path.unlink(missing_ok=True)
        for folder in reversed(self._created_dirs):
            with contextlib.suppress(OSError):
                folder.rmdir()
        self._created_dirs = []
