"""trec_eval's preference measures (``-R prefs`` and ``-R qrels_prefs``).

With the counts of :mod:`groundkit.judgments.trec._prefs_counts` (``ful`` fulfilled, ``poss``
possible; ``ret`` both documents retrieved, ``imp`` one of them, ``notoccur`` neither):

* ``prefs_num_prefs_poss``, ``prefs_num_prefs_ful``, ``prefs_num_prefs_ful_ret``: the counts
  summed over the query's judgment groups (and over queries in the summary);
* ``prefs_simp``: all fulfilled over all possible; ``_ret`` retrieved pairs only; ``_imp``
  pairs with at least one document retrieved;
* ``prefs_avgjg`` (``_ret``, ``_imp``): the same ratio per judgment group, averaged over the
  groups;
* ``prefs_avgjg_Rnonrel`` (``_ret``): per group, as if it had as many non-relevant documents
  as relevant ones: extra fulfilled non-relevant documents when it has fewer, only the first
  ones when it has more (trec_eval's recount, kept exactly, including its quirks);
* ``prefs_pair`` (``_ret``, ``_imp``): per pair of documents some group has a preference on,
  the share of the groups' preferences that the ranking fulfils, averaged over the pairs
  (pairs of unretrieved documents count 0).

A ratio over nothing is 0, as in trec_eval.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

from groundkit.judgments._errors import JudgmentError
from groundkit.judgments.trec._eval import TrecEvalResult, _assemble
from groundkit.judgments.trec._io import read_trec_run
from groundkit.judgments.trec._prefs_counts import _Group, _query_prefs, _QueryPrefs
from groundkit.judgments.trec._prefs_io import read_prefs
from groundkit.judgments.trec._select import _NICKNAMES, _select
from groundkit.judgments.trec._zscores import ZScores

__all__ = ["evaluate_trec_prefs"]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


def _div(numerator: float, denominator: float) -> float:
    with np.errstate(divide="ignore", invalid="ignore"):
        return float(np.float64(numerator) / np.float64(denominator))


def _simple(q: _QueryPrefs, kind: str) -> float:
    ful = sum(g.ful_ret + (g.ful_imp if kind != "ret" else 0) for g in q.groups)
    poss = sum(
        g.poss_ret + (g.poss_imp if kind != "ret" else 0) + (g.notoccur if kind == "" else 0)
        for g in q.groups
    )
    return ful / poss if poss else 0.0


def _average(ratios: list[float], groups: int) -> float:
    total = 0.0
    for ratio in ratios:
        total += ratio
    return total / groups if total > 0.0 else 0.0


def _avgjg(q: _QueryPrefs, kind: str) -> float:
    ratios = []
    for g in q.groups:
        ful = g.ful_ret + (g.ful_imp if kind != "ret" else 0)
        poss = g.poss_ret + (g.poss_imp if kind != "ret" else 0) + (g.notoccur if kind == "" else 0)
        if poss:
            ratios.append(ful / poss)
    return _average(ratios, len(q.groups))


def _pairs_of(rows: IntArray, cols: IntArray, upper: bool) -> tuple[FloatArray, int]:
    both = rows + cols.T if upper else rows + cols
    mask = both > 0
    if upper:
        mask = np.triu(mask, 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return rows[mask] / both[mask], int(mask.sum())


def _pair(q: _QueryPrefs, kind: str) -> float:
    c, r = q.counts, q.judged_ret
    shares, pairs = _pairs_of(c[:r, :r], c[:r, :r], True)
    parts = [shares]
    if kind != "ret":
        implied, count = _pairs_of(c[:r, r:], c[r:, :r].T, False)
        parts.append(implied)
        pairs += count
    if kind == "":
        pairs += int(np.triu((c[r:, r:] + c[r:, r:].T) > 0, 1).sum())
    values = np.concatenate(parts)
    total = float(np.cumsum(values)[-1]) if values.size else 0.0
    return total / pairs if pairs else 0.0


def _pairs_count(a: IntArray, b: IntArray, ret: int, retrieved_only: bool) -> tuple[int, int]:
    """Fulfilled and other pairs between documents ``a`` and ``b`` in a recount."""
    if retrieved_only:
        a, b = a[a < ret], b[b < ret]
        fulfilled = a[:, None] < b[None, :]
    else:
        fulfilled = (a[:, None] < b[None, :]) & (a[:, None] < ret)
    ful = int(fulfilled.sum())
    return ful, fulfilled.size - ful


def _recount_classes(g: _Group, ret: int, keep: int, retrieved_only: bool) -> tuple[int, int]:
    classes = g.classes or []
    # trec_eval's new last class: the first ``keep`` documents of the last class.
    nonrel = classes[-1][:keep]
    ful = other = 0
    for first, ranks in enumerate(classes):
        for lower in classes[first + 1 : len(classes) - 1]:
            f, o = _pairs_count(ranks, lower, ret, retrieved_only)
            ful, other = ful + f, other + o
    for ranks in classes:
        f, o = _pairs_count(ranks, nonrel, ret, retrieved_only)
        ful, other = ful + f, other + o
    return ful, other + ful


def _recount_matrix(g: _Group, ret: int, retrieved_only: bool) -> tuple[int, int]:
    assert g.matrix is not None
    assert g.levels is not None
    levels = g.levels if not retrieved_only else g.levels[:ret]
    zeros = np.flatnonzero(levels == 0.0)
    first_dropped = int(zeros[g.num_rel]) if len(zeros) > g.num_rel else len(levels)
    index = np.arange(len(g.levels))
    keep = ~((index >= first_dropped) & (g.levels == 0.0))
    a = g.matrix & keep[:, None] & keep[None, :]
    ful = int(np.triu(a[:ret, :ret], 1).sum())
    other = int(np.tril(a[:ret, :ret], -1).sum())
    if not retrieved_only:
        ful += int(a[:ret, ret:].sum())
        other += int(a[ret:, :ret].sum()) + int(a[ret:, ret:].sum())
    return ful, other + ful


def _rnonrel(q: _QueryPrefs, retrieved_only: bool) -> float:
    ratios = []
    for g in q.groups:
        rel, nonrel = (
            (g.num_rel_ret, g.num_nonrel_ret) if retrieved_only else (g.num_rel, g.num_nonrel)
        )
        if rel >= nonrel:
            ful = g.ful_ret + g.num_rel_ret * (rel - nonrel)
            poss = g.poss_ret + g.num_rel * (rel - nonrel)
            if not retrieved_only:
                ful += g.ful_imp
                poss += g.poss_imp + g.notoccur
        elif g.classes is not None:
            keep = g.num_rel_ret if retrieved_only else g.num_rel
            ful, poss = _recount_classes(g, q.judged_ret, keep, retrieved_only)
        else:
            ful, poss = _recount_matrix(g, q.judged_ret, retrieved_only)
        ratios.append(_div(ful, poss))
    return _average(ratios, len(q.groups))


_VALUES: dict[str, Callable[[_QueryPrefs], float]] = {
    "prefs_num_prefs_poss": lambda q: float(
        sum(g.poss_ret + g.poss_imp + g.notoccur for g in q.groups)
    ),
    "prefs_num_prefs_ful": lambda q: float(sum(g.ful_ret + g.ful_imp for g in q.groups)),
    "prefs_num_prefs_ful_ret": lambda q: float(sum(g.ful_ret for g in q.groups)),
    "prefs_simp": lambda q: _simple(q, ""),
    "prefs_pair": lambda q: _pair(q, ""),
    "prefs_avgjg": lambda q: _avgjg(q, ""),
    "prefs_avgjg_Rnonrel": lambda q: _rnonrel(q, False),
    "prefs_simp_ret": lambda q: _simple(q, "ret"),
    "prefs_pair_ret": lambda q: _pair(q, "ret"),
    "prefs_avgjg_ret": lambda q: _avgjg(q, "ret"),
    "prefs_avgjg_Rnonrel_ret": lambda q: _rnonrel(q, True),
    "prefs_simp_imp": lambda q: _simple(q, "imp"),
    "prefs_pair_imp": lambda q: _pair(q, "imp"),
    "prefs_avgjg_imp": lambda q: _avgjg(q, "imp"),
}


def evaluate_trec_prefs(
    prefs_path: str | Path,
    run_path: str | Path,
    measures: Sequence[str] | None = None,
    *,
    qrels: bool = False,
    all_queries: bool = False,
    max_per_query: int | None = None,
    zscores: ZScores | None = None,
) -> TrecEvalResult:
    """Evaluate a run against preference judgments, as ``trec_eval -R prefs``.

    Args:
        prefs_path: The judgments (see :func:`read_prefs`).
        run_path: The run file.
        measures: Measure requests (``None``: trec_eval's ``prefs`` set).
        qrels: The judgments are a qrels file read as preferences (``-R qrels_prefs``).
        all_queries: Evaluate every judged query, a missing ranking counting as empty.
        max_per_query: Keep only the first documents of each ranking.
        zscores: Report each value as a z-score against these (``-Z``).

    Returns:
        Per-query values and the summary.

    Raises:
        JudgmentError: A malformed or inconsistent file, a measure preferences cannot give,
            or no query with both judgments and a ranking.
    """
    if max_per_query is not None and max_per_query < 0:
        raise JudgmentError("max_per_query must be >= 0")
    selected = _select(list(measures) if measures is not None else None, default="prefs")
    allowed = set(_NICKNAMES["all_prefs"])
    for measure in selected:
        if measure.family not in allowed:
            raise JudgmentError(
                f"measure {measure.name!r} cannot be computed from preference judgments "
                "(-R prefs and qrels_prefs give the all_prefs set)"
            )
    judged = read_prefs(prefs_path, qrels=qrels)
    run = read_trec_run(run_path)
    queries = [q for q in sorted(judged) if q in run or all_queries]
    if not queries:
        raise JudgmentError("no query has both relevance judgments and a ranking")
    states: Mapping[str, _QueryPrefs] = {
        q: _query_prefs(judged[q], run.get(q), max_per_query, (prefs_path, q)) for q in queries
    }
    values = {
        m.name: np.array([_VALUES[m.family](states[q]) for q in queries])
        for m in selected
        if m.family in _VALUES
    }
    return _assemble(queries, selected, values, run.run_id, zscores=zscores)
