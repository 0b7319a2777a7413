"""Building blocks of the HTML report: escaping, number formatting, the stylesheet, the page.

Number rule (stated in the page footer): metric values, differences, interval ends, p-values
and detection limits are shown rounded to 4 decimals (differences signed); counts as whole
numbers. Every such number also carries its exact value, as written in the JSON report, in a
``data-value`` attribute, with ``data-stage``, ``data-metric`` and ``data-field`` naming it.

Every string that comes from the report goes through :func:`esc` (report content is
untrusted); the page carries a Content-Security-Policy that forbids scripts and every network
fetch, so even a missed escape could not run code or phone home.
"""

from __future__ import annotations

import html
import math
from collections.abc import Iterable

from groundkit.cli.html._plots import VERDICT_STYLES, StageStyle

__all__ = [
    "CSP",
    "esc",
    "fmt_count",
    "fmt_delta",
    "fmt_value",
    "number_cell",
    "page",
    "stage_label",
    "swatch",
    "verdict_badge",
]

CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; script-src 'none'; "
    "base-uri 'none'; form-action 'none'"
)
"""No scripts, no fetches: the page is static and self-contained."""


def esc(value: object) -> str:
    """HTML-escape any value's text (quotes included, so it is safe in attributes too)."""
    return html.escape(str(value), quote=True)


def fmt_value(value: float) -> str:
    """A value with 4 decimals (``nan`` spelled out)."""
    return "nan" if math.isnan(value) else f"{value:.4f}"


def fmt_delta(value: float) -> str:
    """A signed difference with 4 decimals (``+0.0412``; a zero is ``+0.0000``)."""
    return "nan" if math.isnan(value) else f"{value + 0.0:+.4f}"


def fmt_count(value: int) -> str:
    """A count with thousands separators."""
    return f"{value:,}"


def _data_attributes(
    value: float | int | str, *, stage: str | None, metric: str | None, field: str
) -> str:
    parts = [f'data-field="{esc(field)}"', f'data-value="{esc(_exact(value))}"']
    if stage is not None:
        parts.insert(0, f'data-stage="{esc(stage)}"')
    if metric is not None:
        parts.insert(1 if stage is not None else 0, f'data-metric="{esc(metric)}"')
    return " ".join(parts)


def _exact(value: float | int | str) -> str:
    # repr of a float is the shortest text that reads back to the same float: the JSON's text.
    return repr(value) if isinstance(value, float) else str(value)


def number_cell(
    value: float,
    *,
    field: str,
    stage: str | None = None,
    metric: str | None = None,
    signed: bool = False,
    tag: str = "td",
    extra_class: str = "",
    text: str | None = None,
) -> str:
    """A table cell (or span) showing ``value`` by the number rule, with its exact value.

    ``text`` replaces the shown number (a detection limit is shown by
    :func:`groundkit.stats.limit_text`); the exact value stays in ``data-value``.
    """
    if text is None:
        text = fmt_delta(value) if signed else fmt_value(value)
    classes = f"num {extra_class}".strip()
    attributes = _data_attributes(value, stage=stage, metric=metric, field=field)
    return f'<{tag} class="{classes}" {attributes}>{text}</{tag}>'


def _swatch_marker(marker: str, colour: str) -> str:
    shapes = {
        "o": f'<circle cx="15" cy="6" r="3.4" fill="{colour}"/>',
        "s": f'<rect x="11.8" y="2.8" width="6.4" height="6.4" fill="{colour}"/>',
        "^": f'<path d="M15 2.2 L18.8 9 L11.2 9 Z" fill="{colour}"/>',
        "D": f'<path d="M15 1.8 L19 6 L15 10.2 L11 6 Z" fill="{colour}"/>',
        "v": f'<path d="M15 9.8 L18.8 3 L11.2 3 Z" fill="{colour}"/>',
        "P": (
            f'<path d="M13.6 2.4h2.8v2.2h2.2v2.8h-2.2v2.2h-2.8V7.4h-2.2V4.6h2.2Z" fill="{colour}"/>'
        ),
        "X": (
            f'<path d="M12 3 L18 9 M18 3 L12 9" stroke="{colour}" stroke-width="2.2" fill="none"/>'
        ),
        "*": f'<path d="M15 2 L16.2 5 L19 5.2 L16.8 7 L17.5 10 L15 8.3 L12.5 10 L13.2 7 L11 5.2 '
        f'L13.8 5 Z" fill="{colour}"/>',
    }
    return shapes.get(marker, shapes["o"])


