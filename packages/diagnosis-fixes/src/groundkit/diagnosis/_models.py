"""The data of a diagnosis: buckets of lost evidence, the measurements behind each fix, fixes.

Every model is frozen and JSON-serialisable (``model_dump(mode="json")``). ``None`` always
means *not measurable for this stage*, never zero.
"""

from __future__ import annotations

from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field

from groundkit.diagnosis._names import FIXES, FixName
from groundkit.judgments.report import Knob

__all__ = [
    "BUCKETS",
    "BUCKET_TITLES",
    "FIXES",
    "FIX_BUCKETS",
    "FIX_CONFIG_KEYS",
    "FIX_KNOBS",
    "Bucket",
    "BucketName",
    "Diagnosis",
    "Fix",
    "FixEvidence",
    "FixName",
    "MissExample",
    "Rate",
    "Reference",
    "Replay",
    "StageSnapshot",
]

_FROZEN = ConfigDict(frozen=True, extra="forbid")

BucketName = Literal[
    "gold-not-resolvable",
    "document-not-indexed",
    "split-by-chunker",
    "beyond-encoder-window",
    "just-below-cutoff",
    "found-by-other-stage",
    "vocabulary-mismatch",
    "crowded-by-duplicates",
    "not-retrieved",
]

BUCKETS: tuple[BucketName, ...] = get_args(BucketName)
"""The buckets in contract order: a miss goes into the first one its evidence fits."""

BUCKET_TITLES: dict[BucketName, str] = {
    "gold-not-resolvable": "gold not resolvable",
    "document-not-indexed": "document never indexed",
    "split-by-chunker": "split by the chunker",
    "beyond-encoder-window": "beyond the encoder's window",
    "just-below-cutoff": "ranked just below the cutoff",
    "found-by-other-stage": "found by another stage",
    "vocabulary-mismatch": "vocabulary mismatch",
    "crowded-by-duplicates": "crowded out by near-duplicates",
    "not-retrieved": "not retrieved",
}

FIX_BUCKETS: dict[FixName, tuple[BucketName, ...]] = {
    "repair-judgments": ("gold-not-resolvable",),
    "index-coverage": ("document-not-indexed",),
    "chunk-overlap": ("split-by-chunker",),
    "larger-chunks": ("split-by-chunker",),
    "smaller-chunks": ("beyond-encoder-window",),
    "rerank": ("just-below-cutoff",),
    "raise-k": ("just-below-cutoff",),
    "hybrid-fusion": ("found-by-other-stage",),
    "query-expansion": ("vocabulary-mismatch",),
    "dense": ("vocabulary-mismatch",),
    "deduplicate": ("crowded-by-duplicates",),
}
"""The buckets whose misses each fix addresses (``not-retrieved`` has no fix of its own)."""

FIX_KNOBS: dict[FixName, str] = {
    "repair-judgments": "the judgments file (fix or drop the quotes)",
    "index-coverage": "corpus loading (which documents are indexed)",
    "chunk-overlap": "chunker overlap",
    "larger-chunks": "chunker size",
    "smaller-chunks": "chunker size, or the model's input length",
    "rerank": 'a rerank stage over its top hits (kind = "rerank", stage, top)',
    "raise-k": "k (hits passed on)",
    "hybrid-fusion": "a hybrid stage fusing named stages",
    "query-expansion": "the retriever's query (expansion)",
    "dense": "the retriever (a dense model)",
    "deduplicate": "near-duplicate removal before the cutoff",
}


FIX_CONFIG_KEYS: dict[FixName, tuple[Knob, ...]] = {
    "repair-judgments": (),
    "index-coverage": (),
    "chunk-overlap": (Knob.CHUNK_OVERLAP,),
    "larger-chunks": (Knob.CHUNK_SIZE, Knob.CHUNK_MAX_CHARS, Knob.CHUNK_MAX_SENTENCES),
    "smaller-chunks": (Knob.CHUNK_SIZE, Knob.CHUNK_MAX_CHARS, Knob.CHUNK_MAX_SENTENCES),
    "rerank": (Knob.RETRIEVER_KIND, Knob.RERANK_TOP),
    "raise-k": (),
    "hybrid-fusion": (Knob.RETRIEVER_KIND, Knob.FUSED_STAGES),
    "query-expansion": (),
    "dense": (Knob.RETRIEVER_KIND,),
    "deduplicate": (),
}
"""The stage configuration keys each fix turns (empty: the fix acts outside a stage's
configuration: the judgments, the corpus, the run's depth or the query)."""


class _Model(BaseModel):
    model_config = _FROZEN


