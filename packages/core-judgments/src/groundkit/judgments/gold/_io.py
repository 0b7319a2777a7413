"""Reading and writing judgments as strict JSON Lines.

Format: UTF-8, one JSON object per line, each a :class:`~groundkit.judgments.Judgment`.
Blank (whitespace-only) lines are skipped, so a trailing newline or a spacer line is harmless and
line numbers in errors still match an editor's. A leading UTF-8 byte-order mark is ignored.
Everything else is strict: a malformed line, a repeated key, ``NaN``, an unknown field, a
contract violation or a duplicate query id is an error naming the file, the line and the id.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from groundkit.judgments._errors import JudgmentError
from groundkit.judgments.files._paths import atomic_write_text, open_regular, read_regular_bytes
from groundkit.judgments.gold._models import Judgment, format_validation_error, nfc

__all__ = [
    "dump_judgments",
    "iter_jsonl_objects",
    "judgment_line",
    "judgments_fingerprint",
    "judgments_text",
    "load_judgments",
    "parse_jsonl_line",
    "read_json_file",
]

_BOM = "\ufeff"


def read_json_file(
    path: str | Path, *, what: str, error: type[JudgmentError] = JudgmentError
) -> Any:
    """Decode a whole JSON file, every problem a one-line error naming the file.

    Reads regular files only (a pipe or a device never blocks the reader), names the line of
    invalid UTF-8 and the line and column of invalid JSON, and refuses NaN and Infinity, which
    are not JSON, a key given twice in one object and nesting too deep to decode.

    Args:
        path: The file.
        what: What the file is, for messages (``"report"``, ``"id map"``).
        error: The error class to raise.

    Returns:
        The decoded JSON.

    Raises:
        JudgmentError: ``<what> file not found``, ``cannot read <what>: ...``, ``the <what>
            file is empty`` or ``not JSON: ...`` (with the line), as ``error``.
    """
    file = Path(path)
    if not (file.exists() or file.is_symlink()):
        raise error(f"{what} file not found", path=file)
    try:
        raw = read_regular_bytes(file)
    except JudgmentError as exc:
        raise error(exc.message, path=file) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise error(
            f"cannot read {what}: not valid UTF-8 (byte 0x{raw[exc.start]:02x})",
            path=file,
            line=line,
        ) from None
    if not text.strip():
        raise error(f"the {what} file is empty", path=file)
    try:
        # A key given twice would silently keep its last value: the file is refused.
        return json.loads(text, parse_constant=_refuse_constant, object_pairs_hook=_unique_keys)
    except json.JSONDecodeError as exc:
        message = f"not JSON: {exc.msg} (column {exc.colno})"
        raise error(message, path=file, line=exc.lineno) from None
    except ValueError as exc:  # NaN or Infinity, or a key given twice: not JSON we accept
        raise error(f"not JSON: {exc}", path=file) from None
    except RecursionError:  # arrays or objects nested thousands deep
        raise error(f"not JSON: the {what} nests arrays or objects too deep", path=file) from None


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise ValueError(f"key {key!r} appears twice in one object")
        result[key] = value
    return result


def parse_jsonl_line(raw: bytes, *, path: str | Path, line: int) -> dict[str, Any] | None:
    """Parse one raw line of a strict JSON Lines file.

    Shared by every JSONL reader of the project (judgments, corpus, predictions, items, BEIR
    files) so they all accept exactly the same syntax.

    Args:
        raw: The line's bytes, newline included or not.
        path: The file, for error messages.
        line: The 1-based line number (a UTF-8 byte-order mark is ignored on line 1).

    Returns:
        The JSON object, or ``None`` for a blank line.

    Raises:
        JudgmentError: Not UTF-8, or not one JSON object (with unique keys and no
            ``NaN``/``Infinity``); the error names file and line.
    """
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise JudgmentError(
            f"not valid UTF-8 (byte 0x{raw[error.start]:02x} at column "
            f"{error.start + 1}); save the file as UTF-8",
            path=path,
            line=line,
        ) from None
    if line == 1:
        text = text.removeprefix(_BOM)
    # Without its line end, an error at the end of the line is reported at its real column
    # (json would count the newline and say "line 2, column 1").
    text = text.removesuffix("\n").removesuffix("\r")
    if not text.strip():
        return None
    try:
        value = json.loads(text, object_pairs_hook=_unique_keys, parse_constant=_refuse_constant)
    except json.JSONDecodeError as error:
        raise JudgmentError(
            f"invalid JSON: {error.msg} (column {error.colno})", path=path, line=line
        ) from None
    except ValueError as error:
        raise JudgmentError(f"invalid JSON: {error}", path=path, line=line) from None
    except RecursionError:
        raise JudgmentError("invalid JSON: nested too deeply", path=path, line=line) from None
    if not isinstance(value, dict):
        raise JudgmentError(
            f"expected a JSON object, got {_json_kind(value)}", path=path, line=line
        )
    return value


def iter_jsonl_objects(path: str | Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Stream the JSON objects of a strict JSON Lines file, one line at a time.

    Every line goes through :func:`parse_jsonl_line`.

    Args:
        path: The file to read.

    Yields:
        ``(line_number, object)`` pairs; line numbers are 1-based, blank lines are skipped.

    Raises:
        JudgmentError: The file cannot be read, is not UTF-8, or a line is not one JSON object
            (with unique keys and no ``NaN``/``Infinity``); the error names file and line.
    """
    handle = open_regular(path)  # refuses a pipe or device rather than block on it
    try:
        for number, raw in enumerate(handle, start=1):
            value = parse_jsonl_line(raw, path=path, line=number)
            if value is not None:
                yield number, value
    finally:
        handle.close()


