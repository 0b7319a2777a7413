"""Time the BEIR adaptation of SciFact (../shared) against a plain, unchecked file dump.

Run: python tests/benchmarks/bench_adapters_beir_scifact.py [WORK_FOLDER]
(WORK_FOLDER: where to write, default the system temporary folder; try /dev/shm to leave the
disk out). Prints the adaptation time, the time of writing the same texts as plain files (no
validation, no atomic writes), and their ratio. Skips (exit 0) when the shared data is absent.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

from groundkit.adapters.beir import adapt_beir_dataset, adapted_document_text

SCIFACT = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "beir" / "scifact"
ROUNDS = 3


def plain_dump(source: Path, target: Path) -> None:
    """Baseline: parse the corpus and write each document with a plain write_bytes."""
    target.mkdir(parents=True)
    with (source / "corpus.jsonl").open(encoding="utf-8") as handle:
        for line in handle:
            record = json.loads(line)
            text = adapted_document_text(record.get("title") or "", record["text"])
            (target / f"{record['_id']}.txt").write_bytes(text.encode())


def main() -> int:
    if not (SCIFACT / "corpus.jsonl").is_file():
        print(f"skipped: SciFact not found at {SCIFACT}")
        return 0
    base = sys.argv[1] if len(sys.argv) > 1 else None
    adapt_times: list[float] = []
    plain_times: list[float] = []
    for _ in range(ROUNDS):
        work = Path(tempfile.mkdtemp(prefix="bench-beir-", dir=base))
        try:
            started = time.perf_counter()
            plain_dump(SCIFACT, work / "plain")
            plain_times.append(time.perf_counter() - started)
            started = time.perf_counter()
            report = adapt_beir_dataset(SCIFACT, work / "adapted")
            adapt_times.append(time.perf_counter() - started)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    best_adapt, best_plain = min(adapt_times), min(plain_times)
    print(
        f"SciFact: {report.document_count} documents, {report.query_count} queries, "
        f"{report.relevance_pair_count} pairs"
    )
    for label, times in (("adapt_beir_dataset", adapt_times), ("plain dump", plain_times)):
        runs = ", ".join(f"{seconds:.2f}" for seconds in times)
        print(f"{label:<19} best {min(times):.2f} s of {ROUNDS} ({runs})")
    print(f"ratio adapt/plain: {best_adapt / best_plain:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
