"""Where a report's inputs are: recorded so that a report can be read from any folder.

A run records its corpus and judgments as they were given (``corpus_source``,
``judgments_source``: relative to the folder the run started in) and, beside them, as paths
from the report's own folder (``corpus_from_report``, ``judgments_from_report``), written by
:func:`anchor_inputs` when the report's location is known. A reader looks for each input with
:func:`recorded_input`: from the report's folder first, then as given (absolute, or from the
working folder), then the given path from the report's folder (reports written before the
anchored paths, in the folder the run started in). So ``reproduce``, ``calibrate``,
``adjudicate``, ``pool``, ``export`` and the HTML page find a report's inputs from another
folder and after the report and its inputs were moved together.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from groundkit.judgments.report._models import EvalReport

__all__ = ["InputKind", "anchor_inputs", "recorded_input"]

InputKind = Literal["corpus", "judgments"]


def _from(folder: Path, target: str | Path) -> str | None:
    """``target`` as a POSIX path from ``folder``; absolute when they share only the root.

    ``None`` on another drive (Windows), where no relative path exists.
    """
    here, there = folder.resolve(), Path(target).resolve()
    try:
        common = Path(os.path.commonpath([here, there]))
        relative = os.path.relpath(there, here)
    except ValueError:  # Windows: another drive
        return None
    if common == Path(common.anchor):  # nothing shared but the root: moving them apart
        return there.as_posix()
    return Path(relative).as_posix()


def anchor_inputs(
    report: EvalReport,
    report_path: str | Path,
    *,
    corpus: str | Path | None = None,
    judgments: str | Path | None = None,
) -> EvalReport:
    """The report with its inputs' paths from ``report_path``'s folder recorded.

    Args:
        report: The report about to be written.
        report_path: Where it will be written.
        corpus: Where the corpus is now (default: found with :func:`recorded_input`).
        judgments: Where the judgments are now (default: likewise).

    Returns:
        A copy whose ``run.corpus_from_report`` and ``run.judgments_from_report`` lead from
        the report's folder to the inputs (``None`` for an input that is not on this machine).
    """
    folder = Path(report_path).parent
    found = {
        "corpus_from_report": corpus if corpus is not None else recorded_input(report, "corpus"),
        "judgments_from_report": judgments
        if judgments is not None
        else recorded_input(report, "judgments"),
    }
    update = {
        key: None if path is None or not Path(path).exists() else _from(folder, path)
        for key, path in found.items()
    }
    run = report.run.model_validate({**report.run.model_dump(), **update})
    return report.model_copy(update={"run": run})


def recorded_input(
    report: EvalReport, which: InputKind, report_path: str | Path | None = None
) -> Path | None:
    """Where the report's corpus or judgments are on this machine, if they are.

    Args:
        report: The report.
        which: ``"corpus"`` or ``"judgments"``.
        report_path: The report's file (without it, only the path as given is tried).

    Returns:
        The first existing of: the anchored path from the report's folder, the path as
        given (absolute or from the working folder), the given path from the report's folder;
        ``None`` when none exists (or nothing was recorded).
    """
    given = report.run.corpus_source if which == "corpus" else report.run.judgments_source
    anchored = (
        report.run.corpus_from_report if which == "corpus" else report.run.judgments_from_report
    )
    folder = Path(report_path).parent if report_path is not None else None
    candidates: list[Path] = []
    if anchored is not None and folder is not None:
        candidates.append(folder / anchored)
    if given is not None:
        candidates.append(Path(given))
        if folder is not None and not Path(given).is_absolute():
            candidates.append(folder / given)
    return next((path for path in candidates if path.exists()), None)
