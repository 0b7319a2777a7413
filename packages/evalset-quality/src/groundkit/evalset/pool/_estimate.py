"""Judge a pool's sample and estimate every stage's precision@k and recall relative to the pool.

Every interval and verdict comes from :mod:`groundkit.stats`: the domain and ratio estimators
for the stages, the stratified Wilson interval for the pool's relevant share, and
:func:`~groundkit.stats.compare_stratified` (strata weighted by their sizes, a t gate on the
stratified standard error, Holm over the family) for the paired comparisons.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from groundkit.evalset._errors import EvalSetError
from groundkit.evalset.judge._judge import RELEVANT_GRADE, RelevanceJudge
from groundkit.evalset.pool._models import (
    PoolComparison,
    PoolItem,
    PoolReport,
    PoolStage,
    PoolStratum,
)
from groundkit.evalset.pool._pool import Pool, build_pool, draw_sample
from groundkit.judgments import EvalReport
from groundkit.stats import (
    PairedStratum,
    ProportionInterval,
    RatioStratum,
    compare_stratified,
    stratified_domain_interval,
    stratified_ratio_interval,
    stratified_wilson_interval,
)

__all__ = ["estimate_pool", "pool_passages", "run_pool"]


def pool_passages(pool: Pool, sample: Sequence[int], corpus: Mapping[str, str]) -> list[str]:
    """The text the judge reads for each sampled item (the union span; a whole document).

    Raises:
        EvalSetError: A sampled item's document is not in the corpus.
    """
    texts = []
    for index in sample:
        item = pool.items[index]
        text = corpus.get(item.doc)
        if text is None:
            raise EvalSetError(
                f"query {item.query_id!r}: document {item.doc!r} is not in the corpus"
            )
        texts.append(text if pool.level == "document" else text[item.start : item.end])
    return texts


def _stage_strata(
    pool: Pool, decided: Sequence[list[int]], relevant: set[int], stage: str
) -> tuple[list[RatioStratum], list[RatioStratum]]:
    precision, recall = [], []
    for h, items in enumerate(decided):
        if not items:
            continue
        size = pool.stratum_of.count(h)
        mine = [i for i in items if stage in pool.items[i].ranks]
        mine_relevant = sum(1 for i in mine if i in relevant)
        precision.append(RatioStratum(n=len(items), population_size=size,
                                      numerator=mine_relevant, denominator=len(mine)))  # fmt: skip
        recall.append(RatioStratum(n=len(items), population_size=size, numerator=mine_relevant,
                                   denominator=sum(1 for i in items if i in relevant)))  # fmt: skip
    return precision, recall


def _interval_or_none(
    strata: list[RatioStratum], domain: int | None, level: float
) -> ProportionInterval | None:
    if not strata or sum(s.denominator for s in strata) == 0:
        return None
    if domain is None:
        return stratified_ratio_interval(strata, confidence=level)
    return stratified_domain_interval(strata, domain, confidence=level)


def _paired_strata(
    pool: Pool, decided: Sequence[list[int]], relevant: set[int], stage: str
) -> list[PairedStratum]:
    """Per stratum: the decided sampled items counted for ``stage`` against the first stage."""
    base = pool.stages[0].name
    strata = []
    for h, items in enumerate(decided):
        if not items:
            continue
        found = [i for i in items if i in relevant]
        by_base = {i for i in found if base in pool.items[i].ranks}
        by_stage = {i for i in found if stage in pool.items[i].ranks}
        strata.append(
            PairedStratum(
                n=len(items),
                population_size=pool.stratum_of.count(h),
                relevant=len(found),
                gained=len(by_stage - by_base),
                lost=len(by_base - by_stage),
            )
        )
    return strata


def _comparisons(
    pool: Pool, decided: Sequence[list[int]], relevant: set[int], confidence: float
) -> list[PoolComparison]:
    """Every stage against the first, strata weighted by their sizes (Holm over the family)."""
    if len(pool.stages) < 2 or not any(decided):
        return []
    base = pool.stages[0].name
    members = {s.name: _paired_strata(pool, decided, relevant, s.name) for s in pool.stages[1:]}
    results = compare_stratified(members, confidence=confidence)
    items = sum(len(d) for d in decided)
    return [
        PoolComparison(
            stage=r.label,
            baseline=base,
            items=items,
            gained=r.gained,
            lost=r.lost,
            difference=r.difference,
            low=r.low,
            high=r.high,
            p_value=r.p_value,
            p_adjusted=r.p_adjusted,
            verdict=str(r.verdict),
        )
        for r in results
    ]


def estimate_pool(
    pool: Pool,
    sample: Sequence[int],
    majorities: Sequence[int | None],
    *,
    relevant_grade: int = RELEVANT_GRADE,
    confidence: float = 0.95,
) -> tuple[list[PoolStratum], list[PoolStage], list[PoolComparison], ProportionInterval | None]:
    """Strata, stage estimates, comparisons and the pool's relevant share from a judged sample.

    Args:
        pool: The pool.
        sample: Indices of the sampled items.
        majorities: The judge's majority grade of each sampled item (``None``: undecided).
        relevant_grade: Lowest majority counted as relevant.
        confidence: Coverage of every interval.
    """
    grade = dict(zip(sample, majorities, strict=True))
    sampled: list[list[int]] = [[] for _ in pool.strata]
    for i in sample:
        sampled[pool.stratum_of[i]].append(i)
    decided = [[i for i in items if grade[i] is not None] for items in sampled]
    relevant = {i for i, g in grade.items() if g is not None and g >= relevant_grade}
    strata = [
        PoolStratum(
            stage=stage,
            band=band,
            size=pool.stratum_of.count(h),
            sampled=len(sampled[h]),
            decided=len(decided[h]),
            relevant=sum(1 for i in decided[h] if i in relevant),
        )
        for h, (stage, band) in enumerate(pool.strata)
    ]
    stages = []
    for ref in pool.stages:
        precision, recall = _stage_strata(pool, decided, relevant, ref.name)
        hits = sum(1 for item in pool.items if ref.name in item.ranks)
        stages.append(
            PoolStage(
                stage=ref.name,
                report=ref.report,
                hits=hits,
                sampled=sum(s.denominator for s in precision),
                precision=_interval_or_none(precision, hits, confidence) if hits else None,
                recall=_interval_or_none(recall, None, confidence),
            )
        )
    counted = [(s.relevant, s.decided, s.size) for s in strata if s.decided]
    share = stratified_wilson_interval(counted, confidence=confidence) if counted else None
    return strata, stages, _comparisons(pool, decided, relevant, confidence), share


def _notes(strata: Sequence[PoolStratum], level: str) -> list[str]:
    notes = [
        "Precision and recall are the judge's, relative to the pool: a relevant passage no "
        "pooled stage retrieved is in no denominator.",
        "Comparisons estimate the difference in pooled recall with each stratum weighted by its "
        "size (a sampled item stands for the items of its stratum); the gate is Student's t on "
        "the stratified standard error, Holm over the family.",
    ]
    if level == "chunk":
        notes.append("Hits of a query whose spans overlap in the same document are one item.")
    lost = [f"{s.stage} {s.band}" for s in strata if s.sampled and not s.decided]
    if lost:
        notes.append(f"CAUTION: no sampled item was decided in strata {', '.join(lost)}.")
    return notes


# Public API: each keyword is a documented option; grouping them would hide them from
# help() and inspect.signature.
def run_pool(  # noqa: PLR0913
    reports: Sequence[tuple[str, EvalReport]],
    corpus: Mapping[str, str],
    judge: RelevanceJudge,
    *,
    k: int = 10,
    n: int = 200,
    seed: int = 0,
    bands: Sequence[int] = (3,),
    sources: Mapping[str, str] | None = None,
    relevant_grade: int = RELEVANT_GRADE,
    stages: Sequence[str] | None = None,
) -> PoolReport:
    """Pool the reports' top-k hits, judge a stratified sample, estimate every stage.

    Args:
        reports: ``(label, report)`` pairs, on the same corpus.
        corpus: Document id → text.
        judge: The judge (its cache makes a rerun free).
        k: The cutoff pooled.
        n: Items to judge (at least one per stratum).
        seed: Seed of the draw.
        bands: Upper rank of each band but the last.
        sources: Label → where the report was read from (recorded).
        relevant_grade: Lowest majority counted as relevant.
        stages: Pool only these stages (see :func:`build_pool`); the first is the baseline of
            the comparisons.

    Raises:
        EvalSetError: Bad reports, settings, an unknown stage, or a sampled document missing
            from the corpus.
    """
    pool = build_pool(reports, k, bands, stages=stages)
    sample = draw_sample(pool, n, seed)
    passages = pool_passages(pool, sample, corpus)
    pairs = [
        (pool.queries[pool.items[i].query_id], passage)
        for i, passage in zip(sample, passages, strict=True)
    ]
    run = judge.judge(pairs)
    majorities = [v.majority for v in run.verdicts]
    strata, estimates, comparisons, share = estimate_pool(
        pool, sample, majorities, relevant_grade=relevant_grade
    )
    items = [
        PoolItem(
            item_id=pool.items[i].item_id,
            query_id=pool.items[i].query_id,
            doc=pool.items[i].doc,
            start=pool.items[i].start,
            end=pool.items[i].end,
            stratum=pool.stratum_of[i],
            ranks=dict(pool.items[i].ranks),
            majority=v.majority,
            grades=list(v.grades),
        )
        for i, v in zip(sample, run.verdicts, strict=True)
    ]
    return PoolReport(
        reports=dict(sources or {label: label for label, _ in reports}),
        level="document" if pool.level == "document" else "chunk",
        k=k,
        bands=list(pool.bands),
        requested=n,
        seed=seed,
        pool_size=len(pool.items),
        queries=len({item.query_id for item in pool.items}),
        judge=judge.model,
        prompt_version=judge.prompt_version,
        repeats=judge.repeats,
        relevant_grade=relevant_grade,
        pool_relevant=share,
        strata=strata,
        stages=estimates,
        comparisons=comparisons,
        sample=items,
        usage=run.usage,
        notes=_notes(strata, pool.level),
    )
