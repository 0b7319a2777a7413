"""Where a report's hits and gold point: documents inside the corpus, spans inside their document.

A report read from elsewhere is data. Every document it names (each hit, each gold quote)
follows the document-id contract, a plain relative path inside the corpus (never absolute,
never ``..``: :func:`~groundkit.judgments.gold.validate_doc_id`), checked whenever a report is
built or read (:func:`document_problems`, part of the report's consistency checks). Where the
report's corpus is at hand (:func:`report_corpus_at_hand`), every hit must name one of its
documents and every span, hit or gold, must end inside it (:func:`check_report_corpus`): a
reader never slices past a document's end or shows text the run did not see.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from groundkit.judgments._errors import JudgmentError, ReportError
from groundkit.judgments.report._inputs import recorded_input
from groundkit.judgments.report._models import document_problems, hit_key

if TYPE_CHECKING:
    from groundkit.judgments.corpus import Corpus
    from groundkit.judgments.report._models import EvalReport

__all__ = [
    "check_report_corpus",
    "document_problems",
    "hit_key",
    "report_corpus_at_hand",
]


def _gold_problem(report: EvalReport, corpus: Mapping[str, str]) -> str | None:
    for query in report.queries:
        for gold in query.gold:
            text = corpus.get(gold.doc)
            for start, end in gold.spans:
                if text is None or end > len(text):
                    where = (
                        "names a document the corpus does not have"
                        if text is None
                        else f"ends past the end of its document ({len(text):,} characters)"
                    )
                    return (
                        f"query {query.query_id!r}, gold {hit_key(gold.doc, start, end)!r}: the "
                        f"span {where}"
                    )
    return None


def _hit_problem(report: EvalReport, corpus: Mapping[str, str]) -> str | None:
    for stage in report.stages:
        for result in stage.queries:
            for rank, hit in enumerate(result.hits, start=1):
                text = corpus.get(hit.doc)
                if text is not None and hit.end <= len(text):
                    continue
                where = (
                    "names a document the corpus does not have"
                    if text is None
                    else f"ends past the end of its document ({len(text):,} characters)"
                )
                return (
                    f"stage {stage.name!r}, query {result.query_id!r}, hit {rank} "
                    f"{hit_key(hit.doc, hit.start, hit.end)!r}: the span {where}"
                )
    return None


def check_report_corpus(
    report: EvalReport, corpus: Mapping[str, str], *, source: str | Path | None = None
) -> None:
    """Refuse a report whose hits or gold spans do not lie inside the corpus it was run on.

    Call it with the report's own corpus (its fingerprint checked): a hit of a document the
    corpus does not have, or a span (hit or gold) that ends past its document's end, can only
    come from an edited report.

    Args:
        report: The report.
        corpus: Its corpus (document id to text).
        source: The report's file, for the message.

    Raises:
        ReportError: The first such span: one line naming the file, the stage and query, and
            the span's key ``doc#start-end``.
    """
    problem = _hit_problem(report, corpus) or _gold_problem(report, corpus)
    if problem is not None:
        raise ReportError(
            f"{problem}; the report was edited or was not run on this corpus", path=source
        )


def _load_matching(path: Path, shown: str, expected: str) -> tuple[Corpus | None, str | None]:
    from groundkit.judgments.corpus import Corpus

    try:
        loaded = Corpus.load(path)
    except (JudgmentError, OSError) as error:
        return None, f"The corpus {shown} could not be read ({error})."
    if loaded.fingerprint() != expected:
        return None, f"The corpus at {shown} has changed since the run; its texts are not shown."
    return loaded, None


def report_corpus_at_hand(
    report: EvalReport,
    corpus: Corpus | str | Path | None = None,
    *,
    base_dir: Path | None = None,
    source: str | Path | None = None,
) -> tuple[Corpus | None, str | None]:
    """The report's corpus, checked against the report; or why it is not at hand.

    ``corpus`` when given (it must have the report's fingerprint), else the recorded corpus
    when it is on this machine (:func:`~groundkit.judgments.report.recorded_input`: from the
    report's folder, then as given) and still has the report's fingerprint. A corpus
    found is checked with :func:`check_report_corpus`.

    Args:
        report: The report.
        corpus: The corpus the user gave (a :class:`Corpus` or a path), if any.
        base_dir: The report's folder (when ``source`` is not given).
        source: The report's file: where its recorded paths lead from, and for messages.

    Returns:
        ``(corpus, None)``, or ``(None, why)`` when the recorded corpus is not there, cannot
        be read or has changed.

    Raises:
        JudgmentError: A given corpus cannot be read or is not the report's.
        ReportError: A hit or gold span does not lie inside the corpus.
    """
    from groundkit.judgments.corpus import Corpus

    expected = report.run.corpus_fingerprint
    found: Corpus | None
    if corpus is not None:
        found = corpus if isinstance(corpus, Corpus) else Corpus.load(corpus)
        if found.fingerprint() != expected:
            raise JudgmentError(
                "corpus is not the one the report was run on (fingerprint "
                f"{found.fingerprint()[:12]}, report {expected[:12]}); its offsets would not "
                "match",
                path=None if isinstance(corpus, Corpus) else corpus,
            )
        check_report_corpus(report, found, source=source)
        return found, None
    recorded = report.run.corpus_source or report.run.corpus_from_report
    if recorded is None:
        return None, "The report does not say where its corpus is; pass --corpus."
    if source is not None:
        report_file: Path | None = Path(source)
    else:
        report_file = None if base_dir is None else base_dir / "report.json"
    path = recorded_input(report, "corpus", report_file)
    if path is None:
        return None, f"The corpus {recorded} is not on this machine; pass --corpus."
    found, note = _load_matching(path, recorded, expected)
    if found is not None:
        check_report_corpus(report, found, source=source)
    return found, note
