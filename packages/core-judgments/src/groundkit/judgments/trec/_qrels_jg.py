"""trec_eval's judgment-group measures (``-R qrels_jg``): map, P and Rprec_mult per group.

Each judgment group of a query is scored as a qrels of its own (``map``, ``P_k``,
``Rprec_mult_x`` with their usual definitions); the query's ``map_avgjg``, ``P_avgjg_k`` and
``Rprec_mult_avgjg_x`` are the sums over its groups (in group id order) divided by the number
of groups.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

from groundkit.judgments._errors import JudgmentError
from groundkit.judgments.trec._eval import (
    TrecEvalResult,
    _assemble,
    _per_query_values,
    _rankings,
)
from groundkit.judgments.trec._io import read_trec_run
from groundkit.judgments.trec._measures import _Measure
from groundkit.judgments.trec._prefs_io import read_qrels_jg
from groundkit.judgments.trec._select import _NICKNAMES, _select
from groundkit.judgments.trec._zscores import ZScores

__all__ = ["evaluate_trec_qrels_jg"]

FloatArray = npt.NDArray[np.float64]

_BASE = {"map_avgjg": "map", "P_avgjg": "P", "Rprec_mult_avgjg": "Rprec_mult"}


def _check(selected: Sequence[_Measure]) -> None:
    allowed = set(_NICKNAMES["qrels_jg"])
    for measure in selected:
        if measure.family not in allowed:
            raise JudgmentError(
                f"measure {measure.name!r} cannot be computed from qrels_jg judgments "
                f"(-R qrels_jg gives: {', '.join(_NICKNAMES['qrels_jg'])})"
            )


def evaluate_trec_qrels_jg(
    qrels_jg_path: str | Path,
    run_path: str | Path,
    measures: Sequence[str] | None = None,
    *,
    all_queries: bool = False,
    relevance_level: int = 1,
    max_per_query: int | None = None,
    zscores: ZScores | None = None,
) -> TrecEvalResult:
    """Evaluate a run against qrels with judgment groups, as ``trec_eval -R qrels_jg``.

    Args:
        qrels_jg_path: The judgments (see :func:`read_qrels_jg`).
        run_path: The run file.
        measures: Measure requests (``None``: the ``qrels_jg`` set).
        all_queries: Evaluate every judged query, a missing ranking counting as empty.
        relevance_level: Minimum relevance counted as relevant.
        max_per_query: Keep only the first documents of each ranking.
        zscores: Report each value as a z-score against these (``-Z``).

    Returns:
        Per-query values and the summary.

    Raises:
        JudgmentError: A malformed file, a measure these judgments cannot give, or no
            query with both judgments and a ranking.
    """
    if relevance_level < 0 or (max_per_query is not None and max_per_query < 0):
        raise JudgmentError("relevance_level and max_per_query must be >= 0")
    selected = _select(list(measures) if measures is not None else None, default="qrels_jg")
    _check(selected)
    judged = read_qrels_jg(qrels_jg_path)
    run = read_trec_run(run_path)
    queries = [q for q in sorted(judged) if q in run or all_queries]
    if not queries:
        raise JudgmentError("no query has both relevance judgments and a ranking")
    # Every (query, group) becomes a query of its own, named so that they sort in order.
    pseudo_qrels: dict[str, Mapping[str, int]] = {}
    pseudo_run: dict[str, Mapping[str, float]] = {}
    owner: list[int] = []
    for index, query in enumerate(queries):
        for group in sorted(judged[query]):
            key = f"{len(owner):012d}"
            pseudo_qrels[key] = judged[query][group]
            if query in run:
                pseudo_run[key] = run[query]
            owner.append(index)
    ranked = _rankings(pseudo_qrels, pseudo_run, True, max_per_query)
    base = [_Measure(_BASE[m.family], m.name, m.param) for m in selected if m.family in _BASE]
    per_group = _per_query_values(ranked, base, relevance_level)
    groups = np.bincount(np.asarray(owner, np.int64), minlength=len(queries))
    values: dict[str, FloatArray] = {}
    for name, column in per_group.items():
        totals = np.zeros(len(queries))
        for row, index in enumerate(owner):  # group by group, as trec_eval adds them
            totals[index] += column[row]
        values[name] = np.where(groups > 1, totals / np.maximum(groups, 1), totals)
    return _assemble(queries, selected, values, run.run_id, zscores=zscores)
