"""Reading, checking and writing report files.

The models are in :mod:`groundkit.judgments.report._models`.

A reader accepts its own major version; from a later minor version it reads the fields it
knows (unknown fields are dropped); another major version is refused, naming the groundkit
version needed.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from groundkit.judgments._errors import JudgmentError, ReportError
from groundkit.judgments.files._outputs import OutputSetError, recover_folder
from groundkit.judgments.files._paths import atomic_write_text
from groundkit.judgments.gold._io import read_json_file
from groundkit.judgments.report._columns import stage_columns
from groundkit.judgments.report._models import SCHEMA_VERSION, EvalReport

__all__ = [
    "check_report",
    "checked_report_json",
    "dump_report",
    "load_report",
    "parse_report",
    "report_json_schema",
    "report_to_json",
    "shipped_report_schema",
]


def _version_tuple(version: object) -> tuple[int, int] | None:
    if not isinstance(version, str):
        return None
    parts = version.split(".")
    if len(parts) != 2 or not all(p.isdigit() for p in parts):
        return None
    return int(parts[0]), int(parts[1])


def _format_error(error: Mapping[str, Any]) -> str:
    loc = ".".join(str(part) for part in error.get("loc", ()))
    message = str(error.get("msg", "invalid"))
    if message.startswith(("Value error, ", "Assertion failed, ")):
        message = message.split(", ", 1)[1]
    # A problem of the whole report (its consistency) names its own place.
    return f"{loc}: {message}" if loc else message


def _drop_path(data: Any, loc: tuple[int | str, ...]) -> bool:
    """Remove the key at ``loc`` from nested data; True when something was removed."""
    node = data
    for part in loc[:-1]:
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
            node = node[part]
        else:
            return False
    if isinstance(node, dict) and loc and loc[-1] in node:
        del node[loc[-1]]
        return True
    return False


# 2.0 changed only how hits and scores are laid out in the file; the 1.x layout still reads
# (1.3 was the last 1.x minor: anything later is read for the fields 1.3 knew).
_PREVIOUS_MAJOR, _LAST_PREVIOUS_MINOR = 1, 3


def _version_problem(data: Any) -> tuple[str | None, bool]:
    """Return (problem, is_later_minor) for the report's schema_version."""
    if not isinstance(data, dict):
        return "a report must be a JSON object", False
    version = _version_tuple(data.get("schema_version"))
    ours = _version_tuple(SCHEMA_VERSION)
    assert ours is not None
    if version is None:
        return (
            f"schema_version must be 'major.minor', got {data.get('schema_version')!r}",
            False,
        )
    if version[0] == _PREVIOUS_MAJOR:
        return None, version[1] > _LAST_PREVIOUS_MINOR
    if version[0] != ours[0]:
        return (
            f"report schema {version[0]}.{version[1]} is not readable by this groundkit "
            f"(reads {ours[0]}.x); upgrade groundkit-core-judgments"
            if version[0] > ours[0]
            else f"report schema {version[0]}.{version[1]} is older than {ours[0]}.0 and "
            "no longer readable; re-run the evaluation",
            False,
        )
    return None, version[1] > ours[1]


def _summarise(exc: ValidationError, limit: int = 3) -> str:
    errors = exc.errors()
    shown = "; ".join(_format_error(e) for e in errors[:limit])
    more = f" (and {len(errors) - limit} more)" if len(errors) > limit else ""
    return f"not a valid groundkit report: {shown}{more}"


def _validate(data: Any, later_minor: bool) -> EvalReport:
    """Validate, dropping the fields a later minor version added (the one rule both readers use).

    Raises:
        ValidationError: What is still wrong once unknown fields are dropped.
    """
    if not later_minor:
        return EvalReport.model_validate(data)
    data = json.loads(json.dumps(data))  # private copy: unknown fields are pruned in place
    while True:
        try:
            return EvalReport.model_validate(data)
        except ValidationError as exc:
            extras = [e for e in exc.errors() if e["type"] == "extra_forbidden"]
            if not extras or not any(_drop_path(data, tuple(e["loc"])) for e in extras):
                raise


def parse_report(data: Any, *, source: str | Path | None = None) -> EvalReport:
    """Validate decoded JSON as an :class:`EvalReport`.

    A report from a later minor version is read for the fields this version knows (unknown
    fields are dropped); a different major version is refused.

    Args:
        data: Decoded JSON.
        source: Where it came from, for error messages.

    Returns:
        The validated report.

    Raises:
        ReportError: Wrong version or a schema mismatch (the first few are listed).
    """
    problem, later_minor = _version_problem(data)
    if problem is not None:
        raise ReportError(problem, path=source)
    try:
        return _validate(data, later_minor)
    except ValidationError as exc:
        raise ReportError(_summarise(exc), path=source) from None


