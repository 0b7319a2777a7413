"""Retriever kinds: the registry, the protocol every kind implements, and the built-in kinds.

A plugin author's surface: subclass :class:`RetrieverSettings`, return a :class:`Retriever`
from the builder, and register a :class:`RetrieverKind` (or name it in the
``groundkit.retrievers`` entry-point group).
"""

from typing import TYPE_CHECKING

from groundkit.harness._lazy import harness_exports

if TYPE_CHECKING:
    from groundkit.harness.retrievers._protocol import (
        ChunkHits,
        ChunkSet,
        Query,
        QueryHits,
        Retriever,
        StageContext,
        UpstreamStage,
    )
    from groundkit.harness.retrievers._registry import (
        ENTRY_POINT_GROUP,
        AblationPart,
        RetrieverKind,
        RetrieverSettings,
        register_retriever,
        retriever_kind,
        retriever_kinds,
    )

_EXPORTS: dict[str, str] = {
    "ENTRY_POINT_GROUP": "groundkit.harness.retrievers._registry",
    "AblationPart": "groundkit.harness.retrievers._registry",
    "ChunkHits": "groundkit.harness.retrievers._protocol",
    "ChunkSet": "groundkit.harness.retrievers._protocol",
    "Query": "groundkit.harness.retrievers._protocol",
    "QueryHits": "groundkit.harness.retrievers._protocol",
    "Retriever": "groundkit.harness.retrievers._protocol",
    "RetrieverKind": "groundkit.harness.retrievers._registry",
    "RetrieverSettings": "groundkit.harness.retrievers._registry",
    "StageContext": "groundkit.harness.retrievers._protocol",
    "UpstreamStage": "groundkit.harness.retrievers._protocol",
    "register_retriever": "groundkit.harness.retrievers._registry",
    "retriever_kind": "groundkit.harness.retrievers._registry",
    "retriever_kinds": "groundkit.harness.retrievers._registry",
}

__all__ = [
    "ENTRY_POINT_GROUP",
    "AblationPart",
    "ChunkHits",
    "ChunkSet",
    "Query",
    "QueryHits",
    "Retriever",
    "RetrieverKind",
    "RetrieverSettings",
    "StageContext",
    "UpstreamStage",
    "register_retriever",
    "retriever_kind",
    "retriever_kinds",
]

__getattr__, __dir__ = harness_exports(__name__, _EXPORTS)
