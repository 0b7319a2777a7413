"""What an adaptation left out or read in an unusual way, said in the report's notes."""

from __future__ import annotations

from groundkit.adapters.beir._qrels import QrelsFile
from groundkit.adapters.beir._report import COMPARABILITY_NOTE
from groundkit.adapters.beir._scan import CorpusScan, QrelsCheck, QueryScan, padding_twins

__all__ = ["adaptation_notes"]


def _example(pairs: list[tuple[str, str]]) -> str:
    first, second = pairs[0]
    return f"{first!r} and {second!r}"


def adaptation_notes(
    split: str,
    qrels: QrelsFile,
    queries: QueryScan,
    corpus: CorpusScan,
    check: QrelsCheck,
    judged: int,
) -> tuple[str, ...]:
    """The comparability note, then one note per thing left out or read unusually."""
    notes = [COMPARABILITY_NOTE]
    unjudged = len(queries.lines) - len(check.judged_queries)
    if unjudged:
        notes.append(
            f"{unjudged:,} of {len(queries.lines):,} queries have no qrels row in split "
            f"{split!r} and are not judged (queries files usually hold every split)."
        )
    no_positive = len(check.judged_queries) - judged
    if no_positive:
        notes.append(
            f"{no_positive:,} queries have qrels rows in split {split!r} but none with a "
            "positive score (or only rows naming skipped empty documents); they are left out."
        )
    if corpus.empty:
        notes.append(
            f"Skipped {len(corpus.empty):,} empty documents (neither title nor text; first: "
            f"{next(iter(corpus.empty))!r}) and the {check.dropped_empty_rows:,} qrels rows "
            "that name them."
        )
    if qrels.columns == 4:
        notes.append(
            "The qrels file is in TREC's 4-column layout (query, iteration, document, "
            "relevance); it was read as such and the iteration column ignored."
        )
    padded = list(dict.fromkeys(check.padded))
    if padded:
        notes.append(
            f"{len(padded):,} qrels ids were found in the dataset only once leading zeros were "
            f"ignored (first: qrels {padded[0][0]!r} is {padded[0][1]!r}); the dataset's "
            "spelling is used."
        )
    twins = padding_twins([*corpus.lines, *corpus.empty])
    if twins:
        notes.append(
            f"{len(twins):,} document ids differ from another only by leading zeros (first: "
            f"{_example(twins)}); they are kept as separate documents."
        )
    return tuple(notes)
