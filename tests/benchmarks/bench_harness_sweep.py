"""A 12-arm sweep on the demo against the same 12 arms run alone, in the same process.

Run with ``python tests/benchmarks/bench_harness_sweep.py [--bm25-only]``.

The sweep is the issue's: chunk sizes 400, 800 and 1200 characters × overlaps 0 and 100 ×
bm25 / hybrid (BM25 and the packaged MiniLM dense model fused by reciprocal rank), on the
packaged demo corpus and judgments (172 queries), CPU only. ``run_sweep`` runs it into a fresh
folder with a fresh embedding cache; then each arm runs alone, as ``grk eval run`` would run
it: the inputs loaded again, its own (empty) embedding cache, nothing shared, its report and
items written. The sweep runs first, cold (first imports, the model loaded once), and the
model stays loaded for the arms alone, so the reference is, if anything, favoured.

Both wall-clock seconds and this process's CPU seconds (every thread, ``time.process_time``)
are measured: the machine is shared, and other processes' load moves wall-clock time by more
than the work a sweep saves, while CPU seconds count only this process's own work.

Check (exit status 1 on a miss): the sweep takes less CPU time than the sum of the arms alone
(wall-clock time is printed beside it), its summary has a Pareto front, and it did less work
(chunkings, BM25 indexes) than the arms alone added up.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from groundkit.harness import dense_available, load_sweep, run_sweep
from groundkit.harness.run import SharedWork, items_text
from groundkit.harness.run._pipeline import evaluate_loaded, load_run_inputs
from groundkit.judgments.report import checked_report_json

DEMO = Path(__file__).resolve().parents[2] / "packages/cli/src/groundkit/harness/demo_data"


def write_sweep_file(folder: Path, *, retrievers: list[str], cache: Path) -> Path:
    """The demo sweep file (3 sizes × 2 overlaps × ``retrievers``) in ``folder``."""
    path = folder / "sweep.toml"
    names = ", ".join(f'"{r}"' for r in retrievers)
    path.write_text(
        f'corpus = "{DEMO / "corpus"}"\n'
        f'judgments = "{DEMO / "judgments.jsonl"}"\n'
        f'embedding_cache_dir = "{cache}"\n'
        "[sweep.grid]\n"
        "chunk_size = [400, 800, 1200]\n"
        "chunk_overlap = [0, 100]\n"
        f"retriever = [{names}]\n",
        encoding="utf-8",
    )
    return path


def arms_alone(sweep_file: Path, folder: Path) -> tuple[float, float, dict[str, int]]:
    """Wall and CPU seconds of every arm run alone (inputs loaded, outputs written), and the
    work done."""
    plan = load_sweep(sweep_file)
    work: dict[str, int] = {}
    total = cpu = 0.0
    for arm in plan.arms:
        start, start_cpu = time.perf_counter(), time.process_time()
        config = arm.config.model_copy(update={"embedding_cache_dir": folder / f"cache-{arm.name}"})
        corpus, judgments = load_run_inputs(config)
        own = SharedWork()
        report = evaluate_loaded(config, corpus, judgments, shared=own)
        (folder / f"{arm.name}.json").write_text(checked_report_json(report), encoding="utf-8")
        (folder / f"{arm.name}.items.jsonl").write_text(items_text(report), encoding="utf-8")
        total += time.perf_counter() - start
        cpu += time.process_time() - start_cpu
        for key, value in own.counts.items():
            work[key] = work.get(key, 0) + value
    return total, cpu, work


def main(argv: list[str] | None = None) -> int:
    """Run the measurement; 0 when the targets are met."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bm25-only", action="store_true", help="bm25 arms only (6 arms)")
    args = parser.parse_args(argv)
    if not args.bm25_only and not dense_available():
        print("the dense extra is not installed: pass --bm25-only")
        return 1
    retrievers = ["bm25"] if args.bm25_only else ["bm25", "hybrid"]
    with tempfile.TemporaryDirectory(prefix="grk-bench-sweep-") as tmp:
        root = Path(tmp)
        sweep_file = write_sweep_file(root, retrievers=retrievers, cache=root / "cache-sweep")
        plan = load_sweep(sweep_file)
        start, start_cpu = time.perf_counter(), time.process_time()
        summary = run_sweep(plan, root / "sweep")
        sweep_seconds = time.perf_counter() - start
        sweep_cpu = time.process_time() - start_cpu
        (root / "alone").mkdir()
        alone_seconds, alone_cpu, alone_work = arms_alone(sweep_file, root / "alone")
    print(f"demo sweep, {len(plan.arms)} arms (3 sizes x 2 overlaps x {'/'.join(retrievers)})")
    print(f"wall: sweep {sweep_seconds:.2f} s; the same arms alone {alone_seconds:.2f} s")
    print(f"cpu:  sweep {sweep_cpu:.2f} s; the same arms alone {alone_cpu:.2f} s")
    print(
        f"ratio sweep / alone: cpu {sweep_cpu / alone_cpu:.3f}, "
        f"wall {sweep_seconds / alone_seconds:.3f}"
    )
    print(f"work in the sweep: {summary.shared}; alone, added up: {alone_work}")
    for point in summary.points:
        star = "*" if point.on_front else " "
        latency = (point.latency_p95 or 0.0) * 1e3
        print(
            f" {star} {point.name:<26} {summary.metric} {point.metric_mean or 0.0:.4f} "
            f"chars {point.context_chars or 0.0:8.0f} p95 {latency:7.3f} ms {point.verdict or ''}"
        )
    print(f"front: {', '.join(summary.front)}")
    faster = sweep_cpu < alone_cpu
    less_work = all(summary.shared[k] < alone_work[k] for k in ("chunkings", "bm25_indexes"))
    print(f"sweep < sum of arms alone (cpu): {'ok' if faster else 'MISS'}")
    print(f"less chunking and indexing than alone: {'ok' if less_work else 'MISS'}")
    print(f"Pareto front not empty: {'ok' if summary.front else 'MISS'}")
    return 0 if faster and less_work and summary.front else 1


if __name__ == "__main__":
    sys.exit(main())
