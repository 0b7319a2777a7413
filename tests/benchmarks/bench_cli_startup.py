"""Start fast, write small (issue 15, item 4): ``grk`` start-up and the demo report's size.

Measured in one run, each the median of several: the interpreter alone (``python -c pass``, the
reference), ``grk --help``, every subcommand's ``--help`` (``grk eval run --help``...) and
``grk eval compare A.items B.items`` on the demo's items file (two of its stages); then the
size of the demo's report.json, beside the same report written as schema 1.3 wrote it (one
object per hit, indented). Targets: ``--help`` < 0.5 s, each subcommand's ``--help`` < 0.3 s,
the items comparison < 1 s, the report ≤ 2 MB. Exits 1 when one is missed.
"""

from __future__ import annotations

import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _child import byte_compile_groundkit

RUNS = 7
HELP_TARGET_S = 0.5
SUBCOMMAND_HELP_TARGET_S = 0.3
COMPARE_TARGET_S = 1.0
REPORT_TARGET_BYTES = 2_000_000


def _grk() -> list[str]:
    script = Path(sys.executable).with_name("grk")
    return [str(script)] if script.exists() else [sys.executable, "-m", "groundkit.cli"]


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def wall(command: list[str], runs: int = RUNS) -> tuple[float, float]:
    """Median wall and CPU seconds of ``command`` over ``runs`` runs (after one warm-up).

    The CPU time is printed beside the wall time: on a machine shared with other work the
    wall time waits for a core, the CPU time much less.
    """
    subprocess.run(command, capture_output=True, check=False)
    times, cpu = [], []
    for _ in range(runs):
        started, used = time.perf_counter(), _children_cpu()
        subprocess.run(command, capture_output=True, check=False)
        times.append(time.perf_counter() - started)
        cpu.append(_children_cpu() - used)
    return statistics.median(times), statistics.median(cpu)


def _subcommands() -> list[list[str]]:
    """Every registered subcommand, as its words (``["eval", "run"]``)."""
    from groundkit.cli._main import _COMMANDS, cli

    return [
        [*([] if group is cli else [str(group.name)]), name]
        for group, entries in _COMMANDS.items()
        for name in entries
    ]


def _one_object_per_hit_bytes(path: Path) -> int:
    """Size of the same report written the 1.3 way (the reference for the 1.4 columns)."""
    from groundkit.judgments import load_report

    text = load_report(path).model_dump_json(
        indent=1, exclude={"stages": {"__all__": {"hit_columns", "score_columns"}}}
    )
    return len(text.encode("utf-8")) + 1


def main() -> int:
    """Measure, print and check the targets; 0 when all are met."""
    print(byte_compile_groundkit())
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
        reference, reference_cpu = wall([sys.executable, "-c", "pass"])
        help_s, help_cpu = wall([*grk, "--help"])
        subcommand_help = {
            " ".join(words): wall([*grk, *words, "--help"]) for words in _subcommands()
        }
        compare_s, compare_cpu = wall(compare)
        size = report.stat().st_size
        old_size = _one_object_per_hit_bytes(report)
    print(f"medians of {RUNS} runs, wall (CPU):")
    print(f"python -c pass (reference): {reference:.3f} s ({reference_cpu:.3f} s)")
    print(
        f"grk --help:                 {help_s:.3f} s ({help_cpu:.3f} s) = "
        f"{help_s / reference:.1f}x reference"
    )
    for words, (seconds, cpu) in subcommand_help.items():
        print(f"grk {words} --help:".ljust(27), f"{seconds:.3f} s ({cpu:.3f} s)")
    print(
        f"grk eval compare A B items: {compare_s:.3f} s ({compare_cpu:.3f} s) = "
        f"{compare_s / reference:.1f}x reference"
    )
    print(
        f"demo report.json:           {size / 1e6:.2f} MB; the same report written as in "
        f"schema 1.3 (one object per hit, indented): {old_size / 1e6:.2f} MB "
        f"({old_size / size:.1f}x)"
    )
    missed = [
        f"grk --help {help_s:.3f} s >= {HELP_TARGET_S} s" if help_s >= HELP_TARGET_S else "",
        *(
            f"grk {words} --help {seconds:.3f} s >= {SUBCOMMAND_HELP_TARGET_S} s"
            for words, (seconds, _) in subcommand_help.items()
            if seconds >= SUBCOMMAND_HELP_TARGET_S
        ),
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
