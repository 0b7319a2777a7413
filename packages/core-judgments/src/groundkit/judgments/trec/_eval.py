"""Document-level evaluation with trec_eval's exact semantics, and its printed format.

Reproduces ``trec_eval`` (usnistgov/trec_eval, version 10) for the measures below, checked
against trec_eval's own expected outputs. Semantics, as trec_eval:

* Each query's ranking is the run's documents sorted by score descending, ties broken by
  document id descending (byte order); ranks in the file are ignored. ``max_per_query``
  (``-M``) keeps the first documents of that ranking.
* A document is relevant when its qrels relevance is ``>= relevance_level`` (``-l``); a
  retrieved document absent from the qrels, or judged with a negative relevance, is not
  relevant (and not judged, for ``bpref``).
* Evaluated queries are those of the qrels that also have a ranking; with
  ``all_queries=True`` (``-c``) every qrels query is evaluated, a missing ranking counting as
  empty. Queries of the run absent from the qrels are ignored. Per-query output is in query id
  order (byte order).
* The summary (``"all"``) is the mean over evaluated queries, except ``num_q`` (their count),
  ``num_ret``/``num_rel``/``num_rel_ret``/``num_nonrel_judged_ret`` (sums) and ``gm_map``/
  ``gm_bpref`` (geometric means, each value floored at 1e-5).

Measures (``R`` = number of relevant documents, ``rel(i)`` = 1 if rank ``i`` is relevant,
``rel@k`` = relevant within the top ``k``, ``n`` = number retrieved; a ratio with a zero
denominator is 0):

``num_ret`` n; ``num_rel`` R; ``num_rel_ret`` rel@n; ``map`` (1/R) * sum over relevant ranks
``i`` of rel@i / i; ``gm_map`` map averaged geometrically; ``Rprec`` rel@R / R; ``bpref``
(1/R) * sum over retrieved relevant documents of ``1 - min(N_before, R) / min(N, R)`` where
``N_before`` counts judged non-relevant documents ranked above it and ``N`` all judged
non-relevant documents (the term is 1 when ``N_before = 0``); ``gm_bpref``;
``recip_rank`` 1 / rank of the first relevant; ``iprec_at_recall_x`` the largest precision at
any rank at or after the rank where ``round(x * R)`` relevant documents have been seen;
``P_k`` rel@k / k; ``relstring`` the relevance codes of the first 10 documents (digit, ``>``
above 9, ``-`` not in qrels, ``.`` judged negative); ``recall_k`` rel@k / R;
``Rprec_mult_x`` P at cutoff ``floor(x * R + 0.9)``; ``utility`` rel@n - (n - rel@n);
``11pt_avg`` the mean of the 11 ``iprec_at_recall`` values; ``ndcg`` DCG / IDCG with gain =
qrels relevance (any judged level, independent of ``relevance_level``), discount
``1 / log2(rank + 1)``, ideal = every judged document sorted by gain; ``ndcg_cut_k`` the same
with both sums cut at rank ``k``; ``map_cut_k`` map counting the top ``k`` only (still divided
by R); ``relative_P_k`` rel@k / min(k, R); ``success_k`` 1 if rel@k > 0; ``set_P`` rel@n / n;
``set_relative_P`` rel@n / min(n, R); ``set_recall`` rel@n / R; ``set_map`` rel@n² / (n R);
``set_F`` 2 P R / (P + R) of set_P and set_recall; ``num_nonrel_judged_ret`` judged
non-relevant documents retrieved; ``infAP`` (1/R) * sum over retrieved relevant documents at
0-based rank ``j > 0`` of ``1/(j+1) + j/(j+1) * (a/j) * (r + e)/(r + m + 2e)`` (1 at rank 0),
``r``, ``m``, ``u`` the relevant, judged non-relevant and pooled-unjudged documents above it,
``a = r + m + u``, ``e = 0.00001``; ``binG`` (1/R) * sum over retrieved relevant documents of
``1 / log2(2 + documents above it that are not relevant)``; ``unj_k`` documents in the top
``k`` absent from the qrels or judged negative, over ``k``; ``rbp_resid`` with ``p`` (0.9 unless
``p=`` is given) ``p**n + (1 - p) * sum of p**i`` over those documents' 0-based ranks ``i``
(0 when there are none); ``utility.a,b,c,d`` ``a*rel@n + b*(n - rel@n) + c*(R - rel@n) +
d*(rel@n - n - R)`` (``utility`` = ``utility.1,-1,0,0``); ``11pt_avg.x,y,...`` the mean of
``iprec_at_recall`` at the given points. ``ndcg`` with a gain map, ``G``, ``ndcg_rel``,
``Rndcg`` and ``rbp``: see :mod:`groundkit.judgments.trec._measures_graded`; z-scores
(``zscores=``): :mod:`groundkit.judgments.trec._zscores`; preference and judgment-group
judgments: :mod:`groundkit.judgments.trec._prefs` and :mod:`groundkit.judgments.trec._qrels_jg`.

Measure names accepted by :func:`evaluate_trec`: ``official`` (trec_eval's default set),
``all_trec`` (every measure here; ``set``, ``all_prefs``, ``prefs`` and ``qrels_jg`` as in
trec_eval), a family (``P``, ``ndcg_cut``...) with its default cutoffs,
a family with parameters as on trec_eval's command line (``P.5,10``,
``iprec_at_recall.0.25,0.5``, ``relstring.20``), or one printed name (``P_10``,
``ndcg_cut_10``, ``recall_100``, ``success_1``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from groundkit.judgments._errors import JudgmentError
from groundkit.judgments.trec._arrays import _log2_table, _sequential_sum
from groundkit.judgments.trec._io import trec_ranking
from groundkit.judgments.trec._measures import _GEOMETRIC, _block, _BlockInput, _Measure
from groundkit.judgments.trec._measures_graded import _GRADED
from groundkit.judgments.trec._select import _COUNTS, _NICKNAMES, _select, trec_measure_names
from groundkit.judgments.trec._zscores import ZScores, _to_zscores

__all__ = ["TrecEvalResult", "evaluate_trec", "trec_measure_names"]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

_NONPOOL = -1
_UNJUDGED = -2
_PADDING = -3
# Cells (queries x depth) of one block of the measures' matrices: 64K cells keep each
# temporary at 512 KiB, under the sizes the allocator maps afresh (and the kernel zeroes).
_BLOCK_CELLS = 1 << 16
_SUMMARY_ONLY = frozenset({"runid", "num_q", "gm_map", "gm_bpref"})
_OUTSIDE_BLOCK = frozenset({"runid", "num_q", "relstring"})


@dataclass(frozen=True)
class TrecEvalResult:
    """The output of :func:`evaluate_trec`.

    Attributes:
        measures: Printed measure names in trec_eval's order (including ``runid``, ``num_q``
            and ``relstring`` when requested).
        per_query: ``{query_id: {measure: value}}`` for the evaluated queries, in query id
            order (no ``runid``, ``num_q``, ``gm_*`` or ``relstring``).
        summary: ``{measure: value}`` over all evaluated queries (no ``runid`` or
            ``relstring``).
        run_id: The run id, or ``None``.
        relstrings: ``{query_id: {measure: string}}`` for ``relstring`` measures.
        zscores: Values are z-scores (trec_eval ``-Z``): printed with a ``Z`` before the
            name, counts with four decimals.
    """

    measures: tuple[str, ...]
    per_query: dict[str, dict[str, float]]
    summary: dict[str, float]
    run_id: str | None = None
    relstrings: dict[str, dict[str, str]] = field(default_factory=dict)
    zscores: bool = False

    def as_dict(self) -> dict[str, dict[str, float]]:
        """Per-query values plus the summary under ``"all"`` (as trec_eval prints them)."""
        out = {query: dict(values) for query, values in self.per_query.items()}
        out["all"] = dict(self.summary)
        return out


@dataclass
class _Rankings:
    """Relevance codes of the ranked documents of each evaluated query, flattened."""

    query_ids: list[str]
    codes: IntArray  # relevance code per ranked document
    offsets: IntArray  # len(query_ids) + 1
    judged_query: IntArray  # query row of each judged (relevance >= 0) qrels entry
    judged_level: IntArray  # its relevance


def _rankings(
    qrels: Mapping[str, Mapping[str, int]],
    run: Mapping[str, Mapping[str, float]],
    all_queries: bool,
    max_per_query: int | None,
) -> _Rankings:
    query_ids: list[str] = []
    codes: list[int] = []
    lengths: list[int] = []
    judged_counts: list[int] = []
    levels: list[int] = []
    for query in sorted(qrels):
        docs = run.get(query)
        if docs is None and not all_queries:
            continue
        judged = qrels[query]
        ranked = trec_ranking(docs) if docs else []
        if max_per_query is not None:
            ranked = ranked[:max_per_query]
        for doc, score in ranked:
            if score != score:
                raise JudgmentError(f"score of {doc!r} is NaN", item_id=query)
            relevance = judged.get(doc)
            codes.append(
                _NONPOOL if relevance is None else relevance if relevance >= 0 else _UNJUDGED
            )
        query_ids.append(query)
        lengths.append(len(ranked))
        before = len(levels)
        levels.extend(value for value in judged.values() if value >= 0)
        judged_counts.append(len(levels) - before)
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(np.asarray(lengths, dtype=np.int64), out=offsets[1:])
    judged_query = np.repeat(
        np.arange(len(query_ids), dtype=np.int64), np.asarray(judged_counts, dtype=np.int64)
    )
    return _Rankings(
        query_ids,
        np.asarray(codes, dtype=np.int64),
        offsets,
        judged_query,
        np.asarray(levels, dtype=np.int64),
    )


def _ideal_dcg(ranked: _Rankings, cutoffs: Iterable[int]) -> dict[int, FloatArray]:
    """IDCG of every query at each cutoff (``0`` = no cutoff), gains = judged levels."""
    n_queries = len(ranked.query_ids)
    positive = ranked.judged_level > 0
    query = ranked.judged_query[positive]
    gain = ranked.judged_level[positive].astype(np.float64)
    order = np.lexsort((-gain, query))
    query = query[order]
    gain = gain[order]
    starts = np.searchsorted(query, np.arange(n_queries))
    local = np.arange(len(query)) - starts[query] if len(query) else np.zeros(0, np.int64)
    weights = gain / _log2_table(int(local.max()) + 1 if local.size else 0)[local]
    out: dict[int, FloatArray] = {}
    for cutoff in cutoffs:
        kept = weights if cutoff == 0 else np.where(local < cutoff, weights, 0.0)
        out[cutoff] = np.bincount(query, weights=kept, minlength=n_queries).astype(np.float64)
    return out


def _relstring(codes: IntArray, length: int) -> str:
    chars = []
    for code in codes[:length].tolist():
        if code > 9:
            chars.append(">")
        elif code >= 0:
            chars.append(str(code))
        elif code == _NONPOOL:
            chars.append("-")
        else:
            chars.append(".")
    return "".join(chars)


def evaluate_trec(
    qrels: Mapping[str, Mapping[str, int]],
    run: Mapping[str, Mapping[str, float]],
    measures: Sequence[str] | None = None,
    *,
    all_queries: bool = False,
    relevance_level: int = 1,
    max_per_query: int | None = None,
    run_id: str | None = None,
    zscores: ZScores | None = None,
) -> TrecEvalResult:
    """Evaluate a run against qrels exactly as trec_eval does.

    See the module documentation for every measure's definition.

    Args:
        qrels: ``{query_id: {doc_id: relevance}}`` (e.g. from :func:`read_qrels`).
        run: ``{query_id: {doc_id: score}}`` (e.g. from :func:`read_trec_run`).
        measures: Measure requests (``None`` = ``["official"]``), see the module docs.
        all_queries: Evaluate every qrels query, missing rankings counting as empty
            (trec_eval ``-c``).
        relevance_level: Minimum relevance counted as relevant (trec_eval ``-l``).
        max_per_query: Keep only the first documents of each ranking (trec_eval ``-M``).
        run_id: The run id to report; defaults to ``run.run_id`` when present.
        zscores: Report each value as a z-score against these (trec_eval ``-Z``).

    Returns:
        Per-query values and the summary.

    Raises:
        JudgmentError: On an unknown measure, no query with both qrels and a ranking, or a
            NaN score.
    """
    if isinstance(measures, str):
        measures = [measures]
    if max_per_query is not None and max_per_query < 0:
        raise JudgmentError("max_per_query must be >= 0")
    if relevance_level < 0:
        raise JudgmentError("relevance_level must be >= 0")
    selected = _select(measures)
    ranked = _rankings(qrels, run, all_queries, max_per_query)
    return _evaluate_ranked(
        ranked,
        selected,
        relevance_level,
        run_id if run_id is not None else getattr(run, "run_id", None),
        zscores,
    )


def _check_format(selected: Sequence[_Measure], rel_format: str) -> None:
    """Refuse a measure the judgments' format cannot give (``-R``)."""
    allowed = {
        "qrels": set(_NICKNAMES["all_trec"]),
        "prefs": set(_NICKNAMES["all_prefs"]),
        "qrels_jg": set(_NICKNAMES["qrels_jg"]),
    }[rel_format]
    for measure in selected:
        if measure.family not in allowed:
            needs = next(
                name for name in ("all_prefs", "qrels_jg") if measure.family in _NICKNAMES[name]
            )
            formats = "prefs or qrels_prefs" if needs == "all_prefs" else "qrels_jg"
            raise JudgmentError(
                f"measure {measure.name!r} needs judgments in the {formats} format (-R)"
            )


