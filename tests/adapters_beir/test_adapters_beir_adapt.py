"""Adapting well-formed BEIR datasets: output layout, content, round trip through core."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from groundkit.adapters.beir import (
    COMPARABILITY_NOTE,
    TITLE_SEPARATOR,
    BeirAdaptationReport,
    BeirError,
    adapt_beir_dataset,
    adapted_document_text,
)
from groundkit.judgments import Corpus, load_judgments, resolve_judgments
from groundkit.judgments.trec import IdMap, read_id_map


def test_writes_one_file_per_document_with_title_separator(
    make_beir: Callable[..., Path], tmp_path: Path
) -> None:
    out = tmp_path / "out"
    report = adapt_beir_dataset(make_beir(), out)
    corpus = out / "corpus"
    assert sorted(p.name for p in corpus.iterdir()) == [f"d{i}.txt" for i in range(1, 6)]
    assert (corpus / "d1.txt").read_bytes() == b"Aspirin\n\nAspirin thins the blood."
    # Empty title: the body alone, line endings kept byte for byte.
    assert (corpus / "d2.txt").read_bytes() == b"Ibuprofen reduces fever.\r\nIt is an NSAID."
    assert (corpus / "d4.txt").read_text() == "Unrelated text about trains."
    assert (corpus / "d5.txt").read_text() == "Only a title"
    assert report.document_count == 5
    assert report.total_characters == sum(
        len(p.read_bytes().decode("utf-8")) for p in corpus.iterdir()
    )
    hidden = [p.relative_to(out).as_posix() for p in out.glob("**/.*")]
    assert hidden == [".groundkit-beir.json"], "no temporary files may remain"
    assert not list(tmp_path.glob(".*.tmp")), "no temporary sibling folder may remain"


def test_judgments_are_whole_documents_graded_by_score(
    make_beir: Callable[..., Path], tmp_path: Path
) -> None:
    out = tmp_path / "out"
    report = adapt_beir_dataset(make_beir(), out)
    judgments = load_judgments(out / "judgments.jsonl")
    # q4 has only a zero-score row: not a positive, so not judged.
    assert [j.query_id for j in judgments] == ["q1", "q2", "q3"]
    assert all(j.category == "normal" for j in judgments)
    q2 = judgments[1]
    assert q2.query == "Which drug reduces fever?"
    assert [(g.doc, g.grade) for g in q2.gold] == [("d2.txt", 2), ("d3.txt", 1)]
    assert q2.gold[1].quote == "Paracetamol\n\nParacetamol is also called acetaminophen."
    assert report.query_count == 3
    assert report.relevance_pair_count == 5
    # Nothing renamed, but the map still says how BEIR ids became groundkit's (".txt").
    assert report.id_map_path == (out / "id_map.json").absolute()
    assert read_id_map(out / "id_map.json") == IdMap(document_suffix=".txt")
    assert json.loads((out / "id_map.json").read_text(encoding="utf-8")) == {
        "document_suffix": ".txt",
        "documents": {},
        "queries": {},
    }
    lines = (out / "judgments.jsonl").read_text().splitlines()
    assert [json.loads(line)["query_id"] for line in lines] == ["q1", "q2", "q3"]


def test_round_trip_every_quote_resolves_exactly(
    make_beir: Callable[..., Path], tmp_path: Path
) -> None:
    out = tmp_path / "out"
    adapt_beir_dataset(make_beir(), out)
    corpus = Corpus.from_directory(out / "corpus")
    judgments = load_judgments(out / "judgments.jsonl")
    resolved = resolve_judgments(judgments, corpus)
    quotes = [quote for item in resolved for quote in item.quotes]
    assert len(quotes) == 5
    for quote in quotes:
        assert quote.method == "exact"
        (span,) = quote.spans
        assert span.doc == quote.gold.doc
        assert (span.start, span.end) == (0, len(corpus[span.doc]))


def test_report_fields_and_note(make_beir: Callable[..., Path], tmp_path: Path) -> None:
    source = make_beir()
    out = tmp_path / "new" / "nested" / "out"
    report = adapt_beir_dataset(source, out, split="test")
    assert isinstance(report, BeirAdaptationReport)
    assert report.source_dir == source.absolute()
    assert report.output_dir == out.absolute()
    assert report.corpus_dir == out.absolute() / "corpus"
    assert report.judgments_path == out.absolute() / "judgments.jsonl"
    assert report.split == "test"
    assert report.id_mapping == "strict"
    assert report.mapped_document_ids == {}
    assert report.mapped_query_ids == {}
    assert report.notes[0] == COMPARABILITY_NOTE
    # q4 has only a score-0 row: left out, and said so.
    assert report.no_positive_query_count == 1
    assert "1 queries have qrels rows in split 'test' but none" in report.notes[1]
    assert report.unjudged_query_count == 0
    assert "not comparable to published BEIR numbers" in COMPARABILITY_NOTE
    assert "--level document" in COMPARABILITY_NOTE
    with pytest.raises(ValueError, match="frozen"):
        report.split = "dev"  # type: ignore[misc]


def test_gzip_inputs_give_identical_output(make_beir: Callable[..., Path], tmp_path: Path) -> None:
    adapt_beir_dataset(make_beir("plain"), tmp_path / "a")
    adapt_beir_dataset(make_beir("packed", gzipped=True), tmp_path / "b")
    assert not (tmp_path / "packed" / "corpus.jsonl").exists()
    for name in ("judgments.jsonl", *(f"corpus/d{i}.txt" for i in range(1, 6))):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


def test_headerless_qrels_and_other_split(make_beir: Callable[..., Path], tmp_path: Path) -> None:
    source = make_beir(header=False, split="dev.v2")
    report = adapt_beir_dataset(source, tmp_path / "out", split="dev.v2")
    # The first row (q1 d1) is data, not a header.
    assert report.relevance_pair_count == 5
    assert report.query_count == 3


def test_qrels_crlf_blank_lines_and_float_scores(
    make_beir: Callable[..., Path], tmp_path: Path
) -> None:
    text = "query-id\tcorpus-id\tscore\r\n\r\nq1\td1\t1.0\r\nq2\td2\t-1\r\nq3\td3\t3\r\n"
    report = adapt_beir_dataset(make_beir(qrels_text=text), tmp_path / "out")
    judgments = load_judgments(tmp_path / "out" / "judgments.jsonl")
    assert [(j.query_id, j.gold[0].grade) for j in judgments] == [("q1", 1), ("q3", 3)]
    assert report.relevance_pair_count == 2


def test_progress_callback_reaches_total(make_beir: Callable[..., Path], tmp_path: Path) -> None:
    calls: list[tuple[int, int]] = []
    adapt_beir_dataset(make_beir(), tmp_path / "out", progress=lambda d, t: calls.append((d, t)))
    assert calls[0] == (0, 5)
    assert calls[-1] == (5, 5)
    assert [done for done, _ in calls] == sorted(done for done, _ in calls)


def test_existing_empty_output_and_judgments_file_are_reused(
    make_beir: Callable[..., Path], tmp_path: Path
) -> None:
    out = tmp_path / "out"
    (out / "corpus").mkdir(parents=True)
    (out / "judgments.jsonl").write_text("stale\n")
    (out / "notes.txt").write_text("keep me")
    # Not a judgments file and not from an adaptation: replaced only when forced.
    with pytest.raises(BeirError, match="not from an earlier adaptation"):
        adapt_beir_dataset(make_beir(), out)
    assert (out / "judgments.jsonl").read_text() == "stale\n"
    adapt_beir_dataset(make_beir(), out, force=True)
    assert len(load_judgments(out / "judgments.jsonl")) == 3
    assert (out / "notes.txt").read_text() == "keep me"
    # An earlier adaptation (its manifest) is replaced without --force.
    adapt_beir_dataset(make_beir(), out)
    assert len(load_judgments(out / "judgments.jsonl")) == 3


def test_unicode_ids_and_texts_survive(
    make_beir: Callable[..., Path],
    tmp_path: Path,
    beir_records: tuple[list[dict[str, Any]], list[dict[str, Any]], list[tuple[str, str, int]]],
) -> None:
    documents, _queries, qrels = beir_records
    documents.append({"_id": "Zürich 2", "title": "Café ☕", "text": "Crème brûlée — “quoted”."})
    qrels.append(("q1", "Zürich 2", 1))
    out = tmp_path / "out"
    adapt_beir_dataset(make_beir(documents=documents, qrels=qrels), out)
    expected = "Café ☕\n\nCrème brûlée — “quoted”."
    assert (out / "corpus" / "Zürich 2.txt").read_text(encoding="utf-8") == expected
    resolved = resolve_judgments(
        load_judgments(out / "judgments.jsonl"), Corpus.from_directory(out / "corpus")
    )
    assert all(q.method == "exact" for r in resolved for q in r.quotes)


def test_adapted_document_text_rules() -> None:
    assert TITLE_SEPARATOR == "\n\n"
    assert adapted_document_text("T", "B") == "T\n\nB"
    assert adapted_document_text("", "B") == "B"
    assert adapted_document_text("  ", "B") == "B"
    assert adapted_document_text("T", "") == "T"
    assert adapted_document_text("\ufeffT", "B") == "T\n\nB"
    assert adapted_document_text("", " \n") == ""


def test_relative_paths(
    make_beir: Callable[..., Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_beir("rel-source")
    monkeypatch.chdir(tmp_path)
    report = adapt_beir_dataset(Path("rel-source"), Path("rel-out/nested"))
    assert report.output_dir == tmp_path / "rel-out" / "nested"
    assert report.corpus_dir.is_absolute()
    assert len(load_judgments(tmp_path / "rel-out" / "nested" / "judgments.jsonl")) == 3
    assert len(list((tmp_path / "rel-out" / "nested" / "corpus").iterdir())) == 5
