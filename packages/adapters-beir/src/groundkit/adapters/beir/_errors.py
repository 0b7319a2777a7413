"""The one error class of groundkit-adapters-beir."""

from __future__ import annotations

from groundkit.judgments import JudgmentError

__all__ = ["BeirError"]


class BeirError(JudgmentError):
    """A BEIR dataset, split name or output folder that cannot be adapted.

    A ``ValueError`` (through :class:`~groundkit.judgments.JudgmentError`), so the CLI turns it
    into a one-line message and exit code 2. ``str(error)`` is always one line of the form
    ``"<file>:<line>: <id>: <message>"`` with the unknown parts left out.
    """
