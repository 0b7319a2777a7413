"""`grk eval diagnose`, `grk eval compare --track-record` and `grk eval track-record`.

The reports come from the real harness on a small generated corpus: BM25 over 150-character
windows without overlap (quotes get split), and the same with overlap or larger windows.
"""

from __future__ import annotations

import json
import math
import random
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from groundkit.cli import cli
from groundkit.diagnosis import diagnose, fixes, read_track_record, reciprocal_rank_fusion
from groundkit.harness import (
    Bm25Retriever,
    EvalSettings,
    HybridRetriever,
    StageConfig,
    evaluate,
    write_items,
)
from groundkit.judgments import CharsChunker, EvalReport, GoldQuote, Judgment, dump_report
from groundkit.judgments.report import BootstrapSettings

_WORDS = [f"w{n:03d}" for n in range(150)]


def _corpus_and_judgments(seed: int = 7) -> tuple[dict[str, str], list[Judgment]]:
    """30 documents of 9 random sentences; each query quotes three consecutive sentences."""
    rng = random.Random(seed)
    corpus: dict[str, str] = {}
    judgments: list[Judgment] = []
    for d in range(30):
        sentences = [
            " ".join(rng.choice(_WORDS) for _ in range(rng.randint(6, 12))).capitalize() + "."
            for _ in range(9)
        ]
        doc = f"doc-{d:02d}"
        corpus[doc] = " ".join(sentences)
        for s in rng.sample(range(7), 2):
            quote = " ".join(sentences[s : s + 3])
            words = quote.replace(".", "").lower().split()
            query = " ".join(rng.sample(words, 3) + rng.sample(_WORDS, 2))
            judgments.append(
                Judgment(
                    query_id=f"q-{d:02d}-{s}",
                    query=query,
                    gold=(GoldQuote(doc=doc, quote=quote),),
                )
            )
    return corpus, judgments


def _settings(*stages: StageConfig) -> EvalSettings:
    return EvalSettings(
        stages=list(stages),
        depth=60,
        bootstrap=BootstrapSettings(resamples=200),
        budgets=[],
    )


def _bm25(name: str, size: int, overlap: int) -> StageConfig:
    return StageConfig(
        name=name, retriever=Bm25Retriever(), chunker=CharsChunker(size=size, overlap=overlap)
    )


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    corpus, judgments = _corpus_and_judgments()
    folder = tmp_path_factory.mktemp("diagnose")
    out: dict[str, Any] = {}
    # A: 50-character windows split the ~140-character quotes; B: 300-character windows
    for label, size in (("a", 50), ("b", 300)):
        report = evaluate(corpus, judgments, _settings(_bm25("bm25", size, 0)))
        out[f"report_{label}"] = report
        out[f"{label}_json"] = folder / f"{label}.json"
        out[f"{label}_items"] = folder / f"{label}.items.jsonl"
        dump_report(report, out[f"{label}_json"])
        write_items(report, out[f"{label}_items"])
    both = evaluate(
        corpus,
        judgments,
        _settings(
            _bm25("bm25", 50, 0),
            _bm25("big", 300, 100),
            StageConfig(name="hyb", retriever=HybridRetriever(stages=["bm25", "big"])),
        ),
    )
    out["both"] = both
    out["both_json"] = folder / "both.json"
    dump_report(both, out["both_json"])
    out["folder"] = folder
    return out


def grk(*args: str | Path) -> Result:
    return CliRunner().invoke(cli, [str(a) for a in args])


