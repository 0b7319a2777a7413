"""The registry of retriever kinds: built-ins and third-party plugins, one lookup for all.

A *kind* (``bm25``, ``dense``, ``rerank``, ``my-faiss``...) is a :class:`RetrieverKind`: the
pydantic model of its settings (a :class:`RetrieverSettings` subclass whose ``kind`` field is
``Literal[NAME]``), a ``build(settings, context)`` function returning a
:class:`~groundkit.harness.Retriever`, and a few facts the harness needs before it runs (does
the harness chunk the corpus for it, which distributions to record in the report).

Built-in kinds register when :mod:`groundkit.harness` is imported. Other distributions
register through the entry-point group ``groundkit.retrievers``: the entry point's name is the
kind and its object a :class:`RetrieverKind` (or a zero-argument function returning one)::

    [project.entry-points."groundkit.retrievers"]
    my-faiss = "my_package.groundkit_plugin:FAISS_KIND"

Entry points are read only when a kind is not registered yet (nothing is imported for a run
that uses built-ins alone), and a plugin that fails to load is an error naming its entry point
and distribution, raised only when its kind is asked for.

Whether a stage runs code of its own (an external program, a Python function, a framework
object, a plugin) is a fact of its kind, :attr:`RetrieverKind.runs_user_code`, which
:func:`stage_runs_user_code` reads from a stage's raw settings without loading any plugin:
``grk eval reproduce`` refuses such stages of a report unless the report is trusted.
"""

from __future__ import annotations

import importlib.metadata
import inspect
import threading
import types
import typing
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import BaseModel, ConfigDict

from groundkit.harness._errors import HarnessError

if TYPE_CHECKING:
    from groundkit.harness.retrievers._protocol import Retriever, StageContext

__all__ = [
    "ENTRY_POINT_GROUP",
    "AblationPart",
    "RetrieverKind",
    "RetrieverSettings",
    "register_retriever",
    "retriever_kind",
    "retriever_kinds",
    "stage_runs_user_code",
]

ENTRY_POINT_GROUP = "groundkit.retrievers"
"""The entry-point group third-party retriever kinds register in."""

_FROZEN = ConfigDict(frozen=True, extra="forbid")


@dataclass(frozen=True)
class AblationPart:
    """One component of a stage that reads earlier stages, for the run's ablation rows.

    Exactly one of ``stage`` and ``replay`` is set.

    Attributes:
        removed: The earlier stages the component leaves out; empty when what is removed is
            the stage's own step (a rerank's re-ordering).
        stage: An earlier stage standing alone as the component (its scores are reused).
        replay: Settings of the same kind over fewer earlier stages, run on their ranked lists
            (only for a kind whose search reads its inputs' lists and searches nothing, as
            fusion does).
    """

    removed: tuple[str, ...]
    stage: str | None = None
    replay: RetrieverSettings | None = None


class RetrieverSettings(BaseModel):
    """Base of every retriever kind's settings model: frozen, unknown keys refused.

    A kind's model narrows ``kind`` to its name (``kind: Literal["my-faiss"] = "my-faiss"``)
    and adds its own fields and validators; the stage config validates a ``retriever`` table
    with the model registered for its ``kind``, so a plugin's settings are checked, reported
    and hashed exactly like a built-in's.

    Three optional hooks may be overridden:

    * :meth:`upstream_stages`: the earlier stages this one reads (hybrid, rerank);
    * :meth:`ablation_parts`: its components for an ablation (hybrid, rerank);
    * :meth:`from_spec_argument`: what ``--stage NAME=KIND:ARG`` sets;
    * :meth:`resolve_paths`: how relative paths of a config file are resolved.

    Attributes:
        kind: The retriever kind.
    """

    model_config = _FROZEN
    kind: str

    def upstream_stages(self) -> list[str]:
        """Names of the earlier stages this stage reads (they must be defined before it)."""
        return []

    def ablation_parts(self) -> list[AblationPart]:
        """The components an ablation scores beside this stage (none: nothing to ablate)."""
        return []

    @classmethod
    def from_spec_argument(cls, argument: str) -> dict[str, Any]:
        """The settings ``--stage NAME=KIND:ARGUMENT`` stands for (default: no argument).

        Raises:
            ValueError: The argument is not valid for this kind (the message says why).
        """
        raise ValueError(f"{cls.kind_name()} takes no argument")

    @classmethod
    def resolve_paths(cls, data: dict[str, Any], base: Path) -> dict[str, Any]:
        """Resolve a config file's relative paths against its folder ``base``.

        The default resolves every field annotated with :class:`~pathlib.Path`; override it
        for paths hidden in strings (a ``file.py:function`` target) or implicit defaults.
        """
        out = dict(data)
        for name, info in cls.model_fields.items():
            if name in out and _mentions_path(info.annotation):
                out[name] = resolve_path(base, out[name])
        return out

    @classmethod
    def kind_name(cls) -> str:
        """The kind this model is for (the default of its ``kind`` field)."""
        default = cls.model_fields["kind"].default
        return str(default) if isinstance(default, str) else cls.__name__


