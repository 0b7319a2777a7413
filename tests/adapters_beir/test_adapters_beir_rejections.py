"""Every refusal is one line and leaves the output location exactly as it was."""

from __future__ import annotations

import gzip
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from groundkit.adapters.beir import BeirError, adapt_beir_dataset
from groundkit.judgments import JudgmentError

Records = tuple[list[dict[str, Any]], list[dict[str, Any]], list[tuple[str, str, int]]]
Mutation = Callable[[Records], dict[str, Any]]


def _docs(records: Records, *extra: dict[str, Any]) -> dict[str, Any]:
    documents, queries, qrels = records
    return {"documents": [*documents, *extra], "queries": queries, "qrels": qrels}


def _queries(records: Records, *extra: dict[str, Any]) -> dict[str, Any]:
    documents, queries, qrels = records
    return {"documents": documents, "queries": [*queries, *extra], "qrels": qrels}


def _corpus_lines(records: Records, *lines: str) -> dict[str, Any]:
    text = "".join(json.dumps(d) + "\n" for d in records[0]) + "".join(lines)
    return {"corpus_text": text}


def _qrels(*lines: str) -> dict[str, Any]:
    return {"qrels_text": "query-id\tcorpus-id\tscore\n" + "".join(lines)}


# name -> (dataset arguments built from fresh default records, expected message pattern)
DATASET_CASES: dict[str, tuple[Mutation, str]] = {
    "malformed json": (
        lambda r: _corpus_lines(r, "{not json}\n"),
        r"corpus\.jsonl:6: invalid JSON",
    ),
    "not an object": (
        lambda r: _corpus_lines(r, "[1, 2]\n"),
        r"corpus\.jsonl:6: expected a JSON object",
    ),
    "duplicate key": (
        lambda r: _corpus_lines(r, '{"_id": "d9", "_id": "d8", "text": "x"}\n'),
        r"corpus\.jsonl:6: invalid JSON: key '_id' appears twice",
    ),
    "nan": (
        lambda r: _corpus_lines(r, '{"_id": "d9", "text": "x", "s": NaN}\n'),
        r":6: invalid JSON",
    ),
    "missing _id": (lambda r: _docs(r, {"text": "x"}), r"corpus\.jsonl:6: missing field '_id'"),
    "numeric _id": (lambda r: _docs(r, {"_id": 7, "text": "x"}), r":6: '_id' must be a string"),
    "null _id": (lambda r: _docs(r, {"_id": None, "text": "x"}), r":6: '_id' must be a string"),
    "empty _id": (lambda r: _docs(r, {"_id": "", "text": "x"}), r"corpus\.jsonl:6: '_id' is empty"),
    "duplicate document": (
        lambda r: _docs(r, {"_id": "d2", "text": "again"}),
        r"corpus\.jsonl:6: d2: duplicate document id \(first on line 2\)",
    ),
    "neither title nor text": (
        lambda r: _docs(r, {"_id": "d9", "title": " ", "text": ""}),
        r"corpus\.jsonl:6: d9: document has neither title nor text",
    ),
    "missing text": (
        lambda r: _docs(r, {"_id": "d9", "title": "T"}),
        r":6: d9: missing field 'text'",
    ),
    "numeric text": (
        lambda r: _docs(r, {"_id": "d9", "text": 5}),
        r":6: d9: 'text' must be a string",
    ),
    "list title": (
        lambda r: _docs(r, {"_id": "d9", "title": ["a"], "text": "x"}),
        r"'title' must be",
    ),
    "nul in text": (lambda r: _docs(r, {"_id": "d9", "text": "a\x00b"}), r":6: d9: .*NUL"),
    "lone surrogate": (
        lambda r: _corpus_lines(r, '{"_id": "d9", "text": "a\\ud800"}\n'),
        r":6: d9: 'text' contains an unpaired surrogate",
    ),
    "duplicate query": (
        lambda r: _queries(r, {"_id": "q1", "text": "again"}),
        r"queries\.jsonl:5: q1: duplicate query id \(first on line 1\)",
    ),
    "empty query": (
        lambda r: _queries(r, {"_id": "q9", "text": "   "}),
        r"queries\.jsonl:5: q9: query text is empty",
    ),
    "query without _id": (
        lambda r: _queries(r, {"text": "x"}),
        r"queries\.jsonl:5: missing field '_id'",
    ),
    "empty corpus": (lambda r: {"documents": []}, r"corpus\.jsonl: no documents in file"),
    "empty queries": (lambda r: {"queries": []}, r"queries\.jsonl: no queries in file"),
    "unknown document in qrels": (
        lambda r: _qrels("q1\td1\t1\n", "q2\tnope\t1\n"),
        r"qrels/test\.tsv:3: document id 'nope' is not in the corpus",
    ),
    "unknown query in qrels": (
        lambda r: _qrels("q1\td1\t1\n", "q7\td1\t0\n"),
        r"qrels/test\.tsv:3: query id 'q7' is not in the queries file",
    ),
    "no positive rows": (
        lambda r: _qrels("q1\td1\t0\n", "q2\td2\t-1\n"),
        r"qrels/test\.tsv: the split has no positive rows",
    ),
    "empty qrels": (lambda r: {"qrels_text": ""}, r"no positive rows"),
    "two columns": (
        lambda r: _qrels("q1\td1\n"),
        r"qrels/test\.tsv:2: expected 3 tab-separated columns",
    ),
    "four columns among three": (
        lambda r: _qrels("q1\td1\t1\n", "q2\t0\td2\t1\n"),
        r"test\.tsv:3: expected 3 .* found 4",
    ),
    "three columns among four": (
        lambda r: _qrels("q1 0 d1 1\n", "q2 d2 1\n"),
        r"test\.tsv:3: expected 4 columns .* found 3",
    ),
    "score beyond 64 bits": (
        lambda r: _qrels("q1\td1\t100000000000000000000000\n"),
        r"test\.tsv:2: score '100000000000000000000000' does not fit in 64 bits",
    ),
    "non-numeric score": (
        lambda r: _qrels("q1\td1\thigh\n"),
        r"test\.tsv:2: score 'high' is not a number",
    ),
    "fractional score": (lambda r: _qrels("q1\td1\t1.5\n"), r"score '1\.5' is not a whole number"),
    "infinite score": (lambda r: _qrels("q1\td1\tinf\n"), r"score 'inf' is not a whole number"),
    "empty id in qrels": (
        lambda r: _qrels("\td1\t1\n"),
        r"test\.tsv:2: empty query-id or corpus-id",
    ),
    "repeated pair": (
        lambda r: _qrels("q1\td1\t1\n", "q1\td1\t2\n"),
        r"test\.tsv:3: query 'q1' and document 'd1' already have a row \(line 2\)",
    ),
}

