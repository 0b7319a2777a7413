"""The id contracts, the deterministic slug mapping, and slug-mode adaptation."""

from __future__ import annotations

import hashlib
import json
import random
import unicodedata
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from groundkit.adapters.beir import _ids as ids_module
from groundkit.adapters.beir import adapt_beir_dataset, map_ids, slugify
from groundkit.adapters.beir._ids import document_id_problem, query_id_problem
from groundkit.judgments import Corpus, load_judgments, resolve_judgments
from groundkit.judgments.trec import IdMap, read_id_map


def h8(original: str) -> str:
    return hashlib.sha256(original.encode("utf-8")).hexdigest()[:8]


@pytest.mark.parametrize(
    ("original", "slug", "lossless"),
    [
        ("PLAIN-2", "plain-2", True),
        ("plain-2", "plain-2", True),
        ("SemSearch_ES-2", "semsearch-es-2", False),
        ("INEX_LD-2012351", "inex-ld-2012351", False),
        ("<dbpedia:Oceanic_Airlines>", "dbpedia-oceanic-airlines", False),
        ("Café Crème", "cafe-creme", False),
        ("--a--", "a", False),
        ("..", "", False),
        ("日本", "", False),
        ("\u212a", "k", False),  # KELVIN SIGN lowercases to "k" but is not ASCII: lossy
        ("A" * 80, "a" * 64, False),
    ],
)
def test_slugify(original: str, slug: str, lossless: bool) -> None:
    assert slugify(original) == (slug, lossless)


def test_real_dataset_ids() -> None:
    queries = map_ids(["SemSearch_ES-2", "INEX_LD-2012351", "PLAIN-2", "0", "4983"], "query")
    assert queries == {
        "SemSearch_ES-2": f"semsearch-es-2-{h8('SemSearch_ES-2')}",
        "INEX_LD-2012351": f"inex-ld-2012351-{h8('INEX_LD-2012351')}",
        "PLAIN-2": "plain-2",
    }
    documents = map_ids(["<dbpedia:Oceanic_Airlines>", "MED-10", "4983"], "document")
    # MED-10 (NFCorpus) and 4983 (SciFact) are valid file names: kept as they are.
    assert documents == {
        "<dbpedia:Oceanic_Airlines>": f"dbpedia-oceanic-airlines-{h8('<dbpedia:Oceanic_Airlines>')}"
    }


def test_collisions_get_hash_suffixes_and_valid_ids_are_never_renamed() -> None:
    mapped = map_ids(["PLAIN-2", "plain-2", "Plain-3", "PLAIN-3"], "query")
    assert mapped == {
        "PLAIN-2": f"plain-2-{h8('PLAIN-2')}",  # would collide with the valid "plain-2"
        "PLAIN-3": f"plain-3-{h8('PLAIN-3')}",  # the two spellings collide with each other
        "Plain-3": f"plain-3-{h8('Plain-3')}",
    }


def test_lossy_slugs_colliding_with_each_other() -> None:
    mapped = map_ids(["a_b", "a b", "a.b", "a-b"], "query")
    assert set(mapped) == {"a_b", "a b", "a.b"}
    assert len(set(mapped.values())) == 3
    assert all(name.startswith("a-b-") for name in mapped.values())


def test_valid_document_ids_colliding_by_case_are_all_renamed() -> None:
    mapped = map_ids(["Doc1", "doc1", "other"], "document")
    assert mapped == {"Doc1": f"doc1-{h8('Doc1')}", "doc1": f"doc1-{h8('doc1')}"}


def test_document_slug_that_is_a_device_name_gets_a_suffix() -> None:
    assert map_ids(["CON", "x/aux"], "document") == {
        "CON": f"con-{h8('CON')}",
        "x/aux": f"x-aux-{h8('x/aux')}",
    }
    assert map_ids(["con"], "query") == {}  # a query id is never a file name


def test_hash_suffix_grows_when_short_hashes_collide(monkeypatch: pytest.MonkeyPatch) -> None:
    real = ids_module._hashed

    def short_hashes_collide(original: str, base: str, digits: int) -> str:
        return f"{base}-00000000" if digits == 8 else real(original, base, digits)

    monkeypatch.setattr(ids_module, "_hashed", short_hashes_collide)
    mapped = map_ids(["x_1", "x.1"], "query")
    sha16 = {k: hashlib.sha256(k.encode()).hexdigest()[:16] for k in mapped}
    assert mapped == {k: f"x-1-{sha16[k]}" for k in ("x_1", "x.1")}


def _fold(name: str) -> str:
    return unicodedata.normalize("NFC", unicodedata.normalize("NFC", name).casefold())


ID_TEXT = st.lists(
    st.sampled_from([*"aAbB01_-. :/<>é\\", "CON", "nul", "\x00"]), min_size=1, max_size=8
).map("".join)


@settings(max_examples=150, deadline=None)
@given(st.lists(ID_TEXT, min_size=1, max_size=25), st.randoms(use_true_random=False))
def test_mapping_is_safe_unique_and_order_independent(ids: list[str], rnd: random.Random) -> None:
    for kind, problem in (("document", document_id_problem), ("query", query_id_problem)):
        mapped = map_ids(ids, kind)  # type: ignore[arg-type]
        shuffled = list(ids)
        rnd.shuffle(shuffled)
        assert map_ids(shuffled, kind) == mapped  # type: ignore[arg-type]
        final = {original: mapped.get(original, original) for original in set(ids)}
        assert all(problem(name) is None for name in final.values())
        key = _fold if kind == "document" else (lambda name: name)
        assert len({key(name) for name in final.values()}) == len(final)
        assert all(name == name.lower() and name.isascii() for name in mapped.values())


