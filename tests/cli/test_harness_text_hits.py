"""Hits given as text and their source document: frameworks duck-typed, unlocated text counted."""

from __future__ import annotations

import json
import re
import uuid
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from groundkit.harness import (
    EvalSettings,
    HarnessError,
    PredictionsRetriever,
    StageConfig,
    evaluate,
)
from groundkit.judgments import SCHEMA_VERSION, CharsChunker, EvalReport, GoldQuote, Judgment
from groundkit.judgments.report import check_report, parse_report

DOCS = {
    "guides/a.txt": "Alpha particles are helium nuclei. They are stopped by a sheet of paper.",
    "b.txt": "Beta particles are electrons. A thin aluminium foil stops them.",
    "c.txt": "Gamma rays are photons. Thick lead shielding reduces them.",
}
JUDGMENTS = [
    Judgment(
        query_id="q-alpha",
        query="What stops alpha particles?",
        gold=(GoldQuote(doc="guides/a.txt", quote="stopped by a sheet of paper"),),
    ),
    Judgment(
        query_id="q-beta",
        query="What stops beta particles?",
        gold=(GoldQuote(doc="b.txt", quote="aluminium foil stops them"),),
    ),
]


# Stand-ins with the attributes the frameworks' objects have (no framework is imported).
@dataclass
class LangChainDocument:
    page_content: str
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass
class LlamaTextNode:
    text: str
    metadata: dict[str, Any] = field(default_factory=dict)
    ref_doc_id: str | None = None
    start_char_idx: int | None = None

    def get_content(self) -> str:
        return self.text


@dataclass
class LlamaNodeWithScore:
    node: LlamaTextNode
    score: float | None = None


@dataclass
class HaystackDocument:
    content: str
    meta: dict[str, Any] = field(default_factory=dict)
    score: float | None = None
    id: str = field(default_factory=lambda: uuid.uuid4().hex)


def _run(hits_for: Any, **kwargs: Any) -> EvalReport:
    return evaluate(
        DOCS,
        JUDGMENTS,
        EvalSettings(chunker=CharsChunker(size=40, overlap=0), bootstrap={"resamples": 50}),
        stages={"mine": hits_for},
        **kwargs,
    )


def _spans(report: EvalReport, query: int = 0) -> list[tuple[str, int, int, float]]:
    return [(h.doc, h.start, h.end, h.score) for h in report.stage("mine").queries[query].hits]


PAPER = DOCS["guides/a.txt"].index("stopped by")
FOIL = DOCS["b.txt"].index("aluminium foil")


@pytest.mark.parametrize(
    "hit",
    [
        LangChainDocument(
            "stopped by a sheet", {"source": "/data/corpus/guides/a.txt", "score": 0.5}
        ),
        (LangChainDocument("stopped by a sheet", {"source": "guides/a.txt"}), 0.5),
        LlamaNodeWithScore(LlamaTextNode("stopped by a sheet", {"file_path": "guides/a.txt"}), 0.5),
        LlamaNodeWithScore(LlamaTextNode("stopped  by\na sheet", ref_doc_id="guides/a.txt"), 0.5),
        LlamaNodeWithScore(LlamaTextNode("stopped by a sheet", ref_doc_id=str(uuid.uuid4())), 0.5),
        HaystackDocument("stopped by a sheet", {"file_path": "guides/a.txt"}, score=0.5),
        HaystackDocument("stopped by a sheet", {"source_id": "guides/a.txt"}, score=0.5),
        {"doc": "guides/a.txt", "text": "stopped by a sheet", "score": 0.5},
        ("guides/a.txt", PAPER, PAPER + 18, 0.5),
    ],
    ids=[
        "langchain-path",
        "langchain-pair",
        "llamaindex-file-path",
        "llamaindex-ref-doc-tolerant",
        "llamaindex-generated-id",
        "haystack-file-path",
        "haystack-source-id",
        "dict",
        "span",
    ],
)
def test_every_hit_form_scores_the_same_span(hit: Any) -> None:
    report = _run(lambda query: [hit])
    assert _spans(report) == [("guides/a.txt", PAPER, PAPER + 18, 0.5)]
    assert report.stage("mine").unlocated == []


