"""The SIGTERM exception, in a module with no dependencies (importable before click loads)."""

from __future__ import annotations

__all__ = ["TerminatedSignal"]


class TerminatedSignal(BaseException):
    """Raised by the CLI's SIGTERM handler, so that clean-up runs as for Ctrl-C.

    A ``BaseException`` so that no ``except Exception`` on the way swallows it.
    """
