"""Check that two `grk eval run` output sets are the same bytes but for what a run measures.

``python run_outputs_equal.py A/report.json B/report.json`` compares the two reports, their
items files (``.items.jsonl`` beside them) and HTML pages (``.html`` beside them, when both
exist). Left out: the creation time, the command line's output paths, the timings and each
stage's measured cost figures (``MEASURED_FIGURES``: clock and memory readings); everything
else, key order included, must be identical. Stricter than ``demo_results_equal.py``, which
compares the results as models: this shows that a change to how reports are built or
written moved no byte. Exits 1 on the first difference.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

from groundkit.judgments.report import MEASURED_FIGURES

_MASK = "<measured>"


def _masked_cost(cost: Any) -> Any:
    if not isinstance(cost, dict):
        return cost
    return {k: _MASK if k in MEASURED_FIGURES else v for k, v in cost.items()}


def _report(path: Path) -> str:
    data = json.loads(path.read_text(encoding="utf-8"))
    data["run"]["created_at"] = _MASK
    folder = str(path.parent)
    data["run"]["command"] = [w.replace(folder, "<out>") for w in data["run"].get("command") or []]
    data["timings"] = dict.fromkeys(data["timings"], _MASK)
    for stage in data["stages"]:
        stage["timings"] = dict.fromkeys(stage["timings"], _MASK)
        stage["cost"] = _masked_cost(stage.get("cost"))
    return json.dumps(data, ensure_ascii=False)


def _items(path: Path) -> list[str]:
    lines = []
    for line in path.read_text(encoding="utf-8").splitlines():
        data = json.loads(line)
        if "cost" in data:
            data["cost"] = _masked_cost(data["cost"])
        lines.append(json.dumps(data, ensure_ascii=False))
    return lines


def _html(path: Path) -> str:
    text = path.read_text(encoding="utf-8")
    text = re.sub(r"created [0-9T:+-]+", "created <t>", text)
    figures = "|".join(MEASURED_FIGURES)
    # A measured figure's cell: its exact value and its shown text.
    return re.sub(
        rf'(data-field="cost\.(?:{figures})" data-value=")[^"]*(">)[^<]*<',
        r"\1<m>\2<m><",
        text,
    )


def _sibling(report: Path, suffix: str) -> Path:
    name = report.name.removesuffix(".json")
    return report.with_name(name + suffix)


def main(argv: list[str]) -> int:
    """Compare the output sets of the reports ``argv[0]`` and ``argv[1]``; 0 when equal."""
    a, b = Path(argv[0]), Path(argv[1])
    checks: list[tuple[str, Any, Any]] = [("report", _report(a), _report(b))]
    items_a, items_b = _sibling(a, ".items.jsonl"), _sibling(b, ".items.jsonl")
    if items_a.is_file() and items_b.is_file():
        checks.append(("items", _items(items_a), _items(items_b)))
    html_a, html_b = _sibling(a, ".html"), _sibling(b, ".html")
    if html_a.is_file() and html_b.is_file():
        checks.append(("html", _html(html_a), _html(html_b)))
    for what, left, right in checks:
        if left != right:
            print(f"{what} differs between {a} and {b}")
            return 1
        print(f"{what}: identical but for what a run measures")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
