"""`grk eval trec`: trec_eval's evaluation and printed output, without a compiled dependency."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from groundkit.judgments.trec import evaluate_trec_files, format_trec_eval

__all__ = ["trec_eval_text"]


def trec_eval_text(
    qrels_path: Path,
    run_path: Path,
    *,
    measures: Sequence[str],
    per_query: bool,
    all_queries: bool,
    relevance_level: int,
    max_per_query: int | None,
) -> str:
    """Evaluate a run file against a qrels file and return trec_eval's printed output.

    Args:
        qrels_path: The qrels file.
        run_path: The run file.
        measures: Measure requests as ``-m`` takes them (empty: trec_eval's official set).
        per_query: Print each query's values before the summary (``-q``).
        all_queries: Evaluate every qrels query, a missing ranking counting as empty (``-c``).
        relevance_level: Minimum relevance counted as relevant (``-l``).
        max_per_query: Keep only the first documents of each ranking (``-M``).

    Returns:
        The text, byte for byte as trec_eval prints it.

    Raises:
        JudgmentError: An unreadable or malformed file (names file and line), or an unknown
            measure.
    """
    result = evaluate_trec_files(
        qrels_path,
        run_path,
        list(measures) or None,
        all_queries=all_queries,
        relevance_level=relevance_level,
        max_per_query=max_per_query,
    )
    return format_trec_eval(result, per_query=per_query)