class MissExample(_Model):
    """One missed gold quote, shown as an example of its bucket.

    Attributes:
        query_id: The query.
        gold_index: Index of the quote in the query's gold list.
        quote: The quote, shortened for display.
        first_rank: Rank of the first hit touching the quote (``None``: none recorded).
        best_chunk_rank: Rank at which the chunk holding most of the quote was retrieved
            (``None``: not retrieved, or not measurable).
        found_by: For ``found-by-other-stage``, the other stages that have it within k.
    """

    query_id: str
    gold_index: int
    quote: str
    first_rank: int | None = None
    best_chunk_rank: int | None = None
    found_by: list[str] = Field(default_factory=list)


class Bucket(_Model):
    """Where some of the stage's misses went.

    Attributes:
        name: The bucket's name.
        position: Its place in the contract order (1 to 9).
        title: Readable title.
        count: Misses in the bucket; ``None`` when the stage cannot measure it.
        share: ``count`` over all misses; ``None`` with ``count`` (or when nothing was missed).
        weight: What the bucket's misses are worth in the stage's recall@k (the gain if every
            one of them were found); ``None`` with ``count``.
        unmeasured: Misses that reached this bucket's test without the measurement it needs
            (they went on to later buckets).
        reason: Why the bucket is not measurable, when it is not.
        examples: Up to the requested number of examples.
    """

    name: BucketName
    position: int = Field(ge=1, le=len(BUCKETS))
    title: str
    count: int | None
    share: float | None
    weight: float | None
    unmeasured: int = 0
    reason: str | None = None
    examples: list[MissExample] = Field(default_factory=list)


class Rate(_Model):
    """A recall measured on a set of comparable gold quotes.

    Attributes:
        label: Which gold is comparable (a noun phrase).
        found: Comparable quotes found within k.
        total: Comparable quotes.
    """

    label: str
    found: int = Field(ge=0)
    total: int = Field(ge=0)

    @property
    def value(self) -> float | None:
        """``found / total``; ``None`` when there is no comparable gold."""
        return None if self.total == 0 else self.found / self.total


class Reference(_Model):
    """How another stage of the report does on a fix's misses.

    Attributes:
        stage: The other stage.
        found: Misses of the fix it finds within k.
        gain: What those misses are worth in this stage's recall@k.
    """

    stage: str
    found: int = Field(ge=0)
    gain: float


class Measured(_Model):
    """A stage of the same report that already applies a fix, and what it scores.

    Attributes:
        stage: That stage.
        metric: ``recall@k``.
        difference: Its mean minus the diagnosed stage's, over the answerable queries: the
            whole change, misses outside the fix's buckets and quotes it loses included.
    """

    stage: str
    metric: str
    difference: float


class Replay(_Model):
    """A fix replayed exactly from the rankings the report holds.

    Attributes:
        metric: The metric re-scored after the fix (``recall@50`` for raise-k).
        before: The stage's mean recall@k as recomputed.
        after: The mean of ``metric`` after the fix.
        query_count: Queries averaged.
        detail: What was replayed, in words.
        other_stage: The stage fused with (hybrid-fusion).
        new_k: The raised cutoff (raise-k).
        removed_hits: Near-duplicate hits removed (deduplicate).
        finds: Misses the replay finds, by the bucket they were in (a replay is the whole
            effect of the fix, so it can find misses of other buckets than the fix's own).
        loses: Quotes found before that the replay no longer finds.
    """

    metric: str
    before: float
    after: float
    query_count: int
    detail: str
    other_stage: str | None = None
    new_k: int | None = None
    removed_hits: int | None = None
    finds: dict[BucketName, int] = Field(default_factory=dict)
    loses: int = 0

    @property
    def gain(self) -> float:
        """``after - before``."""
        return self.after - self.before


class FixEvidence(_Model):
    """What the diagnosis measured for one fix (:func:`~groundkit.diagnosis.fixes` reads it).

    Attributes:
        fix: The fix.
        buckets: Its buckets.
        misses: Misses it addresses; ``None`` when its buckets are not measurable.
        query_equivalents: Those misses counted as queries (each counts ``1 / quotes of its
            query``).
        ceiling: An upper bound on the fix's gain in recall@k (its misses' worth for a fix
            that can find only them; the stage's headroom ``1 − recall@k`` for a replay or a
            fix that can move any quote); ``None`` when nothing is measurable.
        rate: The recall on comparable gold used to estimate the gain (estimated fixes).
        at_stake: Their worth in recall@k (every one found); ``None`` with ``misses``.
        reference: Another stage's result on the same misses, when the report has one.
        replay: The exact replay (raise-k, hybrid-fusion, deduplicate on the rankings; the
            chunk fixes by a re-run the harness made), when possible.
        measured: A stage of the report that applies the fix, and its measured difference.
        note: A qualification of the figures (why a rate or replay is missing...).
    """

    fix: FixName
    buckets: list[BucketName]
    misses: int | None
    query_equivalents: float | None
    ceiling: float | None
    at_stake: float | None = None
    rate: Rate | None = None
    reference: Reference | None = None
    replay: Replay | None = None
    measured: Measured | None = None
    note: str | None = None


