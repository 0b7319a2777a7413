"""The langchain kind with the real langchain-core: in-memory vector stores and retrievers."""

from __future__ import annotations

import json
import textwrap
from typing import Any

import pytest

pytest.importorskip(
    "langchain_core", reason="the langchain extra (langchain-core) is not installed"
)
pytest.importorskip(
    "langchain_text_splitters", reason="langchain-text-splitters (the test corpus) is missing"
)

from groundkit.harness import EvalSettings, LangChainRetriever, evaluate
from groundkit.judgments import Corpus, load_judgments, load_report

RAG = textwrap.dedent(
    '''
    """A LangChain retrieval: the handbook split with start offsets, in an in-memory store."""

    import hashlib
    import re
    from pathlib import Path

    from langchain_core.documents import Document
    from langchain_core.embeddings import Embeddings
    from langchain_core.retrievers import BaseRetriever
    from langchain_core.vectorstores import InMemoryVectorStore
    from langchain_text_splitters import RecursiveCharacterTextSplitter


    class HashedWords(Embeddings):
        """A deterministic embedding with some meaning: a hashed bag of words."""

        def _one(self, text):
            vector = [0.0] * 256
            vector[0] = 1.0  # no text embeds to zero
            for word in re.findall(r"[a-z0-9]+", text.lower()):
                if len(word) > 2:
                    digest = hashlib.blake2b(word.encode(), digest_size=4).digest()
                    vector[int.from_bytes(digest, "big") % 255 + 1] += 1.0
            return vector

        def embed_documents(self, texts):
            return [self._one(text) for text in texts]

        def embed_query(self, text):
            return self._one(text)


    def documents():
        return [
            Document(page_content=path.read_text(encoding="utf-8"), metadata={"source": str(path)})
            for path in sorted(Path("handbook").rglob("*.md"))
        ]


    def store():
        splitter = RecursiveCharacterTextSplitter(
            chunk_size=600, chunk_overlap=100, add_start_index=True
        )
        chunks = splitter.split_documents(documents())
        return InMemoryVectorStore.from_documents(chunks, HashedWords())


    def retriever():
        return store().as_retriever()


    STORE = store()


    class Fixed(BaseRetriever):
        """A retriever with a k field of its own."""

        k: int = 4
        seen: list = []

        def _get_relevant_documents(self, query, *, run_manager):
            self.seen.append(self.k)
            return STORE.similarity_search(query, k=self.k)


    class Exploding(BaseRetriever):
        def _get_relevant_documents(self, query, *, run_manager):
            if "laptop" in query.lower():
                lookup_that_fails(query)
            return STORE.similarity_search(query, k=3)


    def lookup_that_fails(query):
        raise RuntimeError("the vector index is out of date")


    def rewritten():
        # Passages rewritten by a cleaner and stored without their source: not locatable.
        texts = ["Leave is four months, paid in full.", "Laptops are swapped every few years."]
        return InMemoryVectorStore.from_texts(texts, HashedWords())


    NOT_LANGCHAIN = {"k": 10}
    '''
)
DEPTH = 30


def _hits(bench: Any, found: list[Any], scored: bool) -> list[dict[str, Any]]:
    out = []
    for item in found:
        document, score = item if scored else (item, None)
        span = bench.span(
            document.metadata["source"],
            document.page_content,
            document.metadata["start_index"],
            0.0 if score is None else score,
        )
        if score is None:
            del span["score"]  # recorded as 1 / rank, as the adapter's unscored Documents
        out.append(span)
    return out


def test_langchain_stages_score_like_the_same_hits_in_a_predictions_file(
    adapter_bench: Any,
) -> None:
    rag = adapter_bench.load("rag_lc", RAG)
    config = f"""
depth = {DEPTH}
[[stages]]
name = "lc-store"
retriever = {{ kind = "langchain", target = "rag_lc.py:store" }}
[[stages]]
name = "lc-retriever"
retriever = {{ kind = "langchain", target = "rag_lc:retriever", batch = true }}
[[stages]]
name = "lc-attribute"
retriever = {{ kind = "langchain", target = "rag_lc:STORE", k = 10 }}
"""
    store, retriever = rag.store(), rag.retriever()
    queries, scores = adapter_bench.compare(
        config,
        {
            "lc-store": lambda q: _hits(
                adapter_bench, store.similarity_search_with_score(q, k=DEPTH), True
            ),
            "lc-retriever": lambda q: _hits(adapter_bench, retriever.invoke(q, k=DEPTH), False),
            "lc-attribute": lambda q: _hits(
                adapter_bench, rag.STORE.similarity_search_with_score(q, k=10), True
            ),
        },
    )
    assert queries == 3 * 172
    assert scores >= queries * 20  # every metric of every query
    report = load_report(adapter_bench.workspace / "groundkit-report.json")
    assert report.stage("lc-store").kind == "langchain"
    assert report.stage("lc-store").retriever["target"].endswith("rag_lc.py:store")
    assert "langchain-core" in report.run.package_versions
    assert max(len(q.hits) for q in report.stage("lc-attribute").queries) == 10


