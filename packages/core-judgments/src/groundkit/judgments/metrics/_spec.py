"""Metric names: parsing ``"ndcg@10"``, ``"recall@2000c"``, ``"recall@1024t"``... into a spec."""

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
        budget_tokens: The token budget ``N`` of ``recall@Nt`` and ``ndcg@Nt``, else ``None``.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    kind: MetricKind
    cutoff: int | None = None
    budget_chars: int | None = None
    budget_tokens: int | None = None

    @property
    def budgeted(self) -> bool:
        """Whether the metric reads the ranking within a budget (``@Nc`` or ``@Nt``)."""
        return self.budget_chars is not None or self.budget_tokens is not None

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
    ``ndcg@Nc`` with a budget of ``N >= 1`` characters; ``recall@Nt`` and ``ndcg@Nt`` with a
    budget of ``N >= 1`` tokens (counted by a tokenizer on the hit texts, see
    :class:`~groundkit.judgments.metrics.HitTokens`). Numbers are written without leading
    zeros, so the name is its own canonical form.

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
            f"metric {name!r}: the {'budget' if unit else 'cutoff'} must be a positive integer "
            "without leading zeros",
        )
    value = int(number)
    if unit == "":
        return MetricSpec(name=name, kind=kind, cutoff=value)
    if unit in ("c", "t"):
        what = "character" if unit == "c" else "token"
        if kind not in _BUDGETED:
            raise JudgmentError(f"metric {name!r}: {what} budgets exist only for recall and ndcg")
        if unit == "c":
            return MetricSpec(name=name, kind=kind, budget_chars=value)
        return MetricSpec(name=name, kind=kind, budget_tokens=value)
    raise JudgmentError(f"metric {name!r}: unknown budget unit {unit!r}")
