"""The report contract: what `grk eval run` writes and every later tool reads.

A report is versioned with a semantic ``major.minor`` string. A reader accepts its own major
version; from a later *minor* version it reads the fields it knows and ignores the rest (a minor
version only ever adds optional fields); a later *major* version is refused with a message that
says which version of groundkit is needed. The models are here; reading, checking and writing
a report file are in :mod:`groundkit.judgments.report._io`.

The schema says what each field may hold; :func:`semantic_problems` says that the fields agree
(one baseline first, unique names and ids, values inside [0, 1], each aggregate the mean of its
per-query scores, each verdict consistent with its own interval and p-value), whenever a
report is built or read: a hand-edited report is refused with the first inconsistency named.
"""

from __future__ import annotations

import math
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from groundkit.judgments._errors import JudgmentError, ReportError
from groundkit.judgments.gold._models import validate_doc_id
from groundkit.judgments.metrics._spec import parse_metric
from groundkit.judgments.report._ablation import AblationRow
from groundkit.judgments.report._adjudication import AdjudicatedStage, AdjudicationInfo
from groundkit.judgments.report._columns import HitColumns, ScoreColumns, expand_columns
from groundkit.judgments.report._cost import StageCost
from groundkit.judgments.report._notes import ReportNote
from groundkit.judgments.report._query import EvidenceTrace, QueryResult, ReportHit, hit_fields
from groundkit.judgments.report._query import FrozenModel as _Model
from groundkit.judgments.report._settings import (
    RecordedChunker,
    RetrieverRecord,
    TokenizerRecord,
    chunker_record,
)
from groundkit.judgments.report._statistics import (
    BootstrapSettings,
    MetricAggregate,
    StageComparison,
)

__all__ = [
    "SCHEMA_VERSION",
    "AblationRow",
    "AdjudicatedStage",
    "AdjudicationInfo",
    "BootstrapSettings",
    "EvalReport",
    "EvidenceTrace",
    "GoldEvidence",
    "HitColumns",
    "MetricAggregate",
    "QueryInfo",
    "QueryResult",
    "ReportHit",
    "RetrieverRecord",
    "RunInfo",
    "ScoreColumns",
    "StageComparison",
    "StageReport",
    "UnlocatedHit",
    "document_problems",
    "hit_key",
]

SCHEMA_VERSION = "2.4"
"""Version of the report format written by this package (``major.minor``).

1.1 added ``StageReport.unlocated`` (hits given as text that could not be located) and the
verdict engine's full record of each comparison (``StageComparison.decision`` and the fields
beside it, ``MetricAggregate.method``, the multiplicity settings); 1.2 the typed note records;
1.3 judged@k (``StageReport.judged``), adjudication (``ReportHit.adjudicated_grade``,
``StageReport.adjudicated``, ``EvalReport.adjudication``) and ``StageReport.cost`` (time,
latency per query, model use, memory and priced money), all optional with defaults; 2.0
writes a stage's hits and per-query scores as columns (``StageReport.hit_columns`` and
``score_columns``, read back into each query's ``hits`` and ``scores``: a tenth of the size),
the judge's calibration in ``AdjudicationInfo`` (``calibration_status``,
``calibration_card``, ``calibration``: uncalibrated by default) and ``EvalReport.ablation``
(each component of a hybrid or rerank stage beside the whole); 2.1 types a stage's settings:
``StageReport.chunker`` is a ``ChunkerConfig`` (an older report's partial chunker gets the
model's defaults and keeps its recorded keys, so hashes over it do not move) and
``StageReport.retriever`` a ``RetrieverRecord`` of JSON values; the file holds the same flat
objects as 2.0; 2.2 added ``RunInfo.tokenizer``, ``corpus_from_report``,
``judgments_from_report`` and phase timings of ``StageCost``; 2.3 counts a quote found at
several places ONCE in the span metrics (its best-covered occurrence; before, every occurrence
was gold characters, so a report's span figures change where quotes repeat), records that rule
as ``RunInfo.span_gold`` (``every-occurrence`` when an older report is read) and a pinned
quote's offset as ``GoldEvidence.start``; 2.4 added ``StageCost.workers`` (the most
processes or threads a stage ran on). Older reports are read as they are: their recorded
numbers are kept, never recomputed."""


