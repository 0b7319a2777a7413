"""The single error class of groundkit-diagnosis-fixes."""

from __future__ import annotations

from groundkit.judgments import JudgmentError

__all__ = ["DiagnosisError"]


class DiagnosisError(JudgmentError):
    """Bad input to groundkit.diagnosis (a ``ValueError``, one line, naming file, line or id).

    It subclasses the core :class:`~groundkit.judgments.JudgmentError`, so its message has the
    same ``"<path>:<line>: <id>: <message>"`` shape and one ``except`` catches both.
    """
