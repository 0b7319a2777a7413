"""Sections of the HTML report about single queries and misses.

The worst queries of each stage (with chunk text when the corpus is at hand) and the
diagnosis of lost evidence.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from groundkit.cli.html._data import WorstQuery, first_relevant_hit, scored_stages, worst_queries
from groundkit.cli.html._plots import StageStyle
from groundkit.cli.html._template import esc, fmt_count, fmt_value, number_cell, stage_label
from groundkit.judgments import Corpus, EvalReport
from groundkit.judgments.report import GoldEvidence, ReportHit, report_corpus_at_hand

if TYPE_CHECKING:
    from groundkit.diagnosis import Diagnosis, Fix

__all__ = ["CorpusView", "diagnosis_section", "open_corpus", "worst_section"]

_QUOTE_CHARS = 240
_CHUNK_CHARS = 360
_CONTEXT_BEFORE = 120


class CorpusView:
    """The corpus the report was run on, or why its texts cannot be shown.

    Attributes:
        corpus: The corpus, when it is available and matches the report's fingerprint.
        note: Why chunk texts are not shown, when they are not.
    """

    def __init__(self, corpus: Corpus | None, note: str | None) -> None:
        self.corpus = corpus
        self.note = note

    def text(self, doc: str) -> str | None:
        """The document's text, or ``None``."""
        if self.corpus is None:
            return None
        return self.corpus.get(doc)


def open_corpus(
    report: EvalReport,
    corpus: Corpus | str | Path | None,
    *,
    base_dir: Path | None = None,
    source: Path | None = None,
) -> CorpusView:
    """Find the report's corpus: the one given, else ``run.corpus_source`` when it exists.

    A corpus given explicitly must be the one the report was run on (same fingerprint),
    since the report's spans are offsets into it. A relative ``corpus_source`` is looked
    for from the working folder, then from ``base_dir`` (the report's folder). A corpus found
    is checked against the report: every hit names one of its documents and every span ends
    inside its document (core's :func:`~groundkit.judgments.report.report_corpus_at_hand`).

    Raises:
        JudgmentError: An explicitly given corpus cannot be read or is not the report's.
        ReportError: A hit or gold span does not lie inside the corpus (one line naming
            ``source``, the query and the span's key).
    """
    found, note = report_corpus_at_hand(report, corpus, base_dir=base_dir, source=source)
    return CorpusView(found, note)