def test_a_live_retriever_from_python_keeps_its_own_settings(adapter_bench: Any) -> None:
    rag = adapter_bench.load("rag_lc", RAG)
    corpus = Corpus.from_directory("handbook")
    judgments = load_judgments("judgments.jsonl")[:20]
    retriever = rag.store().as_retriever(search_kwargs={"k": 2})
    fixed = rag.Fixed()
    report = evaluate(
        corpus,
        judgments,
        EvalSettings(depth=7, bootstrap={"resamples": 20}),
        stages={"vs": LangChainRetriever(target=retriever), "fixed": fixed_settings(fixed)},
    )
    assert {len(q.hits) for q in report.stage("vs").queries} == {7}
    assert retriever.search_kwargs == {"k": 2}  # the run's depth was given per call only
    assert set(fixed.seen) == {7}
    assert fixed.k == 4  # set while the stage ran, restored after
    assert report.stage("vs").retriever == {
        "target": "langchain_core.vectorstores.base:VectorStoreRetriever",
        "timeout": 600.0,  # the deadlines of a call into the user's objects
        "stage_timeout": None,
        "k": None,
        "batch": False,
    }


def fixed_settings(fixed: Any) -> LangChainRetriever:
    return LangChainRetriever(target=fixed)


@pytest.mark.parametrize(
    ("spec", "fragment"),
    [
        ("x=langchain:no_such_module_xyz:store", "stage 'x': cannot import 'no_such_module_xyz'"),
        (
            "x=langchain:rag_lc:NOT_LANGCHAIN",
            "stage 'x': 'rag_lc:NOT_LANGCHAIN' is a dict, not a LangChain BaseRetriever or "
            "VectorStore",
        ),
        ("x=langchain:rag_lc:documents", "what 'rag_lc:documents' returned is a list"),
        ("x=langchain:rag_lc:HashedWords", "is a HashedWords (rag_lc), not a LangChain"),
    ],
)
def test_a_target_that_is_not_langchain_exits_two(
    adapter_bench: Any, spec: str, fragment: str
) -> None:
    adapter_bench.load("rag_lc", RAG)
    result = adapter_bench.run("", "--stage", spec)
    assert result.exit_code == 2, result.output
    errors = [line for line in result.output.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1, result.output
    assert fragment in errors[0], errors[0]
    assert "Traceback" not in result.output
    assert not (adapter_bench.workspace / "groundkit-report.json").exists()


def test_a_langchain_exception_fails_the_stage_naming_the_query(adapter_bench: Any) -> None:
    adapter_bench.load("rag_lc", RAG)
    stages = "--stage", "boom=langchain:rag_lc:Exploding", "--stage", "ok=langchain:rag_lc:STORE"
    result = adapter_bench.run("", *stages)
    assert result.exit_code == 1, result.output
    (line,) = [line for line in result.output.splitlines() if line.startswith("error: ")]
    first = next(j for j in adapter_bench.judgments if "laptop" in j["query"].lower())
    assert (
        f"stage 'boom': query {first['query_id']!r}: the retriever raised RuntimeError: "
        "the vector index is out of date"
    ) in line
    assert "the report was written to" in line
    assert "Traceback" not in result.output
    report = load_report(adapter_bench.workspace / "groundkit-report.json")
    assert report.stage("boom").error is not None
    assert report.stage("ok").aggregates["recall@10"].mean > 0.3  # the other stages are scored
    debug = adapter_bench.run("", *stages, debug=True)
    assert debug.exit_code == 1
    assert "Traceback" in debug.output
    assert "lookup_that_fails" in debug.output  # the user's own frame


def test_hits_without_a_source_that_cannot_be_located_are_counted(adapter_bench: Any) -> None:
    adapter_bench.load("rag_lc", RAG)
    result = adapter_bench.run("", "--stage", "clean=langchain:rag_lc:rewritten")
    assert result.exit_code == 1, result.output
    assert "could not be located" in result.output
    report = load_report(adapter_bench.workspace / "groundkit-report.json")
    clean = report.stage("clean")
    assert clean.error is None
    assert len(clean.unlocated) == 2 * 172  # every hit of every answerable query, listed
    assert {u.doc for u in clean.unlocated} == {None}
    first = json.loads(report.model_dump_json())["stages"][1]["unlocated"][0]
    assert first["text"] in {
        "Leave is four months, paid in full.",
        "Laptops are swapped every few years.",
    }


def test_batch_is_refused_for_a_vector_store(adapter_bench: Any) -> None:
    adapter_bench.load("rag_lc", RAG)
    config = (
        '[[stages]]\nname = "x"\n'
        'retriever = { kind = "langchain", target = "rag_lc:STORE", batch = true }\n'
    )
    result = adapter_bench.run(config)
    assert result.exit_code == 2, result.output
    assert "InMemoryVectorStore is a vector store, searched one query at a time" in result.output
    assert not (adapter_bench.workspace / "groundkit-report.json").exists()
