"""`grk eval calibrate` on the demo: recorded judge, kappa by hand, the card, kill -9, bad input."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from tests.cli.conftest import report_without_hits

from groundkit.cli import cli
from groundkit.evalset import EvalSetError, RecordedJudge, RelevanceJudge, calibrate, read_card
from groundkit.evalset.judge import card_path, draw_calibration_sample
from groundkit.judgments import Corpus, load_report
from groundkit.judgments.report import CalibrationStatus

STAGE = "bm25-chars200"
N_POS, N_NEG = 10, 12


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("demo")
    result = CliRunner().invoke(
        cli, ["eval", "demo", "--no-dense", "--resamples", "200", "--out", str(out / "d")]
    )
    assert result.exit_code == 0, result.output
    return out / "d" / "report.json"


def _record(report_path: Path, path: Path) -> None:
    """Positives: 8 judged relevant, 2 not; negatives: 9 not relevant, 3 relevant."""
    report = load_report(report_path)
    corpus = Corpus.load(report.run.corpus_source or "")
    sample = draw_calibration_sample(report, corpus, n_pos=N_POS, n_neg=N_NEG, seed=7)
    assert [h.stratum for h in sample.hits].count("positive") == N_POS
    rows = []
    positives = [h for h in sample.hits if h.stratum == "positive"]
    negatives = [h for h in sample.hits if h.stratum == "negative"]
    for i, hit in enumerate(positives):
        rows.append(
            {
                "query": hit.query,
                "passage": hit.passage,
                "grades": [3, 2, 0] if i < 8 else [0, 1, 3],
            }
        )
    for i, hit in enumerate(negatives):
        rows.append(
            {
                "query": hit.query,
                "passage": hit.passage,
                "grades": [0, 0, 2] if i < 9 else [2, 3, 1],
            }
        )
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def _calibrate(report: Path, answers: Path, *extra: str) -> tuple[int, str]:
    result = CliRunner().invoke(
        cli,
        [
            "eval", "calibrate", str(report), "--judge", f"recorded:{answers}",
            "--n-pos", str(N_POS), "--n-neg", str(N_NEG), "--seed", "7", *extra,
        ],
    )  # fmt: skip
    return result.exit_code, result.output


def _copy_demo(demo: Path, folder: Path) -> Path:
    report = folder / "report.json"
    report.write_bytes(demo.read_bytes())
    return report


def test_card_kappa_by_hand_and_adjudicate_calibrated(demo: Path, tmp_path: Path) -> None:
    report = _copy_demo(demo, tmp_path)
    answers = tmp_path / "answers.jsonl"
    _record(report, answers)
    # Adjudication before any card: UNCALIBRATED, typed.
    adjudicate = [
        "eval", "adjudicate", str(report), "--stage", STAGE, "--k", "3", "--min-success", "0",
        "--judge", f"recorded:{answers}", "--out", str(tmp_path / "adj.json"),
        "--list", str(tmp_path / "list.jsonl"),
    ]  # fmt: skip
    result = CliRunner().invoke(cli, adjudicate)
    assert result.exit_code == 0, result.output
    assert "UNCALIBRATED" in result.output
    info = load_report(tmp_path / "adj.json").adjudication
    assert info is not None
    assert info.calibration_status is CalibrationStatus.UNCALIBRATED
    assert info.calibration is None

    code, output = _calibrate(report, answers)
    assert code == 0, output
    card = read_card(card_path(report, f"recorded:{answers.name}"))
    # By hand: TP 8, FN 2, TN 9, FP 3 (n = 22): p_o = 17/22; the label says yes 10/22, the
    # judge 11/22: p_e = (10*11 + 12*11)/22**2 = 242/484 = 0.5; kappa = (17/22 - 0.5)/0.5.
    kappa = (17 / 22 - 0.5) / 0.5
    assert card.figures.kappa == pytest.approx(kappa, abs=1e-12)
    assert (card.figures.tpr.successes, card.figures.tpr.n) == (8, 10)
    assert (card.figures.tnr.successes, card.figures.tnr.n) == (9, 12)
    assert card.figures.tpr.estimate == pytest.approx(0.8)
    # Wilson 95% for 8/10 by hand: centre (0.8 + z²/20)/(1 + z²/10), z = 1.959964.
    z2 = 1.959963984540054**2
    centre = (0.8 + z2 / 20) / (1 + z2 / 10)
    half = (1.959963984540054 / (1 + z2 / 10)) * (0.8 * 0.2 / 10 + z2 / 400) ** 0.5
    assert card.figures.tpr.low == pytest.approx(centre - half, abs=1e-12)
    assert card.figures.tpr.high == pytest.approx(centre + half, abs=1e-12)
    strata = {s.name: s for s in card.strata}
    assert (strata["positive"].sampled, strata["negative"].sampled) == (N_POS, N_NEG)
    assert strata["positive"].population > N_POS
    assert strata["negative"].population > N_NEG
    assert (card.usage.calls, card.usage.cached) == (3 * (N_POS + N_NEG), 0)
    assert f"kappa {kappa:.3f}" in output
    assert f"calls {3 * (N_POS + N_NEG)} (cached 0, failed 0)" in output
    assert all(i.rank >= 51 for i in card.items if i.stratum == "negative")
    # From Python: the same sample, judge and figures.
    loaded = load_report(report)
    python_card = calibrate(
        loaded,
        Corpus.load(loaded.run.corpus_source or ""),
        RelevanceJudge(RecordedJudge.from_file(answers), model=f"recorded:{answers.name}"),
        report_name=report.name,
        n_pos=N_POS,
        n_neg=N_NEG,
        seed=7,
    )
    assert python_card.figures == card.figures
    assert python_card.items == card.items

    # Adjudication with the same judge now carries the card's figures.
    result = CliRunner().invoke(cli, adjudicate)
    assert result.exit_code == 0, result.output
    assert "UNCALIBRATED" not in result.output
    assert f"CALIBRATED ({card_path(report, f'recorded:{answers.name}').name})" in result.output
    info = load_report(tmp_path / "adj.json").adjudication
    assert info is not None
    assert info.calibration_status is CalibrationStatus.CALIBRATED
    assert info.calibration == card.figures
    # Another judge (a different name) is not calibrated by this card.
    other = tmp_path / "other.jsonl"
    other.write_bytes(answers.read_bytes())
    result = CliRunner().invoke(cli, [*adjudicate[:-6], "--judge", f"recorded:{other}",
                                      "--out", str(tmp_path / "adj2.json"),
                                      "--list", str(tmp_path / "list2.jsonl")])  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "UNCALIBRATED" in result.output

    # A rerun makes no call: every judgment is in the card's cache.
    code, output = _calibrate(report, answers)
    assert code == 0, output
    assert f"calls 0 (cached {3 * (N_POS + N_NEG)}, failed 0)" in output
    assert read_card(card_path(report, f"recorded:{answers.name}")).figures == card.figures


def _state(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--stage", "nope"], "no stage named 'nope'"),
        (["--judge", "http", "--model", "m", "--base-url", "http://127.0.0.1:9/v1",
          "--retries", "0"], "cannot reach model endpoint"),
        (["--negative-from-rank", "1000"], "no presumed negatives"),
    ],
)  # fmt: skip
def test_bad_input_exit_2_and_nothing_written(
    demo: Path, tmp_path: Path, args: list[str], message: str
) -> None:
    report = _copy_demo(demo, tmp_path)
    answers = tmp_path / "answers.jsonl"
    answers.write_text("")
    base = ["eval", "calibrate", str(report)]
    if "--judge" not in args:
        base += ["--judge", f"recorded:{answers}"]
    before = _state(tmp_path)
    result = CliRunner().invoke(cli, base + args)
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert len(result.output.strip().splitlines()) == 1
    assert _state(tmp_path) == before


def test_report_without_hits(demo: Path, tmp_path: Path) -> None:
    empty = report_without_hits(demo, tmp_path)
    before = _state(tmp_path)
    result = CliRunner().invoke(cli, ["eval", "calibrate", str(empty), "--judge", "recorded:x"])
    assert result.exit_code == 2, result.output
    assert "the report has no hits to judge" in result.output
    assert _state(tmp_path) == before


SLOW_JUDGE = """
import time
from pathlib import Path

