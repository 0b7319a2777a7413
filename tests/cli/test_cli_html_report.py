"""`grk eval report --html`: a self-contained, deterministic, escaped page whose numbers are the
report's; and (marked ``browser``) the same page rendered by headless Chromium without errors.

The reports are built here from core's scoring and the stats package on a small generated
corpus, so every number the page shows has a known source.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pytest
from click.testing import CliRunner
from tests.cli._chromium import Browser

from groundkit.cli import cli
from groundkit.cli.html._data import recall_curves
from groundkit.cli.html._report import render_html_report, write_html_report
from groundkit.harness.analysis import detection_limits
from groundkit.judgments import (
    Corpus,
    EvalReport,
    JudgmentError,
    QueryResult,
    StageReport,
    dump_report,
    score_queries,
)
from groundkit.judgments.metrics import GoldItem
from groundkit.judgments.report import (
    BootstrapSettings,
    GoldEvidence,
    MetricAggregate,
    QueryInfo,
    ReportHit,
    RunInfo,
    StageComparison,
    report_to_json,
)
from groundkit.stats import (
    bootstrap_interval,
    holm_adjust,
    minimum_detectable_difference,
    paired_bootstrap,
)

HEADLINE = ["recall@10", "ndcg@10", "mrr"]
METRICS = [*HEADLINE, "recall@1", "recall@5", "recall@20", "recall@1000c"]
HOSTILE = '</script><img src=x onerror="alert(1)"><script>alert(2)</script>'
_WORDS = (
    "latency", "budget", "replica", "failover", "quorum", "ledger", "invoice", "refund",
    "audit", "badge", "laptop", "travel", "meal", "allowance", "deploy", "canary", "rollback",
    "flag", "tier", "pager", "escalation", "review", "merge", "branch", "release", "vendor",
    "gift", "policy", "retention", "backup", "region", "cluster", "token", "secret", "rotation",
)  # fmt: skip


# --- building reports -------------------------------------------------------------------------


@dataclass
class Built:
    """A generated report and the corpus texts it was scored on."""

    report: EvalReport
    texts: dict[str, str]
    corpus_dir: Path | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def _texts(rng: np.random.Generator, docs: int = 6, words: int = 170) -> dict[str, str]:
    texts = {}
    for i in range(docs):
        lines = []
        for _ in range(words // 17):
            lines.append(" ".join(rng.choice(_WORDS, 17)).capitalize() + ".")
        texts[f"doc-{i}"] = "\n\n".join(" ".join(lines[j : j + 2]) for j in range(0, len(lines), 2))
    return texts


def _category(index: int, hostile: bool) -> str:
    if index % 5 != 1:
        return "normal"
    return HOSTILE if hostile else "tricky"


def _queries(
    rng: np.random.Generator, texts: Mapping[str, str], count: int, hostile: bool
) -> list[QueryInfo]:
    queries: list[QueryInfo] = []
    docs = sorted(texts)
    for i in range(count):
        gold = []
        for _ in range(1 + (i % 4 == 0)):
            doc = docs[int(rng.integers(len(docs)))]
            start = int(rng.integers(0, len(texts[doc]) - 90))
            gold.append(
                GoldEvidence(
                    doc=doc,
                    quote=texts[doc][start : start + 70],
                    grade=1 + (i % 3 == 0),
                    spans=[(start, start + 70)],
                    method="exact",
                )
            )
        text = f"question {i} about {rng.choice(_WORDS)}?"
        if hostile and i == 0:
            text = f"What about {HOSTILE}?"
        queries.append(
            QueryInfo(
                query_id=f"q{i:03d}",
                query=text,
                category=_category(i, hostile),
                qtype="factoid" if i % 2 else "numeric",
                gold=gold,
            )
        )
    for i in range(3):
        queries.append(
            QueryInfo(query_id=f"u{i}", query=f"unanswerable {i}", category="unanswerable")
        )
    return queries


def _hits(
    rng: np.random.Generator,
    texts: Mapping[str, str],
    query: QueryInfo,
    size: int,
    strength: float,
    depth: int,
) -> list[ReportHit]:
    chunks = [
        (doc, s, min(s + size, len(t))) for doc, t in texts.items() for s in range(0, len(t), size)
    ]
    scores = rng.normal(size=len(chunks))
    for n, (doc, start, end) in enumerate(chunks):
        if any(g.doc == doc and start < g.spans[0][1] and g.spans[0][0] < end for g in query.gold):
            scores[n] += strength
    order = np.argsort(-scores, kind="stable")[:depth]
    return [
        ReportHit(doc=chunks[n][0], start=chunks[n][1], end=chunks[n][2], score=float(scores[n]))
        for n in order
    ]


def _verdict(low: float, high: float, p_holm: float) -> Any:
    if p_holm < 0.05 and low > 0:
        return "better"
    if p_holm < 0.05 and high < 0:
        return "worse"
    return "inconclusive"


def build(
    *,
    hostile: bool = False,
    count: int = 30,
    depth: int = 25,
    failed: bool = False,
    level: Literal["chunk", "document"] = "chunk",
    corpus_source: str | None = None,
) -> Built:
    """A report of three stages (chunk sizes 200, 100 and 400) scored with core's metrics."""
    rng = np.random.default_rng(11)
    texts = _texts(rng)
    queries = _queries(rng, texts, count, hostile)
    answerable = [q for q in queries if q.answerable]
    gold = {
        q.query_id: [GoldItem(grade=g.grade, spans=((g.doc, *g.spans[0]),)) for g in q.gold]
        for q in answerable
    }
    specs = [("bm25", 200, 1.2), ("small-chunks", 100, 0.6), ("big-chunks", 400, 2.4)]
    if hostile:
        specs[1] = (f"x{HOSTILE}$x^2$", 100, 0.6)
    per_stage: dict[str, dict[str, dict[str, float]]] = {}
    stages: list[StageReport] = []
    for position, (name, size, strength) in enumerate(specs):
        hits = {q.query_id: _hits(rng, texts, q, size, strength, depth) for q in answerable}
        scores = score_queries(gold, hits, METRICS)
        per_stage[name] = scores
        aggregates = {}
        for metric in METRICS:
            values = [scores[q.query_id][metric] for q in answerable]
            interval = bootstrap_interval(values, resamples=400, seed=0)
            aggregates[metric] = MetricAggregate(
                mean=interval.value, low=interval.low, high=interval.high, query_count=len(values)
            )
        stages.append(
            StageReport(
                name=name,
                kind="bm25",
                baseline=position == 0,
                retriever={"k1": 1.2, "b": 0.75, "note": HOSTILE if hostile else "plain"},
                chunker={"kind": "chars", "size": size, "overlap": 0},
                chunk_count=sum(math.ceil(len(t) / size) for t in texts.values()),
                indexed_documents=len(texts),
                queries=[
                    QueryResult(
                        query_id=q.query_id, scores=scores[q.query_id], hits=hits[q.query_id]
                    )
                    for q in answerable
                ],
                aggregates=aggregates,
            )
        )
    # Paired comparisons with Holm adjustment across candidate stages, per metric.
    raw: dict[tuple[str, str], Any] = {}
    for stage in stages[1:]:
        for metric in HEADLINE:
            raw[(stage.name, metric)] = paired_bootstrap(
                {q: s[metric] for q, s in per_stage["bm25"].items()},
                {q: s[metric] for q, s in per_stage[stage.name].items()},
                baseline_name="bm25",
                candidate_name=stage.name,
                metric=metric,
                resamples=400,
                seed=0,
            )
    adjusted: dict[tuple[str, str], float] = {}
    for metric in HEADLINE:
        keys = [k for k in raw if k[1] == metric]
        for key, p in zip(keys, holm_adjust([raw[k].p_value_two_sided for k in keys]), strict=True):
            adjusted[key] = p
    for index, stage in enumerate(stages[1:], start=1):
        comparisons = [
            StageComparison(
                metric=metric,
                baseline="bm25",
                candidate=stage.name,
                effect=raw[(stage.name, metric)].effect,
                low=raw[(stage.name, metric)].confidence_interval_low,
                high=raw[(stage.name, metric)].confidence_interval_high,
                p_value=raw[(stage.name, metric)].p_value_two_sided,
                p_holm=adjusted[(stage.name, metric)],
                verdict=_verdict(
                    raw[(stage.name, metric)].confidence_interval_low,
                    raw[(stage.name, metric)].confidence_interval_high,
                    adjusted[(stage.name, metric)],
                ),
            )
            for metric in HEADLINE
        ]
        stages[index] = stage.model_copy(update={"comparisons": comparisons})
    if failed:
        stages.append(
            StageReport(
                name="broken", kind="command", error=f"exit 3: {HOSTILE if hostile else 'boom'}"
            )
        )
    run = RunInfo(
        created_at="2024-05-01T12:00:00+00:00",
        package_versions={"groundkit-cli": "0.1.0"},
        corpus_source=corpus_source,
        corpus_fingerprint=Corpus.from_texts(texts).fingerprint(),
        judgments_fingerprint="ab" * 32,
        level=level,
        depth=depth,
        cutoffs=[1, 5, 10, 20],
        budgets=[1000],
        headline_metrics=HEADLINE,
        bootstrap=BootstrapSettings(resamples=400, seed=0, confidence_level=0.95),
    )
    notes = ["Scores are chunk-level.", f"hostile note {HOSTILE}" if hostile else "plain note"]
    return Built(EvalReport(run=run, queries=queries, stages=stages, notes=notes), texts)


