"""Run every benchmark script in this folder (``bench_*.py``) and report which met its targets.

Each benchmark is a script with its own ``main()`` that prints its measurements, including
ratios against a reference measured in the same run, and exits non-zero when a target is
missed. ``hatch run bench:all`` runs this file; pass names to run a subset
(``hatch run bench:all stats``).
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path


def main(argv: list[str]) -> int:
    """Run the selected benchmarks; return the number that failed."""
    here = Path(__file__).resolve().parent
    scripts = sorted(here.glob("bench_*.py"))
    if argv:
        scripts = [s for s in scripts if any(word in s.stem for word in argv)]
    if not scripts:
        print("no benchmark matched", argv)
        return 1
    failed = []
    for script in scripts:
        print(f"=== {script.stem}", flush=True)
        started = time.perf_counter()
        result = subprocess.run([sys.executable, str(script)], check=False)
        took = time.perf_counter() - started
        status = "ok" if result.returncode == 0 else f"FAILED (exit {result.returncode})"
        print(f"=== {script.stem}: {status} in {took:.1f} s\n", flush=True)
        if result.returncode != 0:
            failed.append(script.stem)
    print("benchmarks failed:" if failed else "all benchmarks met their targets", *failed)
    return len(failed)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
