"""`grk eval trec`'s file path works in small pieces: no temporary the size of the run.

Large temporaries (a column of every run line, a matrix of every query's ranking) are mapped
by the allocator, zeroed by the kernel and unmapped again, measure after measure: that was
a third of the command's CPU time. The file path now reads the files in small chunks, orders
and looks up the lines a span of whole queries at a time, and computes the measures a block
of queries at a time. The peak of the memory numpy takes from the allocator while scoring a
run of 2,000 queries x 1,000 documents (traced by ``tracemalloc``; deterministic for given
files) must stay under what one column of the run's lines takes. The columns
written once and kept (the parsed lines, their order and relevance codes) come from
``_column``, anonymous memory that ``tracemalloc`` does not see whatever their size (it is
told so here, since small ones would come from numpy): what it sees are the temporaries.
"""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import numpy as np
import pytest

from groundkit.judgments.trec import evaluate_trec_files, format_trec_eval

N_QUERIES = 2_000
DEPTH = 1_000
JUDGED = 40
COLUMN = N_QUERIES * DEPTH * 8  # bytes of one int64 or float64 column of the run's lines


def _write(folder: Path, n_queries: int, vary: bool = False) -> tuple[Path, Path]:
    """Graded qrels and a run with tied scores.

    With ``vary``, ranking lengths vary and the last query's lines come in two blocks (the
    grouping's general path).
    """
    rng = np.random.default_rng(20261205)
    qrels, run = [], []
    for q in range(n_queries):
        depth = int(rng.integers(1, DEPTH)) if vary else DEPTH
        docs = rng.choice(10 * DEPTH * n_queries, size=depth + JUDGED // 2, replace=False)
        judged = np.concatenate((docs[: min(depth, JUDGED // 2)], docs[depth:]))
        grades = rng.integers(-1, 4, len(judged))
        scores = np.sort(np.round(rng.gamma(2.0, 4.0, depth), 3))[::-1]
        pairs = zip(judged.tolist(), grades.tolist(), strict=True)
        qrels += [f"{q} 0 doc{d} {g}\n" for d, g in pairs]
        ranked = zip(docs[:depth].tolist(), scores.tolist(), strict=True)
        run += [f"{q} Q0 doc{d} {r} {s} bench\n" for r, (d, s) in enumerate(ranked, start=1)]
    if vary:
        run.insert(0, run.pop())
    (folder / "qrels.txt").write_text("".join(qrels))
    (folder / "run.txt").write_text("".join(run))
    return folder / "qrels.txt", folder / "run.txt"


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return _write(tmp_path_factory.mktemp("trec_memory"), N_QUERIES)


@pytest.mark.parametrize("measures", [["official"], ["all_trec"]])
def test_scoring_takes_no_temporary_the_size_of_the_run(
    files: tuple[Path, Path], measures: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from groundkit.judgments.trec import _file_eval

    monkeypatch.setattr(_file_eval, "_LARGE", 0)  # every column anonymous memory
    evaluate_trec_files(*files, measures[:1])  # imports and first-use caches out of the way
    tracemalloc.start()
    try:
        result = evaluate_trec_files(*files, measures)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(result.per_query) == N_QUERIES
    assert peak < COLUMN, f"peak {peak / 2**20:.1f} MiB, a column {COLUMN / 2**20:.1f} MiB"


@pytest.mark.parametrize("flags", [{}, {"all_queries": True, "max_per_query": 100}])
def test_the_pieces_do_not_change_the_output(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, flags: dict[str, object]
) -> None:
    """Chunks, spans and blocks of any size give the same text, byte for byte."""
    from groundkit.judgments import evaluate_trec, read_qrels, read_trec_run
    from groundkit.judgments.trec import _eval, _file_eval

    qrels, run = _write(tmp_path, 60, vary=True)
    mapping = evaluate_trec(read_qrels(qrels), read_trec_run(run), ["all_trec"], **flags)  # type: ignore[arg-type]
    expected = format_trec_eval(mapping, per_query=True)
    whole = evaluate_trec_files(qrels, run, ["all_trec"], **flags)  # type: ignore[arg-type]
    assert format_trec_eval(whole, per_query=True) == expected
    monkeypatch.setattr(_file_eval, "_CHUNK", 4_099)
    monkeypatch.setattr(_file_eval, "_SPAN", 777)
    monkeypatch.setattr(_eval, "_BLOCK_CELLS", 1)
    small = evaluate_trec_files(qrels, run, ["all_trec"], **flags)  # type: ignore[arg-type]
    assert format_trec_eval(small, per_query=True) == expected
