"""Run configuration: the stages to evaluate and how, as pydantic models.

Every model is frozen and refuses unknown keys, so a typo in a config file is an error rather
than a silently ignored setting. A stage's ``retriever`` is validated with the settings model
its ``kind`` registered (:mod:`groundkit.harness.retrievers._registry`), so a plugin's
settings are checked like a built-in's. Reading a TOML file:
:mod:`groundkit.harness.run._config_load`.
"""

from __future__ import annotations

import re
import weakref
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializeAsAny,
    SerializerFunctionWrapHandler,
    ValidatorFunctionWrapHandler,
    field_validator,
    model_serializer,
    model_validator,
)

from groundkit.harness._dump import without_old_defaults
from groundkit.harness._errors import HarnessError
from groundkit.harness._limits import (
    DEFAULT_CHUNK_OVERLAP,
    DEFAULT_CHUNK_SIZE,
    DEFAULT_DEPTH,
    DEFAULT_MIN_OVERLAP,
    MAX_DEPTH,
    MAX_RESAMPLES,
    default_headline_metrics,
)
from groundkit.harness.frameworks._settings import (
    HaystackRetriever,
    LangChainRetriever,
    LlamaIndexRetriever,
)
from groundkit.harness.retrievers._builtin import (
    DEFAULT_MODEL,
    Bm25Retriever,
    CallableRetriever,
    CommandRetriever,
    DenseRetriever,
    HybridRetriever,
    PredictionsRetriever,
    RerankRetriever,
)
from groundkit.harness.retrievers._registry import RetrieverSettings, retriever_kind
from groundkit.harness.run._tokenizer import (
    MODEL_TOKENIZER,
    check_run_tokenizer,
    model_tokenizer_folder,
)
from groundkit.judgments import (
    CharsChunker,
    ChunkerConfig,
    DocumentChunker,
    JudgmentError,
    canonical_json,
    config_hash,
    parse_chunker_spec,
    parse_metric,
)
from groundkit.judgments.report import BootstrapSettings, RealNumber, StagePrice, WholeNumber

__all__ = [
    "BASELINE_STAGE",
    "DEFAULT_CUTOFFS",
    "DEFAULT_MODEL",
    "MAX_RESAMPLES",
    "Bm25Retriever",
    "CallableRetriever",
    "CommandRetriever",
    "DenseRetriever",
    "EvalSettings",
    "HaystackRetriever",
    "HybridRetriever",
    "LangChainRetriever",
    "LlamaIndexRetriever",
    "PredictionsRetriever",
    "RerankRetriever",
    "RetrieverConfig",
    "RunConfig",
    "StageConfig",
    "added_baseline",
    "canonical_json",
    "check_stage_name",
    "default_chunker",
    "default_headline_metrics",
    "stage_config_hash",
]

BASELINE_STAGE = "bm25"
"""Name of the default baseline stage (a BM25 stage, added when the config defines none)."""

DEFAULT_CUTOFFS: tuple[int, ...] = (1, 3, 5, 10, 20, 100)
DEFAULT_BUDGETS: tuple[int, ...] = (1000, 2000, 4000)

RetrieverConfig = RetrieverSettings
"""A retriever's settings: the registered settings model of its ``kind``."""

_FROZEN = ConfigDict(frozen=True, extra="forbid")
_STAGE_NAME = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,63}$")


def check_stage_name(name: str) -> str:
    """Return ``name`` if it is a valid stage name (the one definition of the rule).

    Raises:
        ValueError: It is not 1-64 of a-z, 0-9, ``_``, ``.``, ``-`` starting with a letter or
            digit.
    """
    if not isinstance(name, str) or _STAGE_NAME.match(name) is None:
        raise ValueError(
            f"stage name {name!r} must be 1-64 of a-z, 0-9, '_', '.', '-', "
            "starting with a letter or digit"
        )
    return name


