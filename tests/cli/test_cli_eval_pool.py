"""`grk eval pool`, `grk eval sample` and `grk eval sheet` on the demo; judged@k in the HTML."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from tests.cli.conftest import report_without_hits

from groundkit.cli import cli
from groundkit.cli.html._judged import judged_section
from groundkit.cli.html._report import render_html_report
from groundkit.evalset import PoolReport, read_sheet
from groundkit.evalset.pool import build_pool
from groundkit.judgments import Corpus, load_report
from groundkit.stats import stratified_wilson_interval


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("demo")
    result = CliRunner().invoke(
        cli, ["eval", "demo", "--no-dense", "--resamples", "200", "--out", str(out / "d")]
    )
    assert result.exit_code == 0, result.output
    return out / "d" / "report.json"


@pytest.fixture(scope="module")
def answers(demo: Path) -> Path:
    """Recorded answers for every pool item: grade 3 when it touches gold, 0 otherwise."""
    report = load_report(demo)
    corpus = Corpus.load(report.run.corpus_source or "")
    queries = {q.query_id: q for q in report.queries}
    rows = []
    for item in build_pool([("d", report)], 10).items:
        query = queries[item.query_id]
        touches = any(
            g.doc == item.doc and s < item.end and item.start < e
            for g in query.gold
            for s, e in g.spans
        )
        passage = corpus[item.doc][item.start : item.end]
        rows.append({"query": query.query, "passage": passage, "grades": [3 if touches else 0]})
    path = demo.with_name("answers.jsonl")
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _state(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


def _pool(demo: Path, answers: Path, out: Path, *extra: str) -> tuple[int, str]:
    result = CliRunner().invoke(
        cli,
        ["eval", "pool", str(demo), "--n", "60", "--seed", "7", "--repeats", "1",
         "--judge", f"recorded:{answers}", "--out", str(out), *extra],
    )  # fmt: skip
    return result.exit_code, result.output


def test_pool_on_the_demo_and_a_rerun_makes_no_call(
    demo: Path, answers: Path, tmp_path: Path
) -> None:
    code, output = _pool(demo, answers, tmp_path / "pool.json")
    assert code == 0, output
    assert "calls 60 (cached 0, failed 0), tokens 0" in output
    result = PoolReport.model_validate_json((tmp_path / "pool.json").read_text())
    assert (result.format, result.version, result.k, result.bands) == (
        "groundkit-pool",
        "1.0",
        10,
        [3],
    )
    assert [s.stage for s in result.stages] == ["bm25", "bm25-chars200", "bm25-document"]
    assert [f"{s.stage} {s.band}" for s in result.strata] == [
        "bm25 1-3", "bm25 4-10", "bm25-chars200 1-3", "bm25-chars200 4-10",
        "bm25-document 1-3", "bm25-document 4-10",
    ]  # fmt: skip
    assert sum(s.sampled for s in result.strata) == len(result.sample) == 60
    assert [s.sampled for s in result.strata] == [10] * 6  # equal allocation
    assert sum(s.size for s in result.strata) == result.pool_size
    assert all(s.precision is not None for s in result.stages)
    assert [c.stage for c in result.comparisons] == ["bm25-chars200", "bm25-document"]
    assert result.usage.calls == 60
    # The judge's own cache is shared: a pool written under another name makes no call.
    code, output = _pool(demo, answers, tmp_path / "pool-again.json")
    assert code == 0, output
    assert "calls 0 (cached 60, failed 0)" in output
    code, output = _pool(demo, answers, tmp_path / "pool.json")
    assert code == 0, output
    again = PoolReport.model_validate_json((tmp_path / "pool.json").read_text())
    assert again.stages == result.stages


def test_pool_real_subprocess(demo: Path, answers: Path, tmp_path: Path) -> None:
    command = [sys.executable, "-m", "groundkit.cli", "eval", "pool", str(demo), str(demo),
               "--n", "24", "--repeats", "1", "--judge", f"recorded:{answers}",
               "--out", str(tmp_path / "p.json")]  # fmt: skip
    run = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert "calls 24 (cached 0, failed 0)" in run.stdout
    result = PoolReport.model_validate_json((tmp_path / "p.json").read_text())
    assert result.stages[0].stage == "r1:bm25"  # two reports: stages carry the report's label


def test_pool_bad_input_exit_2_and_nothing_written(
    demo: Path, answers: Path, tmp_path: Path
) -> None:
    empty = report_without_hits(demo, tmp_path)
    before = _state(tmp_path)
    code, output = _pool(empty, answers, tmp_path / "p.json")
    assert code == 2, output
    assert "the report has no hits to pool" in output
    assert len(output.strip().splitlines()) == 1
    assert _state(tmp_path) == before
    code, output = _pool(demo, answers, tmp_path / "p.json", "--stage", "nope")
    assert code == 2, output
    assert "no stage named 'nope' in the pool (stages: bm25, bm25-chars200" in output
    assert len(output.strip().splitlines()) == 1
    assert _state(tmp_path) == before
    code, output = _pool(demo, answers, tmp_path / "p.json", "--n", "3")
    assert code == 2, output
    assert "cannot cover the pool's 6 strata" in output
    assert _state(tmp_path) == before


def _sample(demo: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["eval", "sample", str(demo), *args])
    return result.exit_code, result.output


def test_sample_misses_by_bucket_then_read_marks_back(demo: Path, tmp_path: Path) -> None:
    code, output = _sample(demo, "--by", "bucket", "--stage", "bm25", "--n", "20", "--seed", "1",
                           "--out", str(tmp_path / "sheet"))  # fmt: skip
    assert code == 0, output
    rows = read_sheet(tmp_path / "sheet.jsonl")
    assert read_sheet(tmp_path / "sheet.csv") == rows
    assert len(rows) == 20
    assert {r.kind for r in rows} == {"miss"}
    assert {r.stratum for r in rows} <= {
        "just-below-cutoff", "found-by-other-stage", "not-retrieved", "vocabulary-mismatch",
        "split-by-chunker", "crowded-by-duplicates",
    }  # fmt: skip
    records = list(csv.DictReader(io.StringIO((tmp_path / "sheet.csv").read_text())))
    for i, record in enumerate(records):
        record["mark"] = "judge right" if i % 2 else "gold wrong"
    edited = tmp_path / "marked.csv"
    with edited.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(records[0]))
        writer.writeheader()
        writer.writerows(records)
    result = CliRunner().invoke(cli, ["eval", "sheet", str(edited)])
    assert result.exit_code == 0, result.output
    strata: dict[str, list[int]] = {}
    for i, row in enumerate(rows):
        strata.setdefault(row.stratum, [0, 0, row.stratum_size])
        strata[row.stratum][0] += i % 2
        strata[row.stratum][1] += 1
    expected = stratified_wilson_interval([tuple(v) for v in strata.values()])
    assert f"overall {expected.estimate:.3f}" in result.output
    records[2]["mark"] = "probably"
    with edited.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(records[0]))
        writer.writeheader()
        writer.writerows(records)
    before = _state(tmp_path)
    result = CliRunner().invoke(cli, ["eval", "sheet", str(edited)])
    assert result.exit_code == 2
    assert f"{edited}: line 4: unknown mark 'probably'" in result.output
    assert len(result.output.strip().splitlines()) == 1
    assert _state(tmp_path) == before


def test_sample_hits_by_stage(demo: Path, tmp_path: Path) -> None:
    code, output = _sample(demo, "--by", "stage", "--hits", "--n", "30", "--k", "5",
                           "--out", str(tmp_path / "hits.csv"))  # fmt: skip
    assert code == 0, output
    rows = read_sheet(tmp_path / "hits.csv")
    assert [
        sum(r.stage == s for r in rows) for s in ("bm25", "bm25-chars200", "bm25-document")
    ] == [10] * 3
    assert all(r.text and r.rank is not None and r.rank <= 5 for r in rows)
    assert {r.stratum_size for r in rows if r.stage == "bm25"} == {172 * 5}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--stage", "nope"], "no stage named 'nope'"),
        (["--by", "bucket", "--hits"], "--by bucket sorts misses"),
    ],
)
def test_sample_bad_input(demo: Path, tmp_path: Path, args: list[str], message: str) -> None:
    before = _state(tmp_path)
    code, output = _sample(demo, *args, "--out", str(tmp_path / "s"))
    assert code == 2, output
    assert message in output
    assert len(output.strip().splitlines()) == 1
    assert _state(tmp_path) == before


def test_sample_report_without_hits_and_unreadable_sheet(demo: Path, tmp_path: Path) -> None:
    empty = report_without_hits(demo, tmp_path)
    before = _state(tmp_path)
    code, output = _sample(empty, "--out", str(tmp_path / "s"))
    assert code == 2, output
    assert "the report has no hits to sample" in output
    result = CliRunner().invoke(cli, ["eval", "sheet", str(tmp_path / "missing.csv")])
    assert result.exit_code == 2
    assert "cannot read sheet" in result.output
    assert _state(tmp_path) == before


def test_html_report_shows_judged_at_k_with_the_caution(demo: Path) -> None:
    report = load_report(demo)
    page = render_html_report(report)
    assert 'id="judged"' in page
    judged = report.stage("bm25").judged["judged@10"]
    assert f'data-stage="bm25" data-field="judged@10" data-value="{judged!r}"' in page
    assert f"{100 * judged:.0f}%" in page
    assert 'data-note="low-judged"' in page
    assert "CAUTION" in page
    older = report.model_copy(
        update={"stages": [s.model_copy(update={"judged": {}}) for s in report.stages]}
    )
    assert "records no judged@k" in judged_section(older, {})
