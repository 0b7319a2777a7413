"""Fixes ranked by the recall@k they are expected to gain.

For a fix addressing misses ``M`` (the misses of its buckets), with ``w(m)`` what finding miss
``m`` adds to the stage's mean recall@k (``1 / (quotes of its query × queries)``):

* ``at_stake = Σ w(m)``: every miss of its buckets found;
* ``expected``: for an *exact* fix the replayed gain: raise-k, hybrid-fusion and deduplicate
  on the recorded rankings, the chunk fixes on the harness's re-run of the stage (the whole
  effect of the change, misses of other buckets included); otherwise ``at_stake × r`` where
  ``r`` is the stage's recall on *comparable gold* (quotes like the misses would be once
  fixed, e.g. quotes one chunk holds whole, for chunk fixes);
* ``ceiling``: an upper bound on the gain (see :mod:`groundkit.diagnosis._evidence`), never
  below ``expected``;
* ``reference``: ``Σ w(m)`` over the misses another stage of the report finds within k (the
  gain at that stage's rate on the very same quotes), when the report has a relevant stage;
* ``measured``: when a stage of the report applies the fix outright (a dense, rerank or hybrid
  stage), its measured difference in recall@k — the whole change, which can exceed what its
  buckets hold at stake; the basis then says so, so the report never contradicts itself.

Gains overlap (fixing one bucket changes the others) and are never summed.
"""

from __future__ import annotations

from groundkit.diagnosis._models import (
    BUCKET_TITLES,
    FIX_CONFIG_KEYS,
    FIX_KNOBS,
    FIXES,
    Diagnosis,
    Fix,
    FixEvidence,
)

__all__ = ["fixes"]


def _basis(diagnosis: Diagnosis, evidence: FixEvidence, expected: float | None) -> str:
    replay = evidence.replay
    if replay is not None:
        text = (
            f"exact: {replay.detail}; {replay.metric} {replay.after:.3f} − "
            f"{diagnosis.metric} {replay.before:.3f} over {replay.query_count} queries"
        )
        found = sum(replay.finds.values())
        if found:
            parts = ", ".join(f"{BUCKET_TITLES[b]} {n}" for b, n in replay.finds.items())
            text += f"; it finds {found} of the misses ({parts})"
        if replay.loses:
            text += f"; it loses {replay.loses} quotes found now"
        # a replay measures the whole change, so it may find misses of other buckets too
        outside = sum(n for b, n in replay.finds.items() if b not in evidence.buckets)
        if outside:
            own = ", ".join(BUCKET_TITLES[b] for b in evidence.buckets)
            which = "bucket" if len(evidence.buckets) == 1 else "buckets"
            text += (
                f"; whole effect of the change: {outside} of the misses it finds lie outside "
                f"its {which} ({own})"
            )
        return text
    if evidence.misses is None:
        return evidence.note or "not measurable for this stage"
    if evidence.fix in ("raise-k", "hybrid-fusion"):
        return "cannot be replayed: the report holds no rankings to replay it on"
    if evidence.misses == 0:
        text = "no misses in its bucket"
        return f"{text} ({evidence.note})" if evidence.note else text
    rate = evidence.rate
    misses = f"{evidence.misses} misses"
    if not diagnosis.single_quote and evidence.query_equivalents is not None:
        misses += f" ({evidence.query_equivalents:.1f} query-equivalents)"
    unit = "gold" if diagnosis.single_quote else "queries"
    if rate is None or rate.value is None or expected is None:
        label = rate.label if rate is not None else "none"
        return (
            f"{misses}, but no comparable gold to estimate a rate from (comparable gold: {label})"
        )
    text = (
        f"{misses} × {rate.value:.0%} (recall on comparable gold: {rate.found} of {rate.total}) "
        f"/ {diagnosis.query_count} {unit} = {expected:+.3f}; comparable gold: {rate.label}"
    )
    if evidence.note:
        text += f"; {evidence.note}"
    return text


def _reference_text(diagnosis: Diagnosis, evidence: FixEvidence) -> str:
    reference = evidence.reference
    if reference is None or evidence.misses is None:
        return ""
    return (
        f"; reference: {reference.stage} finds {reference.found} of these {evidence.misses} "
        f"within {diagnosis.k} ({reference.gain:+.3f})"
    )


def _measured_text(diagnosis: Diagnosis, evidence: FixEvidence) -> str:
    measured = evidence.measured
    if measured is None:
        return ""
    text = (
        f"; measured in this report: stage {measured.stage!r} scores {measured.difference:+.3f} "
        f"on {measured.metric} against {diagnosis.stage} (the whole change"
    )
    if evidence.at_stake is not None and measured.difference > evidence.at_stake:
        text += (
            f", beyond the {evidence.at_stake:+.3f} its buckets hold at stake: it also finds "
            "misses outside them"
        )
    return text + ")"


def _expected(evidence: FixEvidence) -> float | None:
    if evidence.replay is not None:
        return evidence.replay.gain
    if evidence.misses is None or evidence.at_stake is None:
        return None
    if evidence.fix in ("raise-k", "hybrid-fusion"):
        return None
    if evidence.misses == 0:
        return 0.0
    rate = evidence.rate.value if evidence.rate is not None else None
    return None if rate is None else evidence.at_stake * rate


def fixes(diagnosis: Diagnosis) -> list[Fix]:
    """The diagnosis's fixes, ranked by expected gain in recall@k.

    Ranking: expected gain, largest first (fixes whose gain cannot be estimated last), then
    the ceiling, then the order of their buckets. Gains overlap and must not be summed.

    Args:
        diagnosis: A diagnosis from :func:`~groundkit.diagnosis.diagnose`.

    Returns:
        One :class:`Fix` per fix that applies to the stage, ``rank`` 1 first.
    """
    drafts: list[tuple[tuple[bool, float, float, int], dict[str, object]]] = []
    for evidence in diagnosis.evidence:
        expected = _expected(evidence)
        reference = evidence.reference
        fields: dict[str, object] = {
            "name": evidence.fix,
            "knob": FIX_KNOBS[evidence.fix],
            "keys": list(FIX_CONFIG_KEYS[evidence.fix]),
            "buckets": list(evidence.buckets),
            "misses": evidence.misses,
            "expected": expected,
            "ceiling": evidence.ceiling,
            "at_stake": evidence.at_stake,
            "reference": None if reference is None else reference.gain,
            "reference_stage": None if reference is None else reference.stage,
            "exact": evidence.replay is not None,
            "measured": None if evidence.measured is None else evidence.measured.difference,
            "measured_stage": None if evidence.measured is None else evidence.measured.stage,
            "basis": _basis(diagnosis, evidence, expected)
            + _reference_text(diagnosis, evidence)
            + _measured_text(diagnosis, evidence),
        }
        key = (
            expected is None,
            -(expected or 0.0),
            -(evidence.ceiling or 0.0),
            FIXES.index(evidence.fix),
        )
        drafts.append((key, fields))
    drafts.sort(key=lambda item: item[0])
    return [
        Fix.model_validate({"rank": rank, **fields})
        for rank, (_, fields) in enumerate(drafts, start=1)
    ]
