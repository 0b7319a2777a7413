"""Outputs written as a set, and the stale temporaries a killed writer leaves behind.

Every writer of the project goes through :class:`OutputSet`: each output (a file, or a whole
folder for the BEIR adapter) is first written to a *temporary sibling* in the same folder,
``.<name>.grk-<pid>-<random>.tmp``. Only when every member is complete are they made durable
and renamed over their final paths, so readers see the old set or the new set:

1. every temporary is flushed to disk (each file is fsync'd by the atomic writers; a folder is
   flushed once with ``syncfs`` where the system has it, else file by file);
2. a small *journal* naming every member, ``.grk-set-<pid>-<random>.json``, is written
   atomically into each folder that holds a member;
3. with SIGINT and SIGTERM held back, every temporary is renamed over its final path in a fixed
   order (a final folder that exists is first moved to a backup name recorded in the journal;
   a final file that exists keeps a hard link to its old content, ``.<name>.grk-…-….prev``);
4. the folders are fsync'd, the journals, backups and links removed.

The guarantee: a failure or an interrupt before step 3 leaves every old output as it was (the
temporaries are removed, or, after SIGKILL or a power cut, ignored and removed by the next
writer); SIGINT and SIGTERM cannot interrupt step 3; a rename that fails inside step 3 (a
folder made read-only meanwhile, an I/O error) undoes the renames done before it from the
links and backups, so the old set stands (where the file system refused the links, the journal
is kept and the next writer completes the new set instead); after SIGKILL or a crash inside
step 3 (a window of a few renames), the next :class:`OutputSet` touching any of those folders,
or the next report read from one (:func:`~groundkit.judgments.report.load_report`), finds the
journal and finishes the renames before doing anything else, so the new set is completed. A
journal whose writer is still running is left alone, as are its temporaries.

A journal is data, and a folder may come from elsewhere: a dead writer's journal is acted on
only for the members whose folder holds the same journal, each renamed only from a temporary
named as this module names them (``.<name>.grk-<pid>-<hex>.tmp``, ``.old``, ``.prev``) beside
it; anything else in a journal makes it foreign, and it is removed without acting on it.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import errno
import json
import os
import re
import secrets
import shutil
import signal
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path
from types import FrameType, TracebackType
from typing import Any

from groundkit.judgments._errors import JudgmentError
from groundkit.judgments.files._journal import (
    _STEM_CHARS,
    _TEMP_TAIL,
    JOURNAL_KIND,
    read_journal,
    restricted,
    shares_journal,
)

__all__ = [
    "JOURNAL_KIND",
    "OutputSet",
    "OutputSetError",
    "flush_tree",
    "pid_alive",
    "recover_folder",
    "remove_stale_temporaries",
    "temporary_sibling",
]

_JOURNAL_VERSION = 1
_JOURNAL_NAME = re.compile(r"^\.grk-set-(\d+)-[0-9a-f]{8}\.json$")
_HELD_SIGNALS = {signal.SIGINT, signal.SIGTERM}


class OutputSetError(JudgmentError):
    """Outputs that could not be written or committed as a set."""


def temporary_sibling(final: Path, pid: int | None = None) -> Path:
    """A fresh temporary name beside ``final`` (same folder, hence the same file system)."""
    process = os.getpid() if pid is None else pid
    stem = final.name[:_STEM_CHARS]
    return final.with_name(f".{stem}.grk-{process}-{secrets.token_hex(4)}.tmp")


def pid_alive(pid: int) -> bool:
    """Whether process ``pid`` still runs on this machine (unknown counts as running)."""
    if pid == os.getpid():
        return True
    if os.name == "nt":  # os.kill(pid, 0) would terminate the process there
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def _remove(path: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink()


def _fsync_folder(folder: Path) -> None:
    try:
        descriptor = os.open(folder, os.O_RDONLY)
    except OSError:
        return  # folders cannot be opened this way on Windows
    try:
        os.fsync(descriptor)
    except OSError:
        pass
    finally:
        os.close(descriptor)


def _syncfs(folder: Path) -> bool:
    """Flush the whole file system holding ``folder`` in one call (Linux ``syncfs``)."""
    name = ctypes.util.find_library("c")
    if name is None or not hasattr(os, "O_DIRECTORY"):
        return False
    try:
        libc = ctypes.CDLL(name, use_errno=True)
        syncfs = libc.syncfs
    except (OSError, AttributeError):
        return False
    descriptor = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        return int(syncfs(descriptor)) == 0
    finally:
        os.close(descriptor)


def flush_tree(folder: Path) -> None:
    """Make every file and folder below ``folder`` durable: one ``syncfs``, else one by one."""
    if not _syncfs(folder):
        for root, _, files in os.walk(folder):
            for name in files:
                descriptor = os.open(os.path.join(root, name), os.O_RDONLY)  # noqa: PTH118
                try:
                    os.fsync(descriptor)
                finally:
                    os.close(descriptor)
    for root, _, _ in os.walk(folder):
        _fsync_folder(Path(root))


@contextlib.contextmanager
def _signals_held() -> Iterator[None]:
    """Defer SIGINT and SIGTERM until the block is done, then act on them as usual.

    Python handlers are swapped rather than the signals masked: a mask applies to one thread,
    and a signal sent to the process may be taken by any other thread, after which Python
    would still run the handler in the main thread at once. Off the main thread (where
    handlers cannot be changed) the block runs as it is.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    pending: list[int] = []

    def defer(signum: int, frame: FrameType | None) -> None:
        pending.append(signum)

    previous = {number: signal.getsignal(number) for number in _HELD_SIGNALS}
    for number in _HELD_SIGNALS:
        signal.signal(number, defer)
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, signal.SIG_DFL if handler is None else handler)
        for received in dict.fromkeys(pending):
            action = previous[signal.Signals(received)]
            if callable(action):
                action(received, None)
            elif action in (signal.SIG_DFL, None):
                signal.raise_signal(received)  # the default action, now that renames are done


