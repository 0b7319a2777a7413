"""What the framework adapters (langchain, llamaindex, haystack) share.

An adapter imports its framework only when a stage of its kind is built, resolves the stage's
``target`` to an object of that framework (a module attribute, a live object, or a
zero-argument factory of one), and returns the framework's own results as hits: the harness
reads them with :mod:`groundkit.harness.run._hits`, like any retriever's.
"""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import Callable, Iterator, Sequence
from types import ModuleType
from typing import Any

from groundkit.harness._errors import HarnessError
from groundkit.harness.retrievers._builtin import object_target
from groundkit.harness.retrievers._external import load_target
from groundkit.harness.retrievers._external_kinds import _takes_no_argument
from groundkit.harness.retrievers._protocol import Query
from groundkit.harness.run._stage_run import user_failure

__all__ = [
    "install_hint",
    "kept_count",
    "per_query",
    "require_framework",
    "resolve_framework_object",
]


def install_hint(extra: str) -> str:
    """The command that installs an extra of groundkit-cli."""
    return f"pip install 'groundkit-cli[{extra}]'"


def require_framework(
    module: str, *, stage: str, kind: str, package: str, extra: str
) -> ModuleType:
    """Import a framework module, or say in one line which extra installs it.

    Raises:
        HarnessError: The framework is not installed (naming the extra), or it is installed
            but fails to import (naming the error).
    """
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as error:
        top = module.split(".")[0]
        if error.name is not None and error.name.split(".")[0] == top:
            raise HarnessError(
                f"stage {stage!r}: the {kind} kind needs {package}: {install_hint(extra)}"
            ) from error
        raise HarnessError(
            f"stage {stage!r}: {package} is installed but cannot be imported: "
            f"ModuleNotFoundError: {error}"
        ) from error
    except Exception as error:
        raise HarnessError(
            f"stage {stage!r}: {package} is installed but cannot be imported: "
            f"{type(error).__name__}: {error}"
        ) from error


def resolve_framework_object(
    target: Any, *, stage: str, accepts: Callable[[Any], bool], expected: str
) -> Any:
    """The framework object a ``target`` names: itself, or what its factory returns.

    Args:
        target: ``"module:name"``, ``"file.py:name"`` or a live object.
        stage: Stage name, for messages.
        accepts: Whether an object is of a type the adapter can search.
        expected: What the adapter accepts, for messages (``"a LangChain BaseRetriever or
            VectorStore"``).

    Raises:
        HarnessError: The target does not import, or neither it nor what its zero-argument
            factory returns is of an accepted type.
        StageFailed: The factory raised.
    """
    named = load_target(target, stage=stage) if isinstance(target, str) else target
    shown = repr(target if isinstance(target, str) else object_target(target))
    if accepts(named):
        return named
    if callable(named) and _takes_no_argument(named):
        try:
            made = named()
        except (Exception, SystemExit) as error:  # sys.exit in a factory fails the stage
            raise user_failure(stage, f"the factory {shown}", error) from error
        if accepts(made):
            return made
        named, shown = made, f"what {shown} returned"
    raise HarnessError(
        f"stage {stage!r}: {shown} is a {_type_name(named)}, not {expected} "
        "(or a zero-argument factory of one)"
    )


def _type_name(value: Any) -> str:
    kind = type(value)
    module = kind.__module__.split(".")[0]
    return kind.__name__ if module == "builtins" else f"{kind.__name__} ({module})"


def per_query(
    stage: str, what: str, queries: Sequence[Query], search: Callable[[str], Any]
) -> list[Any]:
    """``search(text)`` for each query, a framework exception failing the stage at its query.

    Raises:
        StageFailed: ``search`` raised (naming the query; the user's traceback is kept as the
            cause, for ``--debug``).
    """
    out: list[Any] = []
    for query in queries:
        try:
            out.append(search(query.text))
        except Exception as error:
            raise user_failure(stage, f"query {query.query_id!r}: {what}", error) from error
    return out


@contextlib.contextmanager
def kept_count(holder: Any, attribute: str, value: int | None) -> Iterator[None]:
    """Set ``holder.attribute`` to ``value`` while searching, then restore it.

    The user's object is left as it was found, so a live retriever evaluated from Python keeps
    its own setting. ``None`` leaves the attribute alone.
    """
    if value is None:
        yield
        return
    before = getattr(holder, attribute)
    setattr(holder, attribute, value)
    try:
        yield
    finally:
        setattr(holder, attribute, before)