def _write_corpus(texts: Mapping[str, str], path: Path) -> Path:
    lines = [json.dumps({"id": doc, "text": text}) for doc, text in texts.items()]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def built() -> Built:
    return build(failed=True)


@pytest.fixture(scope="module")
def page(built: Built) -> str:
    return render_html_report(built.report, corpus=Corpus.from_texts(built.texts))


# --- parsing the page ---------------------------------------------------------------------------


@dataclass
class Element:
    tag: str
    attrs: dict[str, str]
    text: str = ""


class _Collector(HTMLParser):
    """Every element with its attributes, and the direct text of elements carrying data-value."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.elements: list[Element] = []
        self._open: list[Element] = []
        self.style_text = ""
        self._in_style = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        element = Element(tag, {k: v or "" for k, v in attrs})
        self.elements.append(element)
        if tag == "style":
            self._in_style = True
        if tag not in {
            "br",
            "meta",
            "col",
            "img",
            "input",
            "link",
            "path",
            "line",
            "circle",
            "rect",
            "use",
        }:
            self._open.append(element)

    def handle_endtag(self, tag: str) -> None:
        if tag == "style":
            self._in_style = False
        for index in range(len(self._open) - 1, -1, -1):
            if self._open[index].tag == tag:
                del self._open[index:]
                break

    def handle_data(self, data: str) -> None:
        if self._in_style:
            self.style_text += data
        for element in self._open:
            if "data-value" in element.attrs:
                element.text += data


def parse(page_html: str) -> _Collector:
    collector = _Collector()
    collector.feed(page_html)
    collector.close()
    return collector


def numbers(page_html: str) -> list[Element]:
    return [e for e in parse(page_html).elements if "data-value" in e.attrs]


def find(elements: list[Element], **wanted: str) -> list[Element]:
    return [e for e in elements if all(e.attrs.get(f"data-{k}") == v for k, v in wanted.items())]


def check_numbers_match(page_html: str, report_json: str) -> int:
    """Assert every key number of the page equals the JSON report's; return how many checked."""
    data = json.loads(report_json)
    found = numbers(page_html)
    checked = 0
    for stage in data["stages"]:
        if stage["error"] is not None:
            continue
        for metric in data["run"]["headline_metrics"]:
            aggregate = stage["aggregates"][metric]
            for name in ("mean", "low", "high"):
                (cell,) = find(found, stage=stage["name"], metric=metric, field=name)[:1]
                assert float(cell.attrs["data-value"]) == aggregate[name]
                assert cell.text.strip() == f"{aggregate[name]:.4f}"
                checked += 1
            (overall,) = find(found, stage=stage["name"], metric=metric, field="breakdown-all")
            assert float(overall.attrs["data-value"]) == aggregate["mean"]
            checked += 1
        for comparison in stage["comparisons"]:
            cells = find(found, stage=stage["name"], metric=comparison["metric"])
            adjusted = "p_holm" if comparison.get("p_adjusted") is None else "p_adjusted"
            shown = ["effect", "low", "high", "p_value"]
            if comparison.get("role", "decision") == "decision":
                shown.append(adjusted)  # the adjusted p the verdict was decided on
            for name in shown:
                values = {
                    float(c.attrs["data-value"]) for c in cells if c.attrs["data-field"] == name
                }
                assert comparison[name] in values, (name, comparison)
                checked += 1
            verdicts = {c.attrs["data-value"] for c in cells if c.attrs["data-field"] == "verdict"}
            assert verdicts == {comparison.get("decision") or comparison["verdict"]}
            (effect_cell,) = [
                c for c in cells if c.attrs["data-field"] == "effect" and c.tag == "td"
            ]
            assert effect_cell.text.strip() == f"{comparison['effect'] + 0.0:+.4f}"
    answerable = sum(1 for q in data["queries"] if q["gold"])
    (count,) = [e for e in found if e.attrs["data-field"] == "answerable"]
    assert int(count.attrs["data-value"]) == answerable
    assert count.text.strip() == f"{answerable:,}"
    return checked


