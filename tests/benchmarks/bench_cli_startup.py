"""Start fast, write small (issue 15, item 4): ``grk`` start-up and the demo report's size.

Measured in one run, each the median of several: the interpreter alone (``python -c pass``, the
reference), ``grk --help`` and ``grk eval compare A.items B.items`` on the demo's items file
(two of its stages); then the size of the demo's report.json. Targets: ``--help`` < 0.5 s,
the items comparison < 1 s, the report ≤ 2 MB. Exits 1 when one is missed.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RUNS = 7
HELP_TARGET_S = 0.5
COMPARE_TARGET_S = 1.0
REPORT_TARGET_BYTES = 2_000_000


def _grk() -> list[str]:
    script = Path(sys.executable).with_name("grk")
    return [str(script)] if script.exists() else [sys.executable, "-m", "groundkit.cli"]


def wall(command: list[str], runs: int = RUNS) -> float:
    """Median wall time of ``command`` over ``runs`` runs (one warm-up run first)."""
    subprocess.run(command, capture_output=True, check=False)
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(command, capture_output=True, check=False)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> int:
    """Measure, print and check the targets; 0 when all are met."""
    grk = _grk()
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "demo"
        subprocess.run([*grk, "eval", "demo", "--out", str(out)], capture_output=True, check=True)
        items, report = out / "items.jsonl", out / "report.json"
        compare = [*grk, "eval", "compare", str(items), str(items)]
        compare += ["--stage-a", "bm25", "--stage-b", "bm25-chars200"]
        done = subprocess.run(compare, capture_output=True, check=False)
        if done.returncode not in (0, 1):
            print(done.stderr.decode(), file=sys.stderr)
            return 2
        reference = wall([sys.executable, "-c", "pass"])
        help_s = wall([*grk, "--help"])
        compare_s = wall(compare)
        size = report.stat().st_size
    print(f"python -c pass (reference): {reference:.3f} s (median of {RUNS})")
    print(f"grk --help:                 {help_s:.3f} s = {help_s / reference:.1f}x reference")
    print(f"grk eval compare A B items: {compare_s:.3f} s = {compare_s / reference:.1f}x reference")
    print(f"demo report.json:           {size / 1e6:.2f} MB")
    missed = [
        f"grk --help {help_s:.3f} s >= {HELP_TARGET_S} s" if help_s >= HELP_TARGET_S else "",
        f"items compare {compare_s:.3f} s >= {COMPARE_TARGET_S} s"
        if compare_s >= COMPARE_TARGET_S
        else "",
        f"report {size} bytes > {REPORT_TARGET_BYTES}" if size > REPORT_TARGET_BYTES else "",
    ]
    missed = [m for m in missed if m]
    print("targets met" if not missed else "missed: " + "; ".join(missed))
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
