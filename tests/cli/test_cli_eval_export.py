"""`grk eval export`: files, formats, and hostile input (one line, exit 2, nothing written)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from groundkit.cli import cli
from groundkit.judgments import evaluate_trec, export_stage, load_report, read_qrels, read_trec_run
from groundkit.judgments.trec import parse_chunk_id

CORPUS = {
    "refunds.md": "Refunds\n\nThe refund window is thirty days.\n\nAsk the finance desk.\n",
    "leave.md": "Leave\n\nEveryone gets twenty-five days of annual leave.\n\nPlan ahead.\n",
    "notes.md": "Notes\n\nThe office is closed on public holidays.\n",
    "travel.md": "Travel\n\nBook trains for trips under four hours.\n",
}
JUDGMENTS = [
    {
        "query_id": "refund-window",
        "query": "How long is the refund window?",
        "gold": [{"doc": "refunds.md", "quote": "The refund window is thirty days."}],
    },
    {
        "query_id": "annual-leave",
        "query": "How many days of annual leave?",
        "gold": [{"doc": "leave.md", "quote": "twenty-five days of annual leave", "grade": 2}],
    },
    {
        "query_id": "office-closed",
        "query": "When is the office closed?",
        "gold": [{"doc": "notes.md", "quote": "closed on public holidays"}],
    },
    {"query_id": "dog-name", "query": "What is the office dog called?", "category": "unanswerable"},
]


def _grk(*args: str | Path) -> Result:
    return CliRunner().invoke(cli, [str(a) for a in args])


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


def _assert_one_line_exit_2(result: Result, *needles: str) -> None:
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1, result.output
    assert lines[0].startswith("error: ")
    for needle in needles:
        assert needle in lines[0], lines[0]


def _dataset(root: Path, corpus_texts: dict[str, str]) -> Path:
    corpus = root / "corpus"
    corpus.mkdir()
    for name, text in corpus_texts.items():
        (corpus / name).write_text(text, encoding="utf-8")
    return corpus


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two reports made once per module: chunk level (with a failed and an empty stage) and
    document level."""
    tmp_path = tmp_path_factory.mktemp("export")
    corpus = _dataset(tmp_path, CORPUS)
    (tmp_path / "judgments.jsonl").write_text(
        "".join(json.dumps(j) + "\n" for j in JUDGMENTS), encoding="utf-8"
    )
    (tmp_path / "empty.jsonl").write_text(
        "".join(json.dumps({"query_id": j["query_id"], "hits": []}) + "\n" for j in JUDGMENTS[:3]),
        encoding="utf-8",
    )
    common = ["--corpus", corpus, "--judgments", tmp_path / "judgments.jsonl", "--no-items"]
    common += ["--resamples", "50"]
    chunk = _grk(
        "eval", "run", *common, "--chunker", "paragraphs", "--report", tmp_path / "chunk.json",
        "--predictions", f"nothing={tmp_path / 'empty.jsonl'}",
        "--command", f"broken={sys.executable} -c 'raise SystemExit(3)'",
    )  # fmt: skip
    assert chunk.exit_code == 1, chunk.output  # the broken stage fails; the report is written
    document = _grk(
        "eval", "run", *common, "--level", "document", "--report", tmp_path / "document.json"
    )  # fmt: skip
    assert document.exit_code == 0, document.output
    return tmp_path


@pytest.fixture
def workdir(built: Path, tmp_path: Path) -> Path:
    """A copy of the reports in the test's own folder (they name the module's inputs)."""
    for name in ("chunk.json", "document.json"):
        shutil.copyfile(built / name, tmp_path / name)
    shutil.copytree(built / "corpus", tmp_path / "corpus")
    return tmp_path


def test_trec_export_writes_the_run_and_qrels_beside_the_report(workdir: Path) -> None:
    report = workdir / "document.json"
    before = report.read_bytes()
    result = _grk("eval", "export", report, "--stage", "bm25")
    assert result.exit_code == 0, result.output
    run_path = workdir / "document.bm25.run.trec"
    qrels_path = workdir / "document.bm25.qrels.trec"
    run = read_trec_run(run_path)
    count = sum(len(docs) for docs in run.values())
    assert result.output.splitlines()[:3] == [
        f"exported stage 'bm25' of {report} at document level: 3 of 3 queries, {count} documents",
        f"  run:   {run_path}",
        f"  qrels: {qrels_path}",
    ]
    assert report.read_bytes() == before
    assert run.run_id == "bm25"
    qrels = read_qrels(qrels_path)
    assert qrels == {
        "annual-leave": {"leave.md": 2},
        "office-closed": {"notes.md": 1},
        "refund-window": {"refunds.md": 1},
    }
    loaded = load_report(report)
    ours = {q.query_id: q.scores for q in loaded.stage("bm25").queries}
    result_trec = evaluate_trec(qrels, run, ["ndcg_cut.10", "recall.100", "recip_rank"])
    for query_id, values in result_trec.per_query.items():
        assert values["ndcg_cut_10"] == ours[query_id]["ndcg@10"]
        assert values["recall_100"] == ours[query_id]["recall@100"]
        assert values["recip_rank"] == ours[query_id]["mrr"]


