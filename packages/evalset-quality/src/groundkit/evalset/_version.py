"""How an eval set carries its version: ``meta["set_version"]`` on every judgment.

A judgments file has no header line, so the set's version travels with its items: every tool that
produces a new set from an old one (a filter run, a review) stamps each judgment with the old
version plus one. The version of a set is the largest stamp found (0 when there is none), which
keeps the rule robust to sets merged from several sources.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from groundkit.evalset._errors import EvalSetError
from groundkit.judgments import Judgment

__all__ = ["SET_VERSION_KEY", "bump_set_version", "set_version", "with_set_version"]

#: The ``meta`` key holding a judgment's set version (a non-negative integer).
SET_VERSION_KEY = "set_version"


def set_version(judgments: Iterable[Judgment]) -> int:
    """The version of a set: the largest ``meta["set_version"]`` of its items, 0 when absent.

    Raises:
        EvalSetError: A stamp that is not a non-negative integer (the error names the query id).
    """
    version = 0
    for judgment in judgments:
        value = judgment.meta.get(SET_VERSION_KEY, 0)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise EvalSetError(
                f"meta.{SET_VERSION_KEY} must be a non-negative integer, got {value!r}",
                item_id=judgment.query_id,
            )
        version = max(version, value)
    return version


def with_set_version(judgments: Iterable[Judgment], version: int) -> list[Judgment]:
    """Copies of ``judgments`` with ``meta["set_version"]`` set to ``version``."""
    if isinstance(version, bool) or not isinstance(version, int) or version < 0:
        raise EvalSetError(f"a set version must be a non-negative integer, got {version!r}")
    return [
        judgment.model_copy(update={"meta": {**judgment.meta, SET_VERSION_KEY: version}})
        for judgment in judgments
    ]


def bump_set_version(
    judgments: Sequence[Judgment], *, source: Iterable[Judgment] | None = None
) -> list[Judgment]:
    """Stamp ``judgments`` with the version of ``source`` (default: themselves) plus one."""
    base = set_version(judgments if source is None else source)
    return with_set_version(judgments, base + 1)
