"""Path safety helpers used by every writer of the project.

Names written to disk must be portable: a report folder created on Linux has to be checkable out
on Windows and macOS, so :func:`validate_path_component` applies the union of the three
platforms' rules. :func:`ensure_within` defends against ``..`` and symlink escapes, and the
atomic writers guarantee that a failed write leaves the previous file untouched.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import stat
import unicodedata
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import BinaryIO

from groundkit.judgments._errors import JudgmentError, UnsafePathError
from groundkit.judgments.files._control import has_control_character
from groundkit.judgments.files._outputs import temporary_sibling

__all__ = [
    "MAX_COMPONENT_BYTES",
    "atomic_write_bytes",
    "atomic_write_files",
    "atomic_write_text",
    "ensure_within",
    "find_case_collisions",
    "open_regular",
    "read_regular_bytes",
    "validate_path_component",
]

#: Longest file or folder name (in UTF-8 bytes) accepted by default: ext4, APFS and NTFS all
#: allow 255 units, and 255 UTF-8 bytes never exceed 255 UTF-16 units.
MAX_COMPONENT_BYTES = 255

_FORBIDDEN_ON_WINDOWS = re.compile(r'[<>:"|?*]')
_SUPERSCRIPT_DIGITS = "\u00b9\u00b2\u00b3"
# Device names Windows reserves whatever the extension ("nul.txt" is the null device too).
_WINDOWS_DEVICES = frozenset(
    {"CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$"}
    | {f"{port}{digit}" for port in ("COM", "LPT") for digit in "123456789" + _SUPERSCRIPT_DIGITS}
)


def validate_path_component(name: str, *, max_bytes: int = MAX_COMPONENT_BYTES) -> str:
    r"""Check that ``name`` is one file or folder name that is safe on Linux, macOS and Windows.

    Refused: empty names, ``.`` and ``..``, separators (``/`` and ``\``), NUL and other control
    characters, the characters Windows forbids (``<>:"|?*``), Windows device names (``CON``,
    ``PRN``, ``AUX``, ``NUL``, ``COM1``-``COM9``, ``LPT1``-``LPT9``, their superscript-digit
    variants, ``CONIN$``/``CONOUT$``; case-insensitive and also with an extension such as
    ``nul.txt``), names ending in a dot or a space (Windows silently strips them), names longer
    than ``max_bytes`` UTF-8 bytes (Linux, APFS) and names longer than ``max_bytes`` UTF-16 units
    once decomposed (HFS+ stores names in NFD; NTFS counts UTF-16 units).

    Args:
        name: The candidate name.
        max_bytes: Byte budget for the name. Pass less than 255 when a suffix will be appended
            later (for instance ``255 - len(".txt")``).

    Returns:
        ``name`` unchanged.

    Raises:
        UnsafePathError: The name is unsafe or not portable; the message says why.
    """
    if not isinstance(name, str):
        raise UnsafePathError(f"a path component must be a string, not {type(name).__name__}")
    shown = repr(name)
    if name == "":
        raise UnsafePathError("empty path component")
    if name in {".", ".."}:
        raise UnsafePathError(f"path component {shown} refers to a folder, not a name")
    if "/" in name or "\\" in name:
        raise UnsafePathError(f"path component {shown} contains a path separator")
    if has_control_character(name):
        raise UnsafePathError(f"path component {shown} contains a control character")
    forbidden = sorted(set(_FORBIDDEN_ON_WINDOWS.findall(name)))
    if forbidden:
        raise UnsafePathError(
            f"path component {shown} contains {''.join(forbidden)!r}, forbidden on Windows"
        )
    if name[-1] in ". ":
        raise UnsafePathError(f"path component {shown} ends with a dot or a space")
    # Windows looks at the part before the first dot, ignoring trailing spaces ("NUL .txt").
    stem = name.split(".", 1)[0].rstrip(" ").upper()
    if stem in _WINDOWS_DEVICES:
        raise UnsafePathError(f"path component {shown} is a reserved device name on Windows")
    try:
        size = len(name.encode("utf-8"))
    except UnicodeEncodeError:
        raise UnsafePathError(f"path component {shown} is not valid Unicode") from None
    # HFS+ stores names decomposed and counts UTF-16 units: "ǖ" is 2 bytes but 3 units there.
    decomposed_units = len(unicodedata.normalize("NFD", name).encode("utf-16-le")) // 2
    if size > max_bytes:
        raise UnsafePathError(
            f"path component {shown[:40]}... is {size} UTF-8 bytes long (limit {max_bytes})"
        )
    if decomposed_units > max_bytes:
        raise UnsafePathError(
            f"path component {shown[:40]}... is {decomposed_units} UTF-16 units long once "
            f"decomposed, as macOS HFS+ stores it (limit {max_bytes})"
        )
    return name


def _fold(name: str) -> str:
    # casefold() can produce non-NFC text ("ǰ" folds to "ǰ"), so normalise on both sides.
    return unicodedata.normalize("NFC", unicodedata.normalize("NFC", name).casefold())


def find_case_collisions(names: Iterable[str]) -> list[tuple[str, str]]:
    """Find names that would land on the same file on a case-insensitive file system.

    Two names collide when they differ as strings but are equal after Unicode NFC normalisation
    and case folding (macOS and Windows both treat them as the same file). Names may be relative
    POSIX paths: folders are compared too, so ``a/x.txt`` and ``A/y.txt`` collide on ``a``/``A``.
    Identical strings are not reported (they are the same name, not a collision).

    Args:
        names: File names or relative POSIX paths.

    Returns:
        Pairs ``(first, later)`` in input order: the first spelling seen and the one that
        collides with it. Each pair is reported once.
    """
    first_spelling: dict[str, str] = {}
    pairs: list[tuple[str, str]] = []
    reported: set[tuple[str, str]] = set()
    for name in names:
        parts = name.split("/")
        for depth in range(1, len(parts) + 1):
            prefix = "/".join(parts[:depth])
            key = _fold(prefix)
            seen = first_spelling.setdefault(key, prefix)
            if seen != prefix and (seen, prefix) not in reported:
                reported.add((seen, prefix))
                pairs.append((seen, prefix))
    return pairs


def ensure_within(root: Path, candidate: Path) -> Path:
    """Resolve ``candidate`` and check that it lies inside ``root`` (or is ``root`` itself).

    Both paths are resolved with symlinks followed, including a symlink that is the last,
    not-yet-existing component and ``..`` after a missing folder, so a link planted inside
    ``root`` that points elsewhere is refused. A relative ``candidate`` is taken relative to
    ``root``.

    Args:
        root: The folder that must contain the result.
        candidate: The path to check.

    Returns:
        The resolved candidate path.

    Raises:
        UnsafePathError: The resolved candidate is outside the resolved root.
    """
    resolved_root = Path(root).resolve()
    target = Path(candidate)
    if not target.is_absolute():
        target = Path(root) / target
    resolved = target.resolve()
    if resolved != resolved_root and not resolved.is_relative_to(resolved_root):
        raise UnsafePathError(
            f"resolves to {resolved}, outside {resolved_root}", path=os.fspath(candidate)
        )
    return resolved


def _write_temporary(destination: Path, data: bytes) -> Path:
    """Write ``data`` to a new hidden file beside ``destination``, flushed to disk."""
    while True:
        # Named with this process's id, so that the next writer can tell a temporary left by a
        # killed process (removed) from one being written right now (left alone).
        temporary = temporary_sibling(destination)
        try:
            descriptor = os.open(
                temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666
            )
        except FileExistsError:  # pragma: no cover - 48 random bits make this practically moot
            continue
        break
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
    except BaseException:
        with contextlib.suppress(OSError):
            temporary.unlink()
        raise
    return temporary


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` so that readers see either the old file or the new one.

    The bytes go to a temporary file in the same folder (same file system, so the final rename
    is atomic), are flushed to disk, and the temporary file replaces ``path`` with
    :func:`os.replace`. On any failure the temporary file is removed and ``path`` is untouched.
    The new file gets the usual permissions for a new file (``0o666`` minus the umask).

    Args:
        path: Destination file; its folder must exist.
        data: The complete new content.
    """
    atomic_write_files({Path(path): data})


