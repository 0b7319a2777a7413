"""A sweep file: a base run config plus a grid or a list of named arms, expanded to run configs.

The ``[sweep]`` table is checked by the models below (frozen, unknown keys refused); every arm
is then an ordinary run configuration validated once by :func:`run_config_from_dict`, the one
path every run takes. The baseline is the base config's ``bm25`` stage, stage zero of every
arm; an arm adds its own stages, the last one (named after the arm) being its candidate.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from groundkit.harness.retrievers._builtin import DEFAULT_MODEL
from groundkit.harness.run._config import BASELINE_STAGE, RunConfig, StageConfig, check_stage_name
from groundkit.harness.run._config_load import (
    ConfigError,
    ConfigProblem,
    _problems,
    read_config_file,
    run_config_from_dict,
)
from groundkit.judgments import (
    ChunkerConfig,
    JudgmentError,
    canonical_json,
    chunker_spec,
    config_hash,
    parse_chunker_config,
    parse_chunker_spec,
)
from groundkit.judgments.report import WholeNumber

__all__ = ["SweepArm", "SweepPlan", "SweepSettings", "expand_sweep", "load_sweep"]

_FROZEN = ConfigDict(frozen=True, extra="forbid")
Pipeline = Literal["bm25", "dense", "hybrid"]
FrontAxis = Literal["metric", "context_chars", "latency_p95"]
FRONT_AXES: tuple[FrontAxis, ...] = ("metric", "context_chars", "latency_p95")
_SUB_STAGES = ("sparse", "dense", "fused")
_DEFAULT_RERANK: dict[str, Any] = {"model": DEFAULT_MODEL, "scorer": "bi-encoder", "top": 50}


def _listed(value: Any) -> Any:
    # A grid axis may be written as one value: `retriever = "hybrid"`.
    return value if isinstance(value, list) or value is None else [value]


def _chunker(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return parse_chunker_spec(value)
        except JudgmentError as error:
            raise ValueError(error.message) from None
    return value


class SweepGrid(BaseModel):
    """Axes of a grid sweep: every combination is an arm (``fusion_k`` multiplies hybrids only).

    Attributes:
        chunker: Chunkers, in text form (``"chars:800:100"``) or as tables.
        chunker_kind: With ``chunk_size``: ``chars`` and/or ``tokens`` windows.
        chunk_size: Window sizes (instead of ``chunker``).
        chunk_overlap: Window overlaps (with ``chunk_size``).
        retriever: ``bm25``, ``dense`` (cosine over embeddings) and/or ``hybrid`` (both fused).
        k: Hits retrieved per query (the run's ``depth``).
        fusion_k: Reciprocal-rank-fusion constants of hybrid arms.
        rerank: ``false`` (none), ``true`` (the packaged model's bi-encoder over the top 50),
            or rerank settings (``model``, ``scorer``, ``top``, ``target``...).
    """

    model_config = _FROZEN
    chunker: list[ChunkerConfig] | None = None
    chunker_kind: list[Literal["chars", "tokens"]] = Field(default_factory=lambda: ["chars"])  # type: ignore[arg-type]
    chunk_size: list[int] | None = None
    chunk_overlap: list[int] = Field(default_factory=lambda: [0])
    retriever: list[Pipeline] = Field(default_factory=lambda: ["bm25"], min_length=1)  # type: ignore[arg-type]
    k: list[int] | None = None
    fusion_k: list[int] | None = None
    rerank: list[bool | dict[str, Any]] = Field(
        default_factory=lambda: [False],  # type: ignore[arg-type]
        min_length=1,
    )

    @field_validator("*", mode="before")
    @classmethod
    def _one_is_a_list(cls, value: Any) -> Any:
        return _listed(value)

    @field_validator("chunker", mode="before")
    @classmethod
    def _chunker_text(cls, value: Any) -> Any:
        return None if value is None else [_chunker(v) for v in value]

    @field_validator("chunk_size", "k", "fusion_k")
    @classmethod
    def _positive(cls, value: list[int] | None) -> list[int] | None:
        if value is not None and (not value or any(v <= 0 for v in value)):
            raise ValueError("values must be positive")
        return value

    @model_validator(mode="after")
    def _one_chunker_axis(self) -> SweepGrid:
        if self.chunker is not None and self.chunk_size is not None:
            raise ValueError("give chunker or chunk_size (with chunk_overlap), not both")
        self.chunkers()  # every size and overlap make a valid chunker
        return self

    def chunkers(self) -> list[ChunkerConfig | None]:
        """The chunker axis (``[None]``: the base config's chunker)."""
        if self.chunker is not None:
            return list(self.chunker)
        if self.chunk_size is None:
            return [None]
        out: list[ChunkerConfig | None] = []
        for kind, size, overlap in itertools.product(
            self.chunker_kind, self.chunk_size, self.chunk_overlap
        ):
            try:
                out.append(parse_chunker_config({"kind": kind, "size": size, "overlap": overlap}))
            except JudgmentError as error:
                raise ValueError(
                    f"chunk_size {size}, chunk_overlap {overlap}: {error.message}"
                ) from None
        return out


class SweepArmSpec(BaseModel):
    """One named arm: the grid's axes as single values, or its own ``stages``.

    Attributes:
        name: The arm's name (a stage name: its candidate stage is called so).
        chunker: The arm's chunker (default: the base config's).
        retriever: ``bm25``, ``dense`` or ``hybrid``.
        k: Hits retrieved per query.
        fusion_k: The fusion constant of a hybrid arm.
        rerank: As in the grid.
        stages: Stage tables added after the baseline, instead of the axes (the last one is
            the candidate; it is renamed after the arm).
    """

    model_config = _FROZEN
    name: str
    chunker: ChunkerConfig | None = None
    retriever: Pipeline = "bm25"
    k: WholeNumber | None = Field(default=None, gt=0)
    fusion_k: WholeNumber | None = Field(default=None, gt=0)
    rerank: bool | dict[str, Any] = False
    stages: list[dict[str, Any]] | None = Field(default=None, min_length=1)

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        check_stage_name(value)
        if value == BASELINE_STAGE or value in _SUB_STAGES or len(value) > 56:
            raise ValueError(
                f"arm name {value!r} must be at most 56 characters and not one of "
                f"{', '.join((BASELINE_STAGE, *_SUB_STAGES))}"
            )
        return value

    @field_validator("chunker", mode="before")
    @classmethod
    def _chunker_text(cls, value: Any) -> Any:
        return _chunker(value)

    @model_validator(mode="after")
    def _stages_alone(self) -> SweepArmSpec:
        if self.stages is not None:
            given = [n for n in ("chunker", "fusion_k", "rerank") if getattr(self, n)]
            if given or self.retriever != "bm25":
                raise ValueError("an arm with stages takes no chunker, retriever, fusion_k, rerank")
        return self


class SweepSettings(BaseModel):
    """The ``[sweep]`` table.

    Attributes:
        grid: A grid of arms.
        arms: Named arms (instead of a grid).
        metric: The headline metric of the Pareto front (default: the primary metric, else the
            first headline metric).
        context_k: Hits whose characters count as the context an arm makes a reader read.
        front: The axes of the Pareto front: ``metric`` (higher is better), ``context_chars``
            and ``latency_p95`` (lower is better); default all three. Dropping
            ``latency_p95`` makes a front of quality against context alone (measured
            latencies are noisy, and noise alone keeps points on a front).
        bm25: BM25 settings of the arms' BM25 stages.
        dense: Dense settings of the arms' dense stages (model, batch size...).
        executor: Where the arms run: ``local`` (one after another in this process, sharing
            chunks and indexes) or ``ray`` (one Ray task per arm, sharing the embedding
            cache; the ``ray`` extra). The results are the same.
        ray_address: The Ray cluster of the ``ray`` executor (``None``: ``RAY_ADDRESS``
            when set, else a Ray instance already started in this process, else a local one).
    """

    model_config = _FROZEN
    grid: SweepGrid | None = None
    arms: list[SweepArmSpec] | None = Field(default=None, min_length=1)
    metric: str | None = None
    context_k: WholeNumber = Field(default=10, gt=0)
    front: list[FrontAxis] = Field(
        default_factory=lambda: list(FRONT_AXES),
        min_length=1,
    )
    bm25: dict[str, Any] = Field(default_factory=dict)
    dense: dict[str, Any] = Field(default_factory=dict)
    executor: Literal["local", "ray"] = "local"
    ray_address: str | None = Field(default=None, min_length=1)

    @model_validator(mode="after")
    def _grid_or_arms(self) -> SweepSettings:
        if (self.grid is None) == (self.arms is None):
            raise ValueError("a sweep needs exactly one of [sweep.grid] or [[sweep.arms]]")
        if self.arms is not None:
            names = [arm.name for arm in self.arms]
            repeated = sorted({n for n in names if names.count(n) > 1})
            if repeated:
                raise ValueError(f"arm names must be unique: {', '.join(repeated)} repeated")
        return self


@dataclass(frozen=True)
class SweepArm:
    """One arm: a validated run configuration and what the sweep reads of it.

    Attributes:
        name: The arm's name (also its candidate stage's).
        config: The arm's run configuration (the baseline first).
        pipeline: The stages the candidate is built from (its own cost), candidate last.
        config_hash: SHA-256 of the configuration's canonical JSON (what resume compares).
        same_as_baseline: The candidate is configured exactly as the baseline.
    """

    name: str
    config: RunConfig
    pipeline: tuple[str, ...]
    config_hash: str
    same_as_baseline: bool


@dataclass(frozen=True)
class SweepPlan:
    """The arms of a sweep, in file order, and how they are judged."""

    arms: tuple[SweepArm, ...]
    metric: str
    context_k: int
    front: tuple[FrontAxis, ...] = FRONT_AXES
    source: Path | None = None
    executor: Literal["local", "ray"] = "local"
    ray_address: str | None = None

    @property
    def base(self) -> RunConfig:
        """The configuration every arm shares but its stages (the first arm's)."""
        return self.arms[0].config


def _axes_stages(
    name: str,
    chunker: ChunkerConfig | None,
    pipeline: Pipeline,
    fusion_k: int | None,
    rerank: bool | dict[str, Any],
    settings: SweepSettings,
) -> list[dict[str, Any]]:
    chunked = {} if chunker is None else {"chunker": chunker.model_dump()}
    bm25 = {"kind": "bm25", **settings.bm25}
    dense = {"kind": "dense", **settings.dense}
    final = name if rerank is False else "fused"
    if pipeline == "hybrid":
        fusion: dict[str, Any] = {"kind": "hybrid", "stages": ["sparse", "dense"]}
        if fusion_k is not None:
            fusion["k"] = fusion_k
        stages = [
            {"name": "sparse", "retriever": bm25, **chunked},
            {"name": "dense", "retriever": dense, **chunked},
            {"name": final, "retriever": fusion},
        ]
    else:
        stages = [{"name": final, "retriever": bm25 if pipeline == "bm25" else dense, **chunked}]
    if rerank is not False:
        table = _DEFAULT_RERANK if rerank is True else rerank
        stages.append({"name": name, "retriever": {"kind": "rerank", **table, "stage": final}})
    return stages


def _grid_specs(grid: SweepGrid) -> list[SweepArmSpec]:
    """Every combination of the grid, in file order.

    An arm's name says its chunker (``base`` for the base config's), retriever, then ``k``,
    fusion constant and rerank when the grid sets them: it does not depend on which axes have
    several values, so adding a value to an axis keeps the other arms' names (and their
    finished outputs, when a sweep is resumed).
    """
    chunkers = grid.chunkers()
    depths: list[int | None] = list(grid.k) if grid.k is not None else [None]
    fusions: list[int | None] = list(grid.fusion_k) if grid.fusion_k is not None else [None]
    reranks = sum(x is not False for x in grid.rerank)
    specs: list[SweepArmSpec] = []
    for chunker, pipeline, depth, fusion, (r, rerank) in itertools.product(
        chunkers, grid.retriever, depths, fusions, enumerate(grid.rerank)
    ):
        if pipeline != "hybrid" and fusion != fusions[0]:
            continue  # the fusion constant only makes hybrid arms
        parts = ["base" if chunker is None else chunker_spec(chunker).replace(":", "-"), pipeline]
        if depth is not None:
            parts.append(f"k{depth}")
        if fusion is not None and pipeline == "hybrid":
            parts.append(f"rrf{fusion}")
        if rerank is not False:
            parts.append("rerank" if reranks == 1 else f"rerank{r}")
        data: dict[str, Any] = {"name": ".".join(parts), "retriever": pipeline}
        data.update(chunker=chunker, k=depth, fusion_k=fusion, rerank=rerank)
        specs.append(SweepArmSpec.model_validate(data))
    return specs


def _pipeline_of(config: RunConfig, candidate: str) -> tuple[str, ...]:
    """The candidate and every stage it reads, in run order (the baseline only if read)."""
    needed = {candidate}
    for stage in reversed(config.stages):
        if stage.name in needed:
            needed.update(stage.retriever.upstream_stages())
    return tuple(s.name for s in config.stages if s.name in needed)


def _without_name(stage: StageConfig) -> str:
    data = stage.model_dump(mode="json")
    data.pop("name", None)
    return canonical_json(data)


def _arm(
    spec: SweepArmSpec, base: dict[str, Any], settings: SweepSettings, source: Path | None
) -> SweepArm:
    if spec.stages is not None:
        stages = [dict(s) for s in spec.stages]
        stages[-1]["name"] = spec.name
    else:
        stages = _axes_stages(
            spec.name, spec.chunker, spec.retriever, spec.fusion_k, spec.rerank, settings
        )
    raw = {**base, "stages": [*base.get("stages", []), *stages]}
    if spec.k is not None:
        raw["depth"] = spec.k
    base_dir = source.resolve().parent if source is not None else None
    try:
        config = run_config_from_dict(raw, base_dir=base_dir, source=source)
    except ConfigError as error:
        problems = [
            ConfigProblem(p.loc, f"{p.message} (arm {spec.name!r})") for p in error.problems
        ]
        raise ConfigError(problems, path=source) from None
    candidate = config.stage(spec.name)
    return SweepArm(
        name=spec.name,
        config=config,
        pipeline=_pipeline_of(config, spec.name),
        config_hash=config_hash(config.model_dump(mode="json")),
        same_as_baseline=_without_name(candidate) == _without_name(config.stages[0]),
    )


def _base(data: dict[str, Any], source: Path | None) -> dict[str, Any]:
    if data.get("baseline", BASELINE_STAGE) != BASELINE_STAGE:
        message = f"a sweep compares every arm with the {BASELINE_STAGE} baseline; remove the key"
        raise ConfigError([ConfigProblem(("baseline",), message)], path=source)
    stages = data.get("stages", [])
    if not isinstance(stages, list) or any(
        not isinstance(s, dict) or s.get("name") != BASELINE_STAGE for s in stages
    ):
        raise ConfigError(
            [ConfigProblem(("stages",), "a sweep's base config defines only the bm25 baseline")],
            path=source,
        )
    return data


def expand_sweep(data: dict[str, Any], *, source: Path | None = None) -> SweepPlan:
    """Validate a raw sweep mapping (a run config with a ``[sweep]`` table) into its arms.

    Relative paths are resolved against ``source``'s folder when a file is given (the base
    config's own paths should already be, as :func:`read_config_file` does).

    Raises:
        ConfigError: The first invalid key, named (``sweep.grid.chunk_size``, or an arm's run
            configuration key with the arm's name).
    """
    raw = dict(data)
    section = raw.pop("sweep", None)
    if not isinstance(section, dict):
        raise ConfigError(
            [ConfigProblem(("sweep",), "a sweep file needs a [sweep] table")], path=source
        )
    try:
        settings = SweepSettings.model_validate(section)
        specs = settings.arms if settings.arms is not None else _grid_specs(settings.grid)  # type: ignore[arg-type]
    except ValidationError as exc:
        problems = [ConfigProblem(("sweep", *p.loc), p.message) for p in _problems(exc)]
        raise ConfigError(problems, path=source) from None
    base = _base(raw, source)
    arms = tuple(_arm(spec, base, settings, source) for spec in specs)
    names = [arm.name for arm in arms]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise ConfigError(
            [ConfigProblem(("sweep", "grid"), f"arms named twice: {', '.join(repeated)}")],
            path=source,
        )
    config = arms[0].config
    metric = settings.metric or config.bootstrap.primary_metric or config.headline_metrics[0]
    if metric not in config.headline_metrics:
        message = f"{metric!r} is not a headline metric ({', '.join(config.headline_metrics)})"
        raise ConfigError([ConfigProblem(("sweep", "metric"), message)], path=source)
    front = tuple(axis for axis in FRONT_AXES if axis in settings.front)
    return SweepPlan(
        arms=arms,
        metric=metric,
        context_k=settings.context_k,
        front=front,
        source=source,
        executor=settings.executor,
        ray_address=settings.ray_address,
    )


def load_sweep(path: str | Path, *, sweep: Mapping[str, Any] | None = None) -> SweepPlan:
    """Read and expand a sweep file (TOML).

    Args:
        path: The sweep file.
        sweep: Keys of the ``[sweep]`` table given elsewhere (command-line flags); they
            replace the file's and are validated with them, once.

    Raises:
        HarnessError: Unreadable file or invalid TOML (naming the file and the line).
        ConfigError: An invalid key (naming the file and the key).
    """
    data = read_config_file(path)
    if sweep and isinstance(data.get("sweep"), dict):
        data = {**data, "sweep": {**data["sweep"], **sweep}}
    return expand_sweep(data, source=Path(path))


def arm_names(arms: Sequence[SweepArm]) -> list[str]:
    """The arms' names, in order."""
    return [arm.name for arm in arms]