def test_recorded_offsets_are_used_when_the_text_is_there() -> None:
    text = "are"  # occurs twice in the document: the recorded offset picks the second
    second = DOCS["guides/a.txt"].index("are", 10)
    forms = [
        LangChainDocument(text, {"source": "guides/a.txt", "start_index": second}),
        LlamaTextNode(text, {"file_path": "guides/a.txt"}, start_char_idx=second),
        HaystackDocument(text, {"file_path": "guides/a.txt", "split_idx_start": second}),
    ]
    for form in forms:
        assert _spans(_run(lambda query, form=form: [form]))[0][1] == second, form
    stale = LangChainDocument(text, {"source": "guides/a.txt", "start_index": 3})
    first = DOCS["guides/a.txt"].index("are")
    assert _spans(_run(lambda query: [stale]))[0][1] == first  # wrong offset: located instead


def test_unlocated_text_is_counted_listed_and_noted_never_dropped_silently() -> None:
    def search(query: str) -> list[Any]:
        return [
            LangChainDocument("a paragraph rewritten by a cleaner", {"source": "guides/a.txt"}),
            LangChainDocument("stopped by a sheet of paper", {"source": "guides/a.txt"}),
            "no document holds this sentence at all",
        ]

    report = _run(search)
    mine = report.stage("mine")
    assert mine.error is None
    assert [(u.query_id, u.rank, u.doc) for u in mine.unlocated] == [
        ("q-alpha", 1, "guides/a.txt"),
        ("q-alpha", 3, None),
        ("q-beta", 1, "guides/a.txt"),
        ("q-beta", 3, None),
    ]
    assert mine.unlocated[0].text == "a paragraph rewritten by a cleaner"
    # The located hit keeps its place in the list the retriever returned, minus the gaps.
    assert [h.start for h in mine.queries[0].hits] == [PAPER]
    assert mine.queries[0].scores["recall@1"] == 1.0
    notes = [n for n in report.notes if "could not be located" in n]
    assert len(notes) == 1
    assert "Stage 'mine': 4 hits given as text" in notes[0]
    assert "query 'q-alpha' hit 1" in notes[0]
    data = json.loads(report.model_dump_json())
    assert data["schema_version"] == SCHEMA_VERSION
    assert check_report(data) == []
    assert data["stages"][1]["unlocated"][1] == {
        "query_id": "q-alpha",
        "rank": 3,
        "doc": None,
        "text": "no document holds this sentence at all",
    }


def test_a_report_of_schema_1_0_is_still_read() -> None:
    data = json.loads(_run(lambda query: [("b.txt", 0, 10)]).model_dump_json())
    data["schema_version"] = "1.0"
    for stage in data["stages"]:
        del stage["unlocated"]
    report = parse_report(data)
    assert report.stage("mine").unlocated == []


@pytest.mark.parametrize(
    ("hit", "message"),
    [
        (
            LangChainDocument("stopped by", {"source": "https://example.org/a.html"}),
            "stage 'mine': query 'q-alpha': hit 1: unknown document 'https://example.org/a.html'",
        ),
        (
            HaystackDocument("stopped by", {"file_path": "other/zzz.txt"}),
            r"hit 1: unknown document 'other/zzz.txt' \(not in the corpus\)",
        ),
        ({"doc": "nope.txt", "start": 0, "end": 3}, "hit 1: unknown document 'nope.txt'"),
        (("guides/a.txt", 5, 999), r"hit 1: span \[5, 999\) is out of bounds"),
        (object(), "hit 1: cannot read a hit from object"),
        (LangChainDocument("   ", {"source": "b.txt"}), "hit text must be a non-empty string"),
    ],
    ids=["url-source", "haystack-path", "dict-doc", "bounds", "object", "blank"],
)
def test_unreadable_hits_fail_the_stage_naming_stage_and_query(hit: Any, message: str) -> None:
    report = _run(lambda query: [hit])
    mine = report.stage("mine")
    assert mine.error is not None
    assert "\n" not in mine.error
    assert mine.queries == []
    assert report.baseline.aggregates  # the other stages are still scored
    assert re.search(message, mine.error), mine.error