def _shorten(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def _span(doc: str, start: int, end: int) -> str:
    return (
        f'<span class="mono">{esc(doc)}</span> '
        f'<span class="muted small">[{fmt_count(start)}–{fmt_count(end)})</span>'
    )


_BLANK_LINES = re.compile(r"\n[ \t]*(?:\n[ \t]*)+")


def _display(text: str) -> str:
    """Escaped text with runs of blank lines folded to one line break (compact cells)."""
    return esc(_BLANK_LINES.sub("\n", text))


def _excerpt(text: str, hit: ReportHit, gold: Sequence[GoldEvidence]) -> str:
    """The hit's text (a window of it when long) with the gold overlap marked."""
    start, end = hit.start, min(hit.end, len(text))
    spans = sorted(
        (max(s, start), min(e, end))
        for g in gold
        if g.doc == hit.doc
        for s, e in g.spans
        if min(e, end) > max(s, start)
    )
    first = spans[0][0] if spans else start
    window_start = start if end - start <= _CHUNK_CHARS else max(start, first - _CONTEXT_BEFORE)
    window_end = min(end, window_start + _CHUNK_CHARS)
    pieces: list[str] = ["…"] if window_start > start else []
    cursor = window_start
    for s, e in spans:
        s, e = max(s, cursor), min(e, window_end)
        if e <= s:
            continue
        pieces.append(_display(text[cursor:s]))
        pieces.append(f"<mark>{_display(text[s:e])}</mark>")
        cursor = e
    pieces.append(_display(text[cursor:window_end]))
    if window_end < end:
        pieces.append("…")
    return f'<div class="chunk">{"".join(pieces)}</div>'


def _gold_cell(worst: WorstQuery, touched: GoldEvidence | None) -> str:
    gold = touched or worst.query.gold[0]
    location = (
        _span(gold.doc, gold.spans[0][0], gold.spans[0][1])
        if gold.spans
        else f'<span class="mono">{esc(gold.doc)}</span> <span class="muted small">'
        "(quote not found in the document)</span>"
    )
    more = len(worst.query.gold) - 1
    extra = (
        f'<div class="muted small">+{more} more gold quote{"s" * (more > 1)}</div>' if more else ""
    )
    return f'<div class="quote">{esc(_shorten(gold.quote, _QUOTE_CHARS))}</div>{location}{extra}'


def _hit_cell(
    report: EvalReport, worst: WorstQuery, corpus: CorpusView
) -> tuple[str, GoldEvidence | None]:
    found = first_relevant_hit(report, worst.query, worst.hits)
    if found is None:
        if worst.missing or not worst.hits:
            return '<span class="muted">the retriever returned nothing</span>', None
        top = worst.hits[0]
        text = corpus.text(top.doc)
        body = _excerpt(text, top, ()) if text is not None else ""
        return (
            f"<div><strong>none</strong> in the top {fmt_count(len(worst.hits))}; "
            f"rank 1 was {_span(top.doc, top.start, top.end)}</div>{body}",
            None,
        )
    rank, hit, gold = found
    text = corpus.text(hit.doc)
    body = _excerpt(text, hit, worst.query.gold) if text is not None else ""
    return (
        f'<div>rank <strong class="num">{rank}</strong> · {_span(hit.doc, hit.start, hit.end)}'
        f"</div>{body}",
        gold,
    )


def worst_section(
    report: EvalReport,
    metric: str | None,
    styles: Mapping[str, StageStyle],
    corpus: CorpusView,
    *,
    count: int = 5,
) -> str:
    """The ``count`` lowest-scoring queries of each stage on the first headline metric."""
    head = '<section id="worst" aria-labelledby="worst-h"><h2 id="worst-h">Worst queries</h2>'
    stages = scored_stages(report)
    if metric is None or not stages or report.answerable_count == 0:
        return head + '<p class="lead">No scored queries.</p></section>'
    note = f'<p class="callout warn small">{esc(corpus.note)}</p>' if corpus.note else ""
    parts = [
        head,
        f'<p class="lead">The {count} answerable queries with the lowest {esc(metric)} per '
        "stage, with a gold quote and the best-ranked hit that overlaps any gold span "
        "(overlap highlighted). Read them before trusting a mean.</p>",
        note,
    ]
    for stage in stages:
        rows: list[str] = []
        for position, worst in enumerate(worst_queries(report, stage, metric, count=count), 1):
            hit_html, touched = _hit_cell(report, worst, corpus)
            labels = esc(worst.query.category) + (
                f" · {esc(worst.query.qtype)}" if worst.query.qtype else ""
            )
            rows.append(
                f'<tr><td class="num">{position}</td>'
                f'<td><div class="qtext">{esc(worst.query.query)}</div>'
                f'<div class="muted small"><span class="mono">{esc(worst.query.query_id)}</span>'
                f" · {labels}</div></td>"
                + number_cell(worst.score, field="worst", stage=stage.name, metric=metric).replace(
                    "<td ", f'<td data-query="{esc(worst.query.query_id)}" ', 1
                )
                + f"<td>{_gold_cell(worst, touched)}</td><td>{hit_html}</td></tr>"
            )
        parts.append(
            f"<h3>{stage_label(stage.name, styles.get(stage.name), baseline=stage.baseline)}</h3>"
            '<div class="table-scroll"><table class="worst">'
            '<colgroup><col class="c-rank"><col class="c-query"><col class="c-score">'
            '<col class="c-gold"><col class="c-hit"></colgroup>'
            f"<caption>Lowest {esc(metric)} for {esc(stage.name)} (ties: no relevant hit "
            "first).</caption><thead><tr>"
            '<th scope="col" class="num">#</th><th scope="col">query</th>'
            f'<th scope="col" class="num">{esc(metric)}</th><th scope="col">gold evidence</th>'
            '<th scope="col">first relevant hit</th></tr></thead>'
            f"<tbody>{''.join(rows)}</tbody></table></div>"
        )
    parts.append("</section>")
    return "".join(parts)


# --- diagnosis ------------------------------------------------------------------------------


def _optional_value(
    value: float | None, *, field: str, stage: str, metric: str, signed: bool = False
) -> str:
    if value is None:
        return '<td class="num muted">n/a</td>'
    return number_cell(value, field=field, stage=stage, metric=metric, signed=signed)


def _bucket_rows(diagnosis: Diagnosis) -> tuple[list[str], list[str], list[str]]:
    """Rows of buckets holding misses, titles of empty ones, unmeasurable ones with reasons."""
    stage = diagnosis.stage
    rows: list[str] = []
    empty: list[str] = []
    unmeasured: list[str] = []
    for bucket in diagnosis.buckets:
        if bucket.count is None:
            reason = (bucket.reason or "").removeprefix("not measurable:").strip()
            unmeasured.append(
                f"{esc(bucket.title)} ({esc(reason)})" if reason else esc(bucket.title)
            )
            continue
        if bucket.count == 0:
            empty.append(esc(bucket.title))
            continue
        share = _optional_value(bucket.share, field="bucket-share", stage=stage, metric=bucket.name)
        weight = _optional_value(
            bucket.weight, field="bucket-weight", stage=stage, metric=bucket.name
        )
        examples = ", ".join(
            f'<span class="mono">{esc(query_id)}</span>'
            for query_id in dict.fromkeys(e.query_id for e in bucket.examples)
        )
        rows.append(
            f'<tr><th scope="row">{esc(bucket.title)}</th>'
            f'<td class="num" data-stage="{esc(stage)}" data-metric="{esc(bucket.name)}" '
            f'data-field="bucket-count" data-value="{bucket.count}">{fmt_count(bucket.count)}</td>'
            f'{share}{weight}<td class="small">{examples or "—"}</td></tr>'
        )
    return rows, empty, unmeasured


def _diagnosis_stage(
    diagnosis: Diagnosis, fixes: Sequence[Fix], style: StageStyle | None, baseline: bool
) -> str:
    stage = diagnosis.stage
    metric = esc(diagnosis.metric)
    rows, empty, unmeasured = _bucket_rows(diagnosis)
    aside = []
    if empty:
        aside.append(f"No misses: {', '.join(empty)}.")
    if unmeasured:
        aside.append(f"Not measurable: {'; '.join(unmeasured)}.")
    aside_html = f'<p class="muted small">{" ".join(aside)}</p>' if aside else ""
    buckets_table = (
        '<div class="table-scroll"><table><caption>Where the missed gold went (each miss in '
        f"the first bucket its evidence fits; weight: its worth in {metric}).</caption>"
        '<thead><tr><th scope="col">bucket</th><th scope="col" class="num">misses</th>'
        '<th scope="col" class="num">share</th><th scope="col" class="num">weight</th>'
        '<th scope="col">example queries</th></tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div>"
        if rows
        else ""
    )
    useful = [f for f in fixes if f.expected is not None and f.expected > 0.0]
    # not measurable (None) is not "no gain" (zero): the two are listed apart
    idle = [esc(f.name) for f in fixes if f not in useful and f.expected is not None]
    unknown = [esc(f.name) for f in fixes if f.expected is None]
    fix_rows: list[str] = []
    for fix in useful:
        expected = _optional_value(
            fix.expected, field="fix-expected", stage=stage, metric=fix.name, signed=True
        )
        ceiling = _optional_value(
            fix.ceiling, field="fix-ceiling", stage=stage, metric=fix.name, signed=True
        )
        how = "replayed" if fix.exact else "estimated"
        fix_rows.append(
            f'<tr><td class="num">{fix.rank}</td><th scope="row">{esc(fix.name)}'
            f'<div class="muted small">{esc(fix.knob)}</div></th>{expected}{ceiling}'
            f'<td class="small"><strong>{how}</strong>: {esc(fix.basis)}</td></tr>'
        )
    fixes_table = (
        '<div class="table-scroll"><table><caption>Fixes ranked by expected gain in '
        f"{metric} (gains overlap: do not add them up).</caption><thead><tr>"
        '<th scope="col" class="num">rank</th><th scope="col">fix</th>'
        '<th scope="col" class="num">expected</th><th scope="col" class="num">ceiling</th>'
        '<th scope="col">basis</th></tr></thead>'
        f"<tbody>{''.join(fix_rows)}</tbody></table></div>"
        if fix_rows
        else '<p class="muted">No fix is expected to gain anything.</p>'
    )
    idle_html = (
        f'<p class="muted small">No gain expected from: {", ".join(idle)}.</p>' if idle else ""
    )
    if unknown:
        idle_html += (
            '<p class="muted small">No estimate (not measurable for this stage): '
            f"{', '.join(unknown)}.</p>"
        )
    idle_html += _rerun_hint(stage, fixes, diagnosis.k)
    summary = (
        f"{fmt_count(diagnosis.miss_count)} of {fmt_count(diagnosis.gold_count)} gold "
        f"{'documents' if diagnosis.level == 'document' else 'quotes'} "
        f"missed at k = {diagnosis.k} ({metric} {fmt_value(diagnosis.recall)})."
    )
    return (
        f"<h3>{stage_label(stage, style, baseline=baseline)}</h3><p>{summary}</p>"
        f"{buckets_table}{aside_html}{fixes_table}{idle_html}"
    )


def _rerun_hint(stage: str, fixes: Sequence[Fix], k: int) -> str:
    """How to replace the chunk fixes' estimates with a re-run (the page renders no re-run)."""
    from groundkit.diagnosis import BENCHMARK_FIGURES, CHUNK_FIXES  # with the diagnosis

    estimated = [f.name for f in fixes if f.name in CHUNK_FIXES and not f.exact]
    if not estimated:
        return ""
    record = {
        (f.fix, f.mode): f"{f.inside} of {f.total}"
        for f in BENCHMARK_FIGURES.figures
        if f.mode in ("--no-rerun", "exact")
    }
    track = "; ".join(
        f"{name}: estimate {record[(name, '--no-rerun')]}, re-run {record[(name, 'exact')]}"
        for name in estimated
        if (name, "--no-rerun") in record and (name, "exact") in record
    )
    command = f"grk eval diagnose REPORT --stage {shlex.quote(stage)} --k {k} --rerun"
    return (
        f'<p class="muted small">{esc(", ".join(estimated))}: estimated here from the recorded '
        "rankings (this page runs nothing). "
        + (
            f"Predictions inside the measured gain's 95% interval in the diagnosis benchmark "
            f"({esc(track)} collections). "
            if track
            else ""
        )
        + f"<code>{esc(command)}</code> runs the stage again with each chunker and shows "
        "what applying them measures.</p>"
    )


_CUTOFF = re.compile(r"@([0-9]+)$")


def _diagnosis_k(metric: str | None) -> int:
    """The cutoff of the headline metric (``recall@20`` gives 20), else 10."""
    match = _CUTOFF.search(metric or "")
    return int(match.group(1)) if match else 10


def diagnosis_section(
    report: EvalReport, metric: str | None, styles: Mapping[str, StageStyle]
) -> str:
    """Buckets of missed evidence and ranked fixes per stage, when ``groundkit.diagnosis`` works.

    The diagnosis is optional here: when the package is missing, or a stage is one it cannot
    read (its input error), the section says so in one line and the rest of the page is
    unaffected; any other exception is a bug and is not hidden.
    """
    head = (
        '<section id="diagnosis" aria-labelledby="diagnosis-h"><h2 id="diagnosis-h">Diagnosis</h2>'
    )
    k = _diagnosis_k(metric)
    try:
        # optional section: imported on use
        from groundkit.diagnosis import DiagnosisError, diagnose, fixes
    except ImportError:
        return (
            head + '<p class="muted">The diagnosis is not available (groundkit-diagnosis-fixes '
            "is not installed or too old).</p></section>"
        )
    parts = [
        head,
        f'<p class="lead">Why each stage misses gold evidence at k = {k}, and which change is '
        "expected to recover most of it (gains in recall@k).</p>",
    ]
    for stage in scored_stages(report):
        try:
            diagnosis = diagnose(report, stage.name, k=k, examples=3)
            ranked = fixes(diagnosis)
            parts.append(
                _diagnosis_stage(diagnosis, ranked, styles.get(stage.name), stage.baseline)
            )
        except DiagnosisError as exc:  # a stage diagnosis cannot read; a bug still raises
            reason = " ".join(str(exc).split()) or type(exc).__name__
            parts.append(
                f"<h3>{stage_label(stage.name, styles.get(stage.name), baseline=stage.baseline)}"
                f'</h3><p class="muted">No diagnosis for this stage: {esc(reason)}</p>'
            )
    parts.append("</section>")
    return "".join(parts)
