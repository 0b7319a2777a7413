"""The ``langchain`` kind: a LangChain retriever or vector store as a stage (extra langchain).

langchain-core is imported only here, when a stage of the kind is built.
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
from groundkit.harness.frameworks._settings import LangChainRetriever
from groundkit.harness.retrievers._protocol import Query, StageContext
from groundkit.harness.run._stage_run import user_failure

__all__ = ["LangChainStage"]

_EXPECTED = "a LangChain BaseRetriever or VectorStore"


def _classes(stage: str) -> tuple[type, type, type]:
    retrievers = require_framework(
        "langchain_core.retrievers",
        stage=stage,
        kind="langchain",
        package="langchain-core",
        extra="langchain",
    )
    stores = require_framework(
        "langchain_core.vectorstores",
        stage=stage,
        kind="langchain",
        package="langchain-core",
        extra="langchain",
    )
    return retrievers.BaseRetriever, stores.VectorStore, stores.VectorStoreRetriever


class LangChainStage:
    """Searches a LangChain ``BaseRetriever`` or ``VectorStore``; its Documents are the hits.

    Args:
        settings: The langchain settings.
        context: The stage's context.

    Raises:
        HarnessError: langchain-core is missing (naming the extra), the target does not import
            or is not a retriever or vector store, or ``batch`` is asked of a vector store.
    """

    def __init__(self, settings: LangChainRetriever, context: StageContext) -> None:
        self.settings = settings
        self.stage = context.stage
        base, store, store_retriever = _classes(self.stage)
        self.found = resolve_framework_object(
            settings.target,
            stage=self.stage,
            accepts=lambda value: isinstance(value, base | store),
            expected=_EXPECTED,
        )
        self.is_store = isinstance(self.found, store)
        self.per_call_k = isinstance(self.found, store_retriever)
        self.k_field = not self.is_store and "k" in getattr(type(self.found), "model_fields", {})
        where = f"stage {self.stage!r}: {type(self.found).__name__}"
        if self.is_store and settings.batch:
            raise HarnessError(
                f"{where} is a vector store, searched one query at a time: remove 'batch' "
                "(or give its .as_retriever())"
            )
        if settings.k is not None and not (self.is_store or self.per_call_k or self.k_field):
            raise HarnessError(f"{where} takes no k (set the count on the retriever itself)")

    def search(self, queries: Sequence[Query], depth: int) -> list[Any]:
        """The Documents of each query, best first (``(Document, score)`` from a store).

        Raises:
            StageFailed: LangChain raised (naming the query).
        """
        k = self.settings.k or depth
        found = self.found
        if self.is_store:
            return per_query(
                self.stage,
                "the vector store",
                queries,
                lambda text: found.similarity_search_with_score(text, k=k),
            )
        keywords = {"k": k} if self.per_call_k else {}
        with kept_count(found, "k", k if self.k_field else None):
            if self.settings.batch:
                return self._batch(queries, keywords)
            return per_query(
                self.stage, "the retriever", queries, lambda text: found.invoke(text, **keywords)
            )

    def _batch(self, queries: Sequence[Query], keywords: dict[str, Any]) -> list[Any]:
        texts = [q.text for q in queries]
        try:
            results = self.found.batch(texts, return_exceptions=True, **keywords)
        except (Exception, SystemExit) as error:  # user code
            raise user_failure(self.stage, "the retriever's batch", error) from error
        for query, result in zip(queries, results, strict=True):
            if isinstance(result, Exception):
                raise user_failure(
                    self.stage, f"query {query.query_id!r}: the retriever", result
                ) from result
        return list(results)
