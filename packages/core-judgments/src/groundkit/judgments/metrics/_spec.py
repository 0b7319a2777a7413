"""Metric names: parsing ``"ndcg@10"``, ``"recall@2000c"``... into a :class:`MetricSpec`."""

from __future__ import annotations

import re
from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict

from groundkit.judgments._errors import JudgmentError

__all__ = ["METRIC_KINDS", "MetricKind", "MetricSpec", "parse_metric"]

MetricKind = Literal[
    "recall",
    "hit",
    "precision",
    "mrr",
    "ndcg",
    "map",
    "rprec",
    "span_recall",
    "span_precision",
    "span_precision_chroma",
    "span_iou",
    "span_iou_chroma",
    "precision_omega",
]

#: Every metric kind, in the order the documentation lists them.
METRIC_KINDS: tuple[MetricKind, ...] = get_args(MetricKind)

# precision_omega takes no cutoff either: it reads the stage's chunks, not its ranking.
_NO_CUTOFF = frozenset({"mrr", "map", "rprec", "precision_omega"})
_BUDGETED = frozenset({"recall", "ndcg"})

_NAME = re.compile(r"(?P<kind>[a-z_]+)(?:@(?P<number>[0-9]+)(?P<unit>[a-z]?))?")


class MetricSpec(BaseModel):
    """A parsed metric name.

    Attributes:
        name: The canonical name (equal to the parsed text), used as the key of scores.
        kind: The metric family.
        cutoff: The rank cutoff ``k`` of ``kind@k`` metrics, else ``None``.
        budget_chars: The character budget ``N`` of ``recall@Nc`` and ``ndcg@Nc``, else ``None``.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    kind: MetricKind
    cutoff: int | None = None
    budget_chars: int | None = None

    @property
    def needs_chunks(self) -> bool:
        """Whether the metric reads the stage's chunk list (``precision_omega``), not its hits.

        Such a metric describes the chunker, not the ranking: it cannot be computed from the
        hits alone (re-scored, adjudicated, replayed) and is not measurable for a stage that
        brings its own spans.
        """
        return self.kind == "precision_omega"


def parse_metric(name: str) -> MetricSpec:
    """Parse a metric name.

    Grammar: ``mrr``, ``map``, ``rprec`` (no cutoff; over every hit given); ``precision_omega``
    (no cutoff; over the stage's chunks); ``recall@k``, ``hit@k``, ``precision@k``,
    ``ndcg@k``, ``span_recall@k``, ``span_precision@k``, ``span_precision_chroma@k``,
    ``span_iou@k``, ``span_iou_chroma@k`` with a rank cutoff ``k >= 1``; ``recall@Nc`` and
    ``ndcg@Nc`` with a budget of ``N >= 1`` characters. Numbers are written without leading
    zeros, so the name is its own canonical form. Token budgets (``@Nt``) are not supported:
    counting tokens needs a tokenizer and the hit texts, which the metrics never see.

    Args:
        name: The metric name.

    Returns:
        The parsed specification.

    Raises:
        JudgmentError: If the name is not a known metric (the message names it).
    """
    match = _NAME.fullmatch(name) if isinstance(name, str) else None
    if match is None:
        raise JudgmentError(f"unknown metric {name!r}")
    kind = match["kind"]
    number = match["number"]
    unit = match["unit"]
    if kind not in METRIC_KINDS:
        raise JudgmentError(f"unknown metric {name!r} (known: {', '.join(METRIC_KINDS)})")
    if number is None:
        if kind in _NO_CUTOFF:
            return MetricSpec(name=name, kind=kind)
        raise JudgmentError(f"metric {name!r} needs a cutoff, e.g. '{kind}@10'")
    if kind in _NO_CUTOFF:
        raise JudgmentError(f"metric {name!r} takes no cutoff; use '{kind}'")
    if number.startswith("0"):
        raise JudgmentError(
            f"metric {name!r}: the cutoff must be a positive integer without leading zeros",
        )
    value = int(number)
    if unit == "":
        return MetricSpec(name=name, kind=kind, cutoff=value)
    if unit == "c":
        if kind not in _BUDGETED:
            raise JudgmentError(
                f"metric {name!r}: character budgets exist only for recall and ndcg",
            )
        return MetricSpec(name=name, kind=kind, budget_chars=value)
    if unit == "t":
        raise JudgmentError(
            f"metric {name!r}: token budgets are not supported; use a character budget "
            f"such as '{kind}@2000c'",
        )
    raise JudgmentError(f"metric {name!r}: unknown budget unit {unit!r}")
