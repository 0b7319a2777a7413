"""Dense retrieval: the model, its embedding cache, vector indexes, Ray, rerank scorers."""

from typing import TYPE_CHECKING

from groundkit.harness._lazy import harness_exports

if TYPE_CHECKING:
    from groundkit.harness.dense._loading import (
        DENSE_INSTALL_HINT,
        LOAD_MODEL_PHASE,
        dense_available,
        resolve_device,
    )
    from groundkit.harness.dense._model import default_cache_dir

_EXPORTS: dict[str, str] = {
    "DENSE_INSTALL_HINT": "groundkit.harness.dense._loading",
    "LOAD_MODEL_PHASE": "groundkit.harness.dense._loading",
    "dense_available": "groundkit.harness.dense._loading",
    "default_cache_dir": "groundkit.harness.dense._model",
    "resolve_device": "groundkit.harness.dense._loading",
}

__all__ = [
    "DENSE_INSTALL_HINT",
    "LOAD_MODEL_PHASE",
    "default_cache_dir",
    "dense_available",
    "resolve_device",
]

__getattr__, __dir__ = harness_exports(__name__, _EXPORTS)
