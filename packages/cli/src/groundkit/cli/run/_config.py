"""Build a run configuration from `grk eval run`'s flags, over an optional TOML config file.

One path: the config file is read as a raw mapping (its relative paths resolved against its
folder), the flags are merged over it, and the result is validated once by the harness's
models. Precedence: a flag beats the config file, which beats the defaults (filled in by the
models, so ``--level document`` gets the document-level default chunker). Stages given by flags
are added after the file's stages; one with the same name replaces the file's. ``--id-map
NAME=PATH`` then sets ``id_map`` of predictions stage NAME, whether a flag or the file defines
it. Every problem is reported at once, each naming the flag or the file key it comes from.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from groundkit.cli._errors import InputError
from groundkit.cli.run._flags import (
    StageSpec,
    parse_command_spec,
    parse_hybrid_shortcut,
    parse_named_path,
    parse_predictions_spec,
    parse_stage_spec,
)
from groundkit.harness import (
    ConfigError,
    ConfigProblem,
    RunConfig,
    read_config_file,
    run_config_from_dict,
)

__all__ = ["RunFlags", "build_run_config"]


@dataclass(frozen=True)
class RunFlags:
    """The run-shaping flags of `grk eval run` (``None``: not given)."""

    config: Path | None = None
    corpus: Path | None = None
    judgments: Path | None = None
    chunker: str | None = None
    tokenizer: str | None = None
    stages: Sequence[str] = ()
    baseline: str | None = None
    retrievers: Sequence[str] = ()
    hybrids: Sequence[str] = ()
    commands: Sequence[str] = ()
    command_timeout: float | None = None
    predictions: Sequence[str] = ()
    id_maps: Sequence[str] = ()
    level: str | None = None
    depth: int | None = None
    metrics: Sequence[str] = ()
    min_overlap: float | None = None
    seed: int | None = None
    resamples: int | None = None
    multiplicity: str | None = None
    primary_metric: str | None = None
    equivalence_margin: float | None = None
    embedding_cache: Path | None = None
    ablation: bool | None = None
    ablate: Sequence[str] = ()
    executor: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def _flag_stages(flags: RunFlags) -> list[tuple[str, StageSpec]]:
    """Each stage a flag asks for, with the flag as the user wrote it."""
    specs = [(f"--stage {s}", parse_stage_spec(s)) for s in flags.stages]
    specs += [(f"--retriever {r}", parse_stage_spec(r)) for r in flags.retrievers]
    specs += [
        (f"--command {c}", parse_command_spec(c, timeout=flags.command_timeout))
        for c in flags.commands
    ]
    specs += [(f"--predictions {p}", parse_predictions_spec(p)) for p in flags.predictions]
    # Fusion stages go last so that the stages they fuse are defined before them.
    specs += [(f"--hybrid {h}", parse_hybrid_shortcut(h)) for h in flags.hybrids]
    names = [spec.name for _, spec in specs]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise InputError(
            f"stage name {repeated[0]!r} is given twice on the command line; name the stages "
            "apart, e.g. --stage small=bm25@chars:400:50"
        )
    return specs


def _top_level_flags(flags: RunFlags) -> dict[str, tuple[str, Any]]:
    """Top-level keys the flags set: key -> (the flag as written, raw value)."""
    given: dict[str, tuple[str, Any]] = {}
    for key, flag, value in (
        ("corpus", "--corpus", flags.corpus),
        ("judgments", "--judgments", flags.judgments),
        ("level", "--level", flags.level),
        ("depth", "--k", flags.depth),
        ("min_overlap_fraction", "--min-overlap", flags.min_overlap),
        ("embedding_cache_dir", "--embedding-cache", flags.embedding_cache),
        ("executor", "--executor", flags.executor),
        ("chunker", "--chunker", flags.chunker),
        ("tokenizer", "--tokenizer", flags.tokenizer),
        ("baseline", "--baseline", flags.baseline),
    ):
        if value is not None:
            given[key] = (f"{flag} {value}", str(value) if isinstance(value, Path) else value)
    if flags.metrics:
        given["headline_metrics"] = ("--metric", list(flags.metrics))
    if flags.ablate:
        if flags.ablation is False:
            raise InputError("--ablate and --no-ablation contradict each other")
        given["ablation"] = ("--ablate", list(dict.fromkeys(flags.ablate)))
    elif flags.ablation is not None:
        given["ablation"] = ("--ablation" if flags.ablation else "--no-ablation", flags.ablation)
    return given


Location = tuple[int | str, ...]


def _set_id_maps(stages: list[Any], id_maps: Sequence[str]) -> dict[Location, str]:
    """Set each ``--id-map NAME=PATH`` on predictions stage NAME (of the flags or the file).

    Returns:
        Where each flag's value went (``("stages", i, "retriever", "id_map")``) to the flag.

    Raises:
        InputError: A malformed spec, no predictions stage NAME, or NAME given twice.
    """
    origins: dict[Location, str] = {}
    positions = {
        stage["name"]: index
        for index, stage in enumerate(stages)
        if isinstance(stage, dict) and isinstance(stage.get("name"), str)
    }
    for text in id_maps:
        name, path = parse_named_path(text, flag="--id-map")
        index = positions.get(name)
        retriever = stages[index].get("retriever") if index is not None else None
        if index is None or not isinstance(retriever, dict):
            raise InputError(
                f"--id-map {text!r}: no predictions stage named {name!r} (from --predictions "
                "or the config file)"
            )
        if retriever.get("kind") != "predictions":
            raise InputError(
                f"--id-map {text!r}: stage {name!r} is not a predictions stage; only a TREC "
                'run read by --predictions NAME=RUN (or kind = "predictions") takes an id map'
            )
        where: Location = ("stages", index, "retriever", "id_map")
        if where in origins:
            raise InputError(f"--id-map {text!r}: stage {name!r} has an id map already")
        origins[where] = f"--id-map {text}"
        stages[index] = {**stages[index], "retriever": {**retriever, "id_map": path}}
    return origins


def _merge(
    data: dict[str, Any], flags: RunFlags
) -> tuple[dict[str, Any], dict[int, str], dict[str, str], dict[Location, str]]:
    """The flags merged over the file's raw mapping, and where each flag's value went."""
    top = _top_level_flags(flags)
    origins = {key: flag for key, (flag, _) in top.items()}
    data.update({key: value for key, (_, value) in top.items()})
    bootstrap = data.get("bootstrap", {})
    for key, flag, value in (
        ("seed", "--seed", flags.seed),
        ("resamples", "--resamples", flags.resamples),
        ("multiplicity", "--multiplicity", flags.multiplicity),
        ("primary_metric", "--primary-metric", flags.primary_metric),
        ("equivalence_margin", "--equivalence-margin", flags.equivalence_margin),
    ):
        if value is not None and isinstance(bootstrap, dict):
            bootstrap = {**bootstrap, key: value}
            origins[f"bootstrap.{key}"] = f"{flag} {value}"
    if bootstrap:
        data["bootstrap"] = bootstrap
    data.update(flags.extra)
    stage_origins: dict[int, str] = {}
    flag_stages = _flag_stages(flags)
    if flag_stages:
        replaced = {spec.name for _, spec in flag_stages}
        kept = [
            s
            for s in data.get("stages", [])
            if not (isinstance(s, dict) and s.get("name") in replaced)
        ]
        for text, spec in flag_stages:
            stage_origins[len(kept)] = text
            kept.append(spec.to_config())
        data["stages"] = kept
    field_origins: dict[Location, str] = {}
    if flags.id_maps:
        stages = data.get("stages")
        data["stages"] = list(stages) if isinstance(stages, list) else []
        field_origins = _set_id_maps(data["stages"], flags.id_maps)
    return data, stage_origins, origins, field_origins


def _render(
    problem: ConfigProblem,
    stages: dict[int, str],
    top: dict[str, str],
    fields: dict[Location, str],
) -> tuple[str, bool]:
    """One problem as the user should read it, and whether it comes from the config file."""
    loc = problem.loc
    if loc in fields:
        return f"{fields[loc]}: {problem.message}", False
    if len(loc) >= 2 and loc[0] == "stages" and isinstance(loc[1], int) and loc[1] in stages:
        rest = ConfigProblem(loc[2:], problem.message)
        return (
            f"{stages[loc[1]]}: {rest}" if loc[2:] else f"{stages[loc[1]]}: {rest.message}"
        ), False
    for size in (2, 1):
        key = ".".join(str(part) for part in loc[:size])
        if len(loc) >= size and key in top:
            return f"{top[key]}: {problem.message}", False
    # Whole-settings checks name their key first ("headline_metrics: ...").
    key = problem.message.partition(":")[0]
    if not loc and key in top:
        return f"{top[key]}: {problem.message.partition(':')[2].strip()}", False
    return str(problem), True


def build_run_config(flags: RunFlags) -> RunConfig:
    """Merge the config file (when given) and the flags into a configuration validated once.

    Raises:
        InputError: A bad flag or setting (every problem, each naming its flag or file key), or
            no corpus / judgments.
        HarnessError: An unreadable config file or invalid TOML.
    """
    raw = read_config_file(flags.config) if flags.config is not None else {}
    data, stage_origins, top_origins, field_origins = _merge(raw, flags)
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
    try:
        return run_config_from_dict(data, source=flags.config)
    except ConfigError as error:
        rendered = [_render(p, stage_origins, top_origins, field_origins) for p in error.problems]
        from_file = [text for text, in_file in rendered if in_file]
        from_flags = [text for text, in_file in rendered if not in_file]
        parts = from_flags
        if from_file:
            where = f"{flags.config}: " if flags.config is not None else ""
            parts = [where + "; ".join(from_file), *from_flags]
        raise InputError("; ".join(parts)) from error