# --- unit tests (no browser) --------------------------------------------------------------------


def test_page_is_self_contained(page: str) -> None:
    collector = parse(page)
    for element in collector.elements:
        for name in ("src", "href", "xlink:href", "action", "data", "poster"):
            value = element.attrs.get(name, "")
            assert not value.lower().startswith(("http:", "https:", "//", "ftp:")), element
            if name in ("href", "xlink:href") and value:
                assert value.startswith("#"), element
        assert element.tag not in {"link", "script", "iframe", "object", "embed", "img"}, element
    assert "@import" not in collector.style_text
    assert "url(" not in collector.style_text
    assert "@font-face" not in collector.style_text
    csp = [e for e in collector.elements if e.attrs.get("http-equiv") == "Content-Security-Policy"]
    assert csp
    assert "default-src 'none'" in csp[0].attrs["content"]
    assert "script-src 'none'" in csp[0].attrs["content"]


def test_hostile_strings_are_escaped() -> None:
    hostile = build(hostile=True, failed=True)
    text = render_html_report(hostile.report, corpus=Corpus.from_texts(hostile.texts))
    collector = parse(text)
    tags = {e.tag for e in collector.elements}
    assert not tags & {"script", "img", "iframe", "object", "embed"}
    for element in collector.elements:
        assert not any(name.startswith("on") for name in element.attrs), element
    # The hostile text is shown, as text: in the query list, settings, notes, error and plots.
    escaped = "&lt;/script&gt;&lt;img src=x onerror="
    assert text.count(escaped) >= 5
    assert "x&lt;/script&gt;" in text  # the hostile stage name inside an SVG <text>
    assert "$x^2$" in text  # no math parsing: the dollar signs stay
    assert 'onerror="alert(1)"><script>' not in text


