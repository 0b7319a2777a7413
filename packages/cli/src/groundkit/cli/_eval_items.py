"""Items files (per-query scores) as `grk eval compare` reads them."""

from __future__ import annotations

from pathlib import Path

from groundkit.cli._eval_compare import StageRows
from groundkit.harness import load_items

__all__ = ["read_items_file"]


def read_items_file(path: Path) -> dict[str, StageRows]:
    """Stage name to per-query rows, in file order.

    Raises:
        HarnessError: Unreadable file or a malformed line (names the file and line).
    """
    items = load_items(path)
    return {stage.name: stage.scores for stage in items.stages}
