"""The framework kinds' settings: ``langchain``, ``llamaindex`` and ``haystack``.

Importing this module registers the three kinds. Their settings validate without the
frameworks; each ``build`` imports its framework only when a stage of the kind runs (extras
``langchain``, ``llamaindex``, ``haystack`` of groundkit-cli), so groundkit-cli without them
never imports a framework.

Every kind names the framework object with ``target`` (``"my_rag.retrieval:retriever"``,
``"path/to/file.py:retriever"``, or the object itself from Python), which may be the object or
a zero-argument factory returning it. How many hits are asked per query defaults to the run's
``depth``; the field named after the framework's own knob (``k``, ``similarity_top_k``,
``top_k``) sets another number.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from pydantic import Field, field_validator

from groundkit.harness.retrievers._builtin import _TARGET, TargetSettings, _builder
from groundkit.harness.retrievers._protocol import Retriever, StageContext
from groundkit.harness.retrievers._registry import RetrieverKind, register_retriever
from groundkit.judgments.report import WholeNumber

__all__ = ["HaystackRetriever", "LangChainRetriever", "LlamaIndexRetriever"]


class _FrameworkTarget(TargetSettings):
    """A framework object named by ``target`` (its type is checked when the stage is built)."""

    @field_validator("target", mode="before")
    @classmethod
    def _target_shape(cls, value: Any) -> Any:
        if value is None:
            raise ValueError("target must name the framework object ('package.module:name')")
        if isinstance(value, str) and _TARGET.match(value) is None:
            raise ValueError(
                f"target {value!r} must look like 'package.module:name' or 'path/to/file.py:name'"
            )
        return value


class LangChainRetriever(_FrameworkTarget):
    """A LangChain retriever or vector store (extra ``langchain``: langchain-core).

    ``target`` is a ``BaseRetriever`` (searched with ``invoke``, or ``batch``), a
    ``VectorStore`` (searched with ``similarity_search_with_score``, its scores recorded), or a
    zero-argument factory of either. Hits are LangChain ``Document`` objects: their text is
    located in ``metadata["source"]`` (at ``metadata["start_index"]`` when a splitter recorded
    it with ``add_start_index=True``).

    Attributes:
        target: Where the retriever or vector store is, or the object itself.
        k: Documents asked per query (default: the run's depth). A vector store gets it as
            ``k``; a ``VectorStoreRetriever`` as its search keyword ``k``; another retriever
            with a ``k`` field has it set while the stage runs (and restored after).
        batch: Search a retriever with ``Runnable.batch`` (LangChain runs the queries
            concurrently) instead of one ``invoke`` per query.
    """

    kind: Literal["langchain"] = "langchain"
    k: WholeNumber | None = Field(default=None, gt=0, le=10_000)
    batch: bool = False


class LlamaIndexRetriever(_FrameworkTarget):
    """A LlamaIndex retriever or index (extra ``llamaindex``: llama-index-core).

    ``target`` is a ``BaseRetriever`` (searched with ``retrieve``), an index such as a
    ``VectorStoreIndex`` (searched through ``as_retriever(similarity_top_k=...)``), or a
    zero-argument factory of either. Hits are ``NodeWithScore`` objects: their text is located
    in ``metadata["file_path"]`` (a ``SimpleDirectoryReader`` records it), at
    ``start_char_idx`` when the text is there verbatim.

    Attributes:
        target: Where the retriever or index is, or the object itself.
        similarity_top_k: Nodes asked per query (default: the run's depth). An index's
            retriever is made with it; a retriever with a ``similarity_top_k`` attribute (a
            ``VectorIndexRetriever``) has it set while the stage runs (and restored after).
    """

    kind: Literal["llamaindex"] = "llamaindex"
    similarity_top_k: WholeNumber | None = Field(default=None, gt=0, le=10_000)


class HaystackRetriever(_FrameworkTarget):
    """A Haystack retriever component or a whole ``Pipeline`` (extra ``haystack``: haystack-ai).

    ``target`` is a component (``InMemoryBM25Retriever`` over an ``InMemoryDocumentStore``,
    or any component taking the query text), a ``Pipeline``, or a zero-argument factory of
    either. Hits are Haystack ``Document`` objects: their text is located in
    ``meta["file_path"]`` (converters record the whole path with ``store_full_path=True``), at
    ``meta["split_idx_start"]`` when a ``DocumentSplitter`` recorded it.

    Attributes:
        target: Where the component or pipeline is, or the object itself.
        top_k: Documents asked per query (default: the run's depth), given to every input
            called ``top_k`` that the component has (a pipeline: that no other component
            feeds).
        query_inputs: The input names that receive the query text (a pipeline: every input of
            those names that no other component feeds).
        output: A pipeline's component whose ``documents`` output are the hits (default: the
            first of the pipeline's final outputs that holds ``documents``, else the first of
            any component's).
    """

    kind: Literal["haystack"] = "haystack"
    top_k: WholeNumber | None = Field(default=None, gt=0, le=10_000)
    query_inputs: list[str] = Field(default_factory=lambda: ["query", "text"], min_length=1)
    output: str | None = Field(default=None, min_length=1)


def _guarded_builder(module: str, name: str) -> Callable[[Any, StageContext], Retriever]:
    """Like :func:`_builder`, for a kind that runs the user's objects (the frameworks).

    The stage is built on its worker thread with the settings' ``timeout`` (a factory that
    hangs fails the stage) and every method the harness calls runs there with the deadlines
    (``timeout``, ``stage_timeout``): see ``groundkit.harness.retrievers._deadlines``.
    """
    inner = _builder(module, name)

    def build(settings: Any, context: StageContext) -> Retriever:
        from groundkit.harness.retrievers._deadlines import build_with_deadlines

        return build_with_deadlines(inner, settings, context)

    return build


for _name, _settings, _module, _package, _summary in (
    (
        "langchain",
        LangChainRetriever,
        "LangChainStage",
        "langchain-core",
        "retriever or vector store",
    ),
    (
        "llamaindex",
        LlamaIndexRetriever,
        "LlamaIndexStage",
        "llama-index-core",
        "retriever or index",
    ),
    ("haystack", HaystackRetriever, "HaystackStage", "haystack-ai", "component or pipeline"),
):
    register_retriever(
        RetrieverKind(
            name=_name,
            settings=_settings,
            build=_guarded_builder(f"groundkit.harness.frameworks._{_name}", _module),
            packages=(_package,),
            summary=f"a {_settings.__name__.removesuffix('Retriever')} {_summary} (extra {_name})",
        ),
        replace=True,
    )
