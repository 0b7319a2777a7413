"""Command options handed to the command as one small frozen object per group.

A command with many options would otherwise take one parameter per option (``grk eval run``
took 31). :func:`option_group` adds a group's click options to a command exactly as the
decorators would one by one (same names, help, defaults, order in ``--help``) and passes their
values to the command as one instance of the group's dataclass, whose field names are the
options' parameter names.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from typing import Any

__all__ = ["Decorator", "option_group"]

Decorator = Callable[[Callable[..., Any]], Callable[..., Any]]
"""A click option decorator (or any decorator adding click parameters)."""


def option_group(name: str, group: type[Any], *options: Decorator) -> Decorator:
    """A decorator adding ``options`` to a command and passing their values as ``name``.

    Args:
        name: The command's parameter that receives the group.
        group: A dataclass whose fields are exactly the parameter names of ``options``.
        options: The click option decorators, in the order ``--help`` lists them.

    Raises:
        TypeError: When decorating, if the fields and the options' parameters differ (a
            programming error, caught by any test that imports the command).
    """
    fields = tuple(field.name for field in dataclasses.fields(group))

    def decorate(function: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(function)
        def grouped(*args: Any, **kwargs: Any) -> Any:
            kwargs[name] = group(**{field: kwargs.pop(field) for field in fields})
            return function(*args, **kwargs)

        # functools.wraps shares the parameters the decorators below added; ours follow them.
        params: list[Any] = grouped.__dict__.setdefault("__click_params__", [])
        before = len(params)
        command: Callable[..., Any] = grouped
        for option in reversed(options):
            command = option(command)
        added = tuple(sorted(param.name for param in params[before:]))
        if added != tuple(sorted(fields)):
            raise TypeError(
                f"option group {group.__name__}: options {added} do not match fields {fields}"
            )
        return command

    return decorate
