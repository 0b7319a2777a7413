"""`grk eval export --ids original`: the dataset's own ids through the adapter's id map.

A BEIR set whose ids groundkit renames (a slash, a colon, angle brackets) is adapted, run at
document level and exported with `--ids original`: the qrels equal BEIR's own
`qrels/test.tsv` row for row, and the run names the original ids.
"""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner, Result

from groundkit.cli import cli

DOCUMENTS = {
    "<dbpedia:Oceanic_Airlines>": ("Oceanic Airlines", "A fictional airline with many flights."),
    "doc/2": ("Refunds", "The refund window is thirty days from delivery."),
    "plain": ("Cats", "A cat sleeps for sixteen hours a day."),
}
QUERIES = {"Q:1": "Which airline has many flights?", "PLAIN-2": "How long is the refund window?"}
QRELS = [("Q:1", "<dbpedia:Oceanic_Airlines>", 2), ("PLAIN-2", "doc/2", 1)]


def _invoke(*args: object) -> Result:
    return CliRunner().invoke(cli, [str(a) for a in args])


def _beir(root: Path) -> Path:
    root.mkdir()
    (root / "corpus.jsonl").write_text(
        "".join(
            json.dumps({"_id": d, "title": t, "text": x}) + "\n" for d, (t, x) in DOCUMENTS.items()
        ),
        encoding="utf-8",
    )
    (root / "queries.jsonl").write_text(
        "".join(json.dumps({"_id": q, "text": t}) + "\n" for q, t in QUERIES.items()),
        encoding="utf-8",
    )
    (root / "qrels").mkdir()
    rows = "".join(f"{q}\t{d}\t{s}\n" for q, d, s in QRELS)
    (root / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n" + rows)
    return root


def test_export_with_original_ids_gives_back_beirs_qrels(tmp_path: Path) -> None:
    source = _beir(tmp_path / "beir")
    adapted = tmp_path / "adapted"
    adapt = _invoke("beir", "adapt", source, adapted, "--id-mapping", "slug")
    assert adapt.exit_code == 0, adapt.output
    report = tmp_path / "report.json"
    ran = _invoke(
        "eval", "run", "--corpus", adapted / "corpus", "--judgments",
        adapted / "judgments.jsonl", "--level", "document", "--report", report,
        "--no-items", "--resamples", "50",
    )  # fmt: skip
    assert ran.exit_code == 0, ran.output
    run, qrels = tmp_path / "run.trec", tmp_path / "qrels.trec"
    done = _invoke(
        "eval", "export", report, "--stage", "bm25", "--ids", "original",
        "--run", run, "--qrels", qrels,
    )  # fmt: skip
    assert done.exit_code == 0, done.output
    exported = {tuple(line.split()) for line in qrels.read_text().splitlines()}
    assert {(q, d, str(s)) for q, d, s in QRELS} == {(q, d, s) for q, _, d, s in exported}
    # Run lines (query Q0 doc rank score run): every query and document an original id.
    rows = [line.split() for line in run.read_text().splitlines()]
    assert {row[0] for row in rows} <= set(QUERIES)
    assert {row[2] for row in rows} <= set(DOCUMENTS)
    assert "<dbpedia:Oceanic_Airlines>" in {row[2] for row in rows if row[0] == "Q:1"}
    # The default stays groundkit's ids.
    plain = _invoke(
        "eval", "export", report, "--stage", "bm25", "--run", tmp_path / "r2",
        "--qrels", tmp_path / "q2",
    )  # fmt: skip
    assert plain.exit_code == 0, plain.output
    assert all(
        line.split()[2].endswith(".txt") for line in (tmp_path / "q2").read_text().splitlines()
    )


def test_original_ids_need_an_id_map_and_document_level(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "a.txt").write_text("The refund window is thirty days.\n", encoding="utf-8")
    judgments = tmp_path / "j.jsonl"
    judgments.write_text(
        json.dumps({"query_id": "q", "query": "refund window",
                    "gold": [{"doc": "a.txt", "quote": "The refund window is thirty days."}]})
        + "\n",
        encoding="utf-8",
    )  # fmt: skip
    report = tmp_path / "report.json"
    ran = _invoke("eval", "run", "--corpus", corpus, "--judgments", judgments, "--report",
                  report, "--no-items", "--resamples", "50")  # fmt: skip
    assert ran.exit_code == 0, ran.output
    missing = _invoke("eval", "export", report, "--stage", "bm25", "--ids", "original")
    assert missing.exit_code == 2
    assert "--ids original: no id map" in missing.output
    (tmp_path / "id_map.json").write_text('{"document_suffix": ".txt"}')
    chunk = _invoke("eval", "export", report, "--stage", "bm25", "--ids", "original")
    assert chunk.exit_code == 2
    assert "document level" in chunk.output
    assert not list(tmp_path.glob("report.bm25.*"))
