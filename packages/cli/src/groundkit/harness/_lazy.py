"""The harness's packages export lazily, and its registry's names come with the built-in kinds.

``grk eval compare`` on items files needs a few names of the harness and must not load the
config models or any retriever. A name of the retriever registry, though, is only useful with
the built-in kinds registered: importing the config models registers them first.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from importlib import import_module
from typing import Any

__all__ = ["harness_exports"]

_REGISTRIES = frozenset({"groundkit.harness.retrievers", "groundkit.harness.retrievers._registry"})
_BUILT_IN_KINDS = "groundkit.harness.run._config"  # registers the built-in kinds on import


def _with_built_in_kinds(module: str) -> None:
    if module in _REGISTRIES:
        import_module(_BUILT_IN_KINDS)


def harness_exports(
    package: str, exports: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """:func:`groundkit.judgments.lazy.lazy_exports`, with the built-in kinds registered.

    Made on first use: importing a module of the harness (``grk``'s start imports
    :mod:`groundkit.harness._blas`) loads nothing of ``groundkit.judgments`` then.
    """

    @functools.cache
    def functions() -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
        from groundkit.judgments.lazy import lazy_exports

        return lazy_exports(package, exports, prepare=_with_built_in_kinds)

    def module_getattr(name: str) -> Any:
        return functions()[0](name)

    def module_dir() -> list[str]:
        return functions()[1]()

    return module_getattr, module_dir
