"""An older report's items header: its stage config and config_hash are what 2.0 wrote."""

from __future__ import annotations

import json
from pathlib import Path

from tests.core_judgments.test_core_report_settings import _OLD_STAGE_HASH, _old_report

from groundkit.harness import load_items, write_items
from groundkit.harness.run import items_text
from groundkit.judgments.report import parse_report


def test_an_old_reports_items_header_keeps_its_config_and_hash(tmp_path: Path) -> None:
    data = _old_report("2.0")
    data["run"]["judgments_fingerprint"] = "a" * 64  # the items reader wants hex digits
    report = parse_report(data)
    header = json.loads(items_text(report).splitlines()[0])
    assert header["config"] == {
        "name": "bm25",
        "retriever": {"kind": "bm25", "k1": 1.2, "b": 0.75, "device_used": "cpu"},
        "chunker": {"kind": "chars", "size": 500},  # as recorded, the default left out
    }
    assert header["config_hash"] == _OLD_STAGE_HASH
    path = tmp_path / "old.items.jsonl"
    write_items(report, path)
    (stage,) = load_items(path).stages  # the reader re-checks the hash against the config
    assert stage.config_hash == _OLD_STAGE_HASH