def test_same_report_gives_the_same_bytes(built: Built, page: str, tmp_path: Path) -> None:
    # A fresh copy through JSON, written to disk: byte for byte the page of the original.
    copy = EvalReport.model_validate_json(report_to_json(built.report))
    write_html_report(copy, tmp_path / "again.html", corpus=Corpus.from_texts(built.texts))
    assert (tmp_path / "again.html").read_bytes() == page.encode("utf-8")


def test_numbers_on_the_page_are_the_reports(built: Built, page: str) -> None:
    checked = check_numbers_match(page, report_to_json(built.report))
    assert checked >= 2 * 3 * 4 + 2 * 3 * 5


def test_curves_and_detection_limit_come_from_the_recorded_hits(built: Built, page: str) -> None:
    curves = recall_curves(built.report)
    found = numbers(page)
    for curve, stage in zip(
        curves.rank, (s for s in built.report.stages if s.error is None), strict=True
    ):
        for k in (1, 5, 10, 20):
            # Recomputed from hits and gold spans with core's scoring: equal to the report's means.
            assert curve.mean[k - 1] == pytest.approx(
                stage.aggregates[f"recall@{k}"].mean, abs=1e-12
            )
            assert curve.low[k - 1] - 1e-12 <= curve.mean[k - 1] <= curve.high[k - 1] + 1e-12
        (cell,) = find(found, stage=stage.name, metric="recall@10", field="curve")
        assert float(cell.attrs["data-value"]) == pytest.approx(stage.aggregates["recall@10"].mean)
        assert np.all(np.diff(curve.mean) >= -1e-12)  # recall@k never falls as k grows
    for curve, stage in zip(
        curves.budget, (s for s in built.report.stages if s.error is None), strict=True
    ):
        at_1000 = int(np.flatnonzero(curve.x == 1000)[0])
        assert curve.mean[at_1000] == pytest.approx(
            stage.aggregates["recall@1000c"].mean, abs=1e-12
        )
    limits = detection_limits(built.report)
    assert limits.unpaired == minimum_detectable_difference(30)
    (card,) = [e for e in found if e.attrs["data-field"] == "detection-limit"]
    assert float(card.attrs["data-value"]) == limits.unpaired
    floors = [e for e in found if e.attrs["data-field"] == "paired-floor"]
    assert len(floors) == 2 * len(HEADLINE)


