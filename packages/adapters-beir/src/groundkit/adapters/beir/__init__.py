"""Adapt BEIR datasets into groundkit's corpus folder and quote-anchored judgments.

A BEIR download is untrusted input: :func:`adapt_beir_dataset` validates the whole dataset and
the output folder before writing a single byte, so a refused dataset leaves nothing behind.
Each gold quote is a whole document (title, a blank line, body) graded with the qrels score.
"""

from groundkit.adapters.beir.__about__ import __version__
from groundkit.adapters.beir._adapt import adapt_beir_dataset
from groundkit.adapters.beir._errors import BeirError
from groundkit.adapters.beir._ids import IdMapping, map_ids, slugify
from groundkit.adapters.beir._output import CORPUS_DIR_NAME, ID_MAP_NAME, JUDGMENTS_NAME
from groundkit.adapters.beir._records import TITLE_SEPARATOR, adapted_document_text
from groundkit.adapters.beir._report import COMPARABILITY_NOTE, BeirAdaptationReport

__all__ = [
    "COMPARABILITY_NOTE",
    "CORPUS_DIR_NAME",
    "ID_MAP_NAME",
    "JUDGMENTS_NAME",
    "TITLE_SEPARATOR",
    "BeirAdaptationReport",
    "BeirError",
    "IdMapping",
    "__version__",
    "adapt_beir_dataset",
    "adapted_document_text",
    "map_ids",
    "slugify",
]