def test_ranx_json_and_ir_measures_files(workdir: Path) -> None:
    report = workdir / "chunk.json"
    ranx = _grk("eval", "export", report, "--stage", "bm25", "--format", "ranx")
    assert ranx.exit_code == 0, ranx.output
    run = json.loads((workdir / "chunk.bm25.run.json").read_text(encoding="utf-8"))
    qrels = json.loads((workdir / "chunk.bm25.qrels.json").read_text(encoding="utf-8"))
    expected = export_stage(load_report(report), "bm25")
    assert run == dict(expected.run)
    assert qrels == expected.qrels
    for ids in run.values():  # doc#start-end: each a span of a corpus document
        for key in ids:
            doc, start, end = parse_chunk_id(key)
            assert 0 <= start < end <= len(CORPUS[doc])
    assert "note: chunk ids are doc#start-end" in ranx.output
    irm = _grk(
        "eval", "export", report, "--stage", "bm25", "--format", "ir-measures",
        "--run", workdir / "r.trec", "--qrels", workdir / "q.trec",
    )  # fmt: skip
    assert irm.exit_code == 0, irm.output
    assert "ir_measures.read_trec_run" in irm.output
    # ir-measures reads TREC files: the same bytes as --format trec.
    trec = _grk(
        "eval", "export", report, "--stage", "bm25",
        "--run", workdir / "r2.trec", "--qrels", workdir / "q2.trec",
    )  # fmt: skip
    assert trec.exit_code == 0, trec.output
    assert (workdir / "r.trec").read_bytes() == (workdir / "r2.trec").read_bytes()
    assert (workdir / "q.trec").read_bytes() == (workdir / "q2.trec").read_bytes()