def default_chunker(level: str) -> ChunkerConfig:
    """The run's chunker when a config names none: whole documents at document level."""
    if level == "document":
        return DocumentChunker()
    return CharsChunker(size=DEFAULT_CHUNK_SIZE, overlap=DEFAULT_CHUNK_OVERLAP)


def _chunker_from_text(value: Any) -> Any:
    # A chunker may be written in its text form ("chars:800:100"), as on the command line.
    if isinstance(value, str):
        try:
            return parse_chunker_spec(value)
        except JudgmentError as error:
            raise ValueError(error.message) from None
    return value


def _retriever_by_kind(value: Any) -> RetrieverSettings:
    """Validate a ``retriever`` table with the settings model its ``kind`` registered."""
    if isinstance(value, RetrieverSettings):
        model = retriever_kind(value.kind).settings
        if isinstance(value, model):
            return value
        value = value.model_dump()
    if not isinstance(value, dict):
        raise ValueError(f"a retriever is a table with a 'kind', got {type(value).__name__}")
    kind = value.get("kind")
    if not isinstance(kind, str):
        raise ValueError("a retriever needs a 'kind'")
    try:
        model = retriever_kind(kind).settings
    except HarnessError as error:
        raise ValueError(error.message) from None
    return model.model_validate(value)


