"""The HTML report's judged section: judged@k per stage, and the CAUTION when it is low.

Only reads the report: the shares are the report's ``StageReport.judged`` and the caution is
the report's own LOW_JUDGED note, so the page says exactly what the file says.
"""

from __future__ import annotations

from collections.abc import Mapping

from groundkit.cli.html._plots import StageStyle
from groundkit.cli.html._template import esc, stage_label
from groundkit.judgments import EvalReport
from groundkit.judgments.report import NoteCode

__all__ = ["judged_section"]


def _cutoffs(report: EvalReport) -> list[str]:
    found = {key for stage in report.stages for key in stage.judged}
    return sorted(found, key=lambda key: int(key.partition("@")[2] or 0))


def judged_section(report: EvalReport, styles: Mapping[str, StageStyle]) -> str:
    """judged@k per stage (a report older than schema 1.3 says it has none)."""
    head = (
        '<section id="judged" aria-labelledby="judged-h"><h2 id="judged-h">Judged hits</h2>'
        '<p class="lead">The share of each stage\'s top-k hits anything is known about: they '
        "touch a gold quote or carry a grade from <code>grk eval adjudicate</code>. An "
        "unjudged hit is not an irrelevant one.</p>"
    )
    columns = _cutoffs(report)
    if not columns:
        return head + '<p class="muted">This report records no judged@k.</p></section>'
    cautions = "".join(
        f'<div class="callout warn" data-note="{esc(note.code)}"><strong>CAUTION</strong> '
        f"{esc(note.text)}</div>"
        for note in report.note_records
        if note.code == NoteCode.LOW_JUDGED
    )
    header = "".join(f'<th scope="col">{esc(key)}</th>' for key in columns)
    rows = []
    for stage in report.stages:
        if stage.error is not None or not stage.judged:
            continue
        cells = "".join(
            f'<td class="num" data-stage="{esc(stage.name)}" data-field="{esc(key)}" '
            f'data-value="{esc("" if value is None else repr(value))}">'
            f"{'—' if value is None else f'{100 * value:.0f}%'}</td>"
            for key in columns
            for value in [stage.judged.get(key)]
        )
        label = stage_label(stage.name, styles.get(stage.name), baseline=stage.baseline)
        rows.append(f'<tr><th scope="row">{label}</th>{cells}</tr>')
    return (
        head + cautions + '<div class="table-scroll"><table>'
        "<caption>judged@k: judged hits over hits among each query's first k, pooled over "
        "answerable queries.</caption>"
        f'<thead><tr><th scope="col">stage</th>{header}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div></section>"
    )
