"""The single error base class of groundkit.evalset."""

from __future__ import annotations

from groundkit.judgments import JudgmentError

__all__ = ["EvalSetError"]


class EvalSetError(JudgmentError):
    """Bad input to groundkit.evalset (a ``ValueError``, via ``JudgmentError``).

    Its message is one line naming the file, line or query id concerned when known, exactly as
    for ``groundkit.judgments`` errors, so callers can catch either class.
    """
