"""The run's tokenizer: the ``tokenizer`` setting checked, resolved and loaded.

The tokenizers themselves are core's (:mod:`groundkit.judgments.corpus._tokenizers`):
``words`` (the default), ``cl100k_base``, ``o200k_base`` or a folder holding
``tokenizer.json``. The harness adds ``model``: the tokenizer of the run's dense stages' model
(the packaged default model, or a model given as a local folder; every dense stage must use
the same one, and with no dense stage it is the default model's). Nothing is downloaded.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from groundkit.harness._errors import HarnessError
from groundkit.harness.dense._loading import (
    _DEFAULT_ALIASES,
    DENSE_INSTALL_HINT,
    _packaged_model_path,
)
from groundkit.harness.retrievers._builtin import DEFAULT_MODEL
from groundkit.judgments import JudgmentError
from groundkit.judgments.corpus import (
    HuggingFaceTokenizer,
    Tokenizer,
    check_extra,
    check_tokenizer,
    load_tokenizer,
)


class _Stage(Protocol):
    """What the tokenizer reads of a stage: its retriever's kind and model."""

    @property
    def retriever(self) -> Any: ...


class _RunSettings(Protocol):
    """What the tokenizer reads of the run's settings (``EvalSettings`` has both)."""

    @property
    def tokenizer(self) -> str: ...
    @property
    def stages(self) -> Sequence[_Stage]: ...


__all__ = [
    "MODEL_TOKENIZER",
    "check_run_tokenizer",
    "model_tokenizer_folder",
    "recorded_tokenizer",
    "run_tokenizer",
    "tokenizer_record",
]

MODEL_TOKENIZER = "model"
"""The ``tokenizer`` setting that takes the dense stages' model's tokenizer."""

_MODEL_CHOICE = "model (the dense model's tokenizer)"


def check_run_tokenizer(spec: str) -> str:
    """Return ``spec`` if it names a usable tokenizer (the settings model's validator).

    Raises:
        ValueError: An unknown tokenizer, a folder without ``tokenizer.json`` or a missing
            ``tokens`` extra (one line, with the install hint).
    """
    try:
        if spec == MODEL_TOKENIZER:
            check_extra(spec, ("tokenizers",))
        else:
            check_tokenizer(spec, also=(_MODEL_CHOICE,))
    except JudgmentError as error:
        raise ValueError(error.message) from None
    return spec


def run_tokenizer(settings: _RunSettings) -> Tokenizer:
    """The tokenizer the run's ``tokenizer`` setting names, loaded once per process.

    Raises:
        JudgmentError: The tokenizer cannot be read.
        HarnessError: ``model`` with no local model folder to read it from.
    """
    if settings.tokenizer != MODEL_TOKENIZER:
        return load_tokenizer(settings.tokenizer)
    model, folder = model_tokenizer_folder(settings)
    return _folder_tokenizer(str(folder), f"model:{model}")


def model_tokenizer_folder(settings: _RunSettings) -> tuple[str, Path]:
    """The dense stages' model (the default one without dense stage) and its local folder.

    Raises:
        HarnessError: Dense stages of different models, the default model not installed, or a
            model that is not a local folder (nothing is downloaded).
    """
    dense = [s.retriever for s in settings.stages if s.retriever.kind == "dense"]
    models = sorted({str(getattr(r, "model", DEFAULT_MODEL)) for r in dense} or {DEFAULT_MODEL})
    return _model_folder(models)


def _model_folder(models: Sequence[str]) -> tuple[str, Path]:
    if len(models) > 1:
        raise HarnessError(
            f"tokenizer 'model': the dense stages use different models ({', '.join(models)}); "
            "name one model's folder as the tokenizer"
        )
    model = models[0]
    if model in _DEFAULT_ALIASES:
        folder = _packaged_model_path()
        if folder is None:
            raise HarnessError(
                f"tokenizer 'model': the default model {model!r} is not installed: "
                f"{DENSE_INSTALL_HINT}"
            )
    else:
        folder = Path(model).expanduser()
        if not folder.is_dir():
            raise HarnessError(
                f"tokenizer 'model': the dense model {model!r} is not a local folder and "
                "nothing is downloaded at run time; give its folder as the tokenizer"
            )
    return model, folder


@functools.lru_cache(maxsize=4)
def _folder_tokenizer(folder: str, name: str) -> Tokenizer:
    return HuggingFaceTokenizer(Path(folder), name=name)


def tokenizer_record(settings: _RunSettings) -> dict[str, str]:
    """What the report records of the run's tokenizer (``RunInfo.tokenizer``): name, version."""
    tokenizer = run_tokenizer(settings)
    return {"name": tokenizer.name, "version": tokenizer.version}


def recorded_tokenizer(config: Mapping[str, Any], recorded: Mapping[str, str] | None) -> Tokenizer:
    """The tokenizer a report's run used, loaded again (to count tokens as the run did).

    Args:
        config: The run's recorded configuration (``RunInfo.config``; no ``tokenizer`` key
            is ``words``).
        recorded: The name and version the report recorded (``RunInfo.tokenizer``), if any.

    Raises:
        HarnessError: The tokenizer loaded now is not the one the run recorded (another
            version or vocabulary), or ``model`` has no local model folder.
        JudgmentError: The tokenizer cannot be read.
    """
    spec = str(config.get("tokenizer", "words"))
    if spec != MODEL_TOKENIZER:
        tokenizer = load_tokenizer(spec)
    else:
        stages = config.get("stages") or []
        retrievers = [s.get("retriever") or {} for s in stages if isinstance(s, Mapping)]
        dense = [r for r in retrievers if isinstance(r, Mapping) and r.get("kind") == "dense"]
        models = sorted({str(r.get("model", DEFAULT_MODEL)) for r in dense} or {DEFAULT_MODEL})
        model, folder = _model_folder(models)
        tokenizer = _folder_tokenizer(str(folder), f"model:{model}")
    now = {"name": tokenizer.name, "version": tokenizer.version}
    if recorded is not None and dict(recorded) != now:
        raise HarnessError(
            f"the run counted tokens with {recorded.get('name')} {recorded.get('version')}; "
            f"this installation has {now['name']} {now['version']}: its token budgets "
            "cannot be counted again"
        )
    return tokenizer
