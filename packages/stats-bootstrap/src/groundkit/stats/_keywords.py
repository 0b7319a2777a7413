"""Keyword options grouped in a ``TypedDict``, checked at run time as a signature would be.

A public function whose tuning options are many takes them as ``**options`` typed by a
``TypedDict`` (PEP 692): callers keep writing ``paired_bootstrap(..., seed=3)``, mypy still
checks every name and type, and this check keeps the ``TypeError`` an explicit signature gives
for a misspelt or missing keyword. It lives here, the lowest layer whose public functions
group options this way (the eval-set and diagnosis packages use it too).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["check_keywords"]


def check_keywords(function: str, given: Mapping[str, object], spec: Any) -> None:
    """Raise ``TypeError`` for a keyword ``spec`` (a ``TypedDict``) lacks or requires.

    Raises:
        TypeError: An unexpected keyword, or a missing required one.
    """
    required: frozenset[str] = spec.__required_keys__
    unknown = sorted(set(given) - required - spec.__optional_keys__)
    if unknown:
        raise TypeError(f"{function}() got an unexpected keyword argument {unknown[0]!r}")
    missing = sorted(required - set(given))
    if missing:
        raise TypeError(f"{function}() missing required keyword argument {missing[0]!r}")
