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
from groundkit.evalset._errors import EvalSetError
from groundkit.evalset._floors import questions_needed, round_up
from groundkit.evalset._generate import DraftResult, DroppedDraft, draft_questions, split_passages
from groundkit.evalset._notes import CAUTION, INFO, EvalsetNoteCode, Note, NoteLevel
from groundkit.evalset._scores import ScoreInput, discriminating_power
from groundkit.evalset._version import (
    SET_VERSION_KEY,
    bump_set_version,
    set_version,
    with_set_version,
)
from groundkit.evalset.filters._chain import FilterChain, default_filters
from groundkit.evalset.filters._classify import Classifier
from groundkit.evalset.judge._candidates import apply_candidate_decisions, read_candidates
from groundkit.evalset.judge._card import CalibrationCard, calibrate, read_card
from groundkit.evalset.judge._judge import JudgeClient, RelevanceJudge, callable_judge
from groundkit.evalset.judge._recorded import RecordedJudge
from groundkit.evalset.pool._estimate import run_pool
from groundkit.evalset.pool._models import PoolReport
from groundkit.evalset.review._queue import Decision, ReviewQueue
from groundkit.evalset.review._sheet import draw_sheet, read_sheet, sheet_precision

__all__ = [
    "CAUTION",
    "INFO",
    "SET_VERSION_KEY",
    "CalibrationCard",
    "Classifier",
    "Decision",
    "DraftResult",
    "DroppedDraft",
    "EvalSetError",
    "EvalSetQuality",
    "EvalsetNoteCode",
    "FilterChain",
    "JudgeClient",
    "Note",
    "NoteLevel",
    "PoolReport",
    "RecordedJudge",
    "RelevanceJudge",
    "ReviewQueue",
    "ScoreInput",
    "__version__",
    "apply_candidate_decisions",
    "assess",
    "bump_set_version",
    "calibrate",
    "callable_judge",
    "default_filters",
    "discriminating_power",
    "draft_questions",
    "draw_sheet",
    "questions_needed",
    "read_candidates",
    "read_card",
    "read_sheet",
    "round_up",
    "run_pool",
    "set_version",
    "sheet_precision",
    "split_passages",
    "with_set_version",
]
