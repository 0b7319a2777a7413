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
            bounds = self._describe_range()
            where = "" if bounds == "finite" else f" ({bounds})"
            self.fail(f"{value!r} is not a finite number{where}", param, ctx)
        return super().convert(number, param, ctx)

    def _describe_range(self) -> str:
        """``x<=1`` and the like; ``finite`` with no bound (click would print ``x<=None``)."""
        if self.min is None and self.max is None:
            return "finite"
        return str(super()._describe_range())