def test_harness_report_diagnoses_consistently(runs: dict[str, Any]) -> None:
    report: EvalReport = runs["both"]
    for stage in ("bm25", "big", "hyb"):
        diagnosis = diagnose(report, stage, k=10)
        aggregate = report.stage(stage).aggregates["recall@10"].mean
        assert diagnosis.recall == pytest.approx(aggregate, abs=1e-12)
        assert diagnosis.recorded_recall == pytest.approx(aggregate, abs=1e-12)
        assert sum(b.count or 0 for b in diagnosis.buckets) == diagnosis.miss_count
        assert not any("differs from the recomputation" in n for n in diagnosis.notes)
    small = diagnose(report, "bm25", k=10)
    # 50-character windows hold less than half of every ~140-character quote
    assert (small.bucket("split-by-chunker").count or 0) > 0
    assert small.bucket("vocabulary-mismatch").count is not None  # BM25 records term overlap
    assert small.bucket("beyond-encoder-window").count is None  # no encoder
    hybrid = diagnose(report, "hyb", k=10)
    # the harness traces a hybrid through the union of its stages' chunks
    assert hybrid.bucket("split-by-chunker").count is not None
    assert hybrid.bucket("found-by-other-stage").count is not None


def test_document_level_diagnosis_reproduces_the_report(
    runs: dict[str, Any], tmp_path: Path
) -> None:
    # two quotes of one document and one of another per query: trec_eval's recall counts the
    # documents, and so must the diagnosis and its replays
    corpus, judgments = _corpus_and_judgments()
    merged = [
        Judgment(
            query_id=f"m-{n:02d}",
            query=first.query,
            gold=(*first.gold, *second.gold, *third.gold),
        )
        for n, (first, second, third) in enumerate(
            zip(judgments[0::6], judgments[1::6], judgments[2::6], strict=False)
        )
    ]
    assert all(j.gold[0].doc == j.gold[1].doc != j.gold[2].doc for j in merged)
    settings = EvalSettings(
        stages=[_bm25("bm25", 50, 0), _bm25("big", 300, 100)],
        level="document",
        depth=20,
        bootstrap=BootstrapSettings(resamples=200),
    )
    report = evaluate(corpus, merged, settings)
    assert report.run.level == "document"
    for stage in ("bm25", "big"):
        for k in (1, 3):
            diagnosis = diagnose(report, stage, k=k)
            aggregate = report.stage(stage).aggregates[f"recall@{k}"].mean
            assert diagnosis.recall == pytest.approx(aggregate, abs=1e-12)
            assert diagnosis.gold_count == 2 * len(merged)
            assert not any("differs from the recomputation" in n for n in diagnosis.notes)
            weights = math.fsum(b.weight or 0.0 for b in diagnosis.buckets)
            assert weights == pytest.approx(1 - aggregate, abs=1e-12)
            for evidence in diagnosis.evidence:
                if evidence.replay is not None:
                    assert evidence.replay.before == pytest.approx(aggregate, abs=1e-12)
    dump_report(report, tmp_path / "doc.json")
    shown = grk("eval", "diagnose", tmp_path / "doc.json", "--stage", "bm25", "--k", "3")
    assert shown.exit_code == 0, shown.output
    assert f"of {2 * len(merged)} gold documents missed at k = 3" in " ".join(shown.output.split())


def test_fusion_replay_matches_the_harness_hybrid(runs: dict[str, Any]) -> None:
    report: EvalReport = runs["both"]
    own = {r.query_id: r.hits for r in report.stage("bm25").queries}
    big = {r.query_id: r.hits for r in report.stage("big").queries}
    for result in report.stage("hyb").queries:
        fused = reciprocal_rank_fusion(
            own[result.query_id], big[result.query_id], depth=report.run.depth
        )
        assert [(h.doc, h.start, h.end) for h in fused] == [
            (h.doc, h.start, h.end) for h in result.hits
        ]
        assert [h.score for h in fused] == pytest.approx([h.score for h in result.hits])


