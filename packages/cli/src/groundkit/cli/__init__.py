"""The ``grk`` command line: evaluate retrieval, compare runs, adapt BEIR, check eval sets."""

from groundkit.cli.__about__ import __version__
from groundkit.cli._main import cli, main

__all__ = ["__version__", "cli", "main"]
