"""The baseline a run compares with: ``bm25`` by default, or a stage the user names.

``EvalSettings.baseline`` (TOML ``baseline``, ``grk eval run --baseline``, ``evaluate(...,
baseline=)``) names the stage every other stage is compared with: it runs first and no BM25
stage is added. The default dumps, records and hashes exactly as before the setting existed.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from pydantic import ValidationError
from tests.cli._process import grk_process
from tests.cli.test_harness_pipeline import DOCS, JUDGMENTS, _write_inputs

from groundkit.cli import cli
from groundkit.harness import (
    Bm25Retriever,
    ConfigError,
    EvalSettings,
    HybridRetriever,
    StageConfig,
    evaluate,
    load_run_config,
)
from groundkit.harness.analysis import comparison_problem, rerun_chunk_fixes
from groundkit.harness.run import SharedWork
from groundkit.harness.sweep import expand_sweep
from groundkit.judgments import CharsChunker, EvalReport, load_report
from groundkit.judgments.report import check_report, report_to_json

NARROW = StageConfig(
    name="narrow", retriever=Bm25Retriever(), chunker=CharsChunker(size=40, overlap=0)
)
WIDE = StageConfig(
    name="wide", retriever=Bm25Retriever(k1=0.9, b=0.4), chunker=CharsChunker(size=120, overlap=0)
)


def _settings(**kwargs: Any) -> EvalSettings:
    base: dict[str, Any] = {
        "chunker": CharsChunker(size=80, overlap=10),
        "bootstrap": {"resamples": 200, "seed": 3},
    }
    return EvalSettings.model_validate({**base, **kwargs})


def _names(report: EvalReport) -> list[str]:
    return [stage.name for stage in report.stages]


@pytest.fixture(scope="module")
def own_baseline() -> EvalReport:
    """``narrow`` compared with the user's ``wide``: no BM25 baseline."""
    return evaluate(DOCS, JUDGMENTS, _settings(stages=[NARROW, WIDE], baseline="wide"))


# --- validation --------------------------------------------------------------------------------


def test_the_named_stage_goes_first_and_no_bm25_stage_is_added() -> None:
    fused = StageConfig(name="fused", retriever=HybridRetriever(stages=["narrow", "wide"]))
    settings = _settings(stages=[NARROW, WIDE, fused], baseline="wide")
    assert [s.name for s in settings.stages] == ["wide", "narrow", "fused"]
    assert settings.stage("wide").chunker == WIDE.chunker


def test_the_default_adds_bm25_first_as_before() -> None:
    settings = _settings(stages=[NARROW])
    assert settings.baseline == "bm25"
    assert [s.name for s in settings.stages] == ["bm25", "narrow"]
    assert settings.stages[0].retriever == Bm25Retriever()
    assert settings.stages[0].chunker == CharsChunker(size=80, overlap=10)


def test_the_default_dumps_as_before_the_setting_existed() -> None:
    default = _settings(stages=[NARROW])
    explicit = _settings(stages=[NARROW], baseline="bm25")
    assert "baseline" not in default.model_dump(mode="json")
    assert default.model_dump_json() == explicit.model_dump_json()
    other = _settings(stages=[NARROW, WIDE], baseline="wide").model_dump(mode="json")
    assert other["baseline"] == "wide"
    assert EvalSettings.model_validate(other).baseline == "wide"  # round-trips


@pytest.mark.parametrize(
    ("stages", "baseline", "message"),
    [
        ([NARROW, WIDE], "nope", "baseline: 'nope' is not a stage (stages: narrow, wide)"),
        ([], "nope", "baseline: 'nope' is not a stage (no stage is defined)"),
        ([NARROW], "Not A Name", "stage name 'Not A Name' must be 1-64 of a-z"),
        (
            [
                NARROW,
                WIDE,
                {"name": "fused", "retriever": {"kind": "hybrid", "stages": ["narrow", "wide"]}},
            ],
            "fused",
            "baseline: stage 'fused' reads 'narrow' and 'wide', so it cannot run first",
        ),
        (
            [
                NARROW,
                {"name": "fused", "retriever": {"kind": "hybrid", "stages": ["bm25", "narrow"]}},
            ],
            "narrow",
            "stage 'fused' reads 'bm25', which is not a stage defined before it",
        ),
    ],
)
def test_a_bad_baseline_is_refused(stages: list[Any], baseline: str, message: str) -> None:
    with pytest.raises(ValidationError) as caught:
        _settings(stages=stages, baseline=baseline)
    assert message in str(caught.value)


def test_a_stage_named_bm25_is_still_only_a_bm25_stage() -> None:
    with pytest.raises(ValidationError, match="reserved for the BM25 baseline"):
        _settings(stages=[{"name": "bm25", "retriever": {"kind": "hybrid", "stages": ["a", "b"]}}])
    # Defined by the config, a bm25 stage is an ordinary candidate of another baseline.
    settings = _settings(
        stages=[{"name": "bm25", "retriever": {"kind": "bm25"}}, WIDE], baseline="wide"
    )
    assert [s.name for s in settings.stages] == ["wide", "bm25"]