def swatch(style: StageStyle) -> str:
    """A small legend sample of a stage's line, dash pattern and marker (decorative)."""
    dash = (
        f' stroke-dasharray="{" ".join(f"{d * 0.8:g}" for d in style.dashes)}"'
        if style.dashes
        else ""
    )
    return (
        '<svg class="swatch" viewBox="0 0 30 12" width="30" height="12" aria-hidden="true" '
        'focusable="false">'
        f'<line x1="0" y1="6" x2="30" y2="6" stroke="{style.colour}" stroke-width="2"{dash}/>'
        f"{_swatch_marker(style.marker, style.colour)}</svg>"
    )


def stage_label(name: str, style: StageStyle | None, *, baseline: bool = False) -> str:
    """A stage name with its swatch (and a baseline tag)."""
    mark = swatch(style) if style is not None else ""
    tag = ' <span class="tag">baseline</span>' if baseline else ""
    return f'<span class="stage">{mark}<span class="stage-name">{esc(name)}</span>{tag}</span>'


def verdict_badge(verdict: str, *, stage: str | None = None, metric: str | None = None) -> str:
    """The verdict as symbol plus word (colour only reinforces it)."""
    style = VERDICT_STYLES.get(verdict)
    symbol = style.symbol if style is not None else "?"
    attributes = _data_attributes(verdict, stage=stage, metric=metric, field="verdict")
    return (
        f'<span class="verdict verdict-{esc(verdict.replace(" ", "-"))}" {attributes}>'
        f'<span aria-hidden="true">{symbol}</span> {esc(verdict)}</span>'
    )


