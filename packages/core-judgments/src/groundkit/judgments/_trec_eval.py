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
non-relevant documents retrieved.

Measure names accepted by :func:`evaluate_trec`: ``official`` (trec_eval's default set),
``all_trec`` (every measure here), a family (``P``, ``ndcg_cut``...) with its default cutoffs,
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
from groundkit.judgments._trec import trec_ranking
from groundkit.judgments._trec_arrays import (
    _at,
    _iprec,
    _log2_table,
    _ratio,
    _relevant_ranks,
    _row_sums,
    _sequential_sum,
)

__all__ = ["TrecEvalResult", "evaluate_trec", "trec_measure_names"]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

_NONPOOL = -1
_UNJUDGED = -2
_PADDING = -3
_MIN_GEO_MEAN = 0.00001
_CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
_RECALL_POINTS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
_RPREC_MULTS = (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0)

# Families in trec_eval's print order, with their parameter kind and default parameters.
_FAMILIES: dict[str, tuple[str, tuple[float, ...]]] = {
    "runid": ("none", ()),
    "num_q": ("none", ()),
    "num_ret": ("none", ()),
    "num_rel": ("none", ()),
    "num_rel_ret": ("none", ()),
    "map": ("none", ()),
    "gm_map": ("none", ()),
    "Rprec": ("none", ()),
    "bpref": ("none", ()),
    "recip_rank": ("none", ()),
    "iprec_at_recall": ("float", _RECALL_POINTS),
    "P": ("long", _CUTOFFS),
    "relstring": ("length", (10,)),
    "recall": ("long", _CUTOFFS),
    "gm_bpref": ("none", ()),
    "Rprec_mult": ("float", _RPREC_MULTS),
    "utility": ("none", ()),
    "11pt_avg": ("none", ()),
    "ndcg": ("none", ()),
    "ndcg_cut": ("long", _CUTOFFS),
    "map_cut": ("long", _CUTOFFS),
    "relative_P": ("long", _CUTOFFS),
    "success": ("long", (1, 5, 10)),
    "set_P": ("none", ()),
    "set_relative_P": ("none", ()),
    "set_recall": ("none", ()),
    "set_map": ("none", ()),
    "set_F": ("none", ()),
    "num_nonrel_judged_ret": ("none", ()),
}
_OFFICIAL = (
    "runid",
    "num_q",
    "num_ret",
    "num_rel",
    "num_rel_ret",
    "map",
    "gm_map",
    "Rprec",
    "bpref",
    "recip_rank",
    "iprec_at_recall",
    "P",
)
_COUNTS = frozenset({"num_q", "num_ret", "num_rel", "num_rel_ret", "num_nonrel_judged_ret"})
_SUMMARY_ONLY = frozenset({"runid", "num_q", "gm_map", "gm_bpref"})
_GEOMETRIC = {"gm_map": "map", "gm_bpref": "bpref"}


@dataclass(frozen=True)
class _Measure:
    family: str
    name: str  # printed name
    param: float | None = None


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
    """

    measures: tuple[str, ...]
    per_query: dict[str, dict[str, float]]
    summary: dict[str, float]
    run_id: str | None = None
    relstrings: dict[str, dict[str, str]] = field(default_factory=dict)

    def as_dict(self) -> dict[str, dict[str, float]]:
        """Per-query values plus the summary under ``"all"`` (as trec_eval prints them)."""
        out = {query: dict(values) for query, values in self.per_query.items()}
        out["all"] = dict(self.summary)
        return out


def trec_measure_names() -> tuple[str, ...]:
    """The measure families :func:`evaluate_trec` supports, in trec_eval's order."""
    return tuple(_FAMILIES)


def _format_param(kind: str, value: float) -> str:
    return f"{int(value)}" if kind in ("long", "length") else f"{value:3.2f}"


# Cutoffs become 64-bit integers; 2**53 keeps every accepted value exact as a float too.
_MAX_PARAMETER = float(2**53)


def _parse_params(family: str, kind: str, text: str, request: str) -> tuple[float, ...]:
    if kind == "none":
        raise JudgmentError(f"measure {request!r}: {family} takes no parameters here")
    values: list[float] = []
    for part in text.split(","):
        try:
            # Integer cutoffs are truncated like C's atol ("23.4" -> 23).
            value = float(part) if kind == "float" else float(math.trunc(float(part)))
        except (ValueError, OverflowError):  # OverflowError: "inf" truncated to an integer
            raise JudgmentError(f"measure {request!r}: bad parameter {part!r}") from None
        if not math.isfinite(value) or abs(value) > _MAX_PARAMETER:
            raise JudgmentError(f"measure {request!r}: parameter {part!r} is out of range")
        if kind != "float" and value <= 0:
            raise JudgmentError(f"measure {request!r}: cutoffs must be positive")
        values.append(value)
    return tuple(values)


def _select(measures: Sequence[str] | None) -> list[_Measure]:
    requested: dict[str, set[float]] = {}
    explicit: dict[str, str] = {}
    for request in measures if measures is not None else ["official"]:
        if request == "official":
            for family in _OFFICIAL:
                requested.setdefault(family, set()).update(_FAMILIES[family][1])
            continue
        if request == "all_trec":
            for family, (_, defaults) in _FAMILIES.items():
                requested.setdefault(family, set()).update(defaults)
            continue
        family, dot, params = request.partition(".")
        if family in _FAMILIES:
            kind, defaults = _FAMILIES[family]
            if dot:
                values = _parse_params(family, kind, params, request)
                if kind == "length":
                    explicit[family] = params
                requested.setdefault(family, set()).update(values)
            else:
                requested.setdefault(family, set()).update(defaults)
            continue
        stem, _, suffix = request.rpartition("_")
        kind = _FAMILIES.get(stem, ("", ()))[0]
        if kind in ("long", "float"):
            requested.setdefault(stem, set()).update(_parse_params(stem, kind, suffix, request))
            continue
        raise JudgmentError(
            f"unknown or unsupported trec_eval measure {request!r} "
            f"(supported: official, all_trec, {', '.join(_FAMILIES)})"
        )
    selected: list[_Measure] = []
    for family, (kind, _) in _FAMILIES.items():
        if family not in requested:
            continue
        if kind == "none":
            selected.append(_Measure(family, family))
        elif kind == "length":
            (length,) = sorted(requested[family])[-1:]
            name = f"relstring_{explicit[family]}" if family in explicit else family
            selected.append(_Measure(family, name, length))
        else:
            for value in sorted(requested[family]):
                selected.append(_Measure(family, f"{family}_{_format_param(kind, value)}", value))
    return selected


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


def _block(
    codes: IntArray,
    lengths: IntArray,
    measures: Sequence[_Measure],
    level: int,
    counts: tuple[IntArray, IntArray],
    ideal: Mapping[int, FloatArray],
    rows: IntArray,
) -> dict[str, FloatArray]:
    n_queries, depth = codes.shape
    relevant = codes >= level
    cum: IntArray = np.cumsum(relevant, axis=1, dtype=np.int64)
    ranks = np.arange(1, depth + 1, dtype=np.float64)
    n_rel = counts[0][rows]
    n_nonrel = counts[1][rows]
    rel_ret: IntArray = cum[:, -1] if depth else np.zeros(n_queries, np.int64)
    precision = cum / ranks
    precision_at_rel = np.where(relevant, precision, 0.0)
    out: dict[str, FloatArray] = {}
    precision_after: FloatArray | None = None
    relevant_ranks: tuple[IntArray, IntArray] | None = None
    discounted = np.zeros((0, 0))
    if any(m.family in ("ndcg", "ndcg_cut") for m in measures):
        discounted = np.maximum(codes, 0).astype(np.float64) / _log2_table(depth)[None, :]
    for measure in measures:
        family, param = measure.family, measure.param
        cutoff = np.full(n_queries, int(param or 0), dtype=np.int64)
        if family == "num_ret":
            value = lengths.astype(np.float64)
        elif family == "num_rel":
            value = n_rel.astype(np.float64)
        elif family == "num_rel_ret":
            value = rel_ret.astype(np.float64)
        elif family in ("map", "gm_map"):
            value = _ratio(_row_sums(precision_at_rel), n_rel)
        elif family == "Rprec":
            value = _ratio(_at(cum, lengths, n_rel), n_rel)
        elif family in ("bpref", "gm_bpref"):
            nonrel = (codes >= 0) & (codes < level)
            before: IntArray = np.cumsum(nonrel, axis=1, dtype=np.int64) - nonrel
            bound = np.minimum(n_nonrel, n_rel)[:, None]
            term = np.where(
                before > 0, 1.0 - _ratio(np.minimum(before, n_rel[:, None]), bound), 1.0
            )
            value = _ratio(_row_sums(np.where(relevant, term, 0.0)), n_rel)
        elif family == "recip_rank":
            first = relevant.argmax(axis=1) if depth else np.zeros(n_queries, np.int64)
            value = np.where(relevant.any(axis=1), 1.0 / (first + 1.0), 0.0)
        elif family in ("iprec_at_recall", "11pt_avg"):
            if precision_after is None or relevant_ranks is None:
                precision_after = np.maximum.accumulate(precision[:, ::-1], axis=1)[:, ::-1]
                relevant_ranks = _relevant_ranks(relevant, rel_ret)
            points = (param,) if family == "iprec_at_recall" else _RECALL_POINTS
            value = np.mean(
                [
                    _iprec(precision_after, relevant_ranks, n_rel, rel_ret, float(p or 0.0))
                    for p in points
                ],
                axis=0,
            )
            value = np.where(lengths > 0, value, 0.0)
        elif family == "P":
            value = _at(cum, lengths, cutoff) / float(param or 1)
        elif family == "recall":
            value = _ratio(_at(cum, lengths, cutoff), n_rel)
        elif family == "Rprec_mult":
            mult_cut = np.floor(float(param or 0.0) * n_rel + 0.9).astype(np.int64)
            value = _ratio(_at(cum, lengths, mult_cut), mult_cut)
        elif family == "utility":
            value = (2 * rel_ret - lengths).astype(np.float64)
        elif family == "ndcg":
            value = _ratio(_row_sums(discounted), ideal[0][rows])
        elif family == "ndcg_cut":
            top = int(param or 0)
            value = _ratio(_row_sums(discounted[:, :top]), ideal[top][rows])
        elif family == "map_cut":
            top = int(param or 0)
            value = _ratio(_row_sums(precision_at_rel[:, :top]), n_rel)
        elif family == "relative_P":
            value = _ratio(_at(cum, lengths, cutoff), np.minimum(cutoff, n_rel))
        elif family == "success":
            value = (_at(cum, lengths, cutoff) > 0).astype(np.float64)
        elif family == "set_P":
            value = _ratio(rel_ret, lengths)
        elif family == "set_relative_P":
            value = _ratio(rel_ret, np.minimum(lengths, n_rel))
        elif family == "set_recall":
            value = _ratio(rel_ret, n_rel)
        elif family == "set_map":
            value = _ratio(rel_ret.astype(np.float64) ** 2, lengths * n_rel)
        elif family == "set_F":
            set_p = _ratio(rel_ret, lengths)
            set_r = _ratio(rel_ret, n_rel)
            value = _ratio(2.0 * set_p * set_r, set_p + set_r)
        elif family == "num_nonrel_judged_ret":
            value = ((codes >= 0) & (codes < level)).sum(axis=1).astype(np.float64)
        else:
            continue
        if family in _GEOMETRIC:
            floored = np.maximum(value, _MIN_GEO_MEAN)
            value = np.fromiter((math.log(v) for v in floored.tolist()), np.float64, len(floored))
        out[measure.name] = value
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
    )


