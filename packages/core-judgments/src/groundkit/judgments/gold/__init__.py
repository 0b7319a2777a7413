"""Quote-anchored gold: the judgment models, their JSON Lines files, and quote resolution."""

from typing import TYPE_CHECKING

from groundkit.judgments.lazy import lazy_exports

if TYPE_CHECKING:
    from groundkit.judgments._errors import JudgmentError
    from groundkit.judgments.gold._io import (
        dump_judgments,
        iter_jsonl_objects,
        judgment_line,
        judgments_fingerprint,
        judgments_text,
        load_judgments,
        parse_jsonl_line,
    )
    from groundkit.judgments.gold._locate import locate_text
    from groundkit.judgments.gold._models import (
        MAX_GRADE,
        UNANSWERABLE,
        GoldQuote,
        Judgment,
        format_validation_error,
        validate_doc_id,
        validate_query_id,
    )
    from groundkit.judgments.gold._resolve import (
        Method,
        ResolvedJudgment,
        ResolvedQuote,
        Span,
        Unresolved,
        closest_passage,
        normalize_for_matching,
        resolve_judgments,
        resolve_quote,
    )

_EXPORTS: dict[str, str] = {
    "MAX_GRADE": "groundkit.judgments.gold._models",
    "UNANSWERABLE": "groundkit.judgments.gold._models",
    "GoldQuote": "groundkit.judgments.gold._models",
    "Judgment": "groundkit.judgments.gold._models",
    "JudgmentError": "groundkit.judgments._errors",
    "Method": "groundkit.judgments.gold._resolve",
    "ResolvedJudgment": "groundkit.judgments.gold._resolve",
    "ResolvedQuote": "groundkit.judgments.gold._resolve",
    "Span": "groundkit.judgments.gold._resolve",
    "Unresolved": "groundkit.judgments.gold._resolve",
    "closest_passage": "groundkit.judgments.gold._resolve",
    "dump_judgments": "groundkit.judgments.gold._io",
    "format_validation_error": "groundkit.judgments.gold._models",
    "iter_jsonl_objects": "groundkit.judgments.gold._io",
    "judgment_line": "groundkit.judgments.gold._io",
    "judgments_fingerprint": "groundkit.judgments.gold._io",
    "judgments_text": "groundkit.judgments.gold._io",
    "load_judgments": "groundkit.judgments.gold._io",
    "locate_text": "groundkit.judgments.gold._locate",
    "normalize_for_matching": "groundkit.judgments.gold._resolve",
    "parse_jsonl_line": "groundkit.judgments.gold._io",
    "resolve_judgments": "groundkit.judgments.gold._resolve",
    "resolve_quote": "groundkit.judgments.gold._resolve",
    "validate_doc_id": "groundkit.judgments.gold._models",
    "validate_query_id": "groundkit.judgments.gold._models",
}

__all__ = [
    "MAX_GRADE",
    "UNANSWERABLE",
    "GoldQuote",
    "Judgment",
    "JudgmentError",
    "Method",
    "ResolvedJudgment",
    "ResolvedQuote",
    "Span",
    "Unresolved",
    "closest_passage",
    "dump_judgments",
    "format_validation_error",
    "iter_jsonl_objects",
    "judgment_line",
    "judgments_fingerprint",
    "judgments_text",
    "load_judgments",
    "locate_text",
    "normalize_for_matching",
    "parse_jsonl_line",
    "resolve_judgments",
    "resolve_quote",
    "validate_doc_id",
    "validate_query_id",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