def judge(query, passage):
    with Path(__file__).with_name("calls.log").open("a") as log:
        log.write("x\\n")
    time.sleep(0.02)
    return 2
"""


def _row(line: bytes) -> dict[str, object] | None:
    try:
        row = json.loads(line)
    except ValueError:
        return None  # the torn line of the kill
    return row if isinstance(row, dict) else None


def test_kill_9_then_rerun_loses_or_repeats_nothing(demo: Path, tmp_path: Path) -> None:
    report = _copy_demo(demo, tmp_path)
    (tmp_path / "slowjudge.py").write_text(SLOW_JUDGE)
    cache = tmp_path / "cache.jsonl"
    command = [
        sys.executable, "-m", "groundkit.cli", "eval", "calibrate", str(report),
        "--judge", "python:slowjudge:judge", "--n-pos", "30", "--n-neg", "30",
        "--concurrency", "2", "--cache", str(cache),
    ]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if cache.exists() and len(cache.read_bytes().splitlines()) >= 40:
            break
        time.sleep(0.05)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    out = card_path(report, "python:slowjudge:judge")
    assert not out.exists()  # no half-written card
    assert not [p for p in tmp_path.iterdir() if "calibration" in p.name]
    finished = {
        (row["key"], row["repeat"])
        for line in cache.read_bytes().splitlines()
        if (row := _row(line)) is not None
    }
    assert 40 <= len(finished) < 180
    calls_before = len((tmp_path / "calls.log").read_text().splitlines())
    rerun = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
    assert rerun.returncode == 0, rerun.stderr
    rows = [r for line in cache.read_bytes().splitlines() if (r := _row(line)) is not None]
    keys = [(r["key"], r["repeat"]) for r in rows]
    assert len(keys) == len(set(keys))  # nothing repeated
    assert finished <= set(keys)  # nothing lost
    card = read_card(out)
    assert card.usage.cached >= len(finished)
    assert card.usage.calls + card.usage.cached == 3 * 60
    calls_after = len((tmp_path / "calls.log").read_text().splitlines())
    assert calls_after - calls_before == card.usage.calls
    assert f"calls {card.usage.calls} (cached {card.usage.cached}" in rerun.stdout


@pytest.mark.parametrize(
    ("edit", "field"),
    [
        (lambda card: card["figures"].update(kappa=5.0), "figures.kappa"),
        (lambda card: card["figures"].update(agreement=-0.2), "figures.agreement"),
        (lambda card: card["figures"]["tpr"].update(estimate=1.5), "figures.tpr.estimate"),
        (lambda card: card["figures"]["tpr"].update(estimate=0.1), "is not 8/10"),
        (lambda card: card["figures"]["tnr"].update(successes=99), "99 successes out of 12"),
        (lambda card: card["figures"]["tpr"].update(low=0.9), "does not hold the estimate"),
        (lambda card: card["strata"][0].update(decided=1000), "does not hold"),
    ],
)
def test_an_edited_card_with_impossible_figures_is_refused(
    demo: Path, tmp_path: Path, edit: Any, field: str
) -> None:
    # A card edited by hand (kappa 5.0, a rate above 1) is refused when read, naming the
    # file and the field; adjudication then stops with exit 2 instead of saying CALIBRATED.
    report = _copy_demo(demo, tmp_path)
    answers = tmp_path / "answers.jsonl"
    _record(report, answers)
    assert _calibrate(report, answers)[0] == 0
    path = card_path(report, f"recorded:{answers.name}")
    data = json.loads(path.read_text(encoding="utf-8"))
    edit(data)
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(EvalSetError, match=re.escape(field)) as raised:
        read_card(path)
    assert str(path) in str(raised.value)
    before = _state(tmp_path)
    result = CliRunner().invoke(
        cli,
        ["eval", "adjudicate", str(report), "--stage", STAGE, "--k", "3",
         "--judge", f"recorded:{answers}", "--out", str(tmp_path / "adj.json"),
         "--list", str(tmp_path / "list.jsonl")],
    )  # fmt: skip
    assert result.exit_code == 2, result.output
    assert path.name in result.output
    assert "CALIBRATED" not in result.output
    assert _state(tmp_path) == before