def test_page_ids_are_unique_and_plots_are_accessible(page: str) -> None:
    collector = parse(page)
    ids = [e.attrs["id"] for e in collector.elements if "id" in e.attrs]
    assert len(ids) == len(set(ids))
    plots = [e for e in collector.elements if e.tag == "svg" and "plot" in e.attrs.get("class", "")]
    assert len(plots) == 3
    for plot in plots:
        assert plot.attrs["role"] == "img"
        for label in plot.attrs["aria-labelledby"].split():
            assert label in ids
    tables = [e for e in collector.elements if e.tag == "table"]
    captions = [e for e in collector.elements if e.tag == "caption"]
    assert len(captions) == len(tables) > 5
    assert "<text " in page  # plot text stays text (svg.fonttype none), selectable


def test_worst_queries_show_chunk_text_when_the_corpus_is_there(
    built: Built, page: str, tmp_path: Path
) -> None:
    assert "<mark>" in page  # the gold part of the first relevant chunk is highlighted
    _write_corpus(built.texts, tmp_path / "corpus.jsonl")
    moved = built.report.model_copy(
        update={"run": built.report.run.model_copy(update={"corpus_source": "corpus.jsonl"})}
    )
    # A relative corpus_source is also looked for beside the report.
    assert "<mark>" in render_html_report(moved, base_dir=tmp_path)
    without = render_html_report(moved)
    assert "<mark>" not in without
    assert "is not on this machine" in without


def test_a_different_corpus_is_refused(built: Built) -> None:
    other = dict(built.texts, **{"doc-0": "changed"})
    with pytest.raises(JudgmentError, match="not the one the report was run on"):
        render_html_report(built.report, corpus=Corpus.from_texts(other))


def test_diagnosis_missing_gives_a_note(built: Built, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "groundkit.diagnosis", None)
    text = render_html_report(built.report)
    assert "The diagnosis is not available" in text


def test_document_level_report_has_no_budget_curve() -> None:
    document = build(level="document", count=12)
    text = render_html_report(document.report)
    assert "No equal-budget curve" in text
    assert text.count('class="plot"') == 2


def test_write_is_atomic_and_names_the_file(built: Built, tmp_path: Path) -> None:
    target = tmp_path / "missing" / "page.html"
    with pytest.raises(JudgmentError, match="cannot write the HTML report"):
        write_html_report(built.report, target)
    assert not target.parent.exists()


# --- CLI ----------------------------------------------------------------------------------------


def _invoke(*args: str) -> Any:
    return CliRunner().invoke(cli, ["eval", "report", *args])


