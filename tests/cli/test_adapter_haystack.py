"""The haystack kind with the real haystack-ai: an in-memory BM25 retriever and pipelines."""

from __future__ import annotations

import textwrap
from typing import Any

import pytest

pytest.importorskip("haystack", reason="the haystack extra (haystack-ai) is not installed")

from groundkit.judgments import load_report

RAG = textwrap.dedent(
    '''
    """A Haystack retrieval: the handbook converted and split by Haystack, searched by BM25."""

    from pathlib import Path

    from haystack import Pipeline, component
    from haystack.components.converters import TextFileToDocument
    from haystack.components.preprocessors import DocumentSplitter
    from haystack.components.rankers import LostInTheMiddleRanker
    from haystack.components.retrievers.in_memory import (
        InMemoryBM25Retriever,
        InMemoryEmbeddingRetriever,
    )
    from haystack.components.writers import DocumentWriter
    from haystack.document_stores.in_memory import InMemoryDocumentStore


    def document_store(full_path=True):
        store = InMemoryDocumentStore()
        ingest = Pipeline()
        ingest.add_component("convert", TextFileToDocument(store_full_path=full_path))
        ingest.add_component("split", DocumentSplitter(split_by="passage", split_length=1))
        ingest.add_component("write", DocumentWriter(store))
        ingest.connect("convert", "split")
        ingest.connect("split", "write")
        ingest.run({"convert": {"sources": sorted(Path("handbook").rglob("*.md"))}})
        return store


    STORE = document_store()


    def retriever():
        return InMemoryBM25Retriever(STORE)


    def pipeline():
        searching = Pipeline()
        searching.add_component("retriever", InMemoryBM25Retriever(STORE))
        searching.add_component("ranker", LostInTheMiddleRanker())
        searching.connect("retriever", "ranker")
        return searching


    def names_only():
        return InMemoryBM25Retriever(document_store(full_path=False))


    def embedding_only():
        searching = Pipeline()
        searching.add_component("retriever", InMemoryEmbeddingRetriever(STORE))
        return searching


    @component
    class Exploding:
        @component.output_types(documents=list)
        def run(self, query: str, top_k: int = 10):
            raise ConnectionError("the document store is unreachable")
    '''
)
DEPTH = 30


def _hits(bench: Any, documents: list[Any]) -> list[dict[str, Any]]:
    return [
        bench.span(d.meta["file_path"], d.content, d.meta["split_idx_start"], d.score)
        for d in documents
    ]


def test_haystack_stages_score_like_the_same_hits_in_a_predictions_file(
    adapter_bench: Any,
) -> None:
    rag = adapter_bench.load("rag_hs", RAG)
    config = f"""
depth = {DEPTH}
[[stages]]
name = "hs-bm25"
retriever = {{ kind = "haystack", target = "rag_hs.py:retriever" }}
[[stages]]
name = "hs-pipeline"
retriever = {{ kind = "haystack", target = "rag_hs:pipeline" }}
[[stages]]
name = "hs-pipeline-retriever"
retriever = {{ kind = "haystack", target = "rag_hs:pipeline", output = "retriever", top_k = 10 }}
"""
    component, searching = rag.retriever(), rag.pipeline()

    def through(query: str, top_k: int) -> dict[str, Any]:
        data = {"retriever": {"query": query, "top_k": top_k}, "ranker": {"top_k": top_k}}
        result: dict[str, Any] = searching.run(data, include_outputs_from={"retriever"})
        return result

    queries, scores = adapter_bench.compare(
        config,
        {
            "hs-bm25": lambda q: _hits(
                adapter_bench, component.run(query=q, top_k=DEPTH)["documents"]
            ),
            "hs-pipeline": lambda q: _hits(adapter_bench, through(q, DEPTH)["ranker"]["documents"]),
            "hs-pipeline-retriever": lambda q: _hits(
                adapter_bench, through(q, 10)["retriever"]["documents"]
            ),
        },
    )
    assert queries == 3 * 172
    assert scores >= queries * 20  # every metric of every query
    report = load_report(adapter_bench.workspace / "groundkit-report.json")
    assert "haystack-ai" in report.run.package_versions
    # The ranker re-orders the retriever's hits (lost in the middle): the two outputs differ.
    pipe, first = report.stage("hs-pipeline"), report.stage("hs-bm25")
    assert [h.start for h in pipe.queries[0].hits] != [h.start for h in first.queries[0].hits]


@pytest.mark.parametrize(
    ("spec", "fragment"),
    [
        ("x=haystack:rag_hs:STORE", "'rag_hs:STORE' is a InMemoryDocumentStore (haystack)"),
        ("x=haystack:rag_hs:Exploding", None),  # a class: its factory makes a component
        ("x=haystack:rag_hs:embedding_only", "no open input called query, text takes the query"),
    ],
)
def test_haystack_configuration_problems(
    adapter_bench: Any, spec: str, fragment: str | None
) -> None:
    adapter_bench.load("rag_hs", RAG)
    result = adapter_bench.run("", "--stage", spec)
    if fragment is None:  # the component raises on every query: the stage fails
        assert result.exit_code == 1, result.output
        (line,) = [line for line in result.output.splitlines() if line.startswith("error: ")]
        first = adapter_bench.judgments[0]["query_id"]
        assert (
            f"stage 'x': query {first!r}: the component raised ConnectionError: "
            "the document store is unreachable"
        ) in line
        assert load_report(adapter_bench.workspace / "groundkit-report.json").baseline.aggregates
        return
    assert result.exit_code == 2, result.output
    (line,) = [line for line in result.output.splitlines() if line.startswith("error: ")]
    assert fragment in line, line
    assert not (adapter_bench.workspace / "groundkit-report.json").exists()


def test_file_names_without_their_folder_fail_the_stage_with_a_hint(adapter_bench: Any) -> None:
    adapter_bench.load("rag_hs", RAG)
    result = adapter_bench.run("", "--stage", "names=haystack:rag_hs:names_only")
    assert result.exit_code == 1, result.output
    (line,) = [line for line in result.output.splitlines() if line.startswith("error: ")]
    assert "stage 'names': query '" in line
    assert "hit 1: unknown document '" in line
    assert "record the file's path (Haystack's converters do with store_full_path=True)" in line
