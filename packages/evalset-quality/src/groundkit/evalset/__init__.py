"""Eval-set quality: catch a bad eval set before it costs a wrong conclusion.

``assess`` says how large a difference the set can detect (and how that number depends on
pairing), how much of it is reviewed, portable and discriminating; filters drop items that
would mislead (too short, dangling references, unresolved evidence, near-duplicates, questions
every system aces or a model answers without retrieval); ``Classifier`` labels question
types; ``ReviewQueue`` drives a resumable human review; ``RelevanceJudge`` grades
(query, passage) pairs 0–3 with any model, cached on disk, by majority of repeats;
``calibrate`` measures a judge against the set's own gold (a ``CalibrationCard``);
``apply_candidate_decisions`` turns judged-relevant hits a person accepts into gold quotes;
``draft_questions`` drafts new items from corpus passages with any model; ``run_pool``
estimates every stage's precision@k and recall relative to the pool from a judged stratified
sample, without gold; ``draw_sheet`` and ``read_sheet`` make and read back sheets a person
marks, ``sheet_precision`` weighting the marks by stratum size.
"""

from groundkit.evalset.__about__ import __version__
from groundkit.evalset._assess import EvalSetQuality, assess
from groundkit.evalset._calibration import (
    CalibrationHit,
    CalibrationSample,
    Stratum,
    calibration_figures,
    decisions_of,
    draw_calibration_sample,
    figures_text,
    judge_sample,
    rate_text,
)
from groundkit.evalset._calibration_card import (
    CARD_FORMAT,
    CARD_VERSION,
    CalibrationCard,
    CalibrationItem,
    CalibrationStratum,
    build_card,
    calibrate,
    card_path,
    card_text,
    find_card,
    judge_id,
    read_card,
)
from groundkit.evalset._candidates import (
    CANDIDATE_SOURCE_KEY,
    CandidateAction,
    CandidateDecision,
    CandidateLine,
    apply_candidate_decisions,
    read_candidate_decisions,
    read_candidates,
)
from groundkit.evalset._chain import MIN_KEPT, FilterChain, FilterResult, default_filters
from groundkit.evalset._classify import (
    QTYPE_SOURCE_KEY,
    QUESTION_TYPES,
    UNLABELLED,
    Classifier,
    Label,
    heuristic_type,
    normalise_type,
    type_distribution,
)
from groundkit.evalset._closed_book import Answerer, ClosedBookResult, closed_book_check
from groundkit.evalset._errors import EvalSetError
from groundkit.evalset._filters import (
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
from groundkit.evalset._floors import questions_needed, round_up
from groundkit.evalset._generate import DraftResult, DroppedDraft, draft_questions, split_passages
from groundkit.evalset._judge import (
    RELEVANT_GRADE,
    JudgeCallError,
    JudgeClient,
    JudgeReply,
    JudgeRequest,
    JudgeRun,
    JudgeUsage,
    PairVerdict,
    RelevanceJudge,
    callable_judge,
    majority_grade,
)
from groundkit.evalset._judge_cache import JudgeCache, call_key, passage_hash
from groundkit.evalset._judge_prompt import (
    PROMPT_VERSION,
    Grade,
    JudgeReplyError,
    judge_prompt,
    parse_reply,
)
from groundkit.evalset._judge_recorded import RecordedJudge
from groundkit.evalset._notes import CAUTION, INFO, EvalsetNoteCode, Note, NoteLevel
from groundkit.evalset._pool import Pool, PoolEntry, StageRef, allocate, build_pool, draw_sample
from groundkit.evalset._pool_estimate import estimate_pool, pool_passages, run_pool
from groundkit.evalset._pool_models import (
    POOL_FORMAT,
    POOL_VERSION,
    PoolComparison,
    PoolItem,
    PoolReport,
    PoolStage,
    PoolStratum,
)
from groundkit.evalset._review import (
    VERDICT_KEY,
    Decision,
    ReviewAction,
    ReviewProgress,
    ReviewQueue,
)
from groundkit.evalset._scores import ScoreInput, discriminating_power
from groundkit.evalset._sheet import (
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
from groundkit.evalset._version import (
    SET_VERSION_KEY,
    bump_set_version,
    set_version,
    with_set_version,
)

__all__ = [
    "CANDIDATE_SOURCE_KEY",
    "CARD_FORMAT",
    "CARD_VERSION",
    "CAUTION",
    "INFO",
    "MIN_KEPT",
    "POOL_FORMAT",
    "POOL_VERSION",
    "PROMPT_VERSION",
    "QTYPE_SOURCE_KEY",
    "QUESTION_TYPES",
    "RELEVANT_GRADE",
    "SET_VERSION_KEY",
    "SHEET_COLUMNS",
    "SHEET_FORMAT",
    "UNLABELLED",
    "VERDICT_KEY",
    "Answerer",
    "CalibrationCard",
    "CalibrationHit",
    "CalibrationItem",
    "CalibrationSample",
    "CalibrationStratum",
    "CandidateAction",
    "CandidateDecision",
    "CandidateLine",
    "Classifier",
    "ClosedBookResult",
    "DanglingReferenceFilter",
    "Decision",
    "DraftResult",
    "DroppedDraft",
    "EvalSetError",
    "EvalSetQuality",
    "EvalsetNoteCode",
    "Filter",
    "FilterChain",
    "FilterOutcome",
    "FilterResult",
    "GeneralKnowledgeFilter",
    "Grade",
    "JudgeCache",
    "JudgeCallError",
    "JudgeClient",
    "JudgeReply",
    "JudgeReplyError",
    "JudgeRequest",
    "JudgeRun",
    "JudgeUsage",
    "Label",
    "NearDuplicateFilter",
    "NonDiscriminatingFilter",
    "Note",
    "NoteLevel",
    "PairVerdict",
    "Pool",
    "PoolComparison",
    "PoolEntry",
    "PoolItem",
    "PoolReport",
    "PoolStage",
    "PoolStratum",
    "RecordedJudge",
    "Rejection",
    "RelevanceJudge",
    "ResolutionInput",
    "ReviewAction",
    "ReviewProgress",
    "ReviewQueue",
    "ScoreInput",
    "SheetCandidate",
    "SheetMark",
    "SheetResult",
    "SheetRow",
    "SheetStratum",
    "StageRef",
    "Stratum",
    "TooShortFilter",
    "UnresolvedEvidenceFilter",
    "__version__",
    "allocate",
    "apply_candidate_decisions",
    "assess",
    "build_card",
    "build_pool",
    "bump_set_version",
    "calibrate",
    "calibration_figures",
    "call_key",
    "callable_judge",
    "card_path",
    "card_text",
    "closed_book_check",
    "dangling_pronoun",
    "decisions_of",
    "default_filters",
    "discriminating_power",
    "draft_questions",
    "draw_calibration_sample",
    "draw_sample",
    "draw_sheet",
    "estimate_pool",
    "figures_text",
    "find_card",
    "heuristic_type",
    "judge_id",
    "judge_prompt",
    "judge_sample",
    "majority_grade",
    "normalise_type",
    "parse_reply",
    "passage_hash",
    "pool_passages",
    "questions_needed",
    "rate_text",
    "read_candidate_decisions",
    "read_candidates",
    "read_card",
    "read_sheet",
    "round_up",
    "run_pool",
    "set_version",
    "sheet_csv",
    "sheet_jsonl",
    "sheet_precision",
    "split_passages",
    "type_distribution",
    "with_set_version",
]
