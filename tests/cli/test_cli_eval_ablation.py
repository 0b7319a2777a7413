"""`grk eval run` with ablation: console table, report rows, HTML section, compare, errors."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from tests.cli._chromium import Browser
from tests.cli.test_cli_html_report import check_numbers_match

from groundkit.cli import cli
from groundkit.cli.run import _run as eval_run
from groundkit.cli.run._run import demo_data
from groundkit.judgments import SCHEMA_VERSION, load_report
from groundkit.judgments.report import check_report


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path]]:
    """The demo corpus and 80 of its judgments (fast; the figures are the demo's own)."""
    folder = tmp_path_factory.mktemp("ablation")
    with demo_data() as (corpus, judgments):
        lines = judgments.read_text(encoding="utf-8").splitlines()[:80]
        subset = folder / "judgments.jsonl"
        subset.write_text("\n".join(lines) + "\n", encoding="utf-8")
        yield corpus, subset


def _run(inputs: tuple[Path, Path], out: Path, *flags: str) -> Result:
    corpus, judgments = inputs
    return CliRunner().invoke(
        cli,
        [
            "eval",
            "run",
            "--corpus",
            str(corpus),
            "--judgments",
            str(judgments),
            "--resamples",
            "200",
            "--report",
            str(out / "report.json"),
            "--no-items",
            *flags,
        ],
    )


FUSED = ("--stage", "small=bm25@chars:400:50", "--stage", "doc=bm25@document")


@pytest.fixture(scope="module")
def fused_run(inputs: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("fused")
    result = _run(
        inputs, out, *FUSED, "--hybrid", "fused=bm25,small,doc", "--html", str(out / "r.html")
    )
    assert result.exit_code == 0, result.output
    (out / "console.txt").write_text(result.output, encoding="utf-8")
    return out


def test_the_console_shows_the_ablation_table_under_the_stages(fused_run: Path) -> None:
    output = " ".join((fused_run / "console.txt").read_text(encoding="utf-8").split())
    assert "ablation: component mean, then whole − component" in output
    assert "a family of its own: Holm over 24 comparisons" in output
    assert "fused without small (replayed)" in output
    assert output.index("ablation:") > output.index("difference from bm25")
    assert output.index("ablation:") < output.index("cost and latency per stage")


def test_the_report_holds_the_rows_and_reads_back(fused_run: Path) -> None:
    data = json.loads((fused_run / "report.json").read_text(encoding="utf-8"))
    assert check_report(data) == []
    assert data["schema_version"] == SCHEMA_VERSION
    rows = [(r["stage"], r["component"], r["source"]) for r in data["ablation"]]
    assert rows == [
        ("fused", "bm25", "stage"),
        ("fused", "small", "stage"),
        ("fused", "doc", "stage"),
        ("fused", "fused without bm25", "replay"),
        ("fused", "fused without small", "replay"),
        ("fused", "fused without doc", "replay"),
    ]
    assert data["run"]["config"]["ablation"] is None  # the default: on with a fusion
    assert "ablation" in data["timings"]


def test_the_html_section_shows_the_reports_numbers(fused_run: Path) -> None:
    page = (fused_run / "r.html").read_text(encoding="utf-8")
    report = load_report(fused_run / "report.json")
    assert '<a href="#ablation">Ablation</a>' in page
    section = page[page.index('<section id="ablation"') :]
    section = section[: section.index("</section>")]
    for row in report.ablation:
        assert f'data-component="{row.component}"' in section
        for comparison in row.comparisons:
            assert (
                f'data-field="ablation-effect" data-value="{comparison.effect!r}">'
                f"{comparison.effect + 0.0:+.4f}<"
            ) in section


@pytest.mark.browser
def test_the_html_section_renders_in_chromium(fused_run: Path, browser: Browser) -> None:
    loaded = browser.load(fused_run / "r.html")
    assert loaded.errors == []
    assert loaded.facts["scroll_width"] <= browser.width  # the wide table scrolls in its box
    assert 'id="ablation"' in loaded.dom
    assert loaded.dom.count("data-component=") == 6
    check_numbers_match(loaded.dom, (fused_run / "report.json").read_text(encoding="utf-8"))


def test_compare_names_the_ablation_family(fused_run: Path) -> None:
    result = CliRunner().invoke(
        cli,
        [
            "eval",
            "compare",
            str(fused_run / "report.json"),
            "--baseline",
            "small",
            "--candidate",
            "fused",
            "--json",
        ],
    )
    data = json.loads(result.output)
    assert data["in_ablation_family"] is True
    report = load_report(fused_run / "report.json")
    (row,) = [r for r in report.ablation if r.component == "small"]
    (stored,) = [c for c in row.comparisons if c.metric == "recall@10"]
    assert data["p_value"] == stored.p_value
    assert data["verdict"] == stored.outcome
    assert data["report_verdict"] == stored.outcome
    text = CliRunner().invoke(
        cli,
        [
            "eval",
            "compare",
            str(fused_run / "report.json"),
            "--baseline",
            "small",
            "--candidate",
            "fused",
        ],
    )
    assert "decided within the report's ablation family: holm over 24 comparisons" in text.output


def test_asking_without_a_fusion_or_rerank_is_a_note(
    inputs: tuple[Path, Path], tmp_path: Path
) -> None:
    result = _run(inputs, tmp_path, *FUSED, "--ablation")
    assert result.exit_code == 0, result.output
    assert "nothing to ablate" in result.output
    assert load_report(tmp_path / "report.json").ablation == []


def test_no_ablation_turns_it_off(inputs: tuple[Path, Path], tmp_path: Path) -> None:
    result = _run(inputs, tmp_path, *FUSED, "--hybrid", "fused=bm25,small", "--no-ablation")
    assert result.exit_code == 0, result.output
    assert "ablation:" not in result.output
    assert load_report(tmp_path / "report.json").ablation == []


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (
            ("--ablate", "nope"),
            "error: --ablate: 'nope' is not a stage (stages: bm25, small, doc, fused)",
        ),
        (("--ablate", "small"), "stage 'small' (bm25) has no components to ablate"),
        (("--ablate", "fused", "--no-ablation"), "--ablate and --no-ablation contradict"),
    ],
)
def test_bad_names_exit_2_in_one_line_and_write_nothing(
    inputs: tuple[Path, Path], tmp_path: Path, flags: tuple[str, ...], message: str
) -> None:
    result = _run(inputs, tmp_path, *FUSED, "--hybrid", "fused=bm25,small", *flags)
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert len(result.output.strip().splitlines()) == 1
    assert list(tmp_path.iterdir()) == []


