"""The stored calibration card: a versioned, frozen JSON file beside the report.

``<report stem>.calibration.<judge id>.json`` holds the judge (its name, model and prompt
version), the sample (its seed, strata with population and sample sizes, and every sampled
hit with its grades), the figures and what judging cost. ``grk eval adjudicate`` looks for the
card of its judge beside the report: a card for the same judge, model, prompt version and
gold makes the adjudicated scores calibrated, and they carry its figures.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import ClassVar, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from groundkit.evalset._errors import EvalSetError
from groundkit.evalset.judge._calibration import (
    CalibrationSample,
    Stratum,
    calibration_figures,
    decisions_of,
    draw_calibration_sample,
    judge_sample,
)
from groundkit.evalset.judge._judge import RELEVANT_GRADE, JudgeRun, JudgeUsage, RelevanceJudge
from groundkit.evalset.judge._span import JudgedSpan
from groundkit.judgments import EvalReport
from groundkit.judgments.gold import format_validation_error
from groundkit.judgments.report import CalibrationFigures

__all__ = [
    "CARD_FORMAT",
    "CARD_VERSION",
    "CalibrationCard",
    "CalibrationItem",
    "CalibrationStratum",
    "build_card",
    "calibrate",
    "card_path",
    "card_text",
    "find_card",
    "judge_id",
    "read_card",
]

CARD_FORMAT: Final = "groundkit-calibration-card"
CARD_VERSION = 1


class CalibrationStratum(BaseModel):
    """One stratum of the sample.

    Attributes:
        name: ``positive`` (touches gold) or ``negative`` (presumed: low-ranked, no gold).
        population: Hits the stratum was drawn from.
        sampled: Hits drawn.
        decided: Drawn hits the judge decided (at least one call answered).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: Stratum
    population: int = Field(ge=0)
    sampled: int = Field(ge=0)
    decided: int = Field(ge=0)

    @model_validator(mode="after")
    def _nested(self) -> CalibrationStratum:
        if not self.decided <= self.sampled <= self.population:
            raise ValueError(
                f"stratum {self.name!r}: decided {self.decided} <= sampled {self.sampled} <= "
                f"population {self.population} does not hold"
            )
        return self


