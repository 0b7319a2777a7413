"""Build a run configuration from `grk eval run`'s flags, over an optional TOML config file.

Precedence: a flag beats the config file, which beats the harness defaults. Stages given by
flags are added after the config file's stages; one with the same name replaces the file's.
"""

from __future__ import annotations

import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from groundkit.cli._errors import InputError
from groundkit.cli._eval_flags import (
    StageSpec,
    parse_chunker_spec,
    parse_command_spec,
    parse_hybrid_shortcut,
    parse_predictions_spec,
    parse_stage_spec,
)
from groundkit.harness import RunConfig, load_run_config, run_config_from_dict

__all__ = ["RunFlags", "build_run_config"]


@dataclass(frozen=True)
class RunFlags:
    """The run-shaping flags of `grk eval run` (``None``: not given)."""

    config: Path | None = None
    corpus: Path | None = None
    judgments: Path | None = None
    chunker: str | None = None
    stages: Sequence[str] = ()
    retrievers: Sequence[str] = ()
    hybrids: Sequence[str] = ()
    commands: Sequence[str] = ()
    command_timeout: float | None = None
    predictions: Sequence[str] = ()
    level: str | None = None
    depth: int | None = None
    metrics: Sequence[str] = ()
    min_overlap: float | None = None
    seed: int | None = None
    resamples: int | None = None
    embedding_cache: Path | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def _flag_stages(flags: RunFlags) -> list[StageSpec]:
    specs = [parse_stage_spec(s) for s in flags.stages]
    specs += [parse_stage_spec(r) for r in flags.retrievers]
    specs += [parse_command_spec(c, timeout=flags.command_timeout) for c in flags.commands]
    specs += [parse_predictions_spec(p) for p in flags.predictions]
    # Fusion stages go last so that the stages they fuse are defined before them.
    specs += [parse_hybrid_shortcut(h) for h in flags.hybrids]
    names = [s.name for s in specs]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise InputError(
            f"stage name {repeated[0]!r} is given twice on the command line; name the stages "
            "apart, e.g. --stage small=bm25@chars:400:50"
        )
    return specs


def _config_file_data(path: Path) -> dict[str, Any]:
    """The config file as validated data, keeping only what the file itself set.

    Validation resolves relative paths and checks the file; keys the file did not set are then
    dropped so that defaults are filled in again after the flags are applied (``--level
    document`` must get the document-level default chunker, not the chunk-level one).
    """
    loaded = load_run_config(path)
    raw = tomllib.loads(path.read_text(encoding="utf-8"))
    dumped = loaded.model_dump(mode="json")
    data = {key: value for key, value in dumped.items() if key in raw}
    raw_stages = {s.get("name"): s for s in raw.get("stages", []) if isinstance(s, dict)}
    stages = []
    for stage in dumped["stages"]:
        raw_stage = raw_stages.get(stage["name"])
        if raw_stage is None:
            continue  # the baseline the harness added: it is added again, with the flags' chunker
        if "chunker" not in raw_stage:
            stage = {key: value for key, value in stage.items() if key != "chunker"}
        stages.append(stage)
    data["stages"] = stages
    return data


def build_run_config(flags: RunFlags) -> RunConfig:
    """Merge the config file (when given) and the flags into a validated configuration.

    Raises:
        InputError: A bad flag (the message quotes it) or no corpus / judgments.
        HarnessError: An invalid config file or setting (names the file and key).
    """
    data: dict[str, Any] = {}
    if flags.config is not None:
        data = _config_file_data(flags.config)
    overrides: dict[str, Any] = {
        "corpus": flags.corpus,
        "judgments": flags.judgments,
        "level": flags.level,
        "depth": flags.depth,
        "min_overlap_fraction": flags.min_overlap,
        "embedding_cache_dir": flags.embedding_cache,
    }
    for key, value in overrides.items():
        if value is not None:
            data[key] = str(value) if isinstance(value, Path) else value
    if flags.chunker is not None:
        data["chunker"] = parse_chunker_spec(flags.chunker)
    if flags.metrics:
        data["headline_metrics"] = list(flags.metrics)
    if flags.seed is not None or flags.resamples is not None:
        bootstrap = dict(data.get("bootstrap", {}))
        if flags.seed is not None:
            bootstrap["seed"] = flags.seed
        if flags.resamples is not None:
            bootstrap["resamples"] = flags.resamples
        data["bootstrap"] = bootstrap
    data.update(flags.extra)
    flag_stages = [s.to_config() for s in _flag_stages(flags)]
    if flag_stages:
        replaced = {s["name"] for s in flag_stages}
        data["stages"] = [s for s in data.get("stages", []) if s["name"] not in replaced]
        data["stages"] += flag_stages
    missing = [
        flag
        for flag, key in (("--corpus", "corpus"), ("--judgments", "judgments"))
        if key not in data
    ]
    if missing:
        raise InputError(
            f"no {' and no '.join(f[2:] for f in missing)}: pass {' and '.join(missing)} "
            "or --config FILE"
        )
    return run_config_from_dict(data, source=flags.config)