class RunInfo(_Model):
    """How the report was produced: enough to reproduce it.

    Attributes:
        created_at: ISO-8601 UTC timestamp (the one field besides timings that varies run to run).
        package_versions: Distribution name to version, for every groundkit distribution used.
        command: The command line, when run from the CLI.
        config: The resolved run configuration (flags and config file merged).
        corpus_source: Where the corpus was read from.
        judgments_source: Where the judgments were read from.
        corpus_from_report: The corpus's path from the report's folder (POSIX), so that the
            report finds it from any folder (:func:`~groundkit.judgments.report.recorded_input`).
        judgments_from_report: The judgments' path from the report's folder, likewise.
        corpus_fingerprint: SHA-256 of the corpus (sorted ids and texts).
        judgments_fingerprint: SHA-256 of the canonical judgments.
        level: ``chunk`` (quote-anchored spans) or ``document`` (trec_eval semantics).
        depth: Number of hits retrieved and recorded per query and stage.
        cutoffs: Cutoffs k of the ``@k`` metrics.
        budgets: Context budgets in characters of the budget metrics.
        min_overlap_fraction: Share of a quote's span a hit must overlap (0 means one character).
        headline_metrics: Metrics shown in tables and compared between stages.
        bootstrap: Settings of the bootstrap intervals and comparisons.
        tokenizer: Whose tokens the ``tokens`` chunker and ``max_tokens`` limits counted: its
            name and version (``None`` in reports written before tokenizers: ``words``).
        span_gold: Which gold characters the span metrics counted for a quote found at
            several places: ``best-occurrence`` (schema 2.3: the quote once, at its
            best-covered occurrence) or ``every-occurrence`` (every copy; what a report of
            schema 2.2 or older recorded, and is read as).
    """

    created_at: str
    package_versions: dict[str, str]
    command: list[str] | None = None
    config: dict[str, Any] = Field(default_factory=dict)
    corpus_source: str | None = None
    judgments_source: str | None = None
    corpus_from_report: str | None = None
    judgments_from_report: str | None = None
    corpus_fingerprint: str
    judgments_fingerprint: str
    level: Literal["chunk", "document"] = "chunk"
    depth: int = Field(default=100, gt=0)
    cutoffs: list[int] = Field(default_factory=lambda: [1, 3, 5, 10, 20, 100])
    budgets: list[int] = Field(default_factory=list)
    min_overlap_fraction: float = Field(default=0.0, ge=0.0, le=1.0)
    headline_metrics: list[str] = Field(default_factory=list)
    bootstrap: BootstrapSettings = Field(default_factory=BootstrapSettings)
    tokenizer: TokenizerRecord | None = None
    span_gold: Literal["best-occurrence", "every-occurrence"] = "best-occurrence"


class GoldEvidence(_Model):
    """One gold quote of a query and where it resolved.

    Attributes:
        doc: Document id.
        quote: The verbatim quote from the judgments.
        grade: Relevance grade (>= 1).
        spans: Every ``(start, end)`` occurrence in the document (end exclusive).
        method: ``exact`` or ``tolerant`` when resolved, else ``None``.
        closest: For an unresolved quote, the closest passage of the document.
        similarity: Similarity of ``closest`` to the quote, in [0, 1].
        start: The offset the judgment pinned the quote to (schema 2.3), else ``None``.
    """

    doc: str
    quote: str
    grade: int = Field(default=1, ge=1)
    spans: list[tuple[int, int]] = Field(default_factory=list)
    start: int | None = Field(default=None, ge=0)
    method: str | None = None
    closest: str | None = None
    similarity: float | None = None

    @field_validator("spans")
    @classmethod
    def _check_spans(cls, value: list[tuple[int, int]]) -> list[tuple[int, int]]:
        # Checked when the report is read, so that a hand-edited span is named here and not
        # met later as another model's raw validation dump.
        for start, end in value:
            if start < 0 or end < start:
                raise ValueError(f"span [{start}, {end}) is reversed or negative")
        return value

    @property
    def resolved(self) -> bool:
        """Whether the quote was found in its document."""
        return bool(self.spans)