class StageConfig(BaseModel):
    """One retrieval stage.

    Attributes:
        name: Unique name: lower-case letters, digits, ``_``, ``.``, ``-`` (at most 64).
        retriever: The retriever and its settings.
        chunker: How documents are cut, for retrievers that index chunks (bm25, dense);
            ``None`` takes the run's chunker. Retrievers that return their own spans
            (hybrid, rerank, command, callable, predictions) take no chunker. A chunker may be
            given in its text form (``"chars:800:100"``).
        price: What the stage costs in US dollars (per query, per model call, per million
            tokens), when the user says so: the report's ``cost.usd`` comes only from it
            (``None``: the stage is unpriced, and its ``usd`` is null).
    """

    model_config = _FROZEN
    name: str
    retriever: SerializeAsAny[RetrieverSettings]
    chunker: ChunkerConfig | None = None
    price: StagePrice | None = None

    @model_serializer(mode="wrap")
    def _unpriced_unchanged(self, handler: SerializerFunctionWrapHandler) -> Any:
        # An unpriced stage dumps as it did before prices existed.
        return without_old_defaults(handler(self), price=None)

    @field_validator("name")
    @classmethod
    def _name_shape(cls, value: str) -> str:
        return check_stage_name(value)

    @field_validator("retriever", mode="wrap")
    @classmethod
    def _registered_kind(cls, value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
        return _retriever_by_kind(value)

    @field_validator("chunker", mode="before")
    @classmethod
    def _chunker_text(cls, value: Any) -> Any:
        return _chunker_from_text(value)

    @model_validator(mode="after")
    def _chunker_fits(self) -> StageConfig:
        if self.chunker is not None and not self.indexes_chunks:
            raise ValueError(
                f"stage {self.name!r}: a {self.retriever.kind} retriever brings its own spans; "
                "remove 'chunker'"
            )
        if self.name == BASELINE_STAGE and self.retriever.kind != "bm25":
            raise ValueError(
                f"the stage name {BASELINE_STAGE!r} is reserved for the BM25 baseline "
                f"(this one is {self.retriever.kind}); rename it"
            )
        return self

    @property
    def indexes_chunks(self) -> bool:
        """Whether the harness chunks the corpus for this stage (its kind is ``chunked``)."""
        return retriever_kind(self.retriever.kind).chunked


# The BM25 baselines the default added (by identity: an equal stage a config defined is not).
_ADDED: weakref.WeakValueDictionary[int, StageConfig] = weakref.WeakValueDictionary()


def added_baseline(stage: StageConfig) -> bool:
    """Whether ``stage`` is the BM25 baseline that validation added, not a stage the user gave."""
    return _ADDED.get(id(stage)) is stage


_DOCUMENT_KINDS = frozenset({"recall", "hit", "precision", "ndcg", "mrr", "map", "rprec"})


class EvalSettings(BaseModel):
    """How to evaluate: the stages and every scoring setting (everything but the input files).

    The baseline is the stage every other stage is compared with; it always runs first. By
    default it is the BM25 stage ``bm25``: added with the run's chunker when the config does
    not define it, and moved first when it does. ``baseline`` names another stage instead:
    that stage of ``stages`` is moved first and no BM25 stage is added. After validation every
    bm25/dense stage has an explicit chunker, and ``chunker`` and ``headline_metrics`` hold
    the values in force (defaults filled in).

    Attributes:
        stages: The stages (baseline first).
        baseline: Name of the baseline stage (default ``bm25``: the BM25 baseline, added when
            not defined). Any other name must be a stage of ``stages`` that reads no other
            stage (a hybrid or rerank stage cannot run first); it is moved first and no BM25
            stage is added.
        level: ``chunk`` scores quote-anchored spans; ``document`` collapses hits to documents
            and scores with trec_eval semantics.
        depth: Hits retrieved and recorded per query and stage.
        cutoffs: Rank cutoffs ``k`` of the ``@k`` metrics.
        budgets: Context budgets in characters (``recall@Nc``, ``ndcg@Nc``; chunk level).
        min_overlap_fraction: Share of a quote's span a hit must cover to count.
        headline_metrics: Metrics shown first and compared with the baseline (default:
            recall@10, ndcg@10, mrr, recall@2000c; at document level ndcg@10, recall@100, mrr).
        chunker: Default chunker (default: 1000-character windows overlapping by 200 at chunk
            level, whole documents at document level).
        bootstrap: Bootstrap settings of intervals and comparisons.
        embedding_cache_dir: Where dense stages cache embeddings (default: the user cache,
            ``$XDG_CACHE_HOME/groundkit/embeddings`` or ``~/.cache/groundkit/embeddings``).
        ablation: Score each component of the hybrid and rerank stages beside the whole
            (replayed from the run's ranked lists: nothing is searched again). ``None`` (the
            default): on whenever the run has such a stage; ``True``: on, with a note when
            there is nothing to ablate; ``False``: off; a list: only the stages named.
        executor: Where dense stages embed their chunks: ``local`` (this process) or ``ray``
            (Ray actors; the ``ray`` extra). The results are the same.
        ray_address: The Ray cluster the ``ray`` executor joins (``None``: ``RAY_ADDRESS``
            when set, else a Ray instance already started in this process, else a local one).
        tokenizer: Whose tokens the ``tokens`` chunker, the ``max_tokens`` limits of
            ``sentences`` and ``paragraphs`` and the token budgets of the metrics
            (``recall@Nt``, ``ndcg@Nt``) count: ``words`` (runs of non-whitespace
            characters, the default), ``cl100k_base`` or ``o200k_base`` (tiktoken), a folder
            holding a Hugging Face ``tokenizer.json``, or ``model`` (the dense stages' model's
            tokenizer). All but ``words`` need the ``tokens`` extra; nothing is downloaded.
    """

    model_config = _FROZEN
    stages: list[StageConfig] = Field(default_factory=list)
    baseline: str = BASELINE_STAGE
    level: Literal["chunk", "document"] = "chunk"
    depth: WholeNumber = Field(default=DEFAULT_DEPTH, gt=0, le=MAX_DEPTH)
    cutoffs: list[WholeNumber] = Field(default_factory=lambda: list(DEFAULT_CUTOFFS))
    budgets: list[WholeNumber] = Field(default_factory=lambda: list(DEFAULT_BUDGETS))
    min_overlap_fraction: RealNumber = Field(default=DEFAULT_MIN_OVERLAP, ge=0.0, le=1.0)
    headline_metrics: list[str] = Field(default_factory=list)
    chunker: ChunkerConfig | None = None
    bootstrap: BootstrapSettings = Field(default_factory=BootstrapSettings)
    embedding_cache_dir: Path | None = None
    ablation: bool | list[str] | None = None
    executor: Literal["local", "ray"] = "local"
    ray_address: str | None = Field(default=None, min_length=1)
    tokenizer: str = "words"

    @model_serializer(mode="wrap")
    def _words_unchanged(self, handler: SerializerFunctionWrapHandler) -> Any:
        # The default tokenizer and baseline dump as settings did before either existed.
        return without_old_defaults(handler(self), tokenizer="words", baseline=BASELINE_STAGE)

    @field_validator("baseline")
    @classmethod
    def _baseline_name(cls, value: str) -> str:
        return check_stage_name(value)

    @field_validator("tokenizer")
    @classmethod
    def _known_tokenizer(cls, value: str) -> str:
        return check_run_tokenizer(value)

    @field_validator("chunker", mode="before")
    @classmethod
    def _chunker_text(cls, value: Any) -> Any:
        return _chunker_from_text(value)

    @field_validator("ablation", mode="before")
    @classmethod
    def _ablation_shape(cls, value: Any) -> Any:
        # Checked before pydantic's lax union, which would read "yes" as true and give two
        # messages for one mistake; a single stage name is a list of one.
        if value is None or isinstance(value, bool):
            return value
        if isinstance(value, str):
            return [value]
        if isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
            return list(dict.fromkeys(value))
        raise ValueError(
            f"must be true, false or a list of stage names, got {type(value).__name__} {value!r}"[
                :200
            ]
        )

    @field_validator("bootstrap")
    @classmethod
    def _bounded_resamples(cls, value: BootstrapSettings) -> BootstrapSettings:
        if value.resamples > MAX_RESAMPLES:
            raise ValueError(f"resamples must be at most {MAX_RESAMPLES:,}, got {value.resamples}")
        return value

    @field_validator("cutoffs", "budgets")
    @classmethod
    def _positive_sorted(cls, value: list[int]) -> list[int]:
        if any(v <= 0 for v in value):
            raise ValueError("values must be positive")
        return sorted(set(value))

    @model_validator(mode="before")
    @classmethod
    def _fill_defaults(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        level = data.get("level", "chunk")
        if data.get("headline_metrics") == []:
            # Left out, the defaults apply; given empty, nothing would be compared.
            raise ValueError(
                "headline_metrics: give at least one metric (leave the key out for the defaults)"
            )
        filled = dict(data)
        if filled.get("chunker") is None:
            filled["chunker"] = default_chunker(level)
        if not filled.get("headline_metrics") and level in ("chunk", "document"):
            filled["headline_metrics"] = default_headline_metrics(level)
        return filled

    @model_validator(mode="after")
    def _arrange_stages(self) -> EvalSettings:
        names = [stage.name for stage in self.stages]
        repeated = sorted({n for n in names if names.count(n) > 1})
        if repeated:
            raise ValueError(f"stage names must be unique: {', '.join(repeated)} repeated")
        chunker = self.chunker
        assert chunker is not None  # filled by _fill_defaults
        stages = [
            stage.model_copy(update={"chunker": chunker})
            if stage.indexes_chunks and stage.chunker is None
            else stage
            for stage in self.stages
        ]
        ordered = [self._baseline_stage(stages, chunker)]
        ordered += [s for s in stages if s.name != self.baseline]
        seen: set[str] = set()
        for stage in ordered:
            unknown = [n for n in stage.retriever.upstream_stages() if n not in seen]
            if unknown:
                raise ValueError(
                    f"stage {stage.name!r} reads {unknown[0]!r}, which is not a stage "
                    "defined before it"
                )
            seen.add(stage.name)
        for metric in self.headline_metrics:
            self._check_metric(metric)
        primary = self.bootstrap.primary_metric
        if primary is not None and primary not in self.headline_metrics:
            raise ValueError(
                f"bootstrap.primary_metric {primary!r} must be one of the headline metrics "
                f"({', '.join(self.headline_metrics)})"
            )
        object.__setattr__(self, "stages", ordered)
        return self

    @model_validator(mode="after")
    def _model_tokenizer(self) -> EvalSettings:
        # "model" names the dense stages' model's tokenizer: checked once the stages are known.
        if self.tokenizer == MODEL_TOKENIZER:
            try:
                model_tokenizer_folder(self)
            except HarnessError as error:
                raise ValueError(f"tokenizer: {error.message}") from None
        return self

    @model_validator(mode="after")
    def _ablated_stages(self) -> EvalSettings:
        if not isinstance(self.ablation, list):
            return self
        known = {stage.name: stage for stage in self.stages}
        for name in self.ablation:
            stage = known.get(name)
            if stage is None:
                raise ValueError(f"ablation: {name!r} is not a stage (stages: {', '.join(known)})")
            if not stage.retriever.ablation_parts():
                raise ValueError(
                    f"ablation: stage {name!r} ({stage.retriever.kind}) has no components to "
                    "ablate; ablation applies to stages that fuse or re-order earlier stages "
                    "(hybrid, rerank)"
                )
        return self

    def _baseline_stage(self, stages: list[StageConfig], chunker: ChunkerConfig) -> StageConfig:
        """The stage that goes first: ``baseline`` of ``stages`` (the BM25 default is added)."""
        found = next((s for s in stages if s.name == self.baseline), None)
        if self.baseline == BASELINE_STAGE:
            if found is None:
                found = StageConfig(name=BASELINE_STAGE, retriever=Bm25Retriever(), chunker=chunker)
                _ADDED[id(found)] = found
            return found
        if found is None:
            known = ", ".join(s.name for s in stages)
            raise ValueError(
                f"baseline: {self.baseline!r} is not a stage "
                + (f"(stages: {known})" if known else "(no stage is defined)")
            )
        reads = found.retriever.upstream_stages()
        if reads:
            raise ValueError(
                f"baseline: stage {self.baseline!r} reads {' and '.join(map(repr, reads))}, so "
                "it cannot run first; name a stage that reads no other stage"
            )
        return found

    def _check_metric(self, name: str) -> None:
        try:
            spec = parse_metric(name)
        except JudgmentError as error:
            raise ValueError(f"headline_metrics: {error.message}") from None
        if spec.needs_chunks:
            raise ValueError(
                f"headline_metrics: {name!r} describes the chunker, not the ranking, and is not "
                "compared; chunk-level reports record it for every stage with a chunk list"
            )
        if self.level == "document" and (spec.kind not in _DOCUMENT_KINDS or spec.budgeted):
            raise ValueError(
                f"headline_metrics: {name!r} has no document-level meaning (use recall, hit, "
                "precision, ndcg with a rank cutoff, mrr, map or rprec)"
            )

    def stage(self, name: str) -> StageConfig:
        """Return the stage called ``name``.

        Raises:
            HarnessError: No stage has that name.
        """
        for stage in self.stages:
            if stage.name == name:
                return stage
        known = ", ".join(s.name for s in self.stages)
        raise HarnessError(f"no stage named {name!r} (stages: {known})")


class RunConfig(EvalSettings):
    """An evaluation run from files: :class:`EvalSettings` plus the corpus and judgments.

    Attributes:
        corpus: Corpus folder or ``.jsonl`` file.
        judgments: Judgments JSON Lines file.
    """

    corpus: Path
    judgments: Path

    @property
    def settings(self) -> EvalSettings:
        """The settings without the input files (already validated: not validated again)."""
        return EvalSettings.model_construct(
            **{name: getattr(self, name) for name in EvalSettings.model_fields}
        )


def stage_config_hash(stage: StageConfig) -> str:
    """SHA-256 (hex) of the stage's canonical JSON (``model_dump(mode="json")``).

    Two stages with equal settings (after defaults are filled in) have equal hashes.
    """
    return config_hash(stage.model_dump(mode="json"))