def test_cli_writes_the_page(built: Built, tmp_path: Path) -> None:
    report_path = tmp_path / "run.json"
    dump_report(built.report, report_path)
    corpus = _write_corpus(built.texts, tmp_path / "corpus.jsonl")
    result = _invoke(
        str(report_path), "--html", str(tmp_path / "out.html"), "--corpus", str(corpus)
    )
    assert result.exit_code == 0, result.output
    assert "wrote" in result.output
    text = (tmp_path / "out.html").read_text(encoding="utf-8")
    assert "<mark>" in text
    check_numbers_match(text, report_path.read_text(encoding="utf-8"))
    # Without --html the page goes beside the report.
    assert _invoke(str(report_path)).exit_code == 0
    assert (tmp_path / "run.html").is_file()


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "report file not found"),
        ("{", "not JSON"),
        ("{}", "schema_version"),
        ('{"schema_version": "9.0"}', "upgrade"),
    ],
)
def test_cli_bad_report_exits_2_in_one_line(
    tmp_path: Path, content: str | None, message: str
) -> None:
    report_path = tmp_path / "report.json"
    if content is not None:
        report_path.write_text(content, encoding="utf-8")
    result = _invoke(str(report_path), "--html", str(tmp_path / "out.html"))
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("error: ")
    assert message in lines[0]
    assert str(report_path.name) in lines[0]
    assert not (tmp_path / "out.html").exists()


def test_cli_bad_corpus_exits_2_and_writes_nothing(built: Built, tmp_path: Path) -> None:
    report_path = tmp_path / "run.json"
    dump_report(built.report, report_path)
    out = tmp_path / "out.html"
    missing = _invoke(str(report_path), "--html", str(out), "--corpus", str(tmp_path / "nope"))
    assert missing.exit_code == 2
    assert "corpus not found" in missing.output
    other = _write_corpus({"doc-0": "something else"}, tmp_path / "other.jsonl")
    wrong = _invoke(str(report_path), "--html", str(out), "--corpus", str(other))
    assert wrong.exit_code == 2
    assert len(wrong.output.strip().splitlines()) == 1
    assert "not the one the report was run on" in wrong.output
    assert not out.exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".out.html")]


