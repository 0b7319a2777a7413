"""`--describe` on the commands that read a file: contracts generated from the models (item 5)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from groundkit.cli import cli
from groundkit.cli.run._describe import (
    CONTRACTS,
    describe_text,
    field_rows,
    model_schema,
    type_text,
)
from groundkit.harness import RunConfig, load_run_config
from groundkit.harness.retrievers import retriever_kind, retriever_kinds
from groundkit.judgments import EvalReport, Judgment, load_judgments
from groundkit.judgments.report import parse_report

COMMANDS = {
    ("eval", "run"): ["config file", "judgments file"],
    ("eval", "compare"): ["report"],
    ("eval", "reproduce"): ["report"],
    ("eval", "report"): ["report"],
    ("eval", "diagnose"): ["report"],
    ("eval", "export"): ["report"],
    ("eval", "adjudicate"): ["report"],
    ("eval", "pool"): ["report"],
    ("eval", "sample"): ["report"],
    ("evalset", "assess"): ["judgments file"],
    ("evalset", "filter"): ["judgments file"],
    ("evalset", "classify"): ["judgments file"],
    ("evalset", "review"): ["judgments file"],
}


def _example(text: str) -> str:
    return text.split("\nexample:\n", 1)[1].split("\n\n== ", 1)[0]


def _example_lines(text: str) -> list[str]:
    return [line.removeprefix("  ") for line in _example(text).splitlines()]


@pytest.mark.parametrize("command", list(COMMANDS), ids=" ".join)
def test_describe_prints_the_contracts_and_reads_nothing(
    command: tuple[str, ...], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, [*command, "--describe"])  # no required argument given
    assert result.exit_code == 0, result.output
    titles = [line.split(":", 1)[0][3:] for line in result.output.splitlines() if line[:3] == "== "]
    assert titles == COMMANDS[command]
    assert "example:" in result.output
    assert list(tmp_path.iterdir()) == []  # nothing written


def _all_properties(schema: dict[str, Any]) -> dict[str, list[str]]:
    models = {schema["title"]: schema, **schema.get("$defs", {})}
    return {name: list(model.get("properties", {})) for name, model in models.items()}


@pytest.mark.parametrize(
    ("name", "model"), [("judgments", Judgment), ("report", EvalReport), ("config", RunConfig)]
)
def test_every_field_of_every_model_is_described(name: str, model: type[Any]) -> None:
    text = describe_text([name])
    schema = model.model_json_schema()
    for model_name, properties in _all_properties(schema).items():
        assert f"\n{model_name}: " in text, model_name
        for field in properties:
            assert f"\n  {field} " in text, (model_name, field)


def test_the_judgments_contract_reads_as_expected() -> None:
    rows = {row[0]: row[1:] for row in field_rows(Judgment.model_json_schema())}
    assert rows["query_id"][:2] == ("string", "required")
    assert rows["query_id"][2] == (
        "Unique lowercase kebab-case id (^[a-z0-9]+(?:-[a-z0-9]+)*$), checked in Unicode NFC."
    )
    assert rows["gold"][:2] == ("list of GoldQuote", "default []")
    assert rows["answer"][:2] == ("string or null", "default null")
    # A description continued over several docstring lines is joined.
    assert rows["category"][2] == (
        'Free label ("normal" by default). "unanswerable" is special: it is required exactly '
        "when gold is empty."
    )
    grade = Judgment.model_json_schema()["$defs"]["GoldQuote"]["properties"]["grade"]
    assert type_text(grade) == "integer (≥ 1, ≤ 9223372036854775807)"


def test_inherited_fields_keep_their_descriptions() -> None:
    rows = {row[0]: row[3] for row in field_rows(model_schema(RunConfig))}
    assert rows["corpus"] == "Corpus folder or .jsonl file."
    assert rows["depth"] == "Hits retrieved and recorded per query and stage."  # EvalSettings'
    assert all(rows.values()), [name for name, doc in rows.items() if not doc]


def test_every_registered_retriever_kind_is_described() -> None:
    text = describe_text(["config"])
    for kind in retriever_kinds():
        title = retriever_kind(kind).settings.model_json_schema()["title"]
        assert f"\n{title}: " in text, kind


def test_the_examples_are_accepted_by_the_readers(tmp_path: Path) -> None:
    [line] = _example_lines(describe_text(["judgments"]))
    (tmp_path / "judgments.jsonl").write_text(line + "\n", encoding="utf-8")
    [judgment] = load_judgments(tmp_path / "judgments.jsonl")
    assert judgment.query_id == "leave-days"

    [report_line] = _example_lines(describe_text(["report"]))
    report = parse_report(json.loads(report_line))
    assert report.schema_version == json.loads(report_line)["schema_version"]

    toml = "\n".join(_example_lines(describe_text(["config"])))
    (tmp_path / "groundkit.toml").write_text(toml + "\n", encoding="utf-8")
    config = load_run_config(tmp_path / "groundkit.toml")
    assert [s.name for s in config.stages] == ["bm25", "dense", "hybrid"]
    assert config.corpus == tmp_path / "corpus"


def test_every_contract_has_a_title_and_layout() -> None:
    for contract in CONTRACTS.values():
        assert contract.title
        assert contract.layout
        assert contract.schemas()


def test_real_subprocess() -> None:
    env = {**os.environ, "NO_COLOR": "1"}
    command = [sys.executable, "-m", "groundkit.cli", "evalset", "assess", "--describe"]
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert done.stdout.startswith("== judgments file: JSON Lines")