class QueryInfo(_Model):
    """A query of the evaluation set, as the report saw it.

    Attributes:
        query_id: The query id.
        query: The question text.
        category: ``normal``, ``unanswerable`` or a user category.
        qtype: Question type, when labelled.
        gold: The gold evidence (empty for an unanswerable query).
    """

    query_id: str
    query: str
    category: str = "normal"
    qtype: str | None = None
    gold: list[GoldEvidence] = Field(default_factory=list)

    @property
    def answerable(self) -> bool:
        """Whether the query has gold evidence (unanswerable queries are not ranked)."""
        return bool(self.gold)


class UnlocatedHit(_Model):
    """A hit a stage gave as text that could not be located in its document (or the corpus).

    It is left out of the stage's ranking (the hits after it move up one rank) and listed here,
    so a stage whose text does not match the corpus is visible rather than silently scored.

    Attributes:
        query_id: The query.
        rank: Position of the hit in the list the retriever returned (1-based).
        doc: The document the hit named, when it named one.
        text: The beginning of the hit's text (at most 200 characters).
    """

    query_id: str
    rank: int = Field(ge=1)
    doc: str | None = None
    text: str


class StageReport(_Model):
    """Everything about one retrieval stage.

    Attributes:
        name: Unique stage name (the baseline is ``bm25`` unless the run named another).
        kind: Retriever kind: bm25, dense, hybrid, rerank, command, callable, predictions or a
            plugin's kind.
        baseline: True for the baseline stage (exactly one, the first).
        retriever: Retriever settings as run (model, parameters, fused stages...): the kind's
            settings model dumped to JSON, ``kind`` aside (schema 2.1: a typed record).
        chunker: Chunker settings, or ``None`` when the retriever brings its own spans (schema
            2.1: a ``ChunkerConfig``; an older partial mapping gets the defaults, and
            :attr:`chunker_record` is what the report recorded).
        encoder_max_tokens: The encoder's maximum input length, for dense stages.
        chunk_count: Number of chunks indexed, when known.
        indexed_documents: Number of documents with at least one chunk, when known.
        queries: One result per answerable query.
        aggregates: Metric name to mean and bootstrap range.
        comparisons: Differences from the baseline (empty for the baseline).
        timings: Seconds per phase (chunking, indexing, retrieval, scoring).
        error: Why the stage failed, when it did (then it has no results).
        unlocated: Hits given as text that could not be located (left out of the ranking);
            added in schema 1.1.
        judged: ``judged@k`` per cutoff: the share of the top-k hits that touch gold or carry
            an adjudicated grade (schema 1.3; empty in older reports).
        adjudicated: The stage's adjudicated aggregates and comparisons (schema 1.3).
        cost: Cost and latency of the stage (schema 1.3; ``None`` in older reports and for
            a stage that failed before it searched).
        hit_columns: In the file only (schema 2.0): every query's hits as columns; reading
            puts them into each query's ``hits`` and leaves this ``None``.
        score_columns: In the file only (schema 2.0): every query's scores as a table;
            reading puts them into each query's ``scores`` and leaves this ``None``.
    """

    name: str
    kind: str
    baseline: bool = False
    retriever: RetrieverRecord = Field(default_factory=RetrieverRecord)
    chunker: RecordedChunker | None = None
    encoder_max_tokens: int | None = None
    chunk_count: int | None = None
    indexed_documents: int | None = None
    queries: list[QueryResult] = Field(default_factory=list)
    aggregates: dict[str, MetricAggregate] = Field(default_factory=dict)
    comparisons: list[StageComparison] = Field(default_factory=list)
    timings: dict[str, float] = Field(default_factory=dict)
    error: str | None = None
    unlocated: list[UnlocatedHit] = Field(default_factory=list)
    judged: dict[str, float] = Field(default_factory=dict)
    adjudicated: AdjudicatedStage | None = None
    cost: StageCost | None = None
    hit_columns: HitColumns | None = None
    score_columns: ScoreColumns | None = None

    @model_validator(mode="before")
    @classmethod
    def _expand_columns(cls, data: Any) -> Any:
        # The columns of a 2.0 file become each query's hits and scores again, so a stage in
        # memory always holds them per query, whatever version it was read from.
        return expand_columns(data) if isinstance(data, dict) else data

    @property
    def chunker_record(self) -> dict[str, Any] | None:
        """The chunker as the report records it (what hashes over the stage's settings read)."""
        return chunker_record(self.chunker)

    def config_record(self) -> dict[str, Any]:
        """The stage's configuration as recorded: ``{"name", "retriever", "chunker"}``.

        The form a harness ``StageConfig`` dumps to (``retriever`` with its ``kind``; the
        items file's ``config``), built from the recorded settings so that its hash is the one
        the run wrote.
        """
        return {
            "name": self.name,
            "retriever": {"kind": self.kind, **self.retriever.as_dict()},
            "chunker": self.chunker_record,
        }


