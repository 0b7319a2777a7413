"""The ``llamaindex`` kind: a LlamaIndex retriever or index as a stage (extra llamaindex).

llama-index-core is imported only here, when a stage of the kind is built. Nothing here sets
LlamaIndex's global ``Settings``: the index or retriever the target names was built by the
user's code with its own embedding model.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from groundkit.harness._errors import HarnessError
from groundkit.harness.frameworks._adapters import (
    kept_count,
    per_query,
    require_framework,
    resolve_framework_object,
)
from groundkit.harness.frameworks._settings import LlamaIndexRetriever
from groundkit.harness.retrievers._protocol import Query, StageContext
from groundkit.harness.run._stage_run import user_failure

__all__ = ["LlamaIndexStage"]

_EXPECTED = "a LlamaIndex BaseRetriever or index"


def _classes(stage: str) -> tuple[type, type]:
    def load(module: str) -> Any:
        return require_framework(
            module,
            stage=stage,
            kind="llamaindex",
            package="llama-index-core",
            extra="llamaindex",
        )

    retrievers = load("llama_index.core.base.base_retriever")
    indices = load("llama_index.core.indices.base")
    return retrievers.BaseRetriever, indices.BaseIndex


class LlamaIndexStage:
    """Searches a LlamaIndex ``BaseRetriever`` (or an index's); its ``NodeWithScore`` are hits.

    Args:
        settings: The llamaindex settings.
        context: The stage's context.

    Raises:
        HarnessError: llama-index-core is missing (naming the extra), or the target does not
            import or is not a retriever or index.
    """

    def __init__(self, settings: LlamaIndexRetriever, context: StageContext) -> None:
        self.settings = settings
        self.stage = context.stage
        base, index = _classes(self.stage)
        self.found = resolve_framework_object(
            settings.target,
            stage=self.stage,
            accepts=lambda value: isinstance(value, base | index),
            expected=_EXPECTED,
        )
        self.is_index = isinstance(self.found, index)
        self.has_top_k = not self.is_index and hasattr(self.found, "similarity_top_k")
        if settings.similarity_top_k is not None and not (self.is_index or self.has_top_k):
            raise HarnessError(
                f"stage {self.stage!r}: {type(self.found).__name__} has no similarity_top_k "
                "(set the count on the retriever itself)"
            )

    def _retriever(self, top_k: int) -> Any:
        if not self.is_index:
            return self.found
        try:
            return self.found.as_retriever(similarity_top_k=top_k)
        except Exception as error:
            raise user_failure(self.stage, "the index's as_retriever()", error) from error

    def search(self, queries: Sequence[Query], depth: int) -> list[Any]:
        """The ``NodeWithScore`` list of each query, best first.

        Raises:
            StageFailed: LlamaIndex raised (naming the query).
        """
        top_k = self.settings.similarity_top_k or depth
        retriever = self._retriever(top_k)
        with kept_count(retriever, "similarity_top_k", top_k if self.has_top_k else None):
            return per_query(self.stage, "the retriever", queries, retriever.retrieve)
