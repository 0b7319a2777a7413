"""``grk`` in a real process, as a user's shell runs it."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

__all__ = ["grk_process"]


def grk_process(
    folder: Path, *args: str, env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``python -m groundkit.cli ARGS`` in ``folder`` (200 columns, no colour, 300 s at most).

    Args:
        folder: The working folder.
        *args: The command's arguments.
        env: The whole environment (default: this one's, with the width and colour set).
    """
    environment = (
        dict(env) if env is not None else {**os.environ, "COLUMNS": "200", "NO_COLOR": "1"}
    )
    return subprocess.run(
        [sys.executable, "-m", "groundkit.cli", *args],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env=environment,
    )