def test_diagnose_prints_buckets_and_fixes(runs: dict[str, Any]) -> None:
    result = grk("eval", "diagnose", runs["both_json"], "--stage", "bm25", "--examples", "2")
    assert result.exit_code == 0, result.output
    out = result.output
    titles = [
        "gold not resolvable",
        "document never indexed",
        "split by the chunker",
        "beyond the encoder's window",
        "ranked just below the cutoff",
        "found by another stage",
        "vocabulary mismatch",
        "crowded out by near-duplicates",
        "not retrieved",
    ]
    positions = [out.index(title) for title in titles]
    assert positions == sorted(positions)
    assert "fixes ranked by expected gain in recall@10" in out
    assert "never sum" in out
    assert "larger-chunks" in out
    assert "raise-k" in out
    assert "—" in out  # the encoder-window bucket of a BM25 stage


def test_diagnose_json_and_default_stage(runs: dict[str, Any]) -> None:
    result = grk("eval", "diagnose", runs["both_json"], "--json", "--k", "5")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    report: EvalReport = runs["both"]
    best = max(
        (s for s in report.stages),
        key=lambda s: (s.aggregates["recall@5"].mean, -report.stages.index(s)),
    )
    assert data["diagnosis"]["stage"] == best.name
    assert data["diagnosis"]["k"] == 5
    assert [b["position"] for b in data["diagnosis"]["buckets"]] == list(range(1, 10))
    ranks = [f["rank"] for f in data["fixes"]]
    assert ranks == list(range(1, len(ranks) + 1))
    assert data["track_record"] is None
    expected = [f.model_dump(mode="json") for f in fixes(diagnose(report, best.name, k=5))]
    assert data["fixes"] == expected


def test_diagnose_errors_are_one_line_exit_2(runs: dict[str, Any], tmp_path: Path) -> None:
    result = grk("eval", "diagnose", runs["both_json"], "--stage", "nope")
    assert result.exit_code == 2
    assert "no stage named 'nope' (stages: bm25, big, hyb)" in result.output
    assert "Traceback" not in result.output
    missing = grk("eval", "diagnose", tmp_path / "none.json")
    assert missing.exit_code == 2
    assert len(missing.output.strip().splitlines()) == 1
    assert "not found" in missing.output
    broken = tmp_path / "broken.json"
    broken.write_text("{not json", encoding="utf-8")
    bad = grk("eval", "diagnose", broken)
    assert bad.exit_code == 2
    assert len(bad.output.strip().splitlines()) == 1
    assert "not JSON" in bad.output


def test_full_track_record_cycle(runs: dict[str, Any], tmp_path: Path) -> None:
    record = tmp_path / "record.jsonl"
    diagnosed = grk("eval", "diagnose", runs["a_json"], "--track-record", record)
    assert diagnosed.exit_code == 0, diagnosed.output
    assert f"to {record}" in diagnosed.output
    assert "In the prediction benchmark (6 collections" in " ".join(diagnosed.output.split())
    prediction = read_track_record(record).predictions[0]
    predicted = prediction.fix("larger-chunks")
    assert predicted is not None
    assert predicted.expected is not None
    assert predicted.expected > 0

    named = grk(
        "eval", "compare", runs["a_items"], runs["b_items"],
        "--track-record", record, "--applied", "larger-chunks",
    )  # fmt: skip
    assert named.exit_code in (0, 1), named.output
    assert "track record: larger-chunks (named): B measured" in named.output
    inferred = grk("eval", "compare", runs["a_items"], runs["b_items"], "--track-record", record)
    assert "track record: larger-chunks (inferred)" in inferred.output

    measured = read_track_record(record).measurements
    assert [m.how for m in measured] == ["named", "inferred"]
    a: EvalReport = runs["report_a"]
    b: EvalReport = runs["report_b"]
    mean_a = a.stage("bm25").aggregates["recall@10"].mean
    mean_b = b.stage("bm25").aggregates["recall@10"].mean
    assert measured[0].measured == pytest.approx(mean_b - mean_a, abs=1e-12)
    assert measured[0].low <= measured[0].measured <= measured[0].high
    assert measured[0].predicted == predicted

    shown = grk("eval", "track-record", record)
    assert shown.exit_code == 0, shown.output
    assert "predicted against measured" in shown.output
    assert shown.output.count("larger-chunks") >= 2
    assert f"{predicted.expected:+.3f}" in shown.output
    assert f"{measured[0].measured:+.3f}" in shown.output
    assert "2 fixes tried" in shown.output

    as_json = grk("eval", "track-record", record, "--json")
    data = json.loads(as_json.stdout)
    assert data["tried"] == 2
    assert data["rows"][0]["expected"] == pytest.approx(predicted.expected)
    error = measured[0].measured - predicted.expected
    assert data["rows"][0]["error"] == pytest.approx(error)
    assert math.isclose(data["mean_error"], error, abs_tol=1e-12)

    with record.open("a", encoding="utf-8") as handle:
        handle.write('{"record": "measurement", "fix": \n')
    cautioned = grk("eval", "track-record", record)
    assert cautioned.exit_code == 0
    assert f"CAUTION: {record}:4: not JSON" in cautioned.stderr
    assert "2 fixes tried" in cautioned.stdout


