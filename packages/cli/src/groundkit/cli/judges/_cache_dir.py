"""Where judges cache their answers by default (a light module: ``grk doctor`` reads it)."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["judge_cache_dir"]


def judge_cache_dir() -> Path:
    """The folder of the judges' own caches, one file per judge.

    ``$GROUNDKIT_JUDGE_CACHE_DIR`` when set, else ``$XDG_CACHE_HOME/groundkit/judges``, else
    ``~/.cache/groundkit/judges`` (beside the embedding cache).
    """
    chosen = os.environ.get("GROUNDKIT_JUDGE_CACHE_DIR")
    if chosen:
        return Path(chosen)
    base = os.environ.get("XDG_CACHE_HOME")
    return (Path(base) if base else Path.home() / ".cache") / "groundkit" / "judges"
