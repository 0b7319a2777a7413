"""`grk beir adapt` on SciFact (../shared) against writing the same files with one final fsync.

Run: python tests/benchmarks/bench_adapters_beir_scifact.py [--work DIR] [--rounds N]
(DIR: where to write, default the system temporary folder; try /dev/shm to leave the disk
out). Skips (exit 0) when the shared data is absent.

Every contender starts with nothing dirty in the page cache (``os.sync()`` before it, not
timed), and the two references alternate their order, so that none pays for the write-back
of the files written before it. The command runs in process through click (``grk beir adapt
SOURCE OUTPUT``: checks, id validation, progress, the all-or-nothing write into a temporary
sibling folder, its flush to disk and its rename, and the summary). The reference, timed in
the same rounds (alternated, best of N each), parses ``corpus.jsonl`` and writes the same
files with the same bytes (``corpus/<id>.txt``, ``judgments.jsonl``, ``id_map.json``, the
manifest) straight into a new folder, then fsyncs the corpus folder and the output folder
once at the end: no validation, no temporary, no rename, file contents not flushed. For
information, a second reference also flushes the file contents (core's ``flush_tree``: one
``syncfs``), as the command does before its rename; on a disk most of the command's extra
time is that flush.

Checks (exit 1 on a miss): the written trees are equal, and the command takes at most twice
the reference's time.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from click.testing import CliRunner

from groundkit.adapters.beir import adapted_document_text
from groundkit.cli import cli
from groundkit.judgments.files import flush_tree

SCIFACT = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "beir" / "scifact"
MAX_RATIO = 2.0
_SMALL_FILES = ("judgments.jsonl", "id_map.json", ".groundkit-beir.json")


def _fsync_folder(folder: Path) -> None:
    descriptor = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def reference_write(
    source: Path, target: Path, small_files: dict[str, bytes], *, durable: bool = False
) -> None:
    """Parse the corpus, write every file plainly, fsync the two folders once at the end.

    With ``durable``, the file contents are flushed to disk too (one ``syncfs``).
    """
    corpus = target / "corpus"
    corpus.mkdir(parents=True)
    with (source / "corpus.jsonl").open(encoding="utf-8") as handle:
        for line in handle:
            record = json.loads(line)
            text = adapted_document_text(record.get("title") or "", record["text"])
            (corpus / f"{record['_id']}.txt").write_bytes(text.encode("utf-8"))
    for name, data in small_files.items():
        (target / name).write_bytes(data)
    if durable:
        flush_tree(target)
    _fsync_folder(corpus)
    _fsync_folder(target)


def adapt_command(source: Path, target: Path) -> None:
    """``grk beir adapt SOURCE TARGET`` in this process."""
    result = CliRunner().invoke(cli, ["beir", "adapt", str(source), str(target)])
    if result.exit_code != 0:
        raise SystemExit(f"grk beir adapt failed ({result.exit_code}):\n{result.output}")


def _tree(root: Path) -> dict[str, bytes]:
    return {
        os.fspath(path.relative_to(root)): path.read_bytes()
        for path in sorted(root.rglob("*"))
        if path.is_file()
    }


def main(argv: list[str] | None = None) -> int:
    """Run the rounds, print the figures; 0 when the target is met."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=None)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    if not (SCIFACT / "corpus.jsonl").is_file():
        print(f"skipped: SciFact not found at {SCIFACT}")
        return 0
    adapt_times: list[float] = []
    reference_times: list[float] = []
    durable_times: list[float] = []
    same = True
    for round_number in range(max(1, args.rounds)):
        work = Path(tempfile.mkdtemp(prefix="bench-beir-", dir=args.work))
        try:
            # The command first (the reference copies its small files), then the other two;
            # each starts with nothing dirty in the page cache (os.sync, not timed), so none
            # pays for the write-back of the one before it.
            os.sync()
            started = time.perf_counter()
            adapt_command(SCIFACT, work / "adapted")
            adapt_times.append(time.perf_counter() - started)
            small = {name: (work / "adapted" / name).read_bytes() for name in _SMALL_FILES}
            others = [(reference_times, "reference", False), (durable_times, "durable", True)]
            for times, name, durable in others[:: 1 if round_number % 2 == 0 else -1]:
                os.sync()
                started = time.perf_counter()
                reference_write(SCIFACT, work / name, small, durable=durable)
                times.append(time.perf_counter() - started)
            if round_number == 0:
                same = _tree(work / "adapted") == _tree(work / "reference")
        finally:
            shutil.rmtree(work, ignore_errors=True)
    best_adapt, best_reference = min(adapt_times), min(reference_times)
    ratio = best_adapt / best_reference
    rounds = len(adapt_times)
    for label, times in (
        ("grk beir adapt", adapt_times),
        ("reference", reference_times),
        ("+ data flushed", durable_times),
    ):
        runs = ", ".join(f"{seconds:.2f}" for seconds in times)
        print(f"{label:<15} best {min(times):.2f} s of {rounds} ({runs})")
    print(f"ratio adapt/(reference + data flushed): {best_adapt / min(durable_times):.2f}")
    print(f"same files written: {'ok' if same else 'MISS'}")
    ok = ratio <= MAX_RATIO
    print(f"ratio adapt/reference {ratio:.2f} <= {MAX_RATIO}: {'ok' if ok else 'MISS'}")
    return 0 if ok and same else 1


if __name__ == "__main__":
    sys.exit(main())