def check_report(data: Any) -> list[str]:
    """List every mismatch between decoded JSON and the report contract.

    Agrees with :func:`load_report`: a later minor version's unknown fields are not problems.

    Args:
        data: Decoded JSON of a report.

    Returns:
        One line per problem; empty when :func:`parse_report` would read the report.
    """
    problem, later_minor = _version_problem(data)
    if problem is not None:
        return [problem]
    try:
        _validate(data, later_minor)
    except ValidationError as exc:
        return [_format_error(e) for e in exc.errors()]
    return []


def load_report(path: str | Path) -> EvalReport:
    """Read and check a report file.

    A writer killed while renaming its outputs into the report's folder leaves a journal;
    the renames are finished first (:func:`~groundkit.judgments.files.recover_folder`), so
    the report is read with the rest of its set, never beside an older page or items file.

    Raises:
        ReportError: Unreadable file, invalid JSON, wrong version or schema mismatch; or an
            interrupted write of its folder that cannot be finished.
    """
    file = Path(path)
    try:
        recover_folder(file.parent)
    except OutputSetError as error:
        raise ReportError(error.message, path=file) from None
    return parse_report(read_json_file(file, what="report", error=ReportError), source=file)


# Hits are written as the stage's columns, never one object each (schema 2.0).
_NO_HITS = {"stages": {"__all__": {"queries": {"__all__": {"hits"}}}}}


def report_to_json(report: EvalReport) -> str:
    """Serialise a report deterministically (field order, shortest round-trip floats).

    Compact JSON with each stage's hits and per-query scores as columns
    (:mod:`groundkit.judgments.report._columns`); nothing is rounded. The ``schema_version``
    written is this package's, the version of the format written.

    Raises:
        ValueError: A value is not finite (JSON cannot hold it).
    """
    data = report.model_dump(mode="json", exclude=_NO_HITS)
    # The file is in this version's format whatever version the report was read from.
    data["schema_version"] = SCHEMA_VERSION
    for stage, written in zip(report.stages, data["stages"], strict=True):
        hits, scores = stage_columns(stage.queries)
        if hits is not None:
            written["hit_columns"] = hits.model_dump(mode="json")
        if scores is not None:
            written["score_columns"] = scores.model_dump(mode="json")
            for query in written["queries"]:
                del query["scores"]
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False) + "\n"


def checked_report_json(report: EvalReport, *, revalidate: bool = True) -> str:
    """The report's JSON text (:func:`report_to_json`), checked against the contract first.

    Args:
        report: The report.
        revalidate: Read the text back through the models before returning it. Only a caller
            whose report was built through validation from end to end (every model made by
            its constructor or ``model_validate``, none by ``model_construct`` or
            ``model_copy(update=...)``, as the harness builds its reports) may turn this off:
            the text is then what the validated models dump, and non-finite values are still
            refused by the JSON writer.

    Raises:
        ReportError: The report does not satisfy the contract.
    """
    try:
        text = report_to_json(report)
    except ValueError as exc:  # a non-finite float: JSON has no spelling for it
        raise ReportError(
            f"refusing to write an invalid report: non-finite value ({exc})"
        ) from None
    if not revalidate:
        return text
    # Re-read what is about to be written: a report built with model_construct or
    # model_copy(update=...) skipped validation, and non-finite floats would not survive JSON.
    try:
        EvalReport.model_validate_json(text)
    except ValidationError as exc:
        problems = [_format_error(e) for e in exc.errors()]
        raise ReportError(
            "refusing to write an invalid report: " + "; ".join(problems[:3])
        ) from None
    return text


def dump_report(report: EvalReport, path: str | Path) -> None:
    """Check and write a report atomically.

    Raises:
        ReportError: The report does not satisfy the contract (nothing is written).
    """
    text = checked_report_json(report)
    try:
        atomic_write_text(Path(path), text)
    except JudgmentError:
        raise
    except OSError as exc:
        raise ReportError(f"cannot write report: {exc.strerror or exc}", path=path) from None


def shipped_report_schema() -> dict[str, Any]:
    """The JSON Schema file shipped inside the package (``report.schema.json``).

    It is generated from the models (``report_json_schema``); a test keeps the two equal.
    """
    text = (
        resources.files("groundkit.judgments.report")
        .joinpath("report.schema.json")
        .read_text("utf-8")
    )
    schema: dict[str, Any] = json.loads(text)
    return schema


def report_json_schema() -> dict[str, Any]:
    """The JSON Schema of the report, generated from the models."""
    schema = EvalReport.model_json_schema(mode="validation")
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = f"groundkit EvalReport {SCHEMA_VERSION}"
    return schema