_CSS = """
:root {
  --sans: system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", "Noto Sans",
    "Liberation Sans", Arial, sans-serif;
  --mono: ui-monospace, SFMono-Regular, Menlo, Consolas, "Liberation Mono", monospace;
  --ink: #1a1a1a; --muted: #595959; --faint: #767676; --line: #d9d9d9; --soft: #f4f5f7;
  --panel: #ffffff; --page: #fbfbfc; --accent: #0072B2;
  --better: #005a8c; --better-bg: #e3f0f8; --worse: #a64200; --worse-bg: #fbeadf;
  --neutral: #404040; --neutral-bg: #ececec;
  color-scheme: light;
}
* { box-sizing: border-box; }
html { -webkit-text-size-adjust: 100%; }
body { margin: 0; font: 15px/1.5 var(--sans); color: var(--ink); background: var(--page); }
.wrap { max-width: 1240px; margin: 0 auto; padding: 0 24px 48px; }
header.top { background: #14212b; color: #f5f7f9; }
header.top .wrap { padding-top: 26px; padding-bottom: 22px; }
header.top h1 { margin: 0 0 4px; font-size: 26px; font-weight: 650; letter-spacing: -0.01em; }
header.top p { margin: 0; color: #c9d3da; font-size: 14px; }
header.top code { color: #f5f7f9; background: rgba(255, 255, 255, 0.1); }
nav.toc { position: sticky; top: 0; z-index: 5; background: rgba(251, 251, 252, 0.96);
  border-bottom: 1px solid var(--line); }
nav.toc ul { list-style: none; margin: 0 auto; padding: 8px 24px; max-width: 1240px;
  display: flex; flex-wrap: wrap; gap: 4px 18px; font-size: 14px; }
nav.toc a { color: var(--accent); text-decoration: none; }
nav.toc a:hover, nav.toc a:focus { text-decoration: underline; }
section { margin-top: 34px; }
h2 { font-size: 21px; margin: 0 0 6px; font-weight: 650; letter-spacing: -0.01em; }
h3 { font-size: 16px; margin: 22px 0 6px; font-weight: 650; }
p.lead { margin: 0 0 14px; color: var(--muted); max-width: 80ch; }
code, .mono { font-family: var(--mono); font-size: 0.9em; }
code { background: var(--soft); padding: 1px 4px; border-radius: 3px; }
.cards { display: grid; grid-template-columns: repeat(auto-fit, minmax(190px, 1fr));
  gap: 12px; margin: 18px 0 8px; }
.card { background: var(--panel); border: 1px solid var(--line); border-radius: 8px;
  padding: 12px 14px; }
.card .label { font-size: 12.5px; color: var(--muted); text-transform: uppercase;
  letter-spacing: 0.04em; }
.card .big { font-size: 26px; font-weight: 650; font-variant-numeric: tabular-nums;
  line-height: 1.25; }
.card .sub { font-size: 13px; color: var(--muted); }
.panel { background: var(--panel); border: 1px solid var(--line); border-radius: 8px;
  padding: 16px 18px; margin: 12px 0; }
.table-scroll { overflow-x: auto; margin: 10px 0; border: 1px solid var(--line);
  border-radius: 8px; background: var(--panel); }
table { border-collapse: collapse; width: 100%; font-size: 14px; }
caption { caption-side: top; text-align: left; padding: 10px 12px 6px; color: var(--muted);
  font-size: 13.5px; }
th, td { padding: 7px 10px; text-align: left; vertical-align: top;
  border-top: 1px solid var(--line); }
thead th { background: var(--soft); font-weight: 600; font-size: 13px; color: #333;
  border-top: 0; white-space: normal; overflow-wrap: normal; }
thead tr + tr th { border-top: 1px solid var(--line); }
tbody tr:nth-child(even) td, tbody tr:nth-child(even) th { background: #fafbfc; }
th[scope="row"] { font-weight: 600; }
td.num, th.num, span.num { font-variant-numeric: tabular-nums; white-space: nowrap; }
/* A cell of several figures (a mean, its range, a verdict) may break between them, never
   inside one: a wide table fits its card instead of hiding its last columns. */
table.headline td.num, table.compact td.num { white-space: normal; }
td .range { white-space: normal; }
td.num, th.num { text-align: right; }
td.group-start, th.group-start { border-left: 1px solid var(--line); }
.range { color: var(--muted); font-size: 12.5px; white-space: nowrap;
  font-variant-numeric: tabular-nums; }
.muted { color: var(--muted); }
.small { font-size: 13px; }
.stage { display: inline-flex; align-items: center; gap: 7px; white-space: nowrap; }
.stage-name { font-weight: 600; }
svg.swatch { flex: none; }
.tag { font-size: 11.5px; font-weight: 600; color: var(--muted); border: 1px solid var(--line);
  border-radius: 10px; padding: 0 7px; margin-left: 2px; }
.verdict { display: inline-block; font-weight: 600; font-size: 13px; padding: 1px 8px;
  border-radius: 10px; white-space: nowrap; }
.verdict-better { color: var(--better); background: var(--better-bg);
  border: 1px solid #9cc7e0; }
.verdict-worse { color: var(--worse); background: var(--worse-bg);
  border: 1px solid #eab89a; }
.verdict-inconclusive, .verdict-too-few-queries, .verdict-equivalent {
  color: var(--neutral); background: var(--neutral-bg);
  border: 1px dashed #a6a6a6; }
.notes { margin: 8px 0 0; padding-left: 20px; }
.notes li { margin: 4px 0; max-width: 95ch; }
.callout { border-left: 4px solid var(--accent); background: #eef5fa; padding: 10px 14px;
  border-radius: 0 6px 6px 0; margin: 12px 0; }
.callout.warn { border-color: #D55E00; background: #fcf1ea; }
figure { margin: 12px 0; background: var(--panel); border: 1px solid var(--line);
  border-radius: 8px; padding: 12px 14px 8px; }
figcaption { font-size: 13.5px; color: var(--muted); margin-top: 4px; }
svg.plot { display: block; width: 100%; height: auto; margin: 0 auto; }
svg.plot text { font-family: var(--sans) !important; }
.two-up { display: grid; grid-template-columns: 1fr; gap: 0 16px; }
@media (min-width: 1100px) { .two-up { grid-template-columns: 1fr 1fr; } }
details { margin: 6px 0 0; }
details summary { cursor: pointer; color: var(--accent); font-size: 14px; }
.quote { border-left: 3px solid #b3b3b3; padding: 2px 0 2px 10px; margin: 4px 0;
  color: #333; font-size: 13.5px; max-width: 70ch; }
.chunk { font-family: var(--mono); font-size: 12.5px; white-space: pre-wrap;
  overflow-wrap: anywhere; background: var(--soft); border-radius: 6px; padding: 6px 9px;
  margin: 4px 0; max-width: 72ch; color: #333; }
mark { background: #fde9a8; color: inherit; padding: 0 1px; border-radius: 2px;
  box-shadow: 0 0 0 1px #e4c766 inset; }
.worst td { font-size: 13.5px; }
.worst col.c-rank { width: 3%; } .worst col.c-query { width: 24%; }
.worst col.c-score { width: 8%; } .worst col.c-gold { width: 27%; }
.worst col.c-hit { width: 38%; }
td.best { font-weight: 700; }
table.headline th, table.headline td { padding: 7px 7px; }
table.compact { font-size: 13px; }
table.compact th, table.compact td { padding: 6px 7px; }
table.headline td.group-start, table.headline th.group-start { padding-left: 12px; }
.split { display: grid; grid-template-columns: 1fr; gap: 4px 24px; align-items: start; }
@media (min-width: 1000px) { .split { grid-template-columns: minmax(320px, 1fr) auto; } }
.split .table-scroll { margin-top: 0; }
.breakdown th, .breakdown td { padding: 6px 9px; }
.breakdown thead th { white-space: normal; vertical-align: bottom; }
.breakdown thead .stage { flex-direction: column; align-items: flex-end; gap: 1px;
  white-space: normal; overflow-wrap: anywhere; }
tr.group th { background: #eef1f4; font-size: 12.5px; text-transform: uppercase;
  letter-spacing: 0.04em; color: var(--muted); }
.grid-tables { display: grid; grid-template-columns: repeat(auto-fit, minmax(640px, 1fr));
  gap: 0 16px; }
.glance h3 { margin-top: 0; }
.glance-list { list-style: none; margin: 0; padding: 0; }
.glance-list li { display: flex; flex-wrap: wrap; align-items: center; gap: 6px 14px;
  padding: 5px 0; border-top: 1px solid var(--line); }
.glance-list li:first-child { border-top: 0; }
.glance-parts { font-size: 14px; }
.worst .qtext { font-weight: 600; max-width: 46ch; }
.kv { display: grid; grid-template-columns: max-content 1fr; gap: 3px 14px; margin: 0;
  font-size: 14px; }
.kv dt { color: var(--muted); }
.kv dd { margin: 0; overflow-wrap: anywhere; }
footer { margin-top: 40px; padding-top: 14px; border-top: 1px solid var(--line);
  color: var(--muted); font-size: 13px; }
a { color: var(--accent); }
.skip { position: absolute; left: -999px; }
.skip:focus { left: 12px; top: 12px; background: #fff; padding: 6px 10px; z-index: 10; }
@media (max-width: 560px) { .grid-tables { grid-template-columns: 1fr; } }
@media (max-width: 640px) {
  .wrap { padding: 0 12px 36px; }
  header.top h1 { font-size: 21px; }
  th, td { padding: 6px 8px; }
}
@media print {
  @page { margin: 14mm 12mm; }
  body { background: #fff; font-size: 11pt; }
  header.top { background: #fff; color: #000; border-bottom: 2px solid #000; }
  header.top p, header.top code { color: #000; }
  nav.toc, .skip { display: none; }
  .wrap { max-width: none; padding: 0; }
  section { break-inside: auto; margin-top: 20px; }
  h2, h3 { break-after: avoid; }
  figure, .card, tr, .panel { break-inside: avoid; }
  .table-scroll { overflow: visible; border-color: #999; }
  thead { display: table-header-group; }
  details::details-content { content-visibility: visible; display: block; }
  details > :not(summary) { display: block; }
  details summary { display: none; }
  a { color: #000; text-decoration: none; }
  .verdict { border-style: solid; }
}
"""


def page(*, title: str, header: str, nav: Iterable[tuple[str, str]], body: str, footer: str) -> str:
    """The whole document around already-rendered sections.

    Args:
        title: Page title (plain text; escaped here).
        header: HTML of the header band's content.
        nav: ``(anchor, label)`` pairs of the table of contents (plain text).
        body: HTML of the sections.
        footer: HTML of the footer.

    Returns:
        The complete HTML document.
    """
    links = "".join(f'<li><a href="#{esc(anchor)}">{esc(label)}</a></li>' for anchor, label in nav)
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{esc(CSP)}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        '<meta name="generator" content="groundkit grk eval report">\n'
        f"<title>{esc(title)}</title>\n<style>{_CSS}</style>\n</head>\n<body>\n"
        '<a class="skip" href="#main">Skip to the report</a>\n'
        f'<header class="top"><div class="wrap">{header}</div></header>\n'
        f'<nav class="toc" aria-label="Sections"><ul>{links}</ul></nav>\n'
        f'<main id="main" class="wrap">\n{body}\n<footer>{footer}</footer>\n</main>\n'
        "</body>\n</html>\n"
    )
