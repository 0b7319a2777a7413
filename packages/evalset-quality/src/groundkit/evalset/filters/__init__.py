"""Filters and the classifier: what drops an eval item that would mislead, and why."""

from groundkit.evalset.filters._chain import MIN_KEPT, FilterChain, FilterResult, default_filters
from groundkit.evalset.filters._classify import (
    QTYPE_SOURCE_KEY,
    QUESTION_TYPES,
    UNLABELLED,
    Classifier,
    Label,
    heuristic_type,
    normalise_type,
    type_distribution,
)
from groundkit.evalset.filters._closed_book import Answerer, ClosedBookResult, closed_book_check
from groundkit.evalset.filters._filters import (
    DanglingReferenceFilter,
    Filter,
    FilterOutcome,
    GeneralKnowledgeFilter,
    NearDuplicateFilter,
    NonDiscriminatingFilter,
    Rejection,
    ResolutionInput,
    TooShortFilter,
    UnresolvedEvidenceFilter,
    dangling_pronoun,
)

__all__ = [
    "MIN_KEPT",
    "QTYPE_SOURCE_KEY",
    "QUESTION_TYPES",
    "UNLABELLED",
    "Answerer",
    "Classifier",
    "ClosedBookResult",
    "DanglingReferenceFilter",
    "Filter",
    "FilterChain",
    "FilterOutcome",
    "FilterResult",
    "GeneralKnowledgeFilter",
    "Label",
    "NearDuplicateFilter",
    "NonDiscriminatingFilter",
    "Rejection",
    "ResolutionInput",
    "TooShortFilter",
    "UnresolvedEvidenceFilter",
    "closed_book_check",
    "dangling_pronoun",
    "default_filters",
    "heuristic_type",
    "normalise_type",
    "type_distribution",
]