def _json_kind(value: Any) -> str:
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    return "a number"


def load_judgments(path: str | Path) -> list[Judgment]:
    """Load and validate a judgments file (strict JSON Lines, see the module docs).

    Args:
        path: The ``.jsonl`` file.

    Returns:
        The judgments in file order.

    Raises:
        JudgmentError: On the first problem, naming the file, the line and (when known) the
            query id, e.g. ``judgments.jsonl:7: leave-policy: gold.0.doc: document id ...``;
            also a file without any judgment (empty or only blank lines).
    """
    judgments: list[Judgment] = []
    first_line: dict[str, int] = {}
    seen_line = False
    for number, data in iter_jsonl_objects(path):
        seen_line = True
        raw_id = data.get("query_id")
        item_id = raw_id if isinstance(raw_id, str) else None
        try:
            judgment = Judgment.model_validate(data)
        except ValidationError as error:
            raise JudgmentError(
                format_validation_error(error), path=path, line=number, item_id=item_id
            ) from None
        previous = first_line.setdefault(judgment.query_id, number)
        if previous != number:
            raise JudgmentError(
                f"duplicate query id (first defined on line {previous})",
                path=path,
                line=number,
                item_id=judgment.query_id,
            )
        judgments.append(judgment)
    if not seen_line:
        raise JudgmentError("no judgments in file (it is empty)", path=path)
    return judgments


def judgment_line(path: str | Path, query_id: str) -> int | None:
    """The line of ``path`` that holds the judgment ``query_id``, for an error found later.

    Args:
        path: The judgments file the judgment was read from.
        query_id: The judgment's query id (NFC, as read).

    Returns:
        The 1-based line, or ``None`` when the file no longer holds it or cannot be read.
    """
    try:
        for number, data in iter_jsonl_objects(path):
            raw = data.get("query_id")
            if isinstance(raw, str) and nfc(raw) == query_id:
                return number
    except (JudgmentError, OSError):
        return None
    return None


def _record(judgment: Judgment) -> dict[str, Any]:
    # Defaults are left out: files stay short and adding an optional field later does not
    # change existing files or their fingerprints.
    return judgment.model_dump(mode="json", exclude_defaults=True)


def _sorted_unique(judgments: Iterable[Judgment]) -> list[Judgment]:
    ordered = sorted(judgments, key=lambda judgment: judgment.query_id)
    for before, after in itertools.pairwise(ordered):
        if before.query_id == after.query_id:
            raise JudgmentError("duplicate query id", item_id=after.query_id)
    return ordered


def dump_judgments(judgments: Iterable[Judgment], path: str | Path) -> None:
    """Write judgments as JSON Lines sorted by query id, atomically.

    The whole file is serialised in memory first, then written to a temporary file beside
    ``path`` and renamed over it, so a failure leaves any previous file untouched.

    Args:
        judgments: The judgments; query ids must be unique.
        path: Destination file (its folder must exist).

    Raises:
        JudgmentError: Two judgments share a query id (nothing is written).
    """
    atomic_write_text(Path(os.fspath(path)), judgments_text(judgments))


def judgments_text(judgments: Iterable[Judgment]) -> str:
    """The JSON Lines text :func:`dump_judgments` writes (sorted by query id).

    Raises:
        JudgmentError: Two judgments share a query id.
    """
    return "".join(
        json.dumps(_record(judgment), ensure_ascii=False, allow_nan=False) + "\n"
        for judgment in _sorted_unique(judgments)
    )


def judgments_fingerprint(judgments: Iterable[Judgment]) -> str:
    """SHA-256 (hex) of the canonical JSON Lines form of a set of judgments.

    Canonical means sorted by query id, keys sorted, compact separators, defaults omitted; the
    fingerprint therefore ignores input order, key order and formatting of the source file.

    Args:
        judgments: The judgments; query ids must be unique.

    Returns:
        64 lowercase hexadecimal characters.

    Raises:
        JudgmentError: Two judgments share a query id.
    """
    digest = hashlib.sha256()
    for judgment in _sorted_unique(judgments):
        line = json.dumps(
            _record(judgment),
            ensure_ascii=False,
            allow_nan=False,
            sort_keys=True,
            separators=(",", ":"),
        )
        digest.update(line.encode("utf-8"))
        digest.update(b"\n")
    return digest.hexdigest()