class EvalReport(_Model):
    """The evaluation report: run metadata, the queries, every stage, and notes.

    Attributes:
        schema_version: Format version, ``major.minor``.
        run: How the report was produced.
        queries: Every query of the set, answerable or not.
        stages: The stages; the first is the baseline: ``bm25``, or the stage the run's
            configuration names as its ``baseline``.
        notes: What a number in this report cannot say (read them).
        timings: Seconds per phase of the whole run.
        note_records: The same notes with their codes and levels (schema 1.2); given alone,
            they fill ``notes``; a report without them reads its notes as ``other``.
        adjudication: How the report was adjudicated, when it was (schema 1.3).
        ablation: Each component of a hybrid or rerank stage beside the whole, with the
            differences whole minus component (schema 1.4; empty when not asked for).
    """

    schema_version: str = SCHEMA_VERSION
    run: RunInfo
    queries: list[QueryInfo]
    stages: list[StageReport]
    notes: list[str] = Field(default_factory=list)
    timings: dict[str, float] = Field(default_factory=dict)
    note_records: list[ReportNote] = Field(default_factory=list)
    adjudication: AdjudicationInfo | None = None
    ablation: list[AblationRow] = Field(default_factory=list)

    @model_validator(mode="before")
    @classmethod
    def _older_span_gold(cls, data: Any) -> Any:
        # Before 2.3 the span metrics counted every occurrence of a repeated quote: a report
        # of then says so, so that its numbers are read (and re-scored) by their own rule.
        if not isinstance(data, dict) or not isinstance(data.get("run"), dict):
            return data
        version = data.get("schema_version")
        parts = version.split(".") if isinstance(version, str) else []
        if not (len(parts) == 2 and all(p.isdigit() for p in parts)):
            return data  # the version's own check names the problem
        run = data["run"]
        if (int(parts[0]), int(parts[1])) >= (2, 3) or "span_gold" in run:
            return data
        return {**data, "run": {**run, "span_gold": "every-occurrence"}}

    @model_validator(mode="before")
    @classmethod
    def _pair_notes(cls, data: Any) -> Any:
        # One list given, the other derived from it: texts from records, records from texts.
        if not isinstance(data, dict):
            return data
        records, texts = data.get("note_records"), data.get("notes")
        if records and texts is None:
            return {**data, "notes": [_note_text(r) for r in records]}
        if texts and not records:
            return {**data, "note_records": [{"code": "other", "text": t} for t in texts]}
        return data

    @model_validator(mode="after")
    def _check_consistency(self) -> EvalReport:
        problems = semantic_problems(self)
        if problems:
            raise ValueError("; ".join(problems))
        return self

    def stage(self, name: str) -> StageReport:
        """Return the stage called ``name``.

        Raises:
            ReportError: No stage has that name (the message lists the names there are).
        """
        for stage in self.stages:
            if stage.name == name:
                return stage
        known = ", ".join(s.name for s in self.stages)
        raise ReportError(f"no stage named {name!r} in the report (stages: {known})")

    @property
    def baseline(self) -> StageReport:
        """The baseline stage."""
        return self.stages[0]

    @property
    def answerable_count(self) -> int:
        """Number of queries with gold evidence."""
        return sum(1 for q in self.queries if q.answerable)

    @property
    def unanswerable_count(self) -> int:
        """Number of queries without gold evidence (excluded from ranking metrics)."""
        return sum(1 for q in self.queries if not q.answerable)


