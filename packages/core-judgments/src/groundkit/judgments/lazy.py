"""Re-exports imported only when first used (PEP 562), for groundkit's packages.

A package's ``__init__`` maps each name it exports to the module that defines it and imports
nothing itself. A light command that needs one name does not load every module behind the
package, and importing one module of a package never runs its siblings (no import cycle
through a package's front door). Every distribution built on ``groundkit.judgments`` uses this
one helper::

    _EXPORTS = {"Corpus": "groundkit.judgments.corpus._corpus"}
    __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

The names are also imported under ``TYPE_CHECKING`` and listed in ``__all__``, so that type
checkers and the API reference see them as they would an ordinary import.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from importlib import import_module
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(
    package: str,
    exports: Mapping[str, str],
    *,
    prepare: Callable[[str], None] | None = None,
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of ``package``, for the names in ``exports``.

    Args:
        package: The package's ``__name__`` (it must be importing, or imported).
        exports: Each exported name mapped to the module (or sub-package) that provides it.
        prepare: Called with a module's name before it is first imported for a name (a
            registry whose entries another module adds, say).

    Returns:
        The two module-level functions, to assign in the package's ``__init__``. A name
        outside ``exports`` raises ``AttributeError``; a found one is cached in the package.
    """
    namespace = sys.modules[package].__dict__

    def module_getattr(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        if prepare is not None:
            prepare(module)
        value = getattr(import_module(module), name)
        namespace[name] = value
        return value

    def module_dir() -> list[str]:
        return sorted({*namespace, *exports})

    return module_getattr, module_dir