def test_slug_adaptation_of_dbpedia_and_nfcorpus_like_ids(
    make_beir: Callable[..., Path], tmp_path: Path
) -> None:
    documents = [
        {
            "_id": "<dbpedia:Oceanic_Airlines>",
            "title": "Oceanic Airlines",
            "text": "A fictional airline.",
        },
        {"_id": "<dbpedia:Oceanic_airlines>", "title": "", "text": "Same slug, other case."},
        {"_id": "MED-10", "title": "Statins", "text": "Statins and breast cancer."},
        {"_id": "4983", "title": "", "text": "Numeric ids are fine."},
    ]
    queries = [
        {"_id": "SemSearch_ES-2", "text": "oceanic airlines"},
        {"_id": "INEX_LD-2012351", "text": "airline"},
        {"_id": "PLAIN-2", "text": "statins"},
        {"_id": "7", "text": "numbers"},
    ]
    qrels = [
        ("SemSearch_ES-2", "<dbpedia:Oceanic_Airlines>", 2),
        ("INEX_LD-2012351", "<dbpedia:Oceanic_airlines>", 1),
        ("INEX_LD-2012351", "<dbpedia:Oceanic_Airlines>", 1),
        ("PLAIN-2", "MED-10", 2),
        ("7", "4983", 1),
    ]
    source = make_beir(documents=documents, queries=queries, qrels=qrels)
    out = tmp_path / "out"
    report = adapt_beir_dataset(source, out, id_mapping="slug")

    airline_upper = f"dbpedia-oceanic-airlines-{h8('<dbpedia:Oceanic_Airlines>')}"
    airline_lower = f"dbpedia-oceanic-airlines-{h8('<dbpedia:Oceanic_airlines>')}"
    expected_documents = {
        "<dbpedia:Oceanic_Airlines>": airline_upper,
        "<dbpedia:Oceanic_airlines>": airline_lower,
    }
    expected_queries = {
        "SemSearch_ES-2": f"semsearch-es-2-{h8('SemSearch_ES-2')}",
        "INEX_LD-2012351": f"inex-ld-2012351-{h8('INEX_LD-2012351')}",
        "PLAIN-2": "plain-2",
    }
    assert report.id_mapping == "slug"
    assert report.mapped_document_ids == expected_documents
    assert report.mapped_query_ids == expected_queries
    assert report.id_map_path == (out / "id_map.json").absolute()
    id_map = json.loads((out / "id_map.json").read_text(encoding="utf-8"))
    assert id_map == {
        "document_suffix": ".txt",
        "documents": expected_documents,
        "queries": expected_queries,
    }
    mapped = read_id_map(out / "id_map.json")
    assert mapped.document_id("<dbpedia:Oceanic_Airlines>") == f"{airline_upper}.txt"
    assert mapped.document_id("4983") == "4983.txt"
    assert mapped.query_id("PLAIN-2") == "plain-2"
    assert mapped.query_id("7") == "7"

    assert sorted(p.name for p in (out / "corpus").iterdir()) == sorted(
        [f"{airline_upper}.txt", f"{airline_lower}.txt", "MED-10.txt", "4983.txt"]
    )
    judgments = {j.query_id: j for j in load_judgments(out / "judgments.jsonl")}
    assert sorted(judgments) == sorted([*expected_queries.values(), "7"])
    inex = judgments[expected_queries["INEX_LD-2012351"]]
    assert sorted(g.doc for g in inex.gold) == sorted(
        [f"{airline_upper}.txt", f"{airline_lower}.txt"]
    )
    resolved = resolve_judgments(list(judgments.values()), Corpus.from_directory(out / "corpus"))
    assert all(q.method == "exact" for r in resolved for q in r.quotes)


def test_slug_mode_changes_nothing_for_valid_ids(
    make_beir: Callable[..., Path], tmp_path: Path
) -> None:
    strict = adapt_beir_dataset(make_beir(), tmp_path / "strict")
    slug = adapt_beir_dataset(make_beir(), tmp_path / "slug", id_mapping="slug")
    assert slug.mapped_document_ids == slug.mapped_query_ids == {}
    assert (tmp_path / "slug" / "id_map.json").read_bytes() == (
        tmp_path / "strict" / "id_map.json"
    ).read_bytes()
    assert strict.id_map_path is not None
    assert read_id_map(strict.id_map_path) == IdMap(document_suffix=".txt")
    assert (tmp_path / "slug" / "judgments.jsonl").read_bytes() == (
        tmp_path / "strict" / "judgments.jsonl"
    ).read_bytes()
    assert strict.document_count == slug.document_count


def test_slug_mode_maps_unsafe_ids_that_strict_refuses(
    make_beir: Callable[..., Path], tmp_path: Path
) -> None:
    documents = [
        {"_id": name, "text": f"text of {name!r}"} for name in ("..", "a/b", "CON", ".hidden", "x ")
    ]
    queries = [{"_id": "Q 1", "text": "question"}]
    qrels = [("Q 1", "..", 1), ("Q 1", "a/b", 1)]
    source = make_beir(documents=documents, queries=queries, qrels=qrels)
    report = adapt_beir_dataset(source, tmp_path / "out", id_mapping="slug")
    assert set(report.mapped_document_ids) == {"..", "a/b", "CON", ".hidden", "x "}
    assert report.mapped_document_ids[".."] == f"id-{h8('..')}"
    names = sorted(p.name for p in (tmp_path / "out" / "corpus").iterdir())
    assert names == sorted(f"{v}.txt" for v in report.mapped_document_ids.values())
    assert Corpus.from_directory(tmp_path / "out" / "corpus").keys() == set(names)
