"""`grk eval trec`: trec_eval's evaluation and printed output, without a compiled dependency."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from groundkit.judgments.trec import evaluate_trec_files, format_trec_eval

__all__ = ["REL_FORMATS", "trec_eval_text"]

# trec_eval's judgment formats (-R).
REL_FORMATS = ("qrels", "prefs", "qrels_prefs", "qrels_jg")


def trec_eval_text(  # noqa: PLR0913
    qrels_path: Path,
    run_path: Path,
    *,
    measures: Sequence[str],
    per_query: bool,
    all_queries: bool,
    relevance_level: int,
    max_per_query: int | None,
    rel_format: str = "qrels",
    zscores_path: Path | None = None,
) -> str:
    """Evaluate a run file against a judgments file and return trec_eval's printed output.

    Args:
        qrels_path: The judgments file (qrels unless ``rel_format`` says otherwise).
        run_path: The run file.
        measures: Measure requests as ``-m`` takes them (empty: trec_eval's official set, or
            the format's own set for prefs and qrels_jg judgments).
        per_query: Print each query's values before the summary (``-q``).
        all_queries: Evaluate every judged query, a missing ranking counting as empty (``-c``).
        relevance_level: Minimum relevance counted as relevant (``-l``).
        max_per_query: Keep only the first documents of each ranking (``-M``).
        rel_format: The judgments' format (``-R``): one of :data:`REL_FORMATS`.
        zscores_path: Print z-scores against the means and deviations of this file (``-Z``).

    Returns:
        The text, byte for byte as trec_eval prints it.

    Raises:
        JudgmentError: An unreadable or malformed file (names file and line), or an unknown
            measure, or one the judgments' format cannot give.
    """
    from groundkit.judgments.trec._zscores import read_zscores

    zscores = read_zscores(zscores_path) if zscores_path is not None else None
    requested = list(measures) or None
    if rel_format in ("prefs", "qrels_prefs"):
        from groundkit.judgments.trec._prefs import evaluate_trec_prefs

        result = evaluate_trec_prefs(
            qrels_path,
            run_path,
            requested,
            qrels=rel_format == "qrels_prefs",
            all_queries=all_queries,
            max_per_query=max_per_query,
            zscores=zscores,
        )
    elif rel_format == "qrels_jg":
        from groundkit.judgments.trec._qrels_jg import evaluate_trec_qrels_jg

        result = evaluate_trec_qrels_jg(
            qrels_path,
            run_path,
            requested,
            all_queries=all_queries,
            relevance_level=relevance_level,
            max_per_query=max_per_query,
            zscores=zscores,
        )
    else:
        result = evaluate_trec_files(
            qrels_path,
            run_path,
            requested,
            all_queries=all_queries,
            relevance_level=relevance_level,
            max_per_query=max_per_query,
            zscores=zscores,
        )
    return format_trec_eval(result, per_query=per_query)
