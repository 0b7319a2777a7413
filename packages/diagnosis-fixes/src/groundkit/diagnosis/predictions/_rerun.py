"""Fixes replayed by running the stage again: the chunker each chunk fix turns to, and the contract.

A chunk fix cannot be replayed on a report's rankings (the chunks themselves change), but it
can be replayed exactly by chunking the corpus again and re-running the stage: the harness
does that (``groundkit.harness.analysis.rerun_chunk_fixes``) and hands each re-run's hits to
:func:`~groundkit.diagnosis.diagnose` as a :class:`RerunStage`; the diagnosis re-scores them
with the same gold and overlap rule as every other replay.

The variants, one rule for the diagnosis, the harness and the benchmark:

* ``larger-chunks``: every size limit doubled (chars/tokens ``size``, ``max_sentences``,
  ``max_chars``, ``max_tokens``), the overlap with it, so only the size changes;
* ``smaller-chunks``: every size limit halved (at least 1), the overlap with it;
* ``chunk-overlap``: a chars/tokens window's overlap raised to half its size (no variant when
  it already is at least that).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from groundkit.diagnosis._names import FixName
from groundkit.diagnosis._quotes import RankedSpan
from groundkit.judgments import ChunkerConfig, parse_chunker_config

__all__ = ["CHUNK_FIXES", "RerunStage", "chunk_variant", "chunker_text"]

CHUNK_FIXES: tuple[FixName, ...] = ("chunk-overlap", "larger-chunks", "smaller-chunks")
"""The fixes the harness replays by chunking again and re-running the stage."""

_SIZE_KEYS = ("size", "max_sentences", "max_chars", "max_tokens")


@dataclass(frozen=True)
class RerunStage:
    """A stage run again by the harness with one fix applied: what the diagnosis re-scores.

    Attributes:
        fix: The fix applied.
        detail: What changed, in words (``chunks chars:1000:200 instead of chars:500:100``).
        hits: Every query's ranked hits from the re-run (any span-like objects).
    """

    fix: FixName
    detail: str
    hits: Mapping[str, Sequence[RankedSpan]]


def chunker_text(chunker: ChunkerConfig) -> str:
    """The chunker's text form (``chars:500:100``), or its settings where it has none."""
    values = chunker.model_dump()
    kind = values.pop("kind")
    given = {key: value for key, value in values.items() if value is not None}
    if kind in ("chars", "tokens"):
        return f"{kind}:{given['size']}:{given.get('overlap', 0)}"
    extras = ", ".join(f"{key}={value}" for key, value in sorted(given.items()))
    return f"{kind}({extras})" if extras else str(kind)


def _scaled(values: dict[str, object], factor: float) -> dict[str, object]:
    out = dict(values)
    for key in (*_SIZE_KEYS, "overlap"):
        value = out.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            floor = 0 if key == "overlap" else 1
            out[key] = max(floor, int(value * factor))
    return out


def chunk_variant(chunker: ChunkerConfig | None, fix: FixName) -> ChunkerConfig | None:
    """The chunker ``fix`` turns ``chunker`` into, or ``None`` when it has no such variant.

    Args:
        chunker: The stage's chunker (``None``: the stage brings its own spans).
        fix: ``larger-chunks``, ``smaller-chunks`` or ``chunk-overlap`` (others: ``None``).

    Returns:
        The variant, validated like any chunker; ``None`` for a whole-document chunker, a
        fix that is not a chunk fix, a variant equal to the chunker, or an overlap that is
        already at least half the window.
    """
    if chunker is None or fix not in CHUNK_FIXES or chunker.kind == "document":
        return None
    values: dict[str, object] = chunker.model_dump()
    if fix == "chunk-overlap":
        if chunker.kind not in ("chars", "tokens"):
            return None
        size, overlap = values["size"], values["overlap"]
        if not isinstance(size, int) or not isinstance(overlap, int) or overlap >= size // 2:
            return None
        values["overlap"] = size // 2
    else:
        values = _scaled(values, 2.0 if fix == "larger-chunks" else 0.5)
    variant = parse_chunker_config(values)
    return None if variant == chunker else variant