UNSAFE_DOC_IDS = [
    "..",
    ".",
    "a/b",
    "a\\b",
    "nul\x00byte",
    "line\nbreak",
    "CON",
    "lpt1",
    "nul.txt",
    "trailing.",
    "trailing ",
    "x" * 252,
    ".hidden",
    "<dbpedia:Oceanic_Airlines>",
    'quote"d',
]


@pytest.fixture(params=["absent", "existing"])
def output(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    """The output location: absent, or an existing folder with content and an empty corpus/.

    (A user's own ``judgments.jsonl`` there is refused before the dataset is read: see
    test_beir_adapt_guard.py.)
    """
    out = tmp_path / "out"
    if request.param == "existing":
        (out / "corpus").mkdir(parents=True)
        (out / "keep.txt").write_text("user data")
        (out / "judgments.jsonl").write_text("")  # empty: nothing to lose by replacing it
    return out


def assert_refused(
    tree: Callable[[Path], Any], out: Path, pattern: str, call: Callable[[], object]
) -> BeirError:
    before = tree(out)
    with pytest.raises(BeirError, match=pattern) as caught:
        call()
    message = str(caught.value)
    assert "\n" not in message
    assert isinstance(caught.value, JudgmentError)
    assert isinstance(caught.value, ValueError)
    assert tree(out) == before, "a refused adaptation must leave the output as it was"
    return caught.value


@pytest.mark.parametrize("case", sorted(DATASET_CASES))
def test_malformed_dataset_is_refused(
    case: str,
    make_beir: Callable[..., Path],
    beir_records: Records,
    output: Path,
    tree: Callable[[Path], Any],
) -> None:
    mutate, pattern = DATASET_CASES[case]
    source = make_beir(**mutate(beir_records))
    assert_refused(tree, output, pattern, lambda: adapt_beir_dataset(source, output))


@pytest.mark.parametrize("doc_id", UNSAFE_DOC_IDS, ids=repr)
def test_unsafe_document_id_is_refused_in_strict_mode(
    doc_id: str,
    make_beir: Callable[..., Path],
    beir_records: Records,
    output: Path,
    tree: Callable[[Path], Any],
) -> None:
    documents, queries, qrels = beir_records
    documents.append({"_id": doc_id, "text": "unsafe"})
    source = make_beir(documents=documents, queries=queries, qrels=qrels)
    error = assert_refused(
        tree,
        output,
        r"corpus\.jsonl:6: .*1 document id\(s\) .* cannot be used as groundkit ids; first: .*"
        r'id_mapping="slug" \(CLI: --id-mapping slug\)',
        lambda: adapt_beir_dataset(source, output),
    )
    assert error.item_id == doc_id
    assert error.line == 6


def test_case_collision_is_refused(
    make_beir: Callable[..., Path], beir_records: Records, output: Path, tree: Callable[[Path], Any]
) -> None:
    documents, queries, qrels = beir_records
    documents.append({"_id": "D1", "text": "shouting"})
    documents.append({"_id": "Stra\u00dfe", "text": "street"})
    documents.append({"_id": "STRASSE", "text": "street again"})
    source = make_beir(documents=documents, queries=queries, qrels=qrels)
    assert_refused(
        tree,
        output,
        r"2 document id\(s\) \('D1', 'STRASSE'\).*first: document ids 'd1' and 'D1' would be "
        r"the same file on a case-insensitive file system",
        lambda: adapt_beir_dataset(source, output),
    )


def test_dbpedia_and_nfcorpus_ids_are_listed_with_count(
    make_beir: Callable[..., Path], output: Path, tree: Callable[[Path], Any]
) -> None:
    documents = [{"_id": f"<dbpedia:Entity_{i}>", "text": f"entity {i}"} for i in range(8)]
    queries = [
        {"_id": "SemSearch_ES-2", "text": "entity one"},
        {"_id": "INEX_LD-2012351", "text": "entity two"},
        {"_id": "PLAIN-2", "text": "entity three"},
        {"_id": "ok-1", "text": "fine"},
        {"_id": "Unused_Query", "text": "not judged, so its id does not matter"},
    ]
    qrels = [
        ("SemSearch_ES-2", "<dbpedia:Entity_1>", 1),
        ("INEX_LD-2012351", "<dbpedia:Entity_2>", 2),
        ("PLAIN-2", "<dbpedia:Entity_3>", 1),
        ("ok-1", "<dbpedia:Entity_4>", 1),
    ]
    source = make_beir(documents=documents, queries=queries, qrels=qrels)
    error = assert_refused(
        tree,
        output,
        r"8 document id\(s\) \('<dbpedia:Entity_0>', '<dbpedia:Entity_1>', "
        r"'<dbpedia:Entity_2>', '<dbpedia:Entity_3>', '<dbpedia:Entity_4>' and 3 more\) and "
        r"3 query id\(s\) \('SemSearch_ES-2', 'INEX_LD-2012351', 'PLAIN-2'\)",
        lambda: adapt_beir_dataset(source, output),
    )
    assert "--id-mapping slug" in str(error)
    assert "Unused_Query" not in str(error)


def test_query_ids_only_are_reported_with_queries_file(
    make_beir: Callable[..., Path], beir_records: Records, output: Path, tree: Callable[[Path], Any]
) -> None:
    documents, queries, qrels = beir_records
    queries.append({"_id": "PLAIN-2", "text": "a nutrition question"})
    qrels.append(("PLAIN-2", "d1", 1))
    source = make_beir(documents=documents, queries=queries, qrels=qrels)
    assert_refused(
        tree,
        output,
        r"queries\.jsonl:5: PLAIN-2: 1 query id\(s\) \('PLAIN-2'\) cannot be used .*kebab-case",
        lambda: adapt_beir_dataset(source, output),
    )


@pytest.mark.parametrize("split", ["..", ".", "../test", "a/b", "a\\b", "te st", "", "tëst", "CON"])
def test_bad_split_name_is_refused(
    split: str, make_beir: Callable[..., Path], output: Path, tree: Callable[[Path], Any]
) -> None:
    source = make_beir()
    (source / "test.tsv").write_text("q1\td1\t1\n")  # bait for "../test"
    assert_refused(
        tree, output, "split name", lambda: adapt_beir_dataset(source, output, split=split)
    )


@pytest.mark.parametrize("missing", ["corpus.jsonl", "queries.jsonl", "qrels/test.tsv"])
def test_missing_file_is_refused(
    missing: str, make_beir: Callable[..., Path], output: Path, tree: Callable[[Path], Any]
) -> None:
    source = make_beir()
    (source / missing).unlink()
    stem = missing.split("/")[-1].split(".")[0]
    assert_refused(tree, output, re.escape(stem), lambda: adapt_beir_dataset(source, output))


def test_missing_split_lists_available_splits(
    make_beir: Callable[..., Path], output: Path, tree: Callable[[Path], Any]
) -> None:
    source = make_beir()
    assert_refused(
        tree,
        output,
        r"missing qrels file for split 'dev' \(splits found: test\)",
        lambda: adapt_beir_dataset(source, output, split="dev"),
    )


def test_missing_source_folder(tmp_path: Path, output: Path, tree: Callable[[Path], Any]) -> None:
    assert_refused(
        tree,
        output,
        "BEIR dataset folder not found",
        lambda: adapt_beir_dataset(tmp_path / "no", output),
    )


def test_both_plain_and_gzip_corpus_is_ambiguous(
    make_beir: Callable[..., Path], output: Path, tree: Callable[[Path], Any]
) -> None:
    source = make_beir()
    with gzip.open(source / "corpus.jsonl.gz", "wb") as handle:
        handle.write((source / "corpus.jsonl").read_bytes())
    assert_refused(
        tree,
        output,
        "both corpus.jsonl and corpus.jsonl.gz exist",
        lambda: adapt_beir_dataset(source, output),
    )


def test_corrupt_and_truncated_gzip(
    make_beir: Callable[..., Path], output: Path, tree: Callable[[Path], Any]
) -> None:
    source = make_beir(gzipped=True)
    packed = (source / "corpus.jsonl.gz").read_bytes()
    (source / "corpus.jsonl.gz").write_bytes(packed[: len(packed) // 2])
    assert_refused(
        tree,
        output,
        r"corpus\.jsonl\.gz:\d+: cannot read",
        lambda: adapt_beir_dataset(source, output),
    )
    (source / "corpus.jsonl.gz").write_bytes(b"not gzip at all\n")
    assert_refused(
        tree,
        output,
        r"corpus\.jsonl\.gz:1: cannot read",
        lambda: adapt_beir_dataset(source, output),
    )


def test_non_utf8_corpus(
    make_beir: Callable[..., Path], output: Path, tree: Callable[[Path], Any]
) -> None:
    source = make_beir()
    with (source / "corpus.jsonl").open("ab") as handle:
        handle.write(b'{"_id": "d9", "text": "caf\xe9"}\n')
    assert_refused(
        tree,
        output,
        r"corpus\.jsonl:6: not valid UTF-8 \(byte 0xe9",
        lambda: adapt_beir_dataset(source, output),
    )


def test_invalid_id_mapping_value(
    make_beir: Callable[..., Path], output: Path, tree: Callable[[Path], Any]
) -> None:
    source = make_beir()
    assert_refused(
        tree,
        output,
        "id_mapping must be 'strict' or 'slug'",
        lambda: adapt_beir_dataset(source, output, id_mapping="loose"),  # type: ignore[arg-type]
    )
