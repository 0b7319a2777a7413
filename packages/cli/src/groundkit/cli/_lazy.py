"""Names a command module uses only when it runs, imported then (``--help`` stays fast).

A command's module is imported for its ``--help`` too; what it needs only to *run* (the
harness, numpy, pydantic models, the HTML renderer) is bound to a stand-in that imports the
real object on first use. Type checkers see the real import::

    if TYPE_CHECKING:
        from groundkit.cli._checked import load_checked_report
    else:
        load_checked_report = lazy("groundkit.cli._checked", "load_checked_report")

For functions, and classes that are only called or whose attributes are read; never for an
exception caught by ``except``, a class used with ``isinstance`` or as a base (the stand-in is
not the class). ``tests/cli/test_cli_startup.py`` holds every command's ``--help`` to the
modules it may load.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

__all__ = ["lazy"]


class _Deferred:
    """``module.name``, imported the first time it is called or one of its attributes read."""

    __slots__ = ("_module", "_name", "_target")

    def __init__(self, module: str, name: str) -> None:
        self._module = module
        self._name = name
        self._target: Any = None

    def _load(self) -> Any:
        if self._target is None:
            self._target = getattr(import_module(self._module), self._name)
        return self._target

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._load()(*args, **kwargs)

    def __getattr__(self, attribute: str) -> Any:
        return getattr(self._load(), attribute)

    def __repr__(self) -> str:
        return f"<deferred {self._module}.{self._name}>"


def lazy(module: str, name: str) -> Any:
    """A stand-in for ``module.name`` that imports it on first use (see the module docs)."""
    return _Deferred(module, name)