class CalibrationItem(JudgedSpan):
    """One sampled hit and the judge's verdict on it."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    json_order: ClassVar[tuple[str, ...]] = (
        "stratum",
        "query_id",
        "stage",
        "rank",
        "doc",
        "start",
        "end",
        "passage_sha256",
        "grades",
        "majority",
        "judged_relevant",
        "failures",
    )

    stratum: Stratum
    grades: list[int] = Field(default_factory=list)
    majority: int | None = None
    judged_relevant: bool | None = None
    failures: list[str] = Field(default_factory=list)


class CalibrationCard(BaseModel):
    """A judge's calibration on one eval set.

    Attributes:
        format: Always ``groundkit-calibration-card``.
        version: Version of the card format.
        judge_id: File-name-safe id of the judge (part of the card's file name).
        judge: The judge (``http:MODEL``, ``recorded:FILE``, ``python:MODULE:FUNCTION``).
        model: The model name (the judge's name when it has no separate model).
        prompt_version: Version of the judge's prompt.
        repeats: Calls per hit; the majority decides.
        relevant_grade: Lowest majority grade counted as relevant.
        report: File name of the report the sample was drawn from.
        judgments_fingerprint: The report's gold (a card is for one eval set).
        corpus_fingerprint: The report's corpus.
        stages: The stages the sample was drawn from.
        negative_from_rank: Lowest rank of a presumed negative.
        seed: Seed of the draw.
        strata: Population, sample and decided sizes per stratum.
        figures: Kappa, TPR and TNR with Wilson intervals.
        usage: Calls, cached calls, failures, tokens and seconds of the run that wrote it.
        items: Every sampled hit with its grades.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    format: Literal["groundkit-calibration-card"] = CARD_FORMAT
    version: int = CARD_VERSION
    judge_id: str
    judge: str
    model: str
    prompt_version: str
    repeats: int = Field(gt=0)
    relevant_grade: int = Field(ge=0, le=3)
    report: str
    judgments_fingerprint: str
    corpus_fingerprint: str
    stages: list[str]
    negative_from_rank: int = Field(ge=1)
    seed: int
    strata: list[CalibrationStratum]
    figures: CalibrationFigures
    usage: JudgeUsage
    items: list[CalibrationItem]

    def matches(self, judge: str, model: str, prompt_version: str, report: EvalReport) -> bool:
        """Whether this card calibrates ``judge`` on ``report``'s gold."""
        return (
            self.judge == judge
            and self.model == model
            and self.prompt_version == prompt_version
            and self.judgments_fingerprint == report.run.judgments_fingerprint
        )


def judge_id(judge: str) -> str:
    """A file-name-safe id of a judge name: a readable slug and a short hash of the name."""
    slug = re.sub(r"[^a-z0-9._-]+", "-", judge.lower()).strip("-.")[:48] or "judge"
    return f"{slug}-{hashlib.sha256(judge.encode('utf-8')).hexdigest()[:8]}"


def card_path(report_path: Path, judge: str) -> Path:
    """Where the card of ``judge`` for the report at ``report_path`` lives."""
    return report_path.with_name(f"{report_path.stem}.calibration.{judge_id(judge)}.json")


# Public API: each keyword is a documented option; grouping them would hide them from
# help() and inspect.signature.
def build_card(  # noqa: PLR0913
    sample: CalibrationSample,
    run: JudgeRun,
    report: EvalReport,
    *,
    report_name: str,
    judge: str,
    model: str,
    prompt_version: str,
    repeats: int,
    relevant_grade: int,
    confidence: float = 0.95,
) -> CalibrationCard:
    """The card of a judged sample (``run.verdicts`` in the order of ``sample.hits``)."""
    decisions = decisions_of(run.verdicts, relevant_grade)
    labels = [h.stratum == "positive" for h in sample.hits]
    items = [
        CalibrationItem(
            stratum=h.stratum,
            query_id=h.query_id,
            stage=h.stage,
            rank=h.rank,
            doc=h.doc,
            start=h.start,
            end=h.end,
            passage_sha256=v.passage_hash,
            grades=v.grades,
            majority=v.majority,
            judged_relevant=d,
            failures=v.failures,
        )
        for h, v, d in zip(sample.hits, run.verdicts, decisions, strict=True)
    ]
    strata = [
        CalibrationStratum(
            name=name,
            population=sample.populations[name],
            sampled=sum(1 for i in items if i.stratum == name),
            decided=sum(1 for i in items if i.stratum == name and i.judged_relevant is not None),
        )
        for name in ("positive", "negative")
    ]
    return CalibrationCard(
        judge_id=judge_id(judge),
        judge=judge,
        model=model,
        prompt_version=prompt_version,
        repeats=repeats,
        relevant_grade=relevant_grade,
        report=report_name,
        judgments_fingerprint=report.run.judgments_fingerprint,
        corpus_fingerprint=report.run.corpus_fingerprint,
        stages=sample.stages,
        negative_from_rank=sample.negative_from_rank,
        seed=sample.seed,
        strata=strata,
        figures=calibration_figures(labels, decisions, confidence=confidence),
        usage=run.usage,
        items=items,
    )


def card_text(card: CalibrationCard) -> str:
    """The card as the JSON text stored on disk."""
    return json.dumps(card.model_dump(mode="json"), indent=1, ensure_ascii=False) + "\n"


def read_card(path: Path) -> CalibrationCard:
    """Read a stored card.

    Raises:
        EvalSetError: The file cannot be read or is not a calibration card (names the file).
    """
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise EvalSetError(f"{path}: not a readable calibration card ({error})") from None
    if not isinstance(data, dict) or data.get("format") != CARD_FORMAT:
        raise EvalSetError(f"{path}: not a groundkit calibration card")
    if data.get("version") != CARD_VERSION:
        raise EvalSetError(
            f"{path}: calibration card version {data.get('version')!r}; this groundkit reads "
            f"version {CARD_VERSION}"
        )
    try:
        return CalibrationCard.model_validate(data)
    except ValidationError as error:
        raise EvalSetError(f"{path}: {format_validation_error(error)}") from None


def find_card(
    report_path: Path, report: EvalReport, *, judge: str, model: str, prompt_version: str
) -> CalibrationCard | None:
    """The card calibrating ``judge`` on this report's gold beside it, or ``None``.

    Raises:
        EvalSetError: A card file is there but is not a calibration card.
    """
    path = card_path(report_path, judge)
    if not path.exists():
        return None
    card = read_card(path)
    return card if card.matches(judge, model, prompt_version, report) else None


# Public API: each keyword is a documented option; grouping them would hide them from
# help() and inspect.signature.
def calibrate(  # noqa: PLR0913
    report: EvalReport,
    corpus: Mapping[str, str],
    judge: RelevanceJudge,
    *,
    report_name: str,
    judge_name: str | None = None,
    n_pos: int = 50,
    n_neg: int = 50,
    seed: int = 0,
    stages: Sequence[str] | None = None,
    negative_from_rank: int | None = None,
    relevant_grade: int = RELEVANT_GRADE,
) -> CalibrationCard:
    """Draw the sample, judge it and build the card (from Python; the CLI does the same).

    Args:
        report: The strict report.
        corpus: Its corpus (document id to text).
        judge: The judge (its cache makes a rerun repeat no finished call).
        report_name: The report's file name, recorded on the card.
        judge_name: The judge's name on the card (default: its model name).
        n_pos: Positives to draw.
        n_neg: Presumed negatives to draw.
        seed: Seed of the draw.
        stages: Stages to draw from (default: every stage that ran).
        negative_from_rank: Lowest rank of a presumed negative (default: depth // 2 + 1).
        relevant_grade: Lowest majority grade counted as relevant.

    Raises:
        EvalSetError: See :func:`draw_calibration_sample`.
    """
    sample = draw_calibration_sample(
        report,
        corpus,
        n_pos=n_pos,
        n_neg=n_neg,
        seed=seed,
        stages=stages,
        negative_from_rank=negative_from_rank,
    )
    run = judge_sample(judge, sample)
    return build_card(
        sample,
        run,
        report,
        report_name=report_name,
        judge=judge_name or judge.model,
        model=judge.model,
        prompt_version=judge.prompt_version,
        repeats=judge.repeats,
        relevant_grade=relevant_grade,
    )