def test_eval_run_writes_the_page_in_the_same_run(tmp_path: Path) -> None:
    rng = np.random.default_rng(5)
    texts = _texts(rng, docs=4)
    corpus = _write_corpus(texts, tmp_path / "corpus.jsonl")
    lines = []
    for i, (doc, text) in enumerate(sorted(texts.items())):
        quote = text[40:110].strip()
        lines.append(
            json.dumps(
                {
                    "query_id": f"q{i}",
                    "query": " ".join(quote.split()[:5]),
                    "gold": [{"doc": doc, "quote": quote}],
                }
            )
        )
    judgments = tmp_path / "judgments.jsonl"
    judgments.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = CliRunner().invoke(
        cli,
        [
            "eval", "run", "--corpus", str(corpus), "--judgments", str(judgments),
            "--stage", "small=bm25@chars:120", "--report", str(tmp_path / "r.json"),
            "--html", str(tmp_path / "r.html"), "--no-progress", "--resamples", "200",
        ],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    text = (tmp_path / "r.html").read_text(encoding="utf-8")
    check_numbers_match(text, (tmp_path / "r.json").read_text(encoding="utf-8"))
    assert "<mark>" in text  # the run's corpus_source is on disk: chunk texts are shown


# --- headless Chromium (tests/cli/_chromium.py; the browser fixture: conftest.py) ------


@pytest.mark.browser
def test_page_renders_in_chromium_without_errors(
    browser: Browser, built: Built, tmp_path: Path, repo_root: Path
) -> None:
    report_path = tmp_path / "run.json"
    dump_report(built.report, report_path)
    page_path = tmp_path / "report.html"
    write_html_report(built.report, page_path, corpus=Corpus.from_texts(built.texts))
    loaded = browser.load(page_path, screenshot=True)
    assert loaded.errors == []
    check_numbers_match(loaded.dom, report_path.read_text(encoding="utf-8"))
    assert loaded.facts["scroll_width"] <= browser.width  # nothing spills sideways
    assert len(loaded.facts["plots"]) == 3
    assert min(loaded.facts["plots"]) > 300
    assert loaded.facts["title"].startswith("Retrieval evaluation")
    assert loaded.screenshot is not None
    assert loaded.screenshot.startswith(b"\x89PNG")
    (tmp_path / "report.png").write_bytes(loaded.screenshot)
    artifacts = repo_root / "test-artifacts"
    artifacts.mkdir(exist_ok=True)
    (artifacts / "html-report.png").write_bytes(loaded.screenshot)
    (artifacts / "html-report.html").write_text(
        page_path.read_text(encoding="utf-8"), encoding="utf-8"
    )
    assert loaded.seconds < 20


@pytest.mark.browser
def test_hostile_page_runs_nothing_in_chromium(browser: Browser, tmp_path: Path) -> None:
    hostile = build(hostile=True, failed=True, count=12)
    page_path = tmp_path / "hostile.html"
    write_html_report(hostile.report, page_path)
    loaded = browser.load(page_path)
    assert loaded.errors == []
    assert not {e.tag for e in parse(loaded.dom).elements} & {"script", "img", "iframe"}


@pytest.mark.browser
def test_a_script_error_fails_the_check(browser: Browser, tmp_path: Path) -> None:
    # Negative controls: the error detection must see an uncaught exception, a console.error
    # and a CSP violation (what an injected script in the report page would cause).
    broken = tmp_path / "broken.html"
    broken.write_text(
        "<!DOCTYPE html><html><head><title>t</title></head><body><p>x</p>"
        "<script>console.error('seen'); undefinedFunction();</script></body></html>",
        encoding="utf-8",
    )
    loaded = browser.load(broken)
    assert any("undefinedFunction" in e for e in loaded.errors), loaded.errors
    assert any("seen" in e for e in loaded.errors), loaded.errors
    blocked = tmp_path / "blocked.html"
    blocked.write_text(
        '<!DOCTYPE html><html><head><meta http-equiv="Content-Security-Policy" '
        "content=\"script-src 'none'\"></head><body><script>document.title='ran'</script>"
        "</body></html>",
        encoding="utf-8",
    )
    loaded = browser.load(blocked)
    assert loaded.errors, "a CSP violation must count as a console error"
    assert loaded.facts["title"] != "ran"


def test_small_and_degenerate_reports_still_render(built: Built) -> None:
    report = built.report
    baseline_only = report.model_copy(update={"stages": [report.stages[0]]})
    text = render_html_report(baseline_only)
    assert "nothing to compare" in text
    assert text.count('class="plot"') == 2  # the two curves, no forest plot
    unanswerable = [q for q in report.queries if not q.answerable]
    empty = EvalReport(
        run=report.run,
        queries=unanswerable,
        stages=[StageReport(name="bm25", kind="bm25", baseline=True)],
    )
    text = render_html_report(empty)
    assert "No stage has results to plot" in text
    assert "No scored queries" in text
    unnamed = report.model_copy(
        update={"run": report.run.model_copy(update={"headline_metrics": []})}
    )
    # Without headline metrics every aggregated metric is shown, sorted.
    assert 'data-metric="recall@1000c" data-field="mean"' in render_html_report(unnamed)


@pytest.mark.parametrize(
    ("value", "label"),
    [(-0.075, "-0.075"), (0.1, "+0.1"), (0.0, "0"), (-0.25, "-0.25"), (0.12345, "+0.1235")],
)
def test_forest_ticks_never_round_away_a_tick_value(value: float, label: str) -> None:
    from groundkit.cli.html._plots import signed_tick

    assert signed_tick(value) == label


def test_estimated_chunk_fixes_say_how_to_measure_them(built: Built, page: str) -> None:
    from groundkit.diagnosis import BENCHMARK_FIGURES, CHUNK_FIXES, DiagnosisError, diagnose, fixes

    hinted = 0
    for stage in built.report.stages:
        try:
            ranked = fixes(diagnose(built.report, stage.name, k=10))
        except DiagnosisError:  # a failed stage: nothing to diagnose
            continue
        if any(f.name in CHUNK_FIXES and not f.exact for f in ranked):
            hinted += 1
            assert f"--stage {stage.name} --k 10 --rerun" in page
    assert hinted, "the test report has no estimated chunk fix to hint at"
    record = next(
        f for f in BENCHMARK_FIGURES.figures if f.fix == "larger-chunks" and f.mode == "exact"
    )
    assert f"re-run {record.inside} of {record.total}" in page
