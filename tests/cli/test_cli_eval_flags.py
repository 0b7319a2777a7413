"""The compact flag syntax of `grk eval run`, and the progress display."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from groundkit.cli._errors import InputError
from groundkit.cli.console._report import ProgressDisplay
from groundkit.cli.run._config import RunFlags, build_run_config
from groundkit.cli.run._flags import (
    parse_chunker_spec,
    parse_command_spec,
    parse_hybrid_shortcut,
    parse_predictions_spec,
    parse_stage_spec,
)
from groundkit.cli.run._run import command_record, default_items_path


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("document", {"kind": "document"}),
        ("paragraphs", {"kind": "paragraphs", "max_chars": 1000}),
        ("paragraphs:500", {"kind": "paragraphs", "max_chars": 500}),
        ("sentences:3", {"kind": "sentences", "max_sentences": 3, "max_chars": None}),
        ("sentences:3:600", {"kind": "sentences", "max_sentences": 3, "max_chars": 600}),
        ("chars:800:100", {"kind": "chars", "size": 800, "overlap": 100}),
        ("chars:800", {"kind": "chars", "size": 800, "overlap": 0}),
        ("tokens:128:16", {"kind": "tokens", "size": 128, "overlap": 16}),
    ],
)
def test_chunker_specs(spec: str, expected: dict[str, object]) -> None:
    assert parse_chunker_spec(spec) == expected


@pytest.mark.parametrize(
    ("spec", "fragment"),
    [
        ("chars", "expected chars:SIZE:OVERLAP"),
        ("chars:0", "must be positive"),
        ("chars:100:100", "overlap (100) must be smaller than size (100)"),
        ("chars:1:2:3", "expected"),
        ("document:5", "expected document"),
        ("tokens:-3", "whole number"),
        ("words:4", "unknown kind 'words'"),
    ],
)
def test_bad_chunker_specs_say_why(spec: str, fragment: str) -> None:
    with pytest.raises(InputError, match="chunker") as caught:
        parse_chunker_spec(spec)
    assert fragment in caught.value.format_message()


def test_stage_specs() -> None:
    small = parse_stage_spec("small=bm25@chars:400:50")
    assert small.to_config() == {
        "name": "small",
        "retriever": {"kind": "bm25"},
        "chunker": {"kind": "chars", "size": 400, "overlap": 50},
    }
    dense = parse_stage_spec("dense:intfloat/e5-small@paragraphs")
    assert dense.name == "dense"
    assert dense.options == {"model": "intfloat/e5-small"}
    fused = parse_hybrid_shortcut("bm25,dense")
    assert fused.to_config() == {
        "name": "hybrid",
        "retriever": {"kind": "hybrid", "stages": ["bm25", "dense"]},
    }
    assert parse_stage_spec("rrf=hybrid:bm25+dense+small").options["stages"] == [
        "bm25",
        "dense",
        "small",
    ]
    command = parse_command_spec("mine=python 'my retriever.py' --k 5", timeout=3.0)
    assert command.options == {"argv": ["python", "my retriever.py", "--k", "5"], "timeout": 3.0}
    assert parse_predictions_spec("old=run.trec").options == {"path": "run.trec"}


@pytest.mark.parametrize(
    ("spec", "fragment"),
    [
        ("bm25:x", "bm25 takes no argument"),
        ("h=hybrid:bm25", "two or more"),
        ("h=hybrid:bm25+dense@document", "drop @CHUNKER"),
        ("UPPER=bm25", "'UPPER'"),
        ("x=splade", "unknown retriever 'splade'"),
    ],
)
def test_bad_stage_specs(spec: str, fragment: str) -> None:
    with pytest.raises(InputError) as caught:
        parse_stage_spec(spec)
    assert fragment in caught.value.format_message()


def test_command_spec_errors() -> None:
    with pytest.raises(InputError, match="NAME=VALUE"):
        parse_command_spec("python x.py")
    with pytest.raises(InputError, match="quotation"):
        parse_command_spec("x=python 'unclosed")


def test_flags_build_a_config_with_the_baseline_first(tmp_path: Path) -> None:
    config = build_run_config(
        RunFlags(
            corpus=tmp_path / "c",
            judgments=tmp_path / "j.jsonl",
            chunker="paragraphs",
            retrievers=["dense"],
            hybrids=["bm25,dense"],
            depth=20,
            seed=4,
        )
    )
    assert [s.name for s in config.stages] == ["bm25", "dense", "hybrid"]
    assert config.depth == 20
    assert config.bootstrap.seed == 4
    assert config.stages[1].chunker is not None
    assert config.stages[1].chunker.kind == "paragraphs"


def test_items_path_beside_the_report() -> None:
    assert default_items_path(Path("runs/today.json")) == Path("runs/today.items.jsonl")
    assert default_items_path(Path("report")) == Path("report.items.jsonl")


def test_command_record_lists_only_what_was_set() -> None:
    import click

    @click.command("run")
    @click.option("--k", type=int, default=None)
    @click.option("--stage", multiple=True)
    @click.option("--no-items", is_flag=True)
    @click.option("--report", default="groundkit-report.json")
    def run(**_: object) -> None:
        pass

    ctx = run.make_context("run", ["--k", "5", "--stage", "a=bm25", "--stage", "b=dense"])
    assert command_record(ctx) == ["grk", "--k", "5", "--stage", "a=bm25", "--stage", "b=dense"]


def test_progress_display_draws_only_when_enabled() -> None:
    stream = io.StringIO()
    with ProgressDisplay(enabled=True, file=stream) as hook:
        hook("load", 0, 2)
        hook("load", 2, 2)
        hook("bm25: index", 0, 0)
        hook("bm25: retrieve", 5, 10)
    quiet = io.StringIO()
    with ProgressDisplay(file=quiet) as hook:  # a StringIO is not a terminal
        hook("load", 1, 2)
    assert quiet.getvalue() == ""
    assert hook.enabled is False


def _predictions_config(tmp_path: Path, retriever: str) -> Path:
    config = tmp_path / "conf" / "groundkit.toml"
    config.parent.mkdir(exist_ok=True)
    config.write_text(
        'corpus = "c"\njudgments = "j.jsonl"\n[[stages]]\nname = "orig"\n'
        f"retriever = {retriever}\n",
        encoding="utf-8",
    )
    return config


def test_id_map_flag_sets_a_predictions_stage_of_the_flags_or_the_file(tmp_path: Path) -> None:
    run, mapped = str(tmp_path / "o.trec"), str(tmp_path / "m.json")
    flagged = build_run_config(
        RunFlags(
            corpus=tmp_path / "c",
            judgments=tmp_path / "j.jsonl",
            predictions=[f"orig={run}"],
            id_maps=[f"orig={mapped}"],
        )
    )
    assert flagged.stage("orig").retriever.model_dump()["id_map"] == Path(mapped)
    # A stage of the config file: its own id_map is relative to the file's folder, and the
    # flag (relative to the working folder, like every flag) beats it.
    config = _predictions_config(
        tmp_path, '{ kind = "predictions", path = "o.trec", id_map = "maps/id_map.json" }'
    )
    from_file = build_run_config(RunFlags(config=config))
    folder = config.parent.resolve()
    assert from_file.stage("orig").retriever.model_dump()["id_map"] == folder / "maps/id_map.json"
    overridden = build_run_config(RunFlags(config=config, id_maps=["orig=other.json"]))
    assert overridden.stage("orig").retriever.model_dump()["id_map"] == Path("other.json")
    assert overridden.stage("orig").retriever.model_dump()["path"] == folder / "o.trec"


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (
            {"id_maps": ["nope=m.json"]},
            "--id-map 'nope=m.json': no predictions stage named 'nope' (from --predictions or "
            "the config file)",
        ),
        (
            {"id_maps": ["bm25=m.json"]},
            "--id-map 'bm25=m.json': stage 'bm25' is not a predictions stage; only a TREC run "
            'read by --predictions NAME=RUN (or kind = "predictions") takes an id map',
        ),
        (
            {"predictions": ["orig=o.trec"], "id_maps": ["orig=a.json", "orig=b.json"]},
            "--id-map 'orig=b.json': stage 'orig' has an id map already",
        ),
        ({"predictions": ["orig=o.trec"], "id_maps": ["orig"]}, "--id-map 'orig': expected"),
        (
            {"predictions": ["orig=p.jsonl"], "id_maps": ["orig=m.json"]},
            "--id-map orig=m.json: id_map applies to TREC run files, not to predictions JSON Lines",
        ),
    ],
)
def test_id_map_flag_errors_name_the_flag(
    tmp_path: Path, flags: dict[str, list[str]], message: str
) -> None:
    with pytest.raises(InputError) as caught:
        build_run_config(
            RunFlags(
                corpus=tmp_path / "c",
                judgments=tmp_path / "j.jsonl",
                stages=["bm25"],
                **flags,  # type: ignore[arg-type]
            )
        )
    assert caught.value.format_message().startswith(message)


def test_id_map_flag_on_a_jsonl_stage_of_the_file_names_the_flag(tmp_path: Path) -> None:
    config = _predictions_config(tmp_path, '{ kind = "predictions", path = "p.jsonl" }')
    with pytest.raises(InputError) as caught:
        build_run_config(RunFlags(config=config, id_maps=["orig=m.json"]))
    assert caught.value.format_message() == (
        "--id-map orig=m.json: id_map applies to TREC run files, not to predictions JSON Lines"
    )
    in_file = _predictions_config(
        tmp_path, '{ kind = "predictions", path = "p.jsonl", id_map = "m.json" }'
    )
    with pytest.raises(InputError) as caught:
        build_run_config(RunFlags(config=in_file))
    assert caught.value.format_message() == (
        f"{in_file}: stages[0].retriever.id_map: id_map applies to TREC run files, not to "
        "predictions JSON Lines"
    )


def test_progress_display_shows_the_model_load_step_and_every_bar_has_an_eta() -> None:
    from rich.progress import TimeRemainingColumn

    stream = io.StringIO()
    with ProgressDisplay(enabled=True, file=stream) as hook:
        assert hook._progress is not None
        assert any(isinstance(c, TimeRemainingColumn) for c in hook._progress.columns)
        hook("minilm: load model", 0, 1)
        hook("minilm: load model", 1, 1)
        hook("minilm: embed", 3, 10)
    assert "minilm: model loaded in " in stream.getvalue()
    again = io.StringIO()
    with ProgressDisplay(enabled=True, file=again) as hook:
        hook("minilm: load model", 1, 1)  # already loaded: no line
    assert "model loaded" not in again.getvalue()