def test_predictions_file_text_not_found_is_counted_not_fatal(tmp_path: Any) -> None:
    path = tmp_path / "p.jsonl"
    path.write_text(
        json.dumps({"query_id": "q-alpha", "hits": [{"doc": "b.txt", "text": "no such text"}]})
        + "\n",
        encoding="utf-8",
    )
    report = evaluate(
        DOCS,
        JUDGMENTS,
        stages={"p": StageConfig(name="p", retriever=PredictionsRetriever(path=path))},
    )
    assert [(u.query_id, u.rank, u.doc) for u in report.stage("p").unlocated] == [
        ("q-alpha", 1, "b.txt")
    ]
    path.write_text(
        json.dumps({"query_id": "q-alpha", "hits": [{"doc": "zzz", "text": "x"}]}) + "\n",
        encoding="utf-8",
    )
    with pytest.raises(
        HarnessError, match=":1: stage 'p': query 'q-alpha': hit 1: unknown document"
    ):
        evaluate(DOCS, JUDGMENTS, stages={"p": PredictionsRetriever(path=path)})


# --- property: a span and the same hit as located text score identically ---------------------

WORDS = st.sampled_from(
    ["alpha", "beta", "gamma", "paper", "foil", "lead", "rays", "stop", "the", "a", "of"]
)
TEXTS = st.lists(WORDS, min_size=3, max_size=30).map(" ".join)


@st.composite
def corpus_and_hits(draw: st.DrawFn) -> tuple[dict[str, str], list[tuple[str, int, int]]]:
    docs = {f"d{i}.txt": draw(TEXTS) for i in range(draw(st.integers(1, 4)))}
    hits = []
    for _ in range(draw(st.integers(1, 6))):
        doc = draw(st.sampled_from(sorted(docs)))
        text = docs[doc]
        start = draw(st.integers(0, len(text) - 1))
        end = draw(st.integers(start + 1, len(text)))
        piece = text[start:end]
        if not piece.strip():
            continue
        first = text.index(piece)  # exact matching finds the first occurrence
        hits.append((doc, first, first + len(piece)))
    return docs, hits


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=corpus_and_hits(),
    forms=st.lists(st.sampled_from(["dict", "lc", "llama", "hay"]), min_size=6, max_size=6),
)
def test_span_hits_and_text_located_hits_give_identical_scores(
    data: tuple[dict[str, str], list[tuple[str, int, int]]], forms: list[str]
) -> None:
    docs, hits = data
    first_doc = sorted(docs)[0]
    judgments = [
        Judgment(
            query_id="q",
            query="alpha paper",
            gold=(GoldQuote(doc=first_doc, quote=docs[first_doc].split()[0]),),
        )
    ]

    def as_text(index: int, doc: str, start: int, end: int) -> Any:
        text, score = docs[doc][start:end], float(10 - index)
        form = forms[index % len(forms)]
        if form == "lc":
            return LangChainDocument(text, {"source": doc, "score": score})
        if form == "llama":
            return LlamaNodeWithScore(LlamaTextNode(text, {"file_path": doc}), score)
        if form == "hay":
            return HaystackDocument(text, {"file_path": doc}, score=score)
        return {"doc": doc, "text": text, "score": score}

    spans = [(d, s, e, float(10 - i)) for i, (d, s, e) in enumerate(hits)]
    texts = [as_text(i, d, s, e) for i, (d, s, e) in enumerate(hits)]
    base = EvalSettings(bootstrap={"resamples": 20})
    report = evaluate(
        docs, judgments, base, stages={"spans": lambda q: spans, "texts": lambda q: texts}
    )
    by_span, by_text = report.stage("spans"), report.stage("texts")
    assert by_text.unlocated == []
    assert by_span.queries[0].hits == by_text.queries[0].hits
    assert by_span.queries[0].scores == by_text.queries[0].scores
    assert by_span.queries[0].evidence == by_text.queries[0].evidence
