"""Items files (per-query scores) as `grk eval compare` reads them, and the same-gold check."""

from __future__ import annotations

from pathlib import Path

from groundkit.cli._errors import InputError
from groundkit.cli.compare._items import StageRows
from groundkit.cli.compare._options import ALLOW_FLAG
from groundkit.harness import ItemsFile, ItemsStage, load_items

__all__ = ["check_same_gold", "read_items_file", "stage_rows"]

_SHOWN_DIGITS = 12


def read_items_file(path: Path) -> ItemsFile:
    """The parsed items file.

    Raises:
        HarnessError: Unreadable file or a malformed line (names the file and line).
    """
    return load_items(path)


def stage_rows(items: ItemsFile) -> dict[str, StageRows]:
    """Stage name to per-query rows, in file order."""
    return {stage.name: stage.scores for stage in items.stages}


def _short(fingerprint: str) -> str:
    return fingerprint[:_SHOWN_DIGITS] + "…"


def check_same_gold(
    stage_a: ItemsStage,
    stage_b: ItemsStage,
    *,
    path_a: Path,
    path_b: Path,
    allow: bool,
) -> list[str]:
    """Refuse two stages scored on different judgments or corpus; notes on what was not checked.

    The fingerprints are the report's
    (:attr:`~groundkit.judgments.report.RunInfo.corpus_fingerprint`,
    :attr:`~groundkit.judgments.report.RunInfo.judgments_fingerprint`), copied into every items
    header: equal fingerprints mean the very same gold and texts, whatever the file order.

    Args:
        stage_a: The stage of A.
        stage_b: The stage of B.
        path_a: File of A (messages).
        path_b: File of B (messages).
        allow: ``--allow-different-gold``: note a difference instead of refusing.

    Returns:
        Notes for the reader: a file without fingerprints (the check could not be made), or
        a difference let through by ``allow``.

    Raises:
        InputError: The fingerprints differ and ``allow`` is false (exit 2; the message names
            both fingerprints of each kind that differs).
    """
    unchecked = [
        str(path)
        for path, stage in ((path_a, stage_a), (path_b, stage_b))
        if stage.judgments_fingerprint is None or stage.corpus_fingerprint is None
    ]
    if unchecked:
        return [
            f"{' and '.join(unchecked)} carr{'y' if len(unchecked) > 1 else 'ies'} no corpus or "
            "judgments fingerprint (written by an older groundkit): whether both were scored "
            "on the same gold and corpus could not be checked"
        ]
    differing = [
        (kind, a, b)
        for kind, a, b in (
            ("judgments", stage_a.judgments_fingerprint, stage_b.judgments_fingerprint),
            ("corpus", stage_a.corpus_fingerprint, stage_b.corpus_fingerprint),
        )
        if a is not None and b is not None and a != b
    ]
    if not differing:
        return []
    on_a = " and ".join(f"{kind} {_short(a)}" for kind, a, _ in differing)
    on_b = " and ".join(
        (_short(b) if len(differing) == 1 else f"{kind} {_short(b)}") for kind, _, b in differing
    )
    scored = f"{path_a} was scored on {on_a} and {path_b} on {on_b}"
    if not allow:
        raise InputError(f"cannot compare: {scored}; pass {ALLOW_FLAG} to compare anyway")
    return [
        f"compared anyway ({ALLOW_FLAG}): {scored}; a difference may come from the gold or "
        "the corpus, not from the retrieval"
    ]
