"""Reading a report is cheap (issue 25, item 8): ``grk eval report`` and ``grk eval export``.

Run with ``python tests/benchmarks/bench_cli_report_speed.py [--scifact DIR] [--repeats N]``.

Each figure is set beside its reference, measured in the same run: the wall time of the run
that made the report. Three reports: the demo (``grk eval demo --no-html``: its stages, dense
ones included when the dense extra is installed), and BEIR SciFact's test split with BM25 at
chunk level (the default chunker) and at document level (``--level document --chunker
document --k 100``). For each, ``grk eval report`` (the HTML page) and ``grk eval export``
(the baseline's TREC run and qrels) are timed. Every command is a child process, timed from
start to exit (imports included), best of N runs, the commands alternated.

Target: each command at most half the time of the run that made its report. Exits 1 when one
is missed; SciFact is skipped (said so) when the shared data is absent.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from _child import Measured, byte_compile_groundkit, measure_child

DEFAULT_SCIFACT = Path(__file__).resolve().parents[3] / "shared" / "data" / "beir" / "scifact"
MAX_RATIO = 0.5


def _grk() -> list[str]:
    script = Path(sys.executable).with_name("grk")
    if script.is_file():
        return [str(script)]
    return [sys.executable, "-c", "import sys; from groundkit.cli import main; sys.exit(main())"]


def _commands(label: str, run: list[str], report: Path) -> dict[str, list[str]]:
    """The run that writes ``report``, then the page and the export that read it."""
    grk = _grk()
    return {
        f"{label}: run": run,
        f"{label}: eval report": [
            *grk, "eval", "report", str(report), "--html", str(report.with_suffix(".html")),
            "--force",
        ],
        f"{label}: eval export": [
            *grk, "eval", "export", str(report), "--stage", "bm25",
            "--run", str(report.with_suffix(".run.trec")),
            "--qrels", str(report.with_suffix(".qrels.trec")), "--force",
        ],
    }  # fmt: skip


def _scifact_commands(scifact: Path, root: Path) -> dict[str, list[str]]:
    from groundkit.adapters.beir import adapt_beir_dataset

    adapted = root / "scifact"
    adapt_beir_dataset(scifact, adapted, split="test")  # a one-time conversion, not timed
    inputs = ["--corpus", str(adapted / "corpus"), "--judgments", str(adapted / "judgments.jsonl")]
    commands: dict[str, list[str]] = {}
    for label, options in (
        ("SciFact chunk", []),
        ("SciFact document", ["--level", "document", "--chunker", "document", "--k", "100"]),
    ):
        folder = root / label.replace(" ", "-")
        folder.mkdir()
        report = folder / "report.json"
        run = [*_grk(), "eval", "run", *inputs, *options, "--report", str(report)]
        commands.update(_commands(label, [*run, "--no-progress", "--force"], report))
    return commands


def _best(commands: dict[str, list[str]], repeats: int) -> dict[str, Measured]:
    """Best of ``repeats`` runs of each command, alternated (a run first writes its report)."""
    runs: dict[str, list[Measured]] = {name: [] for name in commands}
    for _ in range(repeats):
        for name, command in commands.items():
            measured = measure_child(command)
            if measured.returncode != 0:
                raise SystemExit(f"{name} failed ({measured.returncode}): {measured.stderr}")
            runs[name].append(measured)
    return {name: min(found, key=lambda m: m.seconds) for name, found in runs.items()}


def _print(best: dict[str, Measured], labels: Sequence[str]) -> list[str]:
    """One line per figure beside its run; the targets missed."""
    missed: list[str] = []
    print(f"{'':<34}{'wall s':>8}{'cpu s':>8}{'x run':>8}")
    for label in labels:
        run = best[f"{label}: run"]
        print(f"{label + ': run (reference)':<34}{run.seconds:>8.2f}{run.cpu_seconds:>8.2f}")
        for command in ("eval report", "eval export"):
            measured = best[f"{label}: {command}"]
            ratio = measured.seconds / run.seconds
            print(
                f"{label + ': ' + command:<34}{measured.seconds:>8.2f}"
                f"{measured.cpu_seconds:>8.2f}{ratio:>8.2f}"
            )
            if ratio > MAX_RATIO:
                missed.append(f"{label} {command} {ratio:.2f}x its run > {MAX_RATIO}x")
    return missed


def main(argv: list[str] | None = None) -> int:
    """Measure, print each figure beside its run, check the target; 0 when all are met."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scifact", type=Path, default=DEFAULT_SCIFACT)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    print(byte_compile_groundkit())
    with tempfile.TemporaryDirectory(prefix="grk-bench-report-") as tmp:
        root = Path(tmp)
        demo = root / "demo"
        run = [*_grk(), "eval", "demo", "--out", str(demo), "--no-html", "--no-progress"]
        commands = _commands("demo", [*run, "--force"], demo / "report.json")
        labels = ["demo"]
        if (args.scifact / "corpus.jsonl").is_file():
            commands.update(_scifact_commands(args.scifact, root))
            labels += ["SciFact chunk", "SciFact document"]
        else:
            print(f"SciFact skipped: not found at {args.scifact}")
        best = _best(commands, max(1, args.repeats))
        data = json.loads((demo / "report.json").read_text(encoding="utf-8"))
    stages = ", ".join(stage["name"] for stage in data["stages"])
    print(f"best of {max(1, args.repeats)} runs each, whole process; demo stages: {stages}")
    missed = _print(best, labels)
    print("targets met" if not missed else "missed: " + "; ".join(missed))
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
