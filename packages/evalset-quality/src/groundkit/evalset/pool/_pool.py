"""Pooled evaluation without gold: pool every stage's top k, judge a stratified sample.

**The pool.** Every stage (of one report or several run on the same corpus) gives its first
``k`` hits per query. At chunk level two hits of a query are the *same item* when they are in
the same document and their character spans overlap (by at least one character); overlapping
spans are merged transitively and the item is their union span, which is what the judge reads.
At document level an item is a (query, document).

**The strata** partition the pool: an item's home is the first stage, in the order given,
that has it in its top k, and the rank band of its best rank there (bands ``1-3`` and ``4-k``
by default). Sizes are recorded. The sample is split equally over the strata (a stratum
smaller than its share gives the rest to the others) and drawn without replacement, seeded.

**The estimates.** A stage's precision@k is the share of relevant items among its top-k
items, pooled over queries: a domain estimate over the strata, its size known
(:func:`~groundkit.stats.stratified_domain_interval`). Its recall relative to the pool is its
relevant items over the pool's relevant items, a ratio of two estimated totals
(:func:`~groundkit.stats.stratified_ratio_interval`). An item the judge leaves undecided
counts neither way: its stratum's estimate rests on the decided ones.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from groundkit.evalset._errors import EvalSetError
from groundkit.judgments import EvalReport

__all__ = ["Pool", "PoolEntry", "StageRef", "allocate", "band_label", "build_pool", "draw_sample"]


@dataclass(frozen=True)
class StageRef:
    """A stage in the pool: its pool name, the report's label and the stage's own name."""

    name: str
    report: str
    stage: str


@dataclass
class PoolEntry:
    """One pool item: a query's (union) span and its best rank in each stage that has it."""

    query_id: str
    doc: str
    start: int
    end: int
    ranks: dict[str, int] = field(default_factory=dict)

    @property
    def item_id(self) -> str:
        """``query_id|doc|start-end``."""
        return f"{self.query_id}|{self.doc}|{self.start}-{self.end}"


@dataclass(frozen=True)
class Pool:
    """The pooled items, the stages, the strata (home stage, band) and each item's stratum."""

    level: str
    k: int
    bands: tuple[int, ...]
    stages: list[StageRef]
    items: list[PoolEntry]
    strata: list[tuple[str, str]]
    stratum_of: list[int]
    queries: dict[str, str]

    def members(self, stratum: int) -> list[int]:
        """Indices of the items in ``stratum``, in item order."""
        return [i for i, s in enumerate(self.stratum_of) if s == stratum]


def band_label(rank: int, bands: Sequence[int], k: int) -> str:
    """The band ``rank`` falls in: ``"1-3"``, ``"4-10"`` for bands ``(3,)`` and k = 10."""
    low = 1
    for top in (*bands, k):
        if rank <= top:
            return f"{low}-{top}" if top > low else str(low)
        low = top + 1
    raise EvalSetError(f"rank {rank} is beyond k = {k}")


def _stage_refs(reports: Sequence[tuple[str, EvalReport]]) -> list[StageRef]:
    refs = []
    for label, report in reports:
        for stage in report.stages:
            if stage.error is not None:
                continue
            name = stage.name if len(reports) == 1 else f"{label}:{stage.name}"
            refs.append(StageRef(name, label, stage.name))
    return refs


def _check_reports(reports: Sequence[tuple[str, EvalReport]], k: int) -> str:
    if not reports:
        raise EvalSetError("no report to pool")
    if k < 1:
        raise EvalSetError(f"k must be at least 1, got {k}")
    labels = [label for label, _ in reports]
    if len(set(labels)) != len(labels):
        raise EvalSetError(f"report labels repeat: {', '.join(labels)}")
    first = reports[0][1]
    for label, report in reports[1:]:
        if report.run.corpus_fingerprint != first.run.corpus_fingerprint:
            raise EvalSetError(f"report {label!r} was run on another corpus than {labels[0]!r}")
        if report.run.level != first.run.level:
            raise EvalSetError(
                f"report {label!r} is {report.run.level}-level, not {first.run.level}"
            )
    return first.run.level


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start < merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def _chosen(refs: list[StageRef], stages: Sequence[str] | None) -> list[StageRef]:
    if not stages:
        return refs
    names = {ref.name: ref for ref in refs}
    unknown = [name for name in stages if name not in names]
    if unknown:
        raise EvalSetError(
            f"no stage named {unknown[0]!r} in the pool (stages: {', '.join(names)})"
        )
    return [names[name] for name in dict.fromkeys(stages)]