def atomic_write_files(contents: Mapping[Path, bytes | str]) -> None:
    """Write several files as a set: all of them are complete before any replaces its target.

    Each content goes to a temporary sibling of its destination (text as UTF-8, line endings
    as given) and is flushed to disk; only when every one is written are they renamed into
    place, in the given order. A failure before the renames (a full disk, an unwritable folder)
    removes the temporary files and leaves every destination as it was; the renames themselves
    are single atomic steps that do not fail for want of space.

    Args:
        contents: Destination file (its folder must exist) to its complete new content.

    Raises:
        OSError: A content cannot be written (the error names its destination) or a rename
            fails; every destination is as it was unless a rename had been made.
    """
    written: list[tuple[Path, Path]] = []
    try:
        for destination, data in contents.items():
            payload = data.encode("utf-8") if isinstance(data, str) else data
            try:
                temporary = _write_temporary(Path(destination), payload)
            except OSError as error:  # a full disk names the file it was writing
                raise _named(error, destination) from None
            written.append((temporary, Path(destination)))
        while written:
            temporary, destination = written[0]
            temporary.replace(destination)
            written.pop(0)
    except BaseException:
        for temporary, _ in written:
            with contextlib.suppress(OSError):
                temporary.unlink()
        raise
    for folder in dict.fromkeys(Path(destination).parent for destination in contents):
        _fsync_folder(folder)


def atomic_write_text(path: Path, text: str) -> None:
    """Write ``text`` as UTF-8 to ``path`` atomically (see :func:`atomic_write_bytes`).

    Line endings are written exactly as given (no platform translation), so output is
    byte-identical on every operating system.

    Args:
        path: Destination file; its folder must exist.
        text: The complete new content.
    """
    atomic_write_bytes(path, text.encode("utf-8"))


