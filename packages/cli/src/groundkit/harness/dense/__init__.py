"""Dense retrieval: the model, its embedding cache, vector indexes, Ray, rerank scorers."""

from typing import TYPE_CHECKING

from groundkit.harness._lazy import harness_exports

if TYPE_CHECKING:
    from groundkit.harness.dense._loading import (
        DENSE_INSTALL_HINT,
        LOAD_MODEL_PHASE,
        dense_available,
    )

_EXPORTS: dict[str, str] = {
    "DENSE_INSTALL_HINT": "groundkit.harness.dense._loading",
    "LOAD_MODEL_PHASE": "groundkit.harness.dense._loading",
    "dense_available": "groundkit.harness.dense._loading",
}

__all__ = [
    "DENSE_INSTALL_HINT",
    "LOAD_MODEL_PHASE",
    "dense_available",
]

__getattr__, __dir__ = harness_exports(__name__, _EXPORTS)
