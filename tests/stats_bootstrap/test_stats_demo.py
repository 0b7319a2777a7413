"""The demo module runs as a script and prints a readable comparison."""

from __future__ import annotations

import subprocess
import sys


def test_stats_demo_runs() -> None:
    completed = subprocess.run(
        [sys.executable, "-m", "groundkit.stats.demo"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    out = completed.stdout
    assert "bm25 vs hybrid on 300 simulated queries" in out
    for text in ("hit@10 (binary items)", "ndcg@10 (numeric items)", "95% CI", "McNemar p"):
        assert text in out
    assert out.count("detection limit") == 2
    # The simulated candidate is clearly better on both metrics (seeded simulation).
    assert out.count("verdict      better") == 2
    assert "Traceback" not in completed.stderr