def _evaluate_ranked(
    ranked: _Rankings, selected: Sequence[_Measure], relevance_level: int, run_id: str | None
) -> TrecEvalResult:
    """Every selected measure of prepared rankings (shared by the mapping and file paths)."""
    n_queries = len(ranked.query_ids)
    if n_queries == 0:
        raise JudgmentError("no query has both relevance judgments and a ranking")
    lengths = np.diff(ranked.offsets)
    cutoffs = {0} | {int(m.param or 0) for m in selected if m.family == "ndcg_cut"}
    ideal = _ideal_dcg(ranked, sorted(cutoffs))
    is_rel = ranked.judged_level >= relevance_level
    counts = (
        np.bincount(ranked.judged_query[is_rel], minlength=n_queries).astype(np.int64),
        np.bincount(ranked.judged_query[~is_rel], minlength=n_queries).astype(np.int64),
    )
    numeric = [m for m in selected if m.family not in ("runid", "num_q", "relstring")]
    values: dict[str, FloatArray] = {m.name: np.zeros(n_queries) for m in numeric}
    # Queries grouped by ranking-length class so the padded matrices stay small.
    classes = np.where(lengths > 1, np.ceil(np.log2(np.maximum(lengths, 1))), 0).astype(np.int64)
    for length_class in np.unique(classes):
        rows = np.flatnonzero(classes == length_class)
        depth = int(lengths[rows].max())
        ranks = np.arange(depth)[None, :]
        valid = ranks < lengths[rows][:, None]
        index = np.where(valid, ranked.offsets[rows][:, None] + ranks, 0)
        codes = np.where(valid, ranked.codes[index] if ranked.codes.size else _PADDING, _PADDING)
        block = _block(codes, lengths[rows], numeric, relevance_level, counts, ideal, rows)
        for name, column in block.items():
            values[name][rows] = column

    per_query: dict[str, dict[str, float]] = {}
    per_query_names = [m.name for m in numeric if m.family not in _SUMMARY_ONLY]
    for row, query in enumerate(ranked.query_ids):
        per_query[query] = {name: float(values[name][row]) for name in per_query_names}
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
    relstrings: dict[str, dict[str, str]] = {}
    for measure in selected:
        if measure.family == "relstring":
            for row, query in enumerate(ranked.query_ids):
                codes_q = ranked.codes[ranked.offsets[row] : ranked.offsets[row + 1]]
                relstrings.setdefault(query, {})[measure.name] = _relstring(
                    codes_q, int(measure.param or 0)
                )
    return TrecEvalResult(
        measures=tuple(m.name for m in selected),
        per_query=per_query,
        summary=summary,
        run_id=run_id,
        relstrings=relstrings,
    )