# --- the Python API ----------------------------------------------------------------------------


def test_the_report_compares_with_the_named_stage(own_baseline: EvalReport) -> None:
    report = own_baseline
    assert _names(report) == ["wide", "narrow"]
    assert report.baseline.name == "wide"
    assert [s.baseline for s in report.stages] == [True, False]
    assert report.stage("wide").comparisons == []
    narrow = report.stage("narrow")
    assert [c.metric for c in narrow.comparisons] == report.run.headline_metrics
    assert {c.baseline for c in narrow.comparisons} == {"wide"}
    assert report.run.config["baseline"] == "wide"
    assert check_report(json.loads(report_to_json(report))) == []
    assert comparison_problem(report) is None  # the family recomputed from the scores agrees


def test_the_figures_equal_the_wide_stage_run_as_the_bm25_baseline(
    own_baseline: EvalReport,
) -> None:
    # The old way round, possible for a BM25 stage only: configure the bm25 baseline as `wide`.
    renamed = WIDE.model_copy(update={"name": "bm25"})
    before = evaluate(DOCS, JUDGMENTS, _settings(stages=[renamed, NARROW]))
    assert _names(before) == ["bm25", "narrow"]
    for old, new in (("bm25", "wide"), ("narrow", "narrow")):
        assert before.stage(old).aggregates == own_baseline.stage(new).aggregates
        assert [q.scores for q in before.stage(old).queries] == [
            q.scores for q in own_baseline.stage(new).queries
        ]
    old_comparisons = [
        c.model_copy(update={"baseline": "wide"}) for c in before.stage("narrow").comparisons
    ]
    assert own_baseline.stage("narrow").comparisons == old_comparisons


def test_evaluate_names_a_baseline_among_live_retrievers() -> None:
    def paragraph_of(word: str) -> Any:
        return lambda query: [p for p in DOCS["beta.md"].split(". ") if word in query.lower()][:1]

    report = evaluate(
        DOCS,
        JUDGMENTS,
        _settings(),
        stages={"current": paragraph_of("refund"), "mine": paragraph_of("how")},
        baseline="current",
    )
    assert _names(report) == ["current", "mine"]
    assert {c.baseline for c in report.stage("mine").comparisons} == {"current"}
    with pytest.raises(ValidationError, match="baseline: 'nope' is not a stage"):
        evaluate(DOCS, JUDGMENTS, stages={"mine": paragraph_of("how")}, baseline="nope")


def test_evaluate_keeps_a_bm25_stage_the_settings_define() -> None:
    defined = _settings(stages=[{"name": "bm25", "retriever": {"kind": "bm25"}}, NARROW])
    report = evaluate(DOCS, JUDGMENTS, defined, baseline="narrow")
    assert _names(report) == ["narrow", "bm25"]
    added = evaluate(DOCS, JUDGMENTS, _settings(stages=[NARROW]), baseline="narrow")
    assert _names(added) == ["narrow"]  # the BM25 stage the default added is left out


def test_which_stage_is_the_baseline_does_not_stop_reuse() -> None:
    shared = SharedWork()
    evaluate(DOCS, JUDGMENTS, _settings(stages=[NARROW, WIDE]), shared=shared)
    assert shared.counts["stages_reused"] == 0
    report = evaluate(
        DOCS, JUDGMENTS, _settings(stages=[NARROW, WIDE], baseline="wide"), shared=shared
    )
    assert shared.counts["stages_reused"] == 2
    assert [s.baseline for s in report.stages] == [True, False]
    assert check_report(json.loads(report_to_json(report))) == []


def test_a_report_must_start_with_the_baseline_it_records(own_baseline: EvalReport) -> None:
    data = json.loads(report_to_json(own_baseline))
    del data["run"]["config"]["baseline"]
    assert "the first stage must be the baseline named 'bm25'" in check_report(data)
    data["run"]["config"]["baseline"] = "narrow"
    assert "the first stage must be the baseline named 'narrow'" in check_report(data)


def test_a_chunk_fix_rerun_runs_the_diagnosed_stage_alone(tmp_path: Path) -> None:
    corpus, judgments = _write_inputs(tmp_path)
    config = tmp_path / "own.toml"
    config.write_text(
        f'corpus = "{corpus.name}"\njudgments = "{judgments.name}"\nbaseline = "wide"\n'
        '[[stages]]\nname = "wide"\nretriever = { kind = "bm25" }\nchunker = "chars:120:0"\n'
        '[[stages]]\nname = "narrow"\nretriever = { kind = "bm25" }\nchunker = "chars:40:0"\n',
        encoding="utf-8",
    )
    done = CliRunner().invoke(
        cli,
        [
            "eval",
            "run",
            "--config",
            str(config),
            "--report",
            str(tmp_path / "r.json"),
            "--no-items",
        ],
    )
    assert done.exit_code == 0, done.output
    phases: list[str] = []
    reruns = rerun_chunk_fixes(
        tmp_path / "r.json",
        "narrow",
        fixes=["larger-chunks"],
        progress=lambda p, d, t: phases.append(p),
    )
    assert len(reruns) == 1
    assert phases
    assert {p.split(":")[0] for p in phases if ":" in p} == {"narrow"}  # no bm25, no wide


