"""The llamaindex kind with the real llama-index-core: retrievers over an in-memory index."""

from __future__ import annotations

import textwrap
from typing import Any

import pytest

pytest.importorskip("llama_index.core", reason="the llamaindex extra (llama-index-core) is missing")

from groundkit.harness import EvalSettings, LlamaIndexRetriever, evaluate
from groundkit.judgments import Corpus, load_judgments, load_report

RAG = textwrap.dedent(
    '''
    """A LlamaIndex retrieval: the handbook read and split by LlamaIndex, in a vector index."""

    import hashlib
    import re

    from llama_index.core import Settings, SimpleDirectoryReader, VectorStoreIndex
    from llama_index.core.embeddings import BaseEmbedding
    from llama_index.core.llms import MockLLM
    from llama_index.core.node_parser import SentenceSplitter
    from llama_index.core.retrievers import BaseRetriever


    def hashed_words(text):
        vector = [0.0] * 256
        vector[0] = 1.0  # no text embeds to zero
        for word in re.findall(r"[a-z0-9]+", text.lower()):
            if len(word) > 2:
                digest = hashlib.blake2b(word.encode(), digest_size=4).digest()
                vector[int.from_bytes(digest, "big") % 255 + 1] += 1.0
        return vector


    class HashedWords(BaseEmbedding):
        """A deterministic embedding with some meaning: a hashed bag of words."""

        def _get_text_embedding(self, text):
            return hashed_words(text)

        def _get_query_embedding(self, query):
            return hashed_words(query)

        async def _aget_query_embedding(self, query):
            return hashed_words(query)


    # Never LlamaIndex's OpenAI defaults: no key, no network.
    Settings.embed_model = HashedWords()
    Settings.llm = MockLLM()


    def index():
        # Ids from file names and positions, not random: equal scores then rank alike in
        # every index built from the same files.
        reader = SimpleDirectoryReader("handbook", recursive=True, filename_as_id=True)
        documents = reader.load_data()
        splitter = SentenceSplitter(
            chunk_size=160, chunk_overlap=20, id_func=lambda i, doc: f"{doc.doc_id}#{i}"
        )
        return VectorStoreIndex.from_documents(
            documents, embed_model=HashedWords(), transformations=[splitter]
        )


    INDEX = index()


    def retriever():
        return INDEX.as_retriever(similarity_top_k=5)


    class Exploding(BaseRetriever):
        def _retrieve(self, query_bundle):
            raise KeyError("node 17 is missing from the docstore")


    NOT_LLAMA = ["an index"]
    '''
)
DEPTH = 30


def _hits(bench: Any, found: list[Any]) -> list[dict[str, Any]]:
    return [
        bench.span(n.node.metadata["file_path"], n.node.text, n.node.start_char_idx, n.score)
        for n in found
    ]


def test_llamaindex_stages_score_like_the_same_hits_in_a_predictions_file(
    adapter_bench: Any,
) -> None:
    rag = adapter_bench.load("rag_li", RAG)
    config = f"""
depth = {DEPTH}
[[stages]]
name = "li-index"
retriever = {{ kind = "llamaindex", target = "rag_li.py:index" }}
[[stages]]
name = "li-retriever"
retriever = {{ kind = "llamaindex", target = "rag_li:retriever" }}
[[stages]]
name = "li-attribute"
retriever = {{ kind = "llamaindex", target = "rag_li:INDEX", similarity_top_k = 10 }}
"""
    index = rag.index()
    deep = index.as_retriever(similarity_top_k=DEPTH)
    shallow = rag.INDEX.as_retriever(similarity_top_k=10)
    queries, scores = adapter_bench.compare(
        config,
        {
            "li-index": lambda q: _hits(adapter_bench, deep.retrieve(q)),
            "li-retriever": lambda q: _hits(adapter_bench, deep.retrieve(q)),
            "li-attribute": lambda q: _hits(adapter_bench, shallow.retrieve(q)),
        },
    )
    assert queries == 3 * 172
    assert scores >= queries * 20  # every metric of every query
    report = load_report(adapter_bench.workspace / "groundkit-report.json")
    assert report.stage("li-index").kind == "llamaindex"
    assert "llama-index-core" in report.run.package_versions
    # The factory's retriever asked for 5; the stage's count is the run's depth.
    assert max(len(q.hits) for q in report.stage("li-retriever").queries) == DEPTH


def test_a_live_retriever_keeps_its_similarity_top_k(adapter_bench: Any) -> None:
    rag = adapter_bench.load("rag_li", RAG)
    retriever = rag.retriever()
    report = evaluate(
        Corpus.from_directory("handbook"),
        load_judgments("judgments.jsonl")[:15],
        EvalSettings(depth=8, bootstrap={"resamples": 20}),
        stages={"li": LlamaIndexRetriever(target=retriever)},
    )
    assert {len(q.hits) for q in report.stage("li").queries} == {8}
    assert retriever.similarity_top_k == 5  # set while the stage ran, restored after


@pytest.mark.parametrize(
    ("spec", "fragment"),
    [
        ("x=llamaindex:rag_li:NOT_LLAMA", "'rag_li:NOT_LLAMA' is a list, not a LlamaIndex"),
        ("x=llamaindex:rag_li:hashed_words", "'rag_li:hashed_words' is a function"),
        ("x=llamaindex:rag_li.py:nothing", "has no function 'nothing'"),
    ],
)
def test_a_target_that_is_not_llamaindex_exits_two(
    adapter_bench: Any, spec: str, fragment: str
) -> None:
    adapter_bench.load("rag_li", RAG)
    result = adapter_bench.run("", "--stage", spec)
    assert result.exit_code == 2, result.output
    (line,) = [line for line in result.output.splitlines() if line.startswith("error: ")]
    assert fragment in line, line
    assert not (adapter_bench.workspace / "groundkit-report.json").exists()


def test_a_llamaindex_exception_fails_the_stage(adapter_bench: Any) -> None:
    adapter_bench.load("rag_li", RAG)
    result = adapter_bench.run(
        "", "--stage", "boom=llamaindex:rag_li:Exploding", "--stage", "ok=llamaindex:rag_li:INDEX"
    )
    assert result.exit_code == 1, result.output
    (line,) = [line for line in result.output.splitlines() if line.startswith("error: ")]
    first = adapter_bench.judgments[0]["query_id"]
    assert f"stage 'boom': query {first!r}: the retriever raised KeyError" in line, line
    report = load_report(adapter_bench.workspace / "groundkit-report.json")
    assert report.stage("ok").aggregates["recall@10"].mean > 0.3


def test_similarity_top_k_on_a_retriever_without_one_exits_two(adapter_bench: Any) -> None:
    adapter_bench.load("rag_li", RAG)
    config = (
        '[[stages]]\nname = "x"\n'
        'retriever = { kind = "llamaindex", target = "rag_li:Exploding", similarity_top_k = 3 }\n'
    )
    result = adapter_bench.run(config)
    assert result.exit_code == 2, result.output
    assert "stage 'x': Exploding has no similarity_top_k" in result.output