def build_pool(
    reports: Sequence[tuple[str, EvalReport]],
    k: int = 10,
    bands: Sequence[int] = (3,),
    *,
    stages: Sequence[str] | None = None,
) -> Pool:
    """Pool the first ``k`` hits of every successful stage of ``(label, report)`` pairs.

    Args:
        reports: ``(label, report)`` pairs on the same corpus.
        k: The cutoff.
        bands: Upper rank of each band but the last.
        stages: Pool only these stages, in this order (names as in the pool:
            ``LABEL:stage`` when several reports are pooled); default every successful one.

    Raises:
        EvalSetError: No report, repeated labels, reports on different corpora or levels,
            bad bands, an unknown stage, or a pool without any hit.
    """
    level = _check_reports(reports, k)
    cuts = tuple(b for b in sorted(set(bands)) if b < k)
    if any(b < 1 for b in cuts):
        raise EvalSetError(f"bands must be ranks of at least 1, got {list(bands)}")
    refs = _chosen(_stage_refs(reports), stages)
    by_label = dict(reports)
    queries: dict[str, str] = {}
    found: dict[tuple[str, str], list[tuple[int, int, str, int]]] = {}
    for ref in refs:
        report = by_label[ref.report]
        texts = {q.query_id: q.query for q in report.queries}
        for result in report.stage(ref.stage).queries:
            for rank, hit in enumerate(result.hits[:k], start=1):
                queries.setdefault(result.query_id, texts.get(result.query_id, result.query_id))
                start, end = (0, 0) if level == "document" else (hit.start, hit.end)
                found.setdefault((result.query_id, hit.doc), []).append(
                    (start, end, ref.name, rank)
                )
    if not found:
        raise EvalSetError("the reports have no hits to pool")
    items = _entries(found, level)
    order = {ref.name: i for i, ref in enumerate(refs)}
    strata: list[tuple[str, str]] = []
    index: dict[tuple[str, str], int] = {}
    homes = []
    for item in items:
        home = min(item.ranks, key=order.__getitem__)
        homes.append((order[home], band_label(item.ranks[home], cuts, k), home))
    for _, band, home in sorted(set(homes)):
        index[(home, band)] = len(strata)
        strata.append((home, band))
    stratum_of = [index[(home, band)] for _, band, home in homes]
    return Pool(level, k, cuts, refs, items, strata, stratum_of, queries)


def _entries(
    found: Mapping[tuple[str, str], list[tuple[int, int, str, int]]], level: str
) -> list[PoolEntry]:
    items: list[PoolEntry] = []
    for (query_id, doc), hits in sorted(found.items()):
        spans = [(0, 0)] if level == "document" else _merged([(s, e) for s, e, _, _ in hits])
        entries = [PoolEntry(query_id, doc, s, e) for s, e in spans]
        for start, end, stage, rank in hits:
            entry = next(x for x in entries if x.start <= start and end <= x.end)
            entry.ranks[stage] = min(rank, entry.ranks.get(stage, rank))
        items.extend(entries)
    return items


def allocate(sizes: Sequence[int], n: int) -> list[int]:
    """Split ``n`` draws equally over strata of ``sizes`` (a small stratum gives the rest on).

    Water-filling: each stratum gets ``min(size, share)``, the draws a full stratum could not
    take go to the others; the last units go to the first strata with room. The total is
    ``min(n, sum(sizes))``.
    """
    quotas = [0] * len(sizes)
    left = min(n, sum(sizes))
    open_ = [i for i, size in enumerate(sizes) if size > 0]
    while left > 0 and open_:
        share = max(1, left // len(open_))
        for i in list(open_):
            take = min(share, sizes[i] - quotas[i], left)
            quotas[i] += take
            left -= take
            if quotas[i] == sizes[i]:
                open_.remove(i)
            if left == 0:
                break
    return quotas


def draw_sample(pool: Pool, n: int, seed: int) -> list[int]:
    """Indices of the sampled items: the allocation of ``n`` over the strata, seeded.

    Raises:
        EvalSetError: ``n`` is smaller than the number of strata (a stratum would go unjudged
            and its items unestimated).
    """
    if n < len(pool.strata):
        raise EvalSetError(
            f"a sample of {n} cannot cover the pool's {len(pool.strata)} strata: "
            f"give --n {len(pool.strata)} or more"
        )
    members = [pool.members(s) for s in range(len(pool.strata))]
    quotas = allocate([len(m) for m in members], n)
    rng = np.random.default_rng(seed)
    chosen: list[int] = []
    for stratum_members, quota in zip(members, quotas, strict=True):
        picks = rng.choice(len(stratum_members), size=quota, replace=False)
        chosen.extend(stratum_members[int(i)] for i in sorted(picks))
    return sorted(chosen)