# --- TOML, the command line, the sweep ---------------------------------------------------------


def _config(folder: Path, baseline: str) -> Path:
    folder.mkdir(exist_ok=True)
    corpus, judgments = _write_inputs(folder)
    path = folder / "groundkit.toml"
    path.write_text(
        f'corpus = "{corpus.name}"\njudgments = "{judgments.name}"\nbaseline = "{baseline}"\n'
        '[[stages]]\nname = "narrow"\nretriever = { kind = "bm25" }\nchunker = "chars:40:0"\n'
        '[[stages]]\nname = "wide"\nretriever = { kind = "bm25", k1 = 0.9, b = 0.4 }\n'
        'chunker = "chars:120:0"\n',
        encoding="utf-8",
    )
    return path


def test_a_config_file_names_the_baseline(tmp_path: Path) -> None:
    config = load_run_config(_config(tmp_path, "wide"))
    assert config.baseline == "wide"
    assert [s.name for s in config.stages] == ["wide", "narrow"]


def test_a_config_file_naming_no_stage_names_the_file_and_key(tmp_path: Path) -> None:
    path = _config(tmp_path, "dense")
    with pytest.raises(ConfigError) as caught:
        load_run_config(path)
    assert str(caught.value) == (f"{path}: baseline: 'dense' is not a stage (stages: narrow, wide)")


def _grk(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return grk_process(folder, *args)


def test_grk_eval_run_baseline_in_a_real_process(tmp_path: Path) -> None:
    _write_inputs(tmp_path)
    flags = ["--corpus", "corpus", "--judgments", "judgments.jsonl", "--no-items", "--no-progress"]
    stages = ["--stage", "narrow=bm25@chars:40:0", "--stage", "wide=bm25@chars:120:0"]
    done = _grk(
        tmp_path, "eval", "run", *flags, *stages, "--baseline", "wide", "--report", "r.json"
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "difference from wide" in done.stdout
    report = load_report(tmp_path / "r.json")
    assert _names(report) == ["wide", "narrow"]
    assert report.run.config["baseline"] == "wide"
    assert report.run.command is not None
    assert "--baseline" in report.run.command
    # The flag beats the config file, as every flag does.
    _config(tmp_path / "c", "narrow")
    done = _grk(
        tmp_path / "c",
        "eval",
        "run",
        "--config",
        "groundkit.toml",
        "--baseline",
        "wide",
        "--report",
        "r.json",
        "--no-items",
        "--no-progress",
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert _names(load_report(tmp_path / "c" / "r.json")) == ["wide", "narrow"]


def test_grk_eval_run_unknown_baseline_is_one_line_exit_2(tmp_path: Path) -> None:
    _write_inputs(tmp_path)
    flags = ["--corpus", "corpus", "--judgments", "judgments.jsonl", "--no-progress"]
    done = _grk(tmp_path, "eval", "run", *flags, "--stage", "narrow=bm25", "--baseline", "dense")
    assert done.returncode == 2
    assert (done.stdout + done.stderr).strip() == (
        "error: --baseline dense: 'dense' is not a stage (stages: narrow)"
    )
    assert not (tmp_path / "report.json").exists()


def test_a_config_file_with_an_unknown_baseline_is_one_line_exit_2(tmp_path: Path) -> None:
    path = _config(tmp_path, "dense")
    result = CliRunner().invoke(cli, ["eval", "run", "--config", str(path)])
    assert result.exit_code == 2
    assert result.output.strip() == (
        f"error: {path}: baseline: 'dense' is not a stage (stages: narrow, wide)"
    )


def test_the_default_run_records_no_baseline_key(tmp_path: Path) -> None:
    _write_inputs(tmp_path)
    result = CliRunner().invoke(
        cli,
        [
            "eval",
            "run",
            "--corpus",
            str(tmp_path / "corpus"),
            "--judgments",
            str(tmp_path / "judgments.jsonl"),
            "--report",
            str(tmp_path / "r.json"),
            "--no-items",
            "--no-progress",
        ],
    )
    assert result.exit_code == 0, result.output
    report = load_report(tmp_path / "r.json")
    assert _names(report) == ["bm25"]
    assert "baseline" not in report.run.config


def test_a_sweep_takes_no_other_baseline() -> None:
    data = {"corpus": "c", "judgments": "j.jsonl", "baseline": "mine", "sweep": {"grid": {}}}
    with pytest.raises(ConfigError, match=r"^baseline: a sweep compares every arm with the bm25"):
        expand_sweep(data)