def test_a_config_file_names_the_ablated_stage(inputs: tuple[Path, Path], tmp_path: Path) -> None:
    corpus, judgments = inputs
    config = tmp_path / "groundkit.toml"
    config.write_text(
        f'corpus = "{corpus}"\njudgments = "{judgments}"\nablation = ["nope"]\n'
        '[[stages]]\nname = "small"\nretriever = {kind = "bm25"}\nchunker = "chars:400:50"\n'
        '[[stages]]\nname = "fused"\nretriever = {kind = "hybrid", stages = ["bm25", "small"]}\n',
        encoding="utf-8",
    )
    result = CliRunner().invoke(
        cli, ["eval", "run", "--config", str(config), "--report", str(tmp_path / "r.json")]
    )
    assert result.exit_code == 2, result.output
    assert "'nope' is not a stage" in result.output
    assert str(config) in result.output
    assert not (tmp_path / "r.json").exists()


@pytest.mark.dense
@pytest.mark.slow
def test_demo_data_with_dense_hybrid_and_rerank_end_to_end(
    inputs: tuple[Path, Path], tmp_path: Path
) -> None:
    if not eval_run.dense_ready():
        pytest.skip("the dense extra is not installed")
    corpus, judgments = inputs
    config = tmp_path / "groundkit.toml"
    config.write_text(
        f'corpus = "{corpus}"\njudgments = "{judgments}"\ncutoffs = [5, 10]\n'
        # The user's embedding cache, as the demo uses: a second run embeds nothing.
        "budgets = [2000]\ndepth = 20\n"
        "[bootstrap]\nresamples = 200\n"
        '[[stages]]\nname = "dense"\nretriever = {kind = "dense"}\n'
        '[[stages]]\nname = "hybrid"\nretriever = {kind = "hybrid", stages = ["bm25", "dense"]}\n'
        '[[stages]]\nname = "rerank"\nretriever = {kind = "rerank", stage = "hybrid", top = 10, '
        'model = "sentence-transformers/all-MiniLM-L6-v2", scorer = "bi-encoder"}\n',
        encoding="utf-8",
    )
    result = CliRunner().invoke(
        cli, ["eval", "run", "--config", str(config), "--report", str(tmp_path / "r.json")]
    )
    assert result.exit_code == 0, result.output
    assert "ablation: component mean" in result.output
    report = load_report(tmp_path / "r.json")
    assert [(r.stage, r.component, r.removed) for r in report.ablation] == [
        ("hybrid", "bm25", ["dense"]),
        ("hybrid", "dense", ["bm25"]),
        ("rerank", "hybrid", ["rerank"]),
        ("rerank", "bm25", ["rerank", "dense"]),
        ("rerank", "dense", ["rerank", "bm25"]),
    ]
    for row in report.ablation:
        component = report.stage(row.component)
        assert row.aggregates == {m: component.aggregates[m] for m in report.run.headline_metrics}
        whole = report.stage(row.stage)
        for comparison in row.comparisons:
            difference = (
                whole.aggregates[comparison.metric].mean
                - component.aggregates[comparison.metric].mean
            )
            assert comparison.effect == pytest.approx(difference, abs=1e-12)
