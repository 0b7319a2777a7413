"""Click parameter types that refuse what click lets through."""

from __future__ import annotations

import math
from typing import Any

import click

__all__ = ["FiniteFloatRange"]


class FiniteFloatRange(click.FloatRange):
    """A ``FloatRange`` that also refuses ``nan`` and infinities with a message that says so.

    ``click.FloatRange`` compares with ``<``/``>``, which are false for ``nan``: ``nan`` would
    pass the range and be refused later with a misleading reason ("should be <= 1").
    """

    name = "finite float range"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        """Refuse non-finite numbers, then check the range."""
        number = click.FLOAT.convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number ({self._describe_range()})", param, ctx)
        return super().convert(number, param, ctx)
