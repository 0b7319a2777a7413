"""`grk eval pool`'s intervals against the whole pool judged, on the demo, over many draws.

Run: python tests/benchmarks/bench_evalset_pool_coverage.py [--draws N] [--n SIZE]

The demo (BM25 at three chunkings, 172 answerable queries) is pooled at k = 10 (2,242 items in
6 strata). The judge is the gold itself — an item is relevant when it touches a gold quote —
so the whole pool's precision@10 and recall relative to the pool are known exactly: that
census is the reference, computed in the same run by the same estimator with every item
judged. Then N seeded stratified samples of SIZE items are drawn and estimated; the share of
their 95% intervals that cover the census value is printed per stage and figure.

Checks (exit 1 on a miss): every coverage is at least 90% (the Wilson interval at these
effective sizes is allowed to dip a little below 95%; see groundkit.stats), and the census
estimates equal direct counts.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from click.testing import CliRunner

from groundkit.cli import cli
from groundkit.evalset.pool import build_pool, draw_sample, estimate_pool
from groundkit.judgments import load_report

MIN_COVERAGE = 0.90


def _demo(folder: Path) -> Path:
    result = CliRunner().invoke(
        cli, ["eval", "demo", "--no-dense", "--resamples", "200", "--out", str(folder / "d")]
    )
    if result.exit_code != 0:
        raise SystemExit(result.output)
    return folder / "d" / "report.json"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=200)
    parser.add_argument("--n", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        report = load_report(_demo(Path(folder)))
    pool = build_pool([("demo", report)], k=10)
    queries = {q.query_id: q for q in report.queries}
    truth = [
        3
        if any(
            g.doc == item.doc and s < item.end and item.start < e
            for g in queries[item.query_id].gold
            for s, e in g.spans
        )
        else 0
        for item in pool.items
    ]
    everything = list(range(len(pool.items)))
    _, census, _, _ = estimate_pool(pool, everything, truth)
    failed = False
    for stage in census:
        mine = [i for i, item in enumerate(pool.items) if stage.stage in item.ranks]
        found = sum(1 for i in mine if truth[i])
        assert stage.precision is not None
        assert stage.recall is not None
        if abs(stage.precision.estimate - found / len(mine)) > 1e-12:
            print(f"MISS census precision of {stage.stage}")
            failed = True
        if abs(stage.recall.estimate - found / sum(1 for t in truth if t)) > 1e-12:
            print(f"MISS census recall of {stage.stage}")
            failed = True
    covered = {(s.stage, f): 0 for s in census for f in ("precision", "recall")}
    started = time.perf_counter()
    for seed in range(args.draws):
        sample = draw_sample(pool, args.n, seed)
        _, stages, _, _ = estimate_pool(pool, sample, [truth[i] for i in sample])
        for got, exact in zip(stages, census, strict=True):
            for name in ("precision", "recall"):
                interval, value = getattr(got, name), getattr(exact, name).estimate
                covered[(got.stage, name)] += interval is not None and (
                    interval.low <= value <= interval.high
                )
    seconds = time.perf_counter() - started
    print(f"pool {len(pool.items)} items, {len(pool.strata)} strata; {args.draws} draws of "
          f"{args.n} in {seconds:.2f} s")  # fmt: skip
    for stage in census:
        assert stage.precision is not None
        assert stage.recall is not None
        for name, exact in (("precision", stage.precision), ("recall", stage.recall)):
            share = covered[(stage.stage, name)] / args.draws
            mark = "ok  " if share >= MIN_COVERAGE else "MISS"
            failed |= share < MIN_COVERAGE
            print(f"{mark} {stage.stage:14} {name:9} census {exact.estimate:.3f}  "
                  f"coverage {share:.1%}")  # fmt: skip
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