def _note_text(record: Any) -> Any:
    if isinstance(record, ReportNote):
        return record.text
    return record.get("text") if isinstance(record, dict) else record


# --- what makes a report agree with itself, checked whenever one is built or read ---------------

BASELINE_STAGE = "bm25"
"""The baseline's name when the run's configuration names none."""
# Means are recomputed with math.fsum; a stored mean written by another summation order may
# differ in the last bits, never by more than this.
_TOLERANCE = 1e-9


def hit_key(doc: str, start: int, end: int) -> str:
    """A span's key as messages (and chunk-level exports) write it: ``doc#start-end``."""
    return f"{doc}#{start}-{end}"


def _id_problem(doc: str, seen: dict[str, str | None]) -> str | None:
    if doc not in seen:
        try:
            validate_doc_id(doc)
            seen[doc] = None
        except JudgmentError as error:
            seen[doc] = error.message
    return seen[doc]


def document_problems(report: EvalReport) -> list[str]:
    """The first hit or gold quote whose document id or span no corpus could hold.

    A document id must be a plain relative path inside the corpus (``../../etc/passwd`` and
    ``/etc/passwd`` are refused); a hit's span must not end before it starts.

    Returns:
        One line naming the stage, the query and the span's key, or nothing.
    """
    seen: dict[str, str | None] = {}
    for query in report.queries:
        for number, gold in enumerate(query.gold, start=1):
            problem = _id_problem(gold.doc, seen)
            if problem is not None:
                return [f"query {query.query_id!r}: gold quote {number} ({gold.doc!r}): {problem}"]
    for stage in report.stages:
        for result in stage.queries:
            hits = hit_fields(result.hits)  # plain lists: no hit object made
            spans = zip(hits.docs, hits.starts, hits.ends, strict=True)
            for rank, (doc, start, end) in enumerate(spans, start=1):
                problem = _id_problem(doc, seen)
                if problem is None and end < start:
                    problem = "the span ends before it starts"
                if problem is not None:
                    key = hit_key(doc, start, end)
                    return [
                        f"stage {stage.name!r}, query {result.query_id!r}, hit {rank} "
                        f"{key!r}: {problem}"
                    ]
    return []


def semantic_problems(report: EvalReport) -> list[str]:
    """Every way the report disagrees with itself (empty when it agrees).

    Document ids and spans come first after the structure: a document no corpus could hold
    (``../../etc/passwd``) is named before anything reads it.
    """
    problems = _structure_problems(report) or document_problems(report)
    if problems:
        return problems
    for stage in report.stages:
        found = _stage_problems(stage)
        if found:
            return found
    return _comparison_problems(report)


def _structure_problems(report: EvalReport) -> list[str]:
    problems: list[str] = []
    if not report.stages:
        return ["a report needs at least the baseline stage"]
    names = [s.name for s in report.stages]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        problems.append(f"stage names must be unique: {', '.join(duplicates)} repeated")
    if [r.text for r in report.note_records] != list(report.notes):
        problems.append("note_records must hold the same texts as notes, in the same order")
    first = report.stages[0]
    named = report.run.config.get("baseline", BASELINE_STAGE)
    expected = named if isinstance(named, str) else BASELINE_STAGE
    if first.name != expected or not first.baseline:
        problems.append(f"the first stage must be the baseline named {expected!r}")
    baselines = [s.name for s in report.stages if s.baseline]
    if len(baselines) != 1:
        problems.append(f"exactly one baseline stage expected, found {len(baselines)}")
    query_ids = [q.query_id for q in report.queries]
    if len(set(query_ids)) != len(query_ids):
        problems.append("query ids must be unique")
    answerable = {q.query_id: len(q.gold) for q in report.queries if q.answerable}
    for stage in report.stages:
        for result in stage.queries:
            gold_count = answerable.get(result.query_id)
            if gold_count is None:
                problems.append(
                    f"stage {stage.name!r}: query {result.query_id!r} is not an answerable "
                    "query of the report"
                )
                break
            if any(t.gold_index >= gold_count for t in result.evidence):
                problems.append(
                    f"stage {stage.name!r}: query {result.query_id!r} traces a gold quote "
                    "it does not have"
                )
                break
            bad = [m for m, v in result.scores.items() if not math.isfinite(v)]
            if bad:
                problems.append(
                    f"stage {stage.name!r}: query {result.query_id!r} has a non-finite {bad[0]}"
                )
                break
    return problems