class StageSnapshot(_Model):
    """The configuration of the diagnosed stage, as the report recorded it.

    Attributes:
        kind: Retriever kind.
        retriever: Retriever settings.
        chunker: Chunker settings (``None``: the retriever brings its own spans).
        encoder_max_tokens: The encoder's input length (dense stages).
    """

    kind: str
    retriever: dict[str, Any] = Field(default_factory=dict)
    chunker: dict[str, Any] | None = None
    encoder_max_tokens: int | None = None


class Diagnosis(_Model):
    """Where one stage of a report loses gold evidence at cutoff k.

    Attributes:
        report: Where the report was read from, when known.
        stage: The stage diagnosed.
        config: Its configuration.
        level: ``chunk`` or ``document`` (the report's level).
        k: The cutoff.
        metric: ``recall@k``, the unit of every gain.
        query_count: Answerable queries (the denominator of recall@k).
        single_quote: Every query has exactly one gold quote (document level: one gold
            document), so a miss is one query.
        gold_count: Gold quotes of those queries (document level: gold documents).
        found_count: Quotes (documents) found within k.
        miss_count: Quotes (documents) missed at k.
        recall: The stage's mean recall@k as recomputed from its recorded hits.
        recorded_recall: The mean of the report's own recall@k scores, when it has them.
        items_hash: Hash of the stage's per-query recall@k (see :func:`items_hash`).
        config_hash: Hash of ``config`` (see :func:`config_hash`).
        other_stages: Other successful stages of the report (candidates for comparison).
        buckets: The nine buckets, in order.
        evidence: What was measured for each fix.
        notes: What the figures cannot say.
    """

    report: str | None = None
    stage: str
    config: StageSnapshot
    level: Literal["chunk", "document"]
    k: int = Field(ge=1)
    metric: str
    query_count: int = Field(ge=0)
    single_quote: bool
    gold_count: int = Field(ge=0)
    found_count: int = Field(ge=0)
    miss_count: int = Field(ge=0)
    recall: float
    recorded_recall: float | None = None
    items_hash: str
    config_hash: str
    other_stages: list[str] = Field(default_factory=list)
    buckets: list[Bucket]
    evidence: list[FixEvidence]
    notes: list[str] = Field(default_factory=list)

    def bucket(self, name: BucketName) -> Bucket:
        """The bucket called ``name``."""
        for bucket in self.buckets:
            if bucket.name == name:
                return bucket
        raise KeyError(name)


class Fix(_Model):
    """A change to the stage, with the recall@k it is expected to gain.

    Attributes:
        rank: Position in the ranking (1 = largest expected gain).
        name: The fix.
        knob: What to turn.
        keys: The stage configuration keys it turns (empty: outside a stage's configuration).
        buckets: The buckets whose misses it addresses.
        misses: Those misses (``None``: not measurable for this stage).
        expected: Expected gain in recall@k (``None``: cannot be estimated).
        ceiling: An upper bound on the gain: ``expected`` never exceeds it (the misses'
            worth for repair-judgments and index-coverage, those a hit in the rerank pool
            touches for rerank, the stage's headroom ``1 − recall@k`` otherwise).
        at_stake: Gain if every miss of its buckets were found (what the estimate scales).
        reference: Gain if its misses were found at another stage's rate.
        reference_stage: That stage.
        exact: The gain was replayed from the recorded rankings, not estimated.
        measured: What a stage of the same report that applies the fix measures (its whole
            change in recall@k), when there is one; it can exceed ``at_stake``.
        measured_stage: That stage.
        basis: How ``expected`` was computed, in one sentence.
    """

    rank: int = Field(ge=1)
    name: FixName
    knob: str
    keys: list[Knob] = Field(default_factory=list)
    buckets: list[BucketName]
    misses: int | None
    expected: float | None
    ceiling: float | None
    at_stake: float | None = None
    reference: float | None = None
    reference_stage: str | None = None
    exact: bool = False
    measured: float | None = None
    measured_stage: str | None = None
    basis: str
