"""What an adaptation produced, and what its numbers can be compared with."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from groundkit.adapters.beir._ids import IdMapping

__all__ = ["COMPARABILITY_NOTE", "BeirAdaptationReport"]

#: Said by every report and the README: what scores over an adapted set can be compared with.
COMPARABILITY_NOTE = (
    "Each gold quote is a whole BEIR document, so scores from a chunk-level run over this set "
    "rank chunks and are not comparable to published BEIR numbers, which rank whole documents. "
    "Comparing with them requires the harness's document-level mode with a whole-document "
    "chunker: `grk eval run --level document` (its default chunker, kind `document`, keeps "
    "each document whole), scored per document against the BEIR grades."
)


class BeirAdaptationReport(BaseModel):
    """The outcome of :func:`~groundkit.adapters.beir.adapt_beir_dataset`.

    Attributes:
        source_dir: The BEIR dataset folder that was read.
        output_dir: The folder written to.
        split: The qrels split adapted (``qrels/<split>.tsv``).
        document_count: Documents written (the whole corpus).
        query_count: Judgments written: queries with at least one positive qrels row.
        relevance_pair_count: Positive (score > 0) qrels rows, i.e. gold quotes in total.
        total_characters: Sum of the adapted document lengths, in characters.
        corpus_dir: ``output_dir/corpus``, one ``<document id>.txt`` per document.
        judgments_path: ``output_dir/judgments.jsonl``.
        id_mapping: ``"strict"`` or ``"slug"``.
        mapped_document_ids: Original BEIR document id to the id used, for ids that changed.
        mapped_query_ids: Original BEIR query id to the id used, for judged ids that changed.
        id_map_path: ``output_dir/id_map.json``: how BEIR's ids became groundkit's (the
            ``.txt`` suffix and the renamed ids), applied when a TREC run on BEIR's ids is read.
        unjudged_query_count: Queries of the queries file without any qrels row in the split.
        no_positive_query_count: Queries with qrels rows but none positive (left out).
        skipped_documents: Empty documents left out with ``skip_empty_documents``.
        skipped_qrels_rows: Qrels rows left out because they name a skipped document.
        qrels_columns: 3 (BEIR's layout) or 4 (TREC's, the iteration column ignored).
        zero_padded_ids: ``(qrels id, dataset id)`` pairs matched only once leading zeros
            were ignored (``"1"`` in the qrels, ``"01"`` in the corpus).
        notes: What the adapted set's numbers can and cannot be compared with, then what was
            left out or read in an unusual way.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    source_dir: Path
    output_dir: Path
    split: str
    document_count: int = Field(ge=1)
    query_count: int = Field(ge=1)
    relevance_pair_count: int = Field(ge=1)
    total_characters: int = Field(ge=1)
    corpus_dir: Path
    judgments_path: Path
    id_mapping: IdMapping
    mapped_document_ids: dict[str, str] = Field(default_factory=dict)
    mapped_query_ids: dict[str, str] = Field(default_factory=dict)
    id_map_path: Path
    unjudged_query_count: int = Field(default=0, ge=0)
    no_positive_query_count: int = Field(default=0, ge=0)
    skipped_documents: tuple[str, ...] = ()
    skipped_qrels_rows: int = Field(default=0, ge=0)
    qrels_columns: int = 3
    zero_padded_ids: tuple[tuple[str, str], ...] = ()
    notes: tuple[str, ...] = (COMPARABILITY_NOTE,)
