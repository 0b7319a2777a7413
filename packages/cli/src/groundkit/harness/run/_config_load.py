"""Reading a run configuration: a TOML file (or any mapping) validated once, every problem listed.

:func:`read_config_file` gives the file's raw mapping with its relative paths resolved against
its folder; :func:`run_config_from_dict` validates a raw mapping into a :class:`RunConfig`. The
CLI merges its flags into the raw mapping between the two, so a run is validated exactly once.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from groundkit.harness._errors import HarnessError
from groundkit.harness.retrievers._registry import resolve_path, retriever_kind
from groundkit.harness.run._config import RunConfig

__all__ = [
    "ConfigError",
    "ConfigProblem",
    "load_run_config",
    "read_config_file",
    "resolve_config_paths",
    "run_config_from_dict",
]

_LINE_IN_MESSAGE = re.compile(r"\(at line (\d+), column \d+\)")
_CHUNKER_KINDS = frozenset({"document", "chars", "tokens", "sentences", "paragraphs"})


@dataclass(frozen=True)
class ConfigProblem:
    """One problem of a configuration.

    Attributes:
        loc: Where, as keys and list positions (``("stages", 0, "retriever", "k")``).
        message: What is wrong.
    """

    loc: tuple[int | str, ...]
    message: str

    @property
    def where(self) -> str:
        """The location as written in messages: ``stages[0].retriever.k``."""
        return format_location(self.loc)

    def __str__(self) -> str:
        return f"{self.where}: {self.message}" if self.loc else self.message


class ConfigError(HarnessError):
    """An invalid configuration; ``problems`` lists every problem found, in input order.

    Args:
        problems: The problems.
        path: The config file, when there is one.
    """

    def __init__(self, problems: Sequence[ConfigProblem], *, path: str | Path | None = None):
        self.problems = tuple(problems)
        super().__init__("; ".join(str(problem) for problem in self.problems), path=path)

    def __reduce__(self) -> tuple[object, ...]:
        return (_rebuild_config_error, (self.problems, self.path))


def _rebuild_config_error(problems: Sequence[ConfigProblem], path: str | None) -> ConfigError:
    return ConfigError(problems, path=path)


def format_location(loc: Sequence[int | str]) -> str:
    """``("stages", 0, "retriever", "k")`` as ``stages[0].retriever.k``."""
    text = ""
    for part in loc:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else str(part)
    return text or "config"


def _without_union_tags(loc: tuple[int | str, ...]) -> tuple[int | str, ...]:
    # pydantic puts the chunker union's tag into the location ("chunker.chars.size"): drop it.
    out: list[int | str] = []
    for index, part in enumerate(loc):
        previous = loc[index - 1] if index else None
        if part in _CHUNKER_KINDS and previous == "chunker":
            continue
        out.append(part)
    return tuple(out)


def _problems(exc: ValidationError) -> list[ConfigProblem]:
    problems: list[ConfigProblem] = []
    for error in exc.errors():
        message = str(error["msg"]).removeprefix("Value error, ")
        if error["type"] == "extra_forbidden":
            message = "unknown key"
        elif error["type"] == "missing":
            message = "required key is missing"
        problem = ConfigProblem(_without_union_tags(tuple(error["loc"])), message)
        if problem not in problems:
            problems.append(problem)
    return problems


def resolve_config_paths(data: dict[str, Any], base: Path) -> dict[str, Any]:
    """Resolve a raw config's relative paths against ``base`` (a config file's folder).

    The run's own paths (corpus, judgments, embedding cache) and each stage's retriever paths,
    as its kind's :meth:`~groundkit.harness.RetrieverSettings.resolve_paths` says. A stage of
    an unknown kind is left as it is (validation reports it).
    """
    out = dict(data)
    for key in ("corpus", "judgments", "embedding_cache_dir"):
        if key in out:
            out[key] = resolve_path(base, out[key])
    stages = out.get("stages")
    if isinstance(stages, list):
        resolved: list[Any] = []
        for stage in stages:
            retriever = stage.get("retriever") if isinstance(stage, dict) else None
            if isinstance(retriever, dict) and isinstance(retriever.get("kind"), str):
                try:
                    model = retriever_kind(retriever["kind"]).settings
                except HarnessError:
                    model = None
                if model is not None:
                    stage = {**stage, "retriever": model.resolve_paths(dict(retriever), base)}
            resolved.append(stage)
        out["stages"] = resolved
    return out


def run_config_from_dict(
    data: dict[str, Any], *, base_dir: Path | None = None, source: Path | None = None
) -> RunConfig:
    """Validate a raw configuration (as decoded from TOML) into a :class:`RunConfig`.

    Args:
        data: The raw mapping.
        base_dir: Folder that relative paths are resolved against (none: kept as given).
        source: The file it came from, for error messages.

    Raises:
        ConfigError: Every problem, in one line naming the file and each key.
    """
    if base_dir is not None:
        data = resolve_config_paths(data, base_dir)
    try:
        return RunConfig.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(_problems(exc), path=source) from None


def read_config_file(path: str | Path) -> dict[str, Any]:
    """A TOML config file as a raw mapping, its relative paths resolved against its folder.

    Raises:
        HarnessError: Unreadable file or invalid TOML (naming the file and the line).
    """
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise HarnessError("config file not found", path=file) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise HarnessError(f"cannot read config file: {exc}", path=file) from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        message = str(exc)
        match = _LINE_IN_MESSAGE.search(message)
        line = int(match.group(1)) if match else None
        bare = _LINE_IN_MESSAGE.sub("", message).strip()
        raise HarnessError(f"invalid TOML: {bare}", path=file, line=line) from None
    except RecursionError:  # tomllib parses arrays and tables recursively
        raise HarnessError("invalid TOML: arrays or tables nested too deeply", path=file) from None
    return resolve_config_paths(data, file.resolve().parent)


def load_run_config(path: str | Path) -> RunConfig:
    """Read and validate a run configuration from a TOML file.

    Relative paths (corpus, judgments, predictions files, cache folders, ``file.py`` targets,
    a command's ``cwd``) are resolved against the file's folder; a command runs in that folder
    unless ``cwd`` says otherwise.

    Args:
        path: The TOML file.

    Returns:
        The validated configuration.

    Raises:
        HarnessError: Unreadable file or invalid TOML (naming the file and the line).
        ConfigError: Invalid settings (naming the file and every key at fault).
    """
    return run_config_from_dict(read_config_file(path), source=Path(path))