def _write_journal(path: Path, content: dict[str, Any]) -> None:
    # Written in place: a journal cut short does not parse and is then ignored, and no rename
    # starts before this one is on disk.
    data = (json.dumps(content, ensure_ascii=False, sort_keys=True) + "\n").encode("utf-8")
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
    except BaseException:
        with contextlib.suppress(OSError):
            path.unlink()
        raise


def _roll_forward(members: list[dict[str, Any]], obsolete: Iterable[str]) -> None:
    """Finish the renames of a committed set (idempotent: done renames are skipped)."""
    for member in members:
        final = Path(member["final"])
        temporary = Path(member["temporary"])
        backup = member.get("backup")
        if not (temporary.exists() or temporary.is_symlink()):
            continue  # renamed already
        if member.get("folder") and final.is_dir() and not final.is_symlink():
            if not backup or Path(backup).exists():
                raise FileExistsError(errno.EEXIST, "the final folder exists", os.fspath(final))
            final.rename(backup)
        temporary.replace(final)
    for member in members:
        for kept in (member.get("backup"), member.get("previous")):
            if kept:
                _remove(Path(kept))
    for path in obsolete:
        _remove(Path(path))


def _undo(members: list[dict[str, Any]]) -> bool:
    """Put back the old outputs of the members already renamed (in reverse order).

    Each new output goes back to its temporary name first, then the old one (a backup folder
    or a hard link) to its final name: killed in between, the journal still finishes the new
    set. Returns whether every old output is back (nothing is undone when one cannot be).
    """
    done = [m for m in members if not Path(m["temporary"]).exists()]
    if any(m.get("existed") and not (m.get("backup") or m.get("previous")) for m in done):
        return False  # an old output with no copy to go back to
    try:
        for member in members:  # a folder moved aside whose new one did not follow
            final, backup = Path(member["final"]), member.get("backup")
            if member not in done and backup and Path(backup).exists() and not final.exists():
                Path(backup).replace(final)
        for member in reversed(done):
            final, temporary = Path(member["final"]), Path(member["temporary"])
            final.replace(temporary)
            kept = member.get("backup") or member.get("previous")
            if kept and Path(kept).exists():
                Path(kept).replace(final)
    except OSError:
        return False
    return True


def recover_folder(folder: Path) -> list[Path]:
    """Finish the interrupted commits recorded in ``folder`` by writers that are gone.

    A journal acts only on members whose folder holds the same journal, renamed from names
    this module gives (see the module documentation); a journal that is not ours is removed.

    Args:
        folder: A folder that holds (or will hold) outputs.

    Returns:
        The final paths that were completed.

    Raises:
        OutputSetError: A journal names renames that cannot be finished.
    """
    finished: list[Path] = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return finished
    for entry in entries:
        match = _JOURNAL_NAME.match(entry.name)
        if match is None or pid_alive(int(match.group(1))):
            continue
        journal = Path(entry.path)
        data = read_journal(journal)
        if data is None:
            _remove(journal)  # a journal is written atomically: this one is not ours
            continue
        members, obsolete = restricted(journal, data)
        try:
            _roll_forward(members, obsolete)
        except OSError as error:
            raise OutputSetError(
                f"cannot finish the interrupted write recorded in {journal}: "
                f"{error.strerror or error}"
            ) from None
        for copy in data.get("journals", [os.fspath(journal)]):
            if Path(copy).name == journal.name and (
                Path(copy) == journal or shares_journal(Path(copy).parent, journal.name, data)
            ):
                _remove(Path(copy))
        _remove(journal)
        finished.extend(Path(m["final"]) for m in members)
    return finished