def _bounded(metric: str) -> bool:
    """Every metric groundkit defines lies in [0, 1]; an unknown name is left alone."""
    try:
        parse_metric(metric)
    except JudgmentError:
        return False
    return True


def _stage_problems(stage: StageReport) -> list[str]:
    seen: set[str] = set()
    bounded: dict[str, bool] = {}  # each metric name parsed once, not once per query
    for result in stage.queries:
        if result.query_id in seen:
            return [f"stage {stage.name!r}: query {result.query_id!r} is listed twice"]
        seen.add(result.query_id)
        for metric, value in result.scores.items():
            if metric not in bounded:
                bounded[metric] = _bounded(metric)
            if bounded[metric] and not (-_TOLERANCE <= value <= 1.0 + _TOLERANCE):
                return [
                    f"stage {stage.name!r}: query {result.query_id!r} has {metric} = {value!r}, "
                    "outside [0, 1]"
                ]
    for metric, aggregate in stage.aggregates.items():
        values = [r.scores[metric] for r in stage.queries if metric in r.scores]
        if not stage.queries or len(values) != len(stage.queries):
            continue
        mean = math.fsum(values) / len(values)
        if aggregate.query_count != len(values) or abs(aggregate.mean - mean) > _TOLERANCE:
            return [
                f"stage {stage.name!r}: the aggregate {metric} ({aggregate.mean!r} over "
                f"{aggregate.query_count} queries) is not the mean of its per-query scores "
                f"({mean!r} over {len(values)})"
            ]
        if not (aggregate.low - _TOLERANCE <= aggregate.mean <= aggregate.high + _TOLERANCE):
            return [f"stage {stage.name!r}: the interval of {metric} does not hold its mean"]
    return []


def _column(stage: StageReport, metric: str) -> dict[str, float] | None:
    column = {r.query_id: r.scores[metric] for r in stage.queries if metric in r.scores}
    return column if column and len(column) == len(stage.queries) else None


def _comparison_problems(report: EvalReport) -> list[str]:
    alpha = 1.0 - report.run.bootstrap.confidence_level
    baseline = report.stages[0]
    for stage in report.stages[1:]:
        for c in stage.comparisons:
            where = f"stage {stage.name!r}: the comparison on {c.metric}"
            base, cand = _column(baseline, c.metric), _column(stage, c.metric)
            if base is not None and cand is not None and base.keys() == cand.keys():
                effect = math.fsum(cand[q] - base[q] for q in base) / len(base)
                if abs(effect - c.effect) > _TOLERANCE:
                    return [
                        f"{where} says the difference is {c.effect!r}; the per-query scores "
                        f"give {effect!r}"
                    ]
            if not (c.low - _TOLERANCE <= c.effect <= c.high + _TOLERANCE):
                return [f"{where}: its interval does not hold its difference"]
            claimed = c.decision if c.decision is not None else c.verdict
            if c.decision is not None and c.verdict != (
                c.decision if c.decision in ("better", "worse") else "inconclusive"
            ):
                return [f"{where}: verdict {c.verdict!r} contradicts decision {c.decision!r}"]
            adjusted = c.p_adjusted if c.p_adjusted is not None else c.p_holm
            if claimed == "better" and not (c.low > 0.0 and adjusted < alpha):
                return [f"{where} says 'better' without an interval above zero and p < {alpha:g}"]
            if claimed == "worse" and not (c.high < 0.0 and adjusted < alpha):
                return [f"{where} says 'worse' without an interval below zero and p < {alpha:g}"]
    return []