def open_regular(path: str | Path) -> BinaryIO:
    """Open a file for reading, refusing anything but a regular file without ever blocking.

    A named pipe given where a file is expected would block ``open`` forever (until a writer
    comes), and a device such as ``/dev/zero`` never ends: the file is opened non-blocking and
    checked with ``fstat`` before a byte is read.

    Raises:
        JudgmentError: The path cannot be opened, or is a folder, a pipe, a socket or a device.
    """
    try:
        descriptor = os.open(
            path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
        )
    except IsADirectoryError:
        raise JudgmentError("is a folder, not a file", path=path) from None
    except OSError as error:
        raise JudgmentError(f"cannot read file: {error.strerror or error}", path=path) from None
    try:
        mode = os.fstat(descriptor).st_mode
        if stat.S_ISDIR(mode):
            raise JudgmentError("is a folder, not a file", path=path)
        if not stat.S_ISREG(mode):
            raise JudgmentError(
                "is not a regular file (a pipe, socket or device); give a file", path=path
            )
        if hasattr(os, "set_blocking"):
            os.set_blocking(descriptor, True)
        return os.fdopen(descriptor, "rb")
    except BaseException:
        os.close(descriptor)
        raise


def read_regular_bytes(path: str | Path) -> bytes:
    """The whole content of a regular file (see :func:`open_regular`).

    Raises:
        JudgmentError: Not a readable regular file.
    """
    with open_regular(path) as handle:
        try:
            return handle.read()
        except OSError as error:
            raise JudgmentError(f"cannot read file: {error.strerror or error}", path=path) from None


def append_line(path: Path, line: str) -> bool:
    """Append one whole line durably, or nothing: a line is never left torn by this call.

    The line goes out in one ``write`` on an ``O_APPEND`` descriptor under an exclusive lock
    (``flock`` where the system has it), then fsync. A short write (a full disk, a quota) or a
    failed fsync is rolled back: the file is truncated to its size before the call, so it ends
    exactly as it did (a file this call created and left empty is removed: no 0-byte file
    stays behind), and the error is raised. If the file ends without a newline (a line cut
    by a crash elsewhere), the new line starts with one, so that damage stays in its own line.

    Args:
        path: The file; created when absent (its folder must exist).
        line: The line's text, without the trailing newline.

    Returns:
        True when the file was created by this call.

    Raises:
        OSError: The file cannot be opened or written (a short write is reported as
            ``ENOSPC``); the error names ``path``, and the file is as it was.
    """
    data = (line + "\n").encode("utf-8")
    flags = os.O_WRONLY | os.O_APPEND | getattr(os, "O_BINARY", 0)
    try:
        descriptor = os.open(path, flags | os.O_CREAT | os.O_EXCL, 0o666)
        created = True
    except FileExistsError:
        descriptor, created = -1, False
    except OSError as error:
        raise _named(error, path) from None
    try:
        if descriptor < 0:
            descriptor = os.open(path, flags | os.O_CREAT, 0o666)
        size = _append_locked(descriptor, path, data, created)
    except OSError as error:
        raise _named(error, path) from None
    finally:
        if descriptor >= 0:
            os.close(descriptor)
    if size == 0:
        _fsync_folder(Path(path).parent)
    return size == 0


def _named(error: OSError, path: str | Path) -> OSError:
    """``error`` naming ``path`` (a failed ``write`` or ``fsync`` names no file)."""
    if error.filename is not None:
        return error
    named = OSError(error.errno, error.strerror or str(error), os.fspath(path))
    named.__cause__ = error.__cause__
    return named


def _append_locked(descriptor: int, path: str | Path, data: bytes, created: bool) -> int:
    """Write ``data`` at the end under the lock; returns the size before it (see append_line)."""
    _lock(descriptor)
    size = os.fstat(descriptor).st_size
    if size:
        with Path(path).open("rb") as reader:
            reader.seek(size - 1)
            if reader.read(1) != b"\n":
                data = b"\n" + data
    try:
        written = os.write(descriptor, data)
        if written != len(data):
            raise OSError(
                errno.ENOSPC,
                f"No space left on device (a short write: {written} of {len(data)} bytes, "
                "rolled back)",
            )
        os.fsync(descriptor)
    except BaseException:
        # Whatever reached the file is cut off again: readers never see half a line.
        with contextlib.suppress(OSError):
            os.ftruncate(descriptor, size)
            os.fsync(descriptor)
        if created and size == 0:
            # Created by this call and still empty (the lock is held: no other line came):
            # the file goes, as if the call had never been made.
            with contextlib.suppress(OSError):
                Path(path).unlink()
        raise
    return size


def _lock(descriptor: int) -> None:
    # Concurrent appenders must not truncate each other's lines on a rollback.
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows: O_APPEND alone
        return
    fcntl.flock(descriptor, fcntl.LOCK_EX)


def _fsync_folder(folder: Path) -> None:
    # Makes the rename itself durable on POSIX; folders cannot be opened this way on Windows.
    try:
        descriptor = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(descriptor)
    except OSError:
        pass
    finally:
        os.close(descriptor)