def _evaluate_ranked(
    ranked: _Rankings,
    selected: Sequence[_Measure],
    relevance_level: int,
    run_id: str | None,
    zscores: ZScores | None = None,
) -> TrecEvalResult:
    """Every selected measure of prepared rankings (shared by the mapping and file paths)."""
    _check_format(selected, "qrels")
    if not ranked.query_ids:
        raise JudgmentError("no query has both relevance judgments and a ranking")
    numeric = [m for m in selected if m.family not in _OUTSIDE_BLOCK]
    values = _per_query_values(ranked, numeric, relevance_level)
    return _assemble(
        ranked.query_ids, selected, values, run_id, _relstrings(ranked, selected), zscores
    )


def _assemble(
    query_ids: Sequence[str],
    selected: Sequence[_Measure],
    values: dict[str, FloatArray],
    run_id: str | None,
    relstrings: dict[str, dict[str, str]] | None = None,
    zscores: ZScores | None = None,
) -> TrecEvalResult:
    """The result of per-query values: z-scores when asked, then the summary."""
    if zscores is not None:
        values = _to_zscores(zscores, query_ids, values)
    names = [m.name for m in selected if m.family not in _SUMMARY_ONLY and m.name in values]
    per_query = {
        query: {name: float(values[name][row]) for name in names}
        for row, query in enumerate(query_ids)
    }
    return TrecEvalResult(
        measures=tuple(m.name for m in selected),
        per_query=per_query,
        summary=_summary(selected, values, len(query_ids)),
        run_id=run_id,
        relstrings=relstrings or {},
        zscores=zscores is not None,
    )


