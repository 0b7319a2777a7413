"""Errors of the evaluation harness.

:class:`HarnessError` is bad input (a config file, a predictions file, hits a retriever
returned): a :class:`~groundkit.judgments.JudgmentError`, hence a ``ValueError``, which the CLI
reports in one line with exit code 2. :class:`StageFailed` is a retriever that did not do its
job (a command that exited non-zero, timed out or wrote nothing; a callable that raised): a
:class:`~groundkit.judgments.RunFailure`, not a ``ValueError``; the pipeline records it as the
stage's ``error`` in the report and goes on with the other stages, and the CLI exits with
code 1.
"""

from __future__ import annotations

from pathlib import Path

from groundkit.judgments import JudgmentError, RunFailure

__all__ = ["HarnessError", "StageFailed"]


class HarnessError(JudgmentError):
    """Bad input to the harness: config, predictions, or hits returned by a retriever."""


class StageFailed(RunFailure):
    """A retrieval stage failed to produce results.

    Args:
        stage: The stage name.
        message: What went wrong, in one sentence.
        stderr_tail: The last lines of the command's standard error, when there was a command.
        path: A file concerned, when there is one.

    Attributes:
        stage: The stage name.
        reason: The bare message (without the stage name and stderr).
        stderr_tail: The last lines of standard error (may be empty).
    """

    def __init__(
        self,
        stage: str,
        message: str,
        *,
        stderr_tail: str = "",
        path: str | Path | None = None,
    ) -> None:
        self.stage = stage
        self.reason = message
        self.stderr_tail = stderr_tail
        tail = " ".join(stderr_tail.split())
        full = f"stage {stage!r}: {message}" + (f" (stderr: {tail})" if tail else "")
        super().__init__(full, path=path)

    def __reduce__(self) -> tuple[object, ...]:
        return (_rebuild_stage_failed, (self.stage, self.reason, self.stderr_tail, self.path))


def _rebuild_stage_failed(
    stage: str, reason: str, stderr_tail: str, path: str | None
) -> StageFailed:
    return StageFailed(stage, reason, stderr_tail=stderr_tail, path=path)