def _mentions_path(annotation: Any) -> bool:
    if annotation is Path:
        return True
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        return any(_mentions_path(arg) for arg in typing.get_args(annotation))
    return False


def resolve_path(base: Path, value: Any) -> Any:
    """``value`` as a path under ``base`` when it is a relative path string (else unchanged)."""
    if isinstance(value, str) and value:
        path = Path(value).expanduser()
        return str(path if path.is_absolute() else (base / path))
    return value


@dataclass(frozen=True)
class RetrieverKind:
    """A retriever kind: its settings model, how to build it, and what the harness must know.

    Attributes:
        name: The kind, as written in ``kind = "..."`` (lower case, digits, ``_``, ``.``, ``-``).
        settings: The settings model (a :class:`RetrieverSettings` subclass, frozen, refusing
            unknown keys, with ``kind: Literal[name]``).
        build: ``build(settings, context) -> Retriever``, called once per stage before the
            stage runs. Errors raised here are configuration errors (a target that does not
            import, a missing model): raise :class:`~groundkit.harness.HarnessError`.
        chunked: The harness chunks the corpus with the stage's chunker and calls the
            retriever's ``index(chunks)`` once before ``search`` (bm25, dense, a vector index).
            Stages of other kinds return their own spans and take no chunker.
        packages: Distributions whose versions the report records for stages of this kind.
        summary: One line for listings.
        runs_user_code: Whether a stage of this kind runs code named by its settings or
            brought by a third party (a program, a Python function, a framework object, a
            plugin): ``True``, ``False``, or a function of the stage's raw ``retriever``
            table (before validation) for a kind where only some settings do (a rerank stage
            with a ``target``). The default is ``True``: a kind says when it runs none.
    """

    name: str
    settings: type[RetrieverSettings]
    build: Callable[[Any, StageContext], Retriever]
    chunked: bool = False
    packages: tuple[str, ...] = ()
    summary: str = ""
    origin: str = field(default="groundkit", compare=False)
    runs_user_code: bool | Callable[[Mapping[str, Any]], bool] = field(default=True, compare=False)

    def runs_code(self, table: Mapping[str, Any]) -> bool:
        """Whether a stage with these raw ``retriever`` settings runs code of its own."""
        if callable(self.runs_user_code):
            return bool(self.runs_user_code(table))
        return bool(self.runs_user_code)

    _NAME_CHARS: ClassVar[frozenset[str]] = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_.-")

    def check(self) -> None:
        """Refuse a kind the harness could not use safely.

        Raises:
            HarnessError: A bad name, a settings model that is not frozen, accepts unknown keys
                or has the wrong ``kind`` default, a ``build`` that is not callable, or a
                ``runs_user_code`` that is neither a bool nor a function.
        """
        where = f"retriever kind {self.name!r} ({self.origin})"
        if not self.name or not set(self.name) <= self._NAME_CHARS or not self.name[0].isalnum():
            raise HarnessError(f"{where}: a kind name is lower-case letters, digits, '_.-'")
        model = self.settings
        if not (inspect.isclass(model) and issubclass(model, RetrieverSettings)):
            raise HarnessError(f"{where}: settings must be a RetrieverSettings subclass")
        config = model.model_config
        if not config.get("frozen") or config.get("extra") != "forbid":
            raise HarnessError(f"{where}: its settings model must be frozen and extra='forbid'")
        if model.model_fields["kind"].default != self.name:
            raise HarnessError(
                f"{where}: its settings model's 'kind' must default to {self.name!r}"
            )
        if not callable(self.build):
            raise HarnessError(f"{where}: build must be callable")
        if not (isinstance(self.runs_user_code, bool) or callable(self.runs_user_code)):
            raise HarnessError(f"{where}: runs_user_code must be a bool or a function")