def _stale_temporaries(final: Path) -> Iterator[Path]:
    prefix = f".{final.name[:_STEM_CHARS]}"
    try:
        entries = list(os.scandir(final.parent))
    except OSError:
        return
    for entry in entries:
        if not entry.name.startswith(prefix):
            continue
        match = _TEMP_TAIL.search(entry.name)
        if match is None or entry.name[: match.start()] != prefix:
            continue
        if not pid_alive(int(match.group(1))):
            yield Path(entry.path)


def remove_stale_temporaries(final: Path) -> int:
    """Remove the temporaries that killed writers left beside ``final``; returns how many."""
    count = 0
    for stale in _stale_temporaries(final):
        with contextlib.suppress(OSError):
            _remove(stale)
            count += 1
    return count


class OutputSet:
    """Outputs committed together: readers see all old outputs or all new ones.

    Use as a context manager; write each member to :meth:`temporary` and call :meth:`commit`.
    Leaving the block without committing removes the temporaries (the old outputs stay).

    Args:
        finals: The final paths, in commit order.
        folders: Those of ``finals`` that are folders (written whole, e.g. a BEIR output).
        obsolete: Files to remove when the set is committed (an earlier run's file that the
            new set no longer has, such as a stale ``id_map.json``).
    """

    def __init__(
        self,
        finals: Iterable[Path],
        *,
        folders: Iterable[Path] = (),
        obsolete: Iterable[Path] = (),
    ) -> None:
        self.finals = [Path(p).absolute() for p in finals]
        self._folders = {Path(p).absolute() for p in folders}
        self._obsolete = [Path(p).absolute() for p in obsolete]
        self._temporaries: dict[Path, Path] = {}
        self.committed = False
        self.recovered: list[Path] = []

    def __enter__(self) -> OutputSet:
        self.prepare()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if not self.committed:
            self.discard()

    def prepare(self) -> None:
        """Finish interrupted commits, remove stale temporaries, and name the new ones.

        Raises:
            OutputSetError: An interrupted commit cannot be finished.
        """
        for folder in dict.fromkeys(final.parent for final in self.finals):
            self.recovered.extend(recover_folder(folder))
        for final in self.finals:
            remove_stale_temporaries(final)
            self._temporaries[final] = temporary_sibling(final)
            if final in self._folders:
                self._temporaries[final].mkdir()

    def temporary(self, final: Path) -> Path:
        """Where to write member ``final`` (a folder member's temporary folder exists)."""
        return self._temporaries[Path(final).absolute()]

    def write_bytes(self, final: Path, data: bytes) -> None:
        """Write member ``final``'s complete content to its temporary and flush it to disk.

        Raises:
            OutputSetError: The disk refused (full, read-only...); the message names ``final``
                and nothing was replaced.
        """
        temporary = self.temporary(final)
        try:
            descriptor = os.open(
                temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_BINARY", 0), 0o666
            )
            with os.fdopen(descriptor, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
        except OSError as error:
            with contextlib.suppress(OSError):
                temporary.unlink()
            raise OutputSetError(
                f"cannot write: {error.strerror or error} (the earlier outputs are unchanged)",
                path=final,
            ) from None

    def write_text(self, final: Path, text: str) -> None:
        """Write member ``final`` as UTF-8 text, line endings as given (see :meth:`write_bytes`)."""
        self.write_bytes(final, text.encode("utf-8"))

    def discard(self) -> None:
        """Remove every temporary (best effort; the old outputs are untouched)."""
        for temporary in self._temporaries.values():
            with contextlib.suppress(OSError):
                _remove(temporary)

    def _flush(self) -> None:
        """Make every temporary durable (a file written by other means than write_bytes too).

        Raises:
            OutputSetError: The disk refused (a delayed allocation that finds no space): the
                message names the output, and nothing was replaced.
        """
        for final, temporary in self._temporaries.items():
            try:
                if final in self._folders:
                    flush_tree(temporary)
                elif temporary.is_file():
                    descriptor = os.open(temporary, os.O_RDONLY | getattr(os, "O_BINARY", 0))
                    try:
                        os.fsync(descriptor)
                    finally:
                        os.close(descriptor)
            except OSError as error:
                raise OutputSetError(
                    f"cannot write: {error.strerror or error} (the earlier outputs are unchanged)",
                    path=final,
                ) from None

    def _members(self) -> list[dict[str, Any]]:
        for final in self.finals:
            temporary = self._temporaries[final]
            if not (temporary.exists() or temporary.is_symlink()):
                raise OutputSetError("the output was not written", path=final)
        members: list[dict[str, Any]] = []
        for final in self.finals:
            temporary = self._temporaries[final]
            folder = final in self._folders
            existed = final.exists() or final.is_symlink()
            backup = previous = None
            if folder and final.is_dir() and not final.is_symlink():
                backup = os.fspath(temporary_sibling(final).with_suffix(".old"))
            elif existed and final.is_file() and not final.is_symlink():
                previous = _link_previous(final)
            members.append(
                {
                    "final": os.fspath(final),
                    "temporary": os.fspath(temporary),
                    "folder": folder,
                    "backup": backup,
                    "previous": previous,
                    "existed": existed,
                }
            )
        return members

    def commit(self) -> None:
        """Flush the temporaries, write the journal, rename them all, remove the journal.

        Raises:
            OutputSetError: A member was not written, or the disk refused the journal or a
                rename (the message says whether the earlier outputs are unchanged).
        """
        self._flush()
        members = self._members()
        folders = list(dict.fromkeys(final.parent for final in self.finals))
        token = secrets.token_hex(4)
        journals = [folder / f".grk-set-{os.getpid()}-{token}.json" for folder in folders]
        obsolete = [os.fspath(p) for p in self._obsolete]
        content: dict[str, Any] = {
            "kind": JOURNAL_KIND,
            "version": _JOURNAL_VERSION,
            "pid": os.getpid(),
            "members": members,
            "obsolete": obsolete,
            "journals": [os.fspath(j) for j in journals],
        }
        written: list[Path] = []
        try:
            for journal in journals:
                _write_journal(journal, content)
                written.append(journal)
            for folder in folders:
                _fsync_folder(folder)
        except OSError as error:
            for path in [*written, *(Path(m["previous"]) for m in members if m["previous"])]:
                _remove(path)
            raise OutputSetError(
                f"cannot write the outputs: {error.strerror or error}", path=self.finals[0]
            ) from None
        with _signals_held():
            try:
                _roll_forward(members, obsolete)
            except OSError as error:
                self._rolled_back(members, journals, error)
            for folder in folders:
                _fsync_folder(folder)
            for journal in journals:
                _remove(journal)
            self.committed = True

    def _final_of(self, error: OSError) -> Path:
        """The output a failed rename was for: its final name, never its temporary's."""
        for name in (error.filename, error.filename2):
            if not name:
                continue
            path = Path(os.fsdecode(name)).absolute()
            for final, temporary in self._temporaries.items():
                if path in (final, temporary.absolute()):
                    return final
        return self.finals[0]

    def _rolled_back(
        self, members: list[dict[str, Any]], journals: list[Path], error: OSError
    ) -> None:
        """After a failed rename: put the old set back, or leave the journal to finish it.

        Raises:
            OutputSetError: Always, saying which of the two happened.
        """
        where = self._final_of(error)
        reason = error.strerror or str(error)
        if not _undo(members):
            raise OutputSetError(
                f"the outputs were only partly replaced ({reason}); the next run finishes "
                f"them from {journals[0]}",
                path=where,
            ) from None
        for path in [*journals, *(Path(m["previous"]) for m in members if m["previous"])]:
            _remove(path)
        raise OutputSetError(
            f"cannot replace the outputs: {reason} (the earlier outputs are unchanged)",
            path=where,
        ) from None


def _link_previous(final: Path) -> str | None:
    """A hard link to ``final``'s old content, to put it back if a later rename fails.

    ``None`` where the file system has no hard links (the journal then only completes).
    """
    previous = temporary_sibling(final).with_suffix(".prev")
    try:
        os.link(final, previous, follow_symlinks=False)
    except (OSError, NotImplementedError):
        return None
    return os.fspath(previous)
