"""Check that two demo reports hold the same results (``python demo_results_equal.py A B``).

Used to show that a change to how reports are written moved nothing: every stage's per-query
scores, hits, evidence, aggregates, comparisons and verdicts, the notes, and the diagnosis of
every stage must be equal; only what differs between two runs of the same command (creation
time, timings, cost, the command line) is left out. Exits 1 on the first difference.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from groundkit.diagnosis import diagnose, fixes
from groundkit.judgments import EvalReport, load_report

_PER_RUN = {"timings", "cost"}


def _results(report: EvalReport) -> dict[str, Any]:
    data = report.model_dump(mode="json", exclude={"schema_version"})
    data["run"] = {k: v for k, v in data["run"].items() if k not in {"created_at", "command"}}
    data.pop("timings", None)
    for stage in data["stages"]:
        for key in _PER_RUN:
            stage.pop(key, None)
    # Notes quote timings and memory of the run; their codes and the report's verdicts stay.
    data["note_records"] = [n.get("code") for n in data["note_records"]]
    data.pop("notes", None)
    return data


def _diagnoses(report: EvalReport) -> list[Any]:
    out = []
    for stage in report.stages:
        found = diagnose(report, stage=stage.name)
        out.append(
            [found.model_dump(mode="json"), [f.model_dump(mode="json") for f in fixes(found)]]
        )
    return out


def main(argv: list[str]) -> int:
    """Compare the reports at ``argv[0]`` and ``argv[1]``; 0 when their results are equal."""
    a, b = load_report(argv[0]), load_report(argv[1])
    for what, left, right in (
        ("results", _results(a), _results(b)),
        ("diagnosis", _diagnoses(a), _diagnoses(b)),
    ):
        if json.dumps(left, sort_keys=True) != json.dumps(right, sort_keys=True):
            print(f"{what} differ between {argv[0]} and {argv[1]}")
            return 1
        print(f"{what}: equal")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