def test_compare_track_record_needs_items_and_a_known_fix(
    runs: dict[str, Any], tmp_path: Path
) -> None:
    record = tmp_path / "record.jsonl"
    one = grk("eval", "compare", runs["both_json"], "--candidate", "big", "--track-record", record)
    assert one.exit_code == 2
    assert "--track-record applies to two items files" in one.output
    unknown = grk(
        "eval", "compare", runs["a_items"], runs["b_items"],
        "--track-record", record, "--applied", "bigger",
    )  # fmt: skip
    assert unknown.exit_code == 2
    nothing = grk("eval", "compare", runs["a_items"], runs["b_items"], "--track-record", record)
    assert "A matches no prediction" in nothing.output
    assert not record.exists()
    missing = grk("eval", "track-record", tmp_path / "none.jsonl")
    assert missing.exit_code == 2
    assert "track record not found" in missing.output


def test_html_diagnosis_keeps_not_measurable_fixes_apart_from_zero(runs: dict[str, Any]) -> None:
    from groundkit.cli.html._queries import diagnosis_section

    report: EvalReport = runs["both"]
    ranked = {f.name: f for f in fixes(diagnose(report, "bm25", k=10))}
    assert ranked["smaller-chunks"].expected is None  # no encoder window: not measurable
    html = diagnosis_section(report, "recall@10", {})
    stage_html = html.split("<h3>")[1]
    idle = stage_html.split("No gain expected from:")[1].split("</p>")[0]
    assert "smaller-chunks" not in idle
    unmeasured = stage_html.split("No estimate (not measurable for this stage):")[1]
    assert "smaller-chunks" in unmeasured.split("</p>")[0]


def test_an_example_shows_the_rank_that_put_it_in_its_bucket() -> None:
    # "ranked just below k" is decided by the first touching hit (rank 11), not by the chunk
    # that holds most of the quote (rank 31): the example names the deciding rank first.
    from groundkit.cli.commands._diagnose import _examples
    from groundkit.diagnosis import BUCKETS, Bucket, MissExample

    def shown(example: MissExample) -> str:
        bucket = Bucket(
            name=BUCKETS[0],
            position=1,
            title="t",
            count=1,
            share=1.0,
            weight=0.1,
            examples=[example],
        )
        return _examples(bucket).plain

    both = MissExample(query_id="q", gold_index=0, quote="x", first_rank=11, best_chunk_rank=31)
    assert shown(both).endswith("· first touched at rank 11, best chunk at 31")
    same = MissExample(query_id="q", gold_index=0, quote="x", first_rank=11, best_chunk_rank=11)
    assert shown(same).endswith("· first touched at rank 11")
    best = MissExample(query_id="q", gold_index=0, quote="x", best_chunk_rank=31)
    assert shown(best).endswith("· best chunk at rank 31")