def test_a_chunk_report_can_be_exported_at_document_level(workdir: Path) -> None:
    result = _grk(
        "eval", "export", workdir / "chunk.json", "--stage", "bm25", "--level", "document",
        "--format", "ranx",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "at document level" in result.output
    qrels = json.loads((workdir / "chunk.bm25.qrels.json").read_text(encoding="utf-8"))
    assert qrels["annual-leave"] == {"leave.md": 2}


@pytest.mark.parametrize(
    ("args", "needles"),
    [
        (["--stage", "dense"], ["no stage named 'dense'", "stages: bm25, broken, nothing"]),
        (["--stage", "broken"], ["stage 'broken' failed in this report", "status 3"]),
        (["--stage", "nothing"], ["stage 'nothing' has no hits in the report"]),
        (["--stage", "bm25", "--format", "csv"], ["'csv' is not one of"]),
        ([], ["Missing option '--stage'"]),
    ],
)
def test_bad_requests_write_nothing(workdir: Path, args: list[str], needles: list[str]) -> None:
    before = _snapshot(workdir)
    _assert_one_line_exit_2(_grk("eval", "export", workdir / "chunk.json", *args), *needles)
    assert _snapshot(workdir) == before


def test_outputs_that_would_overwrite_an_input(workdir: Path) -> None:
    before = _snapshot(workdir)
    report = workdir / "chunk.json"
    base = ["eval", "export", report, "--stage", "bm25"]
    _assert_one_line_exit_2(_grk(*base, "--run", report), "--run", "is the same file as REPORT")
    judgments = load_report(report).run.judgments_source
    assert judgments is not None
    kept = Path(judgments).read_bytes()
    _assert_one_line_exit_2(_grk(*base, "--qrels", judgments), "an output never replaces an input")
    assert Path(judgments).read_bytes() == kept
    same = workdir / "both.trec"
    _assert_one_line_exit_2(
        _grk(*base, "--run", same, "--qrels", same), "is the same file as --run"
    )
    _assert_one_line_exit_2(
        _grk("eval", "export", workdir / "document.json", "--stage", "bm25", "--level", "chunk"),
        "export it at document level",
    )
    assert _snapshot(workdir) == before


def test_files_it_did_not_write_are_not_replaced_without_force(workdir: Path) -> None:
    report = workdir / "chunk.json"
    base = ["eval", "export", report, "--stage", "bm25"]
    notes = workdir / "notes.txt"
    notes.write_text("my notes on bm25\n", encoding="utf-8")
    items = workdir / "r.items.jsonl"
    items.write_text('{"format": "groundkit-items", "stage": "bm25"}\n', encoding="utf-8")
    ours = workdir / "page.html"
    ours.write_text("<!DOCTYPE html><p>a page</p>", encoding="utf-8")
    before = _snapshot(workdir)
    other_report = workdir / "document.json"
    for flag, path in (
        ("--run", notes),
        ("--qrels", items),
        ("--run", ours),
        ("--qrels", other_report),
    ):
        result = _grk(*base, flag, path)
        _assert_one_line_exit_2(result, flag, "--force")
        assert _snapshot(workdir) == before, (flag, path)
    # Its own earlier outputs are replaced, in each format; a user's file only with --force.
    for fmt in ("trec", "ranx", "trec"):
        targets = ["--run", workdir / "r.out", "--qrels", workdir / "q.out"]
        again = _grk(*base, "--format", fmt, *targets)
        assert again.exit_code == 0, again.output
    forced = _grk(*base, "--run", notes, "--qrels", workdir / "q.out", "--force")
    assert forced.exit_code == 0, forced.output
    assert read_trec_run(notes).run_id == "bm25"


def test_unwritable_outputs(workdir: Path) -> None:
    before = _snapshot(workdir)
    report = workdir / "chunk.json"
    base = ["eval", "export", report, "--stage", "bm25"]
    _assert_one_line_exit_2(_grk(*base, "--run", workdir / "nope" / "r.trec"), "does not exist")
    _assert_one_line_exit_2(_grk(*base, "--qrels", workdir / "corpus"), "--qrels", "is a directory")
    assert _snapshot(workdir) == before


def test_a_write_that_fails_half_way_leaves_the_old_files(
    workdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run, qrels = workdir / "r.trec", workdir / "q.trec"
    run.write_text("q1 Q0 old.md 1 1.5 old\n", encoding="utf-8")  # an earlier export's files
    qrels.write_text("q1 0 old.md 1\n", encoding="utf-8")
    before = _snapshot(workdir)
    real_fsync = os.fsync
    calls: list[int] = []

    def full_disk(descriptor: int) -> None:
        calls.append(descriptor)
        if len(calls) == 2:  # the second temporary file: the disk is full
            raise OSError(28, "No space left on device")
        real_fsync(descriptor)

    monkeypatch.setattr(os, "fsync", full_disk)
    result = _grk("eval", "export", workdir / "chunk.json", "--stage", "bm25", "--run", run,
                  "--qrels", qrels)  # fmt: skip
    monkeypatch.undo()
    _assert_one_line_exit_2(result, "No space left on device", "earlier outputs are unchanged")
    assert _snapshot(workdir) == before  # both old files, and no temporary file


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="needs a non-root POSIX user")
def test_read_only_folder(workdir: Path, tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        result = _grk(
            "eval", "export", workdir / "chunk.json", "--stage", "bm25",
            "--run", locked / "r.trec", "--qrels", locked / "q.trec",
        )  # fmt: skip
        _assert_one_line_exit_2(result, str(locked), "cannot write")
        assert list(locked.iterdir()) == []
    finally:
        locked.chmod(0o700)


def test_ids_that_cannot_be_trec_fields(tmp_path: Path) -> None:
    # "my notes.md" has a space: fine in ranx's JSON, impossible in a TREC file.
    texts = {("my notes.md" if k == "notes.md" else k): v for k, v in CORPUS.items()}
    corpus = _dataset(tmp_path, texts)
    judgments = tmp_path / "judgments.jsonl"
    judgments.write_text(
        json.dumps({**JUDGMENTS[2], "gold": [{**JUDGMENTS[2]["gold"][0], "doc": "my notes.md"}]})
        + "\n",
        encoding="utf-8",
    )
    report = tmp_path / "document.json"
    made = _grk("eval", "run", "--corpus", corpus, "--judgments", judgments, "--level",
                "document", "--resamples", "50", "--no-items", "--report", report)  # fmt: skip
    assert made.exit_code == 0, made.output
    before = _snapshot(tmp_path)
    _assert_one_line_exit_2(
        _grk("eval", "export", report, "--stage", "bm25"),
        "document id 'my notes.md' cannot be written as a TREC field",
    )
    assert _snapshot(tmp_path) == before
    ranx = _grk("eval", "export", report, "--stage", "bm25", "--format", "ranx")
    assert ranx.exit_code == 0, ranx.output


def test_not_a_report(built: Path, workdir: Path) -> None:
    _assert_one_line_exit_2(
        _grk("eval", "export", built / "judgments.jsonl", "--stage", "bm25"), "not JSON"
    )
    _assert_one_line_exit_2(
        _grk("eval", "export", workdir / "absent.json", "--stage", "bm25"), "report file not found"
    )


def test_real_subprocess(workdir: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "groundkit.cli", "eval", "export", str(workdir / "chunk.json"),
         "--stage", "bm25", "--format", "ranx"],
        capture_output=True, text=True, check=False, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert (workdir / "chunk.bm25.run.json").is_file()
    bad = subprocess.run(
        [sys.executable, "-m", "groundkit.cli", "eval", "export", str(workdir / "chunk.json"),
         "--stage", "nope"],
        capture_output=True, text=True, check=False, timeout=120,
    )  # fmt: skip
    assert bad.returncode == 2
    assert bad.stderr.count("\n") == 1
    assert bad.stderr.startswith("error: ")