def _per_query_values(
    ranked: _Rankings, numeric: Sequence[_Measure], relevance_level: int
) -> dict[str, FloatArray]:
    """``{printed name: value per evaluated query}`` of the numeric measures."""
    n_queries = len(ranked.query_ids)
    lengths = np.diff(ranked.offsets)
    cutoffs = {0} | {int(m.param or 0) for m in numeric if m.family == "ndcg_cut"}
    ideal = _ideal_dcg(ranked, sorted(cutoffs))
    is_rel = ranked.judged_level >= relevance_level
    n_rel = np.bincount(ranked.judged_query[is_rel], minlength=n_queries).astype(np.int64)
    n_nonrel = np.bincount(ranked.judged_query[~is_rel], minlength=n_queries).astype(np.int64)
    values: dict[str, FloatArray] = {m.name: np.zeros(n_queries) for m in numeric}
    graded = any(m.family in _GRADED and (m.pairs or m.family != "ndcg") for m in numeric)
    level_counts = _level_counts(ranked, n_queries) if graded else []
    # Queries grouped by ranking-length class so the padded matrices stay small, and each
    # class cut into blocks of at most _BLOCK_CELLS cells: every temporary of a block is then
    # small enough for the allocator to hand the same memory back block after block, where
    # one matrix of every query would be mapped, zeroed by the kernel and unmapped, measure
    # after measure. Each query's values are its own row's, whatever the block.
    classes = np.where(lengths > 1, np.ceil(np.log2(np.maximum(lengths, 1))), 0).astype(np.int64)
    for length_class in np.unique(classes):
        in_class = np.flatnonzero(classes == length_class)
        depth = int(lengths[in_class].max())
        step = max(1, _BLOCK_CELLS // max(depth, 1))
        for at in range(0, len(in_class), step):
            rows = in_class[at : at + step]
            block = _BlockInput(
                codes=_padded_codes(ranked, lengths, rows, depth),
                lengths=lengths[rows],
                level=relevance_level,
                n_rel=n_rel[rows],
                n_nonrel=n_nonrel[rows],
                ideal={cutoff: idcg[rows] for cutoff, idcg in ideal.items()},
                level_counts=[level_counts[row] for row in rows.tolist()] if graded else [],
            )
            for name, column in _block(block, numeric, _GRADED).items():
                values[name][rows] = column
    return values


def _padded_codes(ranked: _Rankings, lengths: IntArray, rows: IntArray, depth: int) -> IntArray:
    """The ``(rows, depth)`` matrix of the rows' relevance codes, padded with ``_PADDING``."""
    first, last = int(ranked.offsets[rows[0]]), int(ranked.offsets[rows[-1] + 1])
    if last - first == len(rows) * depth and (lengths[rows] == depth).all():
        # Consecutive full rankings: a view of the codes, nothing copied.
        return ranked.codes[first:last].reshape(len(rows), depth)
    ranks = np.arange(depth)[None, :]
    valid = ranks < lengths[rows][:, None]
    index = np.where(valid, ranked.offsets[rows][:, None] + ranks, 0)
    return np.where(valid, ranked.codes[index] if ranked.codes.size else _PADDING, _PADDING)


def _level_counts(ranked: _Rankings, n_queries: int) -> list[tuple[IntArray, IntArray]]:
    """Each query's judged levels (ascending) and how many documents each has."""
    order = np.lexsort((ranked.judged_level, ranked.judged_query))
    query = ranked.judged_query[order]
    level = ranked.judged_level[order]
    change = np.ones(len(query), dtype=bool)
    change[1:] = (query[1:] != query[:-1]) | (level[1:] != level[:-1])
    firsts = np.flatnonzero(change)
    counts = np.diff(np.append(firsts, len(query)))
    starts = np.searchsorted(query[firsts], np.arange(n_queries + 1))
    return [
        (level[firsts[a:b]], counts[a:b].astype(np.int64))
        for a, b in zip(starts[:-1].tolist(), starts[1:].tolist(), strict=True)
    ]


def _summary(
    selected: Sequence[_Measure], values: Mapping[str, FloatArray], n_queries: int
) -> dict[str, float]:
    summary: dict[str, float] = {}
    for measure in selected:
        if measure.family == "num_q":
            summary[measure.name] = float(n_queries)
        elif measure.family in _COUNTS:
            summary[measure.name] = _sequential_sum(values[measure.name])
        elif measure.family in _GEOMETRIC:
            summary[measure.name] = math.exp(_sequential_sum(values[measure.name]) / n_queries)
        elif measure.name in values:
            # Accumulated query by query in qid order, then divided: trec_eval's arithmetic.
            summary[measure.name] = _sequential_sum(values[measure.name]) / n_queries
    return summary


def _relstrings(ranked: _Rankings, selected: Sequence[_Measure]) -> dict[str, dict[str, str]]:
    relstrings: dict[str, dict[str, str]] = {}
    for measure in selected:
        if measure.family == "relstring":
            for row, query in enumerate(ranked.query_ids):
                codes_q = ranked.codes[ranked.offsets[row] : ranked.offsets[row + 1]]
                relstrings.setdefault(query, {})[measure.name] = _relstring(
                    codes_q, int(measure.param or 0)
                )
    return relstrings
