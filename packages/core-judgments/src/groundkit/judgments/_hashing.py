"""Canonical JSON and the configuration hash: one definition for every package.

A stage's configuration hash ties an items file, a report and a track-record entry to the
settings they were made with, so the harness and diagnosis must compute it identically.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

__all__ = ["canonical_json", "config_hash"]


def canonical_json(data: Any) -> str:
    """JSON with sorted keys, no spaces and non-ASCII characters kept: the hashed form.

    Raises:
        ValueError: ``data`` holds NaN or an infinity (no JSON number can say it).
    """
    return json.dumps(
        data, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    )


def config_hash(config: Any) -> str:
    """SHA-256 (hex) of a configuration's canonical JSON."""
    return hashlib.sha256(canonical_json(config).encode("utf-8")).hexdigest()
