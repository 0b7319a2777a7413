"""Pinned and repeated quotes end to end: `grk eval run` on a quote found twice.

A predictions stage gives one hit covering exactly the first copy of the quote: the quote counts
once (``span_recall@1`` 1.0, 0.5 before report schema 2.3); pinned to the second copy it is not
found (0.0); a pin whose text is not there is exit 2, one line naming the file, the line, the
query and the document, and nothing written.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from groundkit.cli import cli
from groundkit.judgments import SCHEMA_VERSION, load_report

DOC = "Intro. The fee is 8 dollars. Middle text here. The fee is 8 dollars. End."
QUOTE = "The fee is 8 dollars."
FIRST, SECOND = 7, 47


def _workspace(root: Path, start: int | None) -> None:
    (root / "corpus").mkdir()
    (root / "corpus" / "fees.md").write_text(DOC, encoding="utf-8")
    (root / "corpus" / "other.md").write_text("Nothing about money at all.", encoding="utf-8")
    gold: dict[str, Any] = {"doc": "fees.md", "quote": QUOTE}
    if start is not None:
        gold["start"] = start
    money = {"doc": "other.md", "quote": "Nothing about money"}
    lines = [
        {"query_id": "other", "query": "What about money?", "gold": [money]},
        {"query_id": "fee", "query": "What is the fee?", "gold": [gold]},
    ]
    text = "".join(json.dumps(line) + "\n" for line in lines)
    (root / "j.jsonl").write_text(text, encoding="utf-8")
    hits = [
        {"query_id": "fee", "hits": [{"doc": "fees.md", "start": FIRST, "end": 28, "score": 1}]},
        {"query_id": "other", "hits": [{"doc": "other.md", "start": 0, "end": 19, "score": 1}]},
    ]
    (root / "hits.jsonl").write_text("".join(json.dumps(h) + "\n" for h in hits), "utf-8")


def _run(root: Path) -> Any:
    args = ["eval", "run", "--corpus", str(root / "corpus"), "--judgments", str(root / "j.jsonl")]
    args += ["--report", str(root / "r.json"), "--predictions", f"exact={root / 'hits.jsonl'}"]
    args += ["--metric", "span_recall@1", "--metric", "span_precision@1", "--resamples", "50"]
    return CliRunner().invoke(cli, [*args, "--no-progress"])


@pytest.mark.parametrize(("start", "expected"), [(None, 1.0), (FIRST, 1.0), (SECOND, 0.0)])
def test_a_hit_on_one_copy_scores_the_quote_once(
    tmp_path: Path, start: int | None, expected: float
) -> None:
    _workspace(tmp_path, start)
    result = _run(tmp_path)
    assert result.exit_code == 0, result.output
    report = load_report(tmp_path / "r.json")
    assert report.schema_version == SCHEMA_VERSION == "2.4"
    assert report.run.span_gold == "best-occurrence"
    [gold] = next(q for q in report.queries if q.query_id == "fee").gold
    assert gold.start == start
    assert gold.spans == (
        [(47, 68)] if start == SECOND else [(7, 28)] if start else [(7, 28), (47, 68)]
    )
    stage = report.stage("exact")
    fee = next(q for q in stage.queries if q.query_id == "fee")
    assert fee.scores["span_recall@1"] == expected  # 0.5 unpinned before schema 2.3
    assert fee.scores["span_precision@1"] == expected
    assert fee.scores["recall@1"] == expected


def test_a_pin_that_does_not_hold_is_exit_2_naming_file_line_query_and_doc(
    tmp_path: Path,
) -> None:
    _workspace(tmp_path, FIRST + 1)
    done = subprocess.run(
        [sys.executable, "-m", "groundkit.cli", "eval", "run", "--corpus", "corpus",
         "--judgments", "j.jsonl", "--report", "r.json", "--no-progress"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip() == (
        "error: j.jsonl:2: fee: gold.0: quote pinned at start 8 of 'fees.md' is not there "
        "(the text there reads 'he fee is 8 dollars. '); it occurs at start 7, 47"
    )
    assert not (tmp_path / "r.json").exists()
