"""Id maps: the file the BEIR adapter writes and the harness reads back."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from groundkit.judgments import JudgmentError
from groundkit.judgments.trec import (
    ID_MAP_FILE_NAME,
    IdMap,
    id_map_beside,
    read_id_map,
    write_id_map,
)


def test_ids_through_the_map() -> None:
    id_map = IdMap(
        document_suffix=".txt",
        documents={"<dbpedia:Oceanic_Airlines>": "dbpedia-oceanic-airlines-1a2b3c4d"},
        queries={"PLAIN-2": "plain-2"},
    )
    assert id_map.document_id("4983") == "4983.txt"
    assert id_map.document_id("<dbpedia:Oceanic_Airlines>") == (
        "dbpedia-oceanic-airlines-1a2b3c4d.txt"
    )
    assert id_map.query_id("PLAIN-2") == "plain-2"
    assert id_map.query_id("7") == "7"
    assert IdMap().document_id("a.md") == "a.md"


def test_file_round_trip_and_layout(tmp_path: Path) -> None:
    id_map = IdMap(document_suffix=".txt", documents={"b": "x", "a": "é"}, queries={})
    path = tmp_path / ID_MAP_FILE_NAME
    write_id_map(id_map, path)
    text = path.read_text(encoding="utf-8")
    assert text == (
        '{\n  "document_suffix": ".txt",\n  "documents": {\n    "a": "é",\n    "b": "x"\n'
        '  },\n  "queries": {}\n}\n'
    )
    assert read_id_map(path) == id_map


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        ("{", "not JSON"),
        ("[]", "not a groundkit id map"),
        ('{"documents": {}, "queries": {}, "extra": 1}', "unknown field 'extra'"),
        ('{"documents": {"a": 1}}', "documents.a"),
        ('{"documents": {"a": "x", "b": "x"}}', "document ids 'a' and 'b' both map to 'x'"),
        ('{"queries": {"Q": ""}}', "query ids must not be empty"),
    ],
)
def test_bad_files_are_one_line_errors(tmp_path: Path, content: str, needle: str) -> None:
    path = tmp_path / "id_map.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(JudgmentError) as caught:
        read_id_map(path)
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(str(path))
    assert needle in message


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(JudgmentError, match="id map file not found"):
        read_id_map(tmp_path / "absent.json")


def test_map_beside_a_corpus_folder(tmp_path: Path) -> None:
    corpus = tmp_path / "adapted" / "corpus"
    corpus.mkdir(parents=True)
    assert id_map_beside(corpus) is None  # no file yet
    write_id_map(IdMap(document_suffix=".txt"), tmp_path / "adapted" / ID_MAP_FILE_NAME)
    assert id_map_beside(corpus) == (tmp_path / "adapted" / ID_MAP_FILE_NAME).absolute()
    assert id_map_beside(str(corpus)) == id_map_beside(corpus)
    assert id_map_beside(None) is None
    corpus_file = tmp_path / "adapted" / "corpus.jsonl"
    corpus_file.write_text(json.dumps({"id": "a", "text": "x"}) + "\n", encoding="utf-8")
    assert id_map_beside(corpus_file) is None  # only a corpus folder has a map beside it
