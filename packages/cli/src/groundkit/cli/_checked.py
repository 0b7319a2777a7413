"""Read a report every command can trust (``load_checked_report``).

Kept apart from the comparison command's module so that ``grk eval report``, ``export``,
``diagnose`` and the other readers load only the checks, not the run's machinery that the
comparison's items mode imports.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from groundkit.cli._errors import InputError
from groundkit.harness.analysis import comparison_problem
from groundkit.judgments import EvalReport, JudgmentError, load_report
from groundkit.judgments.files import read_regular_bytes

__all__ = ["load_checked_report"]


def load_checked_report(path: Path) -> EvalReport:
    """Read a report every command can trust: valid, consistent, its verdicts reproduced.

    A repeated stage name is named before the schema check does; after core's consistency
    checks, every stored comparison is recomputed from the report's own per-query scores.

    Raises:
        InputError: A stage name is repeated (named), the file is not a valid report, or a
            stored comparison is not what its scores give (stage, metric and field named).
    """
    try:
        data = json.loads(read_regular_bytes(path).decode("utf-8"))  # never waits on a pipe
    except (JudgmentError, UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        data = None  # load_report gives the precise one-line reason below
    if isinstance(data, dict) and isinstance(data.get("stages"), list):
        names = [s.get("name") for s in data["stages"] if isinstance(s, dict)]
        repeated = sorted(
            n for n, c in Counter(n for n in names if isinstance(n, str)).items() if c > 1
        )
        if repeated:
            raise InputError(
                f"{path}: stage name {repeated[0]!r} is used by "
                f"{names.count(repeated[0])} stages; stage names must be unique "
                "(rename one and re-run)"
            )
    report = load_report(path)
    problem = comparison_problem(report)
    if problem is not None:
        raise InputError(f"{path}: {problem}; the report was edited or damaged (run it again)")
    return report
