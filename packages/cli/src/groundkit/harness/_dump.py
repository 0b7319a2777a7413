"""Settings dumped as they were before a field existed, while that field keeps its old value."""

from __future__ import annotations

from typing import Any

__all__ = ["without_old_defaults"]


def without_old_defaults(data: Any, **old_defaults: object) -> Any:
    """A model's dump without each named key whose value is the one it always had before.

    A setting added later is left out of the dump while it is at that value, so configs,
    the reports recording them and every hash and key built on them stay the same.
    """
    if isinstance(data, dict):
        for key, value in old_defaults.items():
            if key in data and data[key] == value:
                del data[key]
    return data
