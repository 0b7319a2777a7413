"""The output guard: every writer checks all its output paths before doing any work.

An output is refused when it resolves to one of the command's inputs (also through a symbolic
or hard link), lies inside an input folder (a corpus: the next run would read it as a
document), is another output of the same command, cannot be created (missing folder, a
folder or a special file in the way, a name longer than the file system allows), or holds an
existing file that is not the command's own kind of output (a user's judgments where a report
goes), which is replaced only when the caller forces it.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from groundkit.judgments._errors import JudgmentError, one_line

__all__ = [
    "MAX_NAME_BYTES",
    "InputPath",
    "OutputGuardError",
    "OutputPath",
    "guard_outputs",
    "is_empty_file",
    "is_judgments_file",
    "is_report_file",
    "looks_like_jsonl",
    "shown_path",
]

#: Longest file name the guard lets through (ext4, APFS and NTFS all stop at 255 units).
MAX_NAME_BYTES = 255
_PREFIX_BYTES = 65_536


class OutputGuardError(JudgmentError):
    """An output path that would overwrite an input, collide, or replace a foreign file."""


@dataclass(frozen=True)
class InputPath:
    """A path the command reads.

    Attributes:
        path: The path as given.
        label: How messages name it (``--judgments``, ``SOURCE``...).
    """

    path: Path
    label: str


@dataclass(frozen=True)
class OutputPath:
    """A path the command writes.

    Attributes:
        path: The path as given.
        label: How messages name it (``--report``...).
        kind: What the command writes there (``report``, ``items``...), for messages.
        recognise: Tells whether an existing file is this command's own kind of output (which
            may be replaced); ``None`` accepts any regular file.
        folder: The output is a folder written whole.
        append: The output is appended to (a foreign file is refused all the same).
    """

    path: Path
    label: str
    kind: str
    recognise: Callable[[Path], bool] | None = None
    folder: bool = False
    append: bool = False


def shown_path(path: Path | str) -> str:
    """A path as messages show it: one line, undecodable bytes escaped."""
    return one_line(os.fspath(path))


def _resolved(path: Path) -> Path:
    return Path(os.path.realpath(path))


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        info = path.stat()
    except (OSError, ValueError):
        return None
    return info.st_dev, info.st_ino


def _prefix(path: Path, size: int = _PREFIX_BYTES) -> bytes:
    try:
        with path.open("rb") as handle:
            return handle.read(size)
    except OSError:
        return b""


def is_empty_file(path: Path) -> bool:
    """Whether ``path`` is an empty (or whitespace-only) file: nothing to lose by replacing it."""
    try:
        if path.stat().st_size > _PREFIX_BYTES:
            return False
    except OSError:
        return False
    return not _prefix(path).strip()


def looks_like_jsonl(path: Path, required: frozenset[str]) -> bool:
    """Whether the first non-blank line of ``path`` is a JSON object with ``required`` keys."""
    for raw in _prefix(path).split(b"\n"):
        if not raw.strip():
            continue
        try:
            value = json.loads(raw.decode("utf-8").removeprefix("\ufeff"))
        except (UnicodeDecodeError, ValueError):
            return False
        return isinstance(value, dict) and required <= value.keys()
    return True  # blank


def is_report_file(path: Path) -> bool:
    """Whether ``path`` holds a groundkit report (a JSON object with ``schema_version``)."""
    head = _prefix(path, 4096).lstrip()
    if not head.startswith(b"{") or b'"schema_version"' not in head:
        return False
    try:
        value = json.loads(path.read_bytes())
    except (OSError, UnicodeDecodeError, ValueError):
        return False
    return isinstance(value, dict) and {"schema_version", "run", "stages"} <= value.keys()


def is_judgments_file(path: Path) -> bool:
    """Whether ``path`` looks like a judgments file (JSON Lines with ``query_id``)."""
    return looks_like_jsonl(path, frozenset({"query_id", "query"}))


def _refuse(output: OutputPath, reason: str) -> OutputGuardError:
    return OutputGuardError(f"{output.label} {shown_path(output.path)}: {reason}")


def _check_slot(output: OutputPath) -> None:
    path = output.path
    name = os.fsencode(path.name) if path.name else b""
    if len(name) > MAX_NAME_BYTES:
        raise _refuse(
            output, f"the file name is {len(name)} bytes long (the limit is {MAX_NAME_BYTES})"
        )
    parent = path.parent if str(path.parent) else Path()
    if not output.folder and not parent.is_dir():
        raise _refuse(output, f"folder {shown_path(parent)} does not exist")
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return
    except OSError as error:
        raise _refuse(output, f"cannot use this path: {error.strerror or error}") from None
    mode = info.st_mode
    if stat.S_ISLNK(mode):
        try:
            mode = path.stat().st_mode
        except OSError:
            raise _refuse(output, "is a broken symbolic link") from None
    if output.folder:
        if not stat.S_ISDIR(mode):
            raise _refuse(output, "exists and is not a folder")
        return
    if stat.S_ISDIR(mode):
        raise _refuse(output, "is a folder")
    if not stat.S_ISREG(mode):
        raise _refuse(output, "is not a regular file (a pipe, device or socket)")


def _check_kind(output: OutputPath, force_hint: str, force: bool) -> None:
    path = output.path
    if output.folder or force or output.recognise is None:
        return
    if not path.is_file() or is_empty_file(path):
        return
    if not output.recognise(path):
        verb = "append to" if output.append else "replace"
        raise _refuse(
            output,
            f"holds a file that is not a groundkit {output.kind}; refusing to {verb} it "
            f"({force_hint} to {verb} it anyway)",
        )


def _check_against_input(output: OutputPath, source: InputPath) -> None:
    target = _resolved(output.path)
    given = _resolved(source.path)
    both = f"{source.label} {shown_path(source.path)}"
    same = target == given
    if not same:
        left, right = _identity(output.path), _identity(source.path)
        same = left is not None and left == right
    if same:
        raise _refuse(output, f"is the same file as {both}; an output never replaces an input")
    if given.is_dir() and target.is_relative_to(given):
        raise _refuse(
            output,
            f"lies inside the input folder {both}; the next run would read it as input",
        )
    if output.folder and given.is_relative_to(target):
        raise _refuse(output, f"contains the input {both}")


def guard_outputs(
    outputs: Sequence[OutputPath],
    inputs: Sequence[InputPath] = (),
    *,
    force: bool = False,
    force_hint: str = "pass force=True",
) -> None:
    """Check every output path against the inputs, the other outputs and what is there now.

    Writes nothing. Outputs and inputs whose ``path`` is ``None`` are not allowed: leave them
    out.

    Args:
        outputs: What the command writes.
        inputs: What it reads (files and folders).
        force: Replace existing files that are not the command's own kind of output.
        force_hint: How the message tells the user to force (``pass --force``).

    Raises:
        OutputGuardError: The first problem, naming both paths where two are involved.
    """
    seen: dict[Path, OutputPath] = {}
    identities: dict[tuple[int, int], OutputPath] = {}
    for output in outputs:
        _check_slot(output)
        for source in inputs:
            _check_against_input(output, source)
        target = _resolved(output.path)
        earlier = seen.setdefault(target, output)
        identity = _identity(output.path)
        if identity is not None:
            earlier = identities.setdefault(identity, earlier)
        if earlier is not output:
            raise _refuse(output, f"is the same file as {earlier.label} {shown_path(earlier.path)}")
        for other in seen.values():
            if other is output:
                continue
            outer, inner = (other, output) if other.folder else (output, other)
            if outer.folder and _resolved(inner.path).is_relative_to(_resolved(outer.path)):
                raise _refuse(
                    inner, f"lies inside the output folder {outer.label} {shown_path(outer.path)}"
                )
    # Last: a foreign file is worth --force only once nothing else is wrong.
    for output in outputs:
        _check_kind(output, force_hint, force)
