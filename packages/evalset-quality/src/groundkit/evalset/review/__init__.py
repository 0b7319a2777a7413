"""Human review: a resumable review queue over an eval set, and sheets of hits or misses to mark."""

from groundkit.evalset.review._queue import (
    VERDICT_KEY,
    Decision,
    ReviewAction,
    ReviewProgress,
    ReviewQueue,
)
from groundkit.evalset.review._sheet import (
    SHEET_COLUMNS,
    SHEET_FORMAT,
    SheetCandidate,
    SheetMark,
    SheetResult,
    SheetRow,
    SheetStratum,
    draw_sheet,
    read_sheet,
    sheet_csv,
    sheet_jsonl,
    sheet_precision,
)

__all__ = [
    "SHEET_COLUMNS",
    "SHEET_FORMAT",
    "VERDICT_KEY",
    "Decision",
    "ReviewAction",
    "ReviewProgress",
    "ReviewQueue",
    "SheetCandidate",
    "SheetMark",
    "SheetResult",
    "SheetRow",
    "SheetStratum",
    "draw_sheet",
    "read_sheet",
    "sheet_csv",
    "sheet_jsonl",
    "sheet_precision",
]