_LOCK = threading.RLock()
_KINDS: dict[str, RetrieverKind] = {}


def register_retriever(kind: RetrieverKind, *, replace: bool = False) -> RetrieverKind:
    """Register a retriever kind (built-ins at import; plugins usually through entry points).

    Args:
        kind: The kind.
        replace: Replace a kind already registered under that name (tests; never built-ins
            by accident).

    Returns:
        The kind, so that the call can be used as an expression.

    Raises:
        HarnessError: The kind is invalid, or its name is taken and ``replace`` is false.
    """
    kind.check()
    with _LOCK:
        existing = _KINDS.get(kind.name)
        if existing is not None and not replace and existing is not kind:
            raise HarnessError(
                f"retriever kind {kind.name!r} is already registered (by {existing.origin})"
            )
        _KINDS[kind.name] = kind
    return kind


def _entry_points() -> Iterable[importlib.metadata.EntryPoint]:
    return importlib.metadata.entry_points(group=ENTRY_POINT_GROUP)


def _load_entry_point(point: importlib.metadata.EntryPoint) -> RetrieverKind:
    dist = getattr(point, "dist", None)
    origin = f"entry point {point.name} = {point.value}"
    own: tuple[str, ...] = ()
    if dist is not None:
        origin += f" of {dist.metadata['Name']} {dist.version}"
        own = (str(dist.metadata["Name"]),)
    try:
        loaded = point.load()
        if not isinstance(loaded, RetrieverKind) and callable(loaded):
            loaded = loaded()
    except Exception as error:
        raise HarnessError(
            f"retriever kind {point.name!r} cannot be loaded ({origin}): "
            f"{type(error).__name__}: {error}"
        ) from error
    if not isinstance(loaded, RetrieverKind):
        raise HarnessError(
            f"retriever kind {point.name!r} ({origin}) is a {type(loaded).__name__}, "
            "not a groundkit.harness.RetrieverKind"
        )
    if loaded.name != point.name:
        raise HarnessError(
            f"retriever kind {point.name!r} ({origin}) names itself {loaded.name!r}: "
            "the entry point's name must be the kind"
        )
    kind = RetrieverKind(
        name=loaded.name,
        settings=loaded.settings,
        build=loaded.build,
        chunked=loaded.chunked,
        # The plugin's own distribution is recorded in the report with its libraries.
        packages=tuple(dict.fromkeys(own + loaded.packages)),
        summary=loaded.summary,
        origin=origin,
        # A third party's code chosen by name, whatever it declares: the answer must not
        # depend on whether the plugin was loaded before (see stage_runs_user_code).
        runs_user_code=True,
    )
    return register_retriever(kind)


def retriever_kind(name: str) -> RetrieverKind:
    """The kind registered as ``name``, loading its entry point when it has not been yet.

    Raises:
        HarnessError: No such kind (the message lists the known ones), or its plugin cannot be
            loaded.
    """
    with _LOCK:
        found = _KINDS.get(name)
        if found is not None:
            return found
        for point in _entry_points():
            if point.name == name:
                return _load_entry_point(point)
    raise HarnessError(f"unknown retriever {name!r} (kinds: {', '.join(known_kind_names())})")


def stage_runs_user_code(table: object) -> bool:
    """Whether a stage with this raw ``retriever`` table runs code of its own.

    Read from the registered kind without loading any plugin: a kind that is not registered
    (a plugin offered by an entry point, or an unknown name) counts as running code, since
    loading it would run its distribution's code. A table that is not a mapping with a
    string ``kind`` counts as running code too (it cannot be told apart).
    """
    if not isinstance(table, Mapping):
        return True
    name = table.get("kind")
    if not isinstance(name, str):
        return True
    with _LOCK:
        kind = _KINDS.get(name)
    return True if kind is None else kind.runs_code(table)


def known_kind_names() -> list[str]:
    """Registered kinds and kinds offered by entry points, without loading any plugin."""
    with _LOCK:
        names = set(_KINDS)
    names.update(point.name for point in _entry_points())
    return sorted(names)


def retriever_kinds() -> Mapping[str, RetrieverKind]:
    """Every kind, loading every plugin's entry point (a broken plugin raises).

    Raises:
        HarnessError: A plugin cannot be loaded.
    """
    for point in _entry_points():
        with _LOCK:
            if point.name in _KINDS:
                continue
        _load_entry_point(point)
    with _LOCK:
        return dict(sorted(_KINDS.items()))
