"""The options of `grk eval run`, in groups: each group is one small frozen object.

The groups follow the order ``--help`` lists the options in: what to read, which stages, how
hits are scored, the statistics, where dense stages embed, and what to write.
:func:`run_flags` hands the run-shaping groups to :class:`~groundkit.cli.run._config.RunFlags`
(merged over the config file and validated there); :meth:`OutputOptions.outputs` resolves the
output paths.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from groundkit.cli._defaults import (
    DEFAULT_CHUNKERS,
    DEFAULT_COMMAND_TIMEOUT,
    DEFAULT_DEPTH,
    DEFAULT_METRICS,
    DEFAULT_MIN_OVERLAP,
    DEFAULT_MULTIPLICITY,
    DEFAULT_REPORT,
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    DEPTH_RANGE,
)
from groundkit.cli._errors import InputError
from groundkit.cli._lazy import lazy
from groundkit.cli._option_groups import option_group
from groundkit.cli._outputs import force_option
from groundkit.cli._types import FiniteFloatRange
from groundkit.cli.console._report import progress_option
from groundkit.harness.run import MAX_RESAMPLES

if TYPE_CHECKING:
    from groundkit.cli.run._config import RunFlags
    from groundkit.cli.run._run import RunOutputs, default_items_path
else:  # the run's machinery (the harness, numpy): imported when the command runs, not for --help
    RunFlags = lazy("groundkit.cli.run._config", "RunFlags")
    RunOutputs = lazy("groundkit.cli.run._run", "RunOutputs")
    default_items_path = lazy("groundkit.cli.run._run", "default_items_path")

__all__ = [
    "ExecutionOptions",
    "InputOptions",
    "OutputOptions",
    "ScoringOptions",
    "StageOptions",
    "StatisticsOptions",
    "execution_options",
    "input_options",
    "output_options",
    "run_flags",
    "scoring_options",
    "stage_options",
    "statistics_options",
]

_OUT_FILE = click.Path(dir_okay=False, path_type=Path)
_IN_PATH = click.Path(path_type=Path)

Decorator = Callable[[Callable[..., Any]], Callable[..., Any]]


@dataclass(frozen=True)
class InputOptions:
    """``--config``, ``--corpus``, ``--judgments`` (``None``: not given)."""

    config_file: Path | None
    corpus: Path | None
    judgments: Path | None


input_options: Decorator = option_group(
    "inputs",
    InputOptions,
    click.option(
        "--config", "config_file", type=_IN_PATH, help="A groundkit.toml run configuration."
    ),
    click.option("--corpus", type=_IN_PATH, help="Corpus folder or .jsonl file."),
    click.option("--judgments", type=_IN_PATH, help="Judgments .jsonl file."),
)


@dataclass(frozen=True)
class StageOptions:
    """The stages the flags add, the baseline, their default chunker and the run's tokenizer."""

    chunker: str | None
    tokenizer: str | None
    stages: tuple[str, ...]
    baseline: str | None
    retrievers: tuple[str, ...]
    hybrids: tuple[str, ...]
    commands: tuple[str, ...]
    command_timeout: float | None
    predictions: tuple[str, ...]
    id_maps: tuple[str, ...]


stage_options: Decorator = option_group(
    "stages",
    StageOptions,
    click.option(
        "--chunker",
        metavar="SPEC",
        help="Default chunker: document, paragraphs[:MAX_CHARS], sentences[:N[:MAX_CHARS]], "
        "chars:SIZE[:OVERLAP], tokens:SIZE[:OVERLAP]; a limit written Nt counts tokens "
        f"(paragraphs:256t)  [default: {DEFAULT_CHUNKERS}].",
    ),
    click.option(
        "--tokenizer",
        metavar="NAME",
        help="Whose tokens tokens:SIZE, the Nt limits and the @Nt metrics (recall@1024t) count: "
        "words, cl100k_base, o200k_base "
        "(tiktoken), a folder holding tokenizer.json, or model (the dense model's); all but "
        "words need the tokens extra  [default: words].",
    ),
    click.option(
        "--stage",
        "stages",
        multiple=True,
        metavar="[NAME=]KIND[@CHUNKER]",
        help="Add a stage of any kind: bm25, dense[:MODEL], hybrid:A+B, rerank:STAGE:MODEL, "
        "callable:TARGET, langchain:TARGET, llamaindex:TARGET, haystack:TARGET (TARGET = "
        "package.module:name or file.py:name), or a plugin's kind; its own chunker after @, "
        "e.g. --stage small=bm25@chars:400:50. Repeatable.",
    ),
    click.option(
        "--baseline",
        metavar="STAGE",
        default=None,
        help="The stage every other stage is compared with, run first; another than bm25 "
        "leaves the BM25 baseline out  [default: bm25, added when no stage has that name].",
    ),
    click.option(
        "--retriever",
        "retrievers",
        multiple=True,
        metavar="KIND",
        help="Add a stage named after its retriever on the default chunker (bm25, dense).",
    ),
    click.option(
        "--hybrid",
        "hybrids",
        multiple=True,
        metavar="[NAME=]A,B",
        help="Add a reciprocal-rank fusion of earlier stages (named 'hybrid' unless NAME=).",
    ),
    click.option(
        "--command",
        "commands",
        multiple=True,
        metavar="NAME=CMD",
        help="Add a stage run by an external program (no shell); {in}/{out} in CMD are the "
        "queries and predictions files, else stdin/stdout.",
    ),
    click.option(
        "--command-timeout",
        type=FiniteFloatRange(min=0, min_open=True),
        default=None,
        metavar="SECONDS",
        help=f"Timeout of --command stages [default: {DEFAULT_COMMAND_TIMEOUT:g}].",
    ),
    click.option(
        "--predictions",
        multiple=True,
        metavar="NAME=PATH",
        help="Add a stage read from a predictions .jsonl (or a TREC run file).",
    ),
    click.option(
        "--id-map",
        "id_maps",
        multiple=True,
        metavar="NAME=PATH",
        help="The id_map.json mapping the ids of predictions stage NAME's TREC run to the "
        "corpus's [default: the one beside the corpus folder, as grk beir adapt writes it].",
    ),
)


@dataclass(frozen=True)
class ScoringOptions:
    """How hits are scored: level, depth, headline metrics, overlap."""

    level: str | None
    depth: int | None
    metrics: tuple[str, ...]
    min_overlap: float | None


scoring_options: Decorator = option_group(
    "scoring",
    ScoringOptions,
    click.option(
        "--level",
        type=click.Choice(["chunk", "document"]),
        default=None,
        help="chunk: hits must overlap the gold quotes [default]; document: trec_eval semantics.",
    ),
    click.option(
        "--k",
        "depth",
        type=click.IntRange(*DEPTH_RANGE),
        default=None,
        help=f"Hits retrieved and recorded per query and stage [default: {DEFAULT_DEPTH}].",
    ),
    click.option(
        "--metric",
        "metrics",
        multiple=True,
        metavar="METRIC",
        help=f"Headline metric (repeatable) [default: {DEFAULT_METRICS}].",
    ),
    click.option(
        "--min-overlap",
        type=FiniteFloatRange(0.0, 1.0),
        default=None,
        help=f"Share of a quote's span a hit must cover [default: {DEFAULT_MIN_OVERLAP:g}, one "
        "character].",
    ),
)


@dataclass(frozen=True)
class StatisticsOptions:
    """The comparisons: seed, resamples, family-wise control, equivalence, ablation."""

    seed: int | None
    resamples: int | None
    multiplicity: str | None
    primary_metric: str | None
    run_margin: float | None
    ablation: bool | None
    ablate: tuple[str, ...]


statistics_options: Decorator = option_group(
    "statistics",
    StatisticsOptions,
    click.option(
        "--seed",
        type=click.IntRange(min=0),
        default=None,
        help=f"Seed of every random step [default: {DEFAULT_SEED}].",
    ),
    click.option(
        "--resamples",
        type=click.IntRange(min=1, max=MAX_RESAMPLES),
        default=None,
        help="Random sign patterns where a test cannot be enumerated exactly "
        f"[default: {DEFAULT_RESAMPLES}].",
    ),
    click.option(
        "--multiplicity",
        type=click.Choice(["holm", "bh"]),
        default=None,
        help="Family-wise control over every stage × headline metric: holm (the chance of any "
        "false claim stays at alpha) or bh (Benjamini–Hochberg: the false discovery rate) "
        f"[default: {DEFAULT_MULTIPLICITY}].",
    ),
    click.option(
        "--primary-metric",
        default=None,
        metavar="METRIC",
        help="Only this headline metric decides; the others are shown as guardrails.",
    ),
    click.option(
        "--equivalence-margin",
        "run_margin",
        type=FiniteFloatRange(min=0.0, min_open=True, max=1.0),
        default=None,
        metavar="M",
        help="Also test equivalence within ±M (TOST) for every comparison.",
    ),
    click.option(
        "--ablation/--no-ablation",
        default=None,
        help="Score each component of the hybrid and rerank stages beside the whole (replayed "
        "from the run's ranked lists; its own family of comparisons) [default: on when the run "
        "has such a stage].",
    ),
    click.option(
        "--ablate",
        multiple=True,
        metavar="STAGE",
        help="Ablate only this hybrid or rerank stage (repeatable).",
    ),
)


@dataclass(frozen=True)
class ExecutionOptions:
    """Where dense stages embed and cache their embeddings."""

    embedding_cache: Path | None
    executor: str | None


execution_options: Decorator = option_group(
    "execution",
    ExecutionOptions,
    click.option(
        "--embedding-cache",
        type=_IN_PATH,
        default=None,
        help="Embedding cache folder of dense stages.",
    ),
    click.option(
        "--executor",
        type=click.Choice(["local", "ray"]),
        default=None,
        help="Where dense stages embed: this process, or Ray actors (extra 'ray'; RAY_ADDRESS "
        "or ray_address in the config joins a cluster) [default: local].",
    ),
)


@dataclass(frozen=True)
class OutputOptions:
    """``--report``, ``--items``, ``--no-items``, ``--html``, ``--progress``, ``--force``."""

    report_path: Path
    items_path: Path | None
    no_items: bool
    html_path: Path | None
    progress: bool | None
    force: bool

    def outputs(self) -> RunOutputs:
        """The files to write: the items beside the report unless ``--items``/``--no-items``.

        Raises:
            InputError: ``--items`` and ``--no-items`` together.
        """
        if self.no_items and self.items_path is not None:
            raise InputError("--items and --no-items contradict each other")
        items = None if self.no_items else (self.items_path or default_items_path(self.report_path))
        return RunOutputs(
            self.report_path, items, self.html_path, progress=self.progress, force=self.force
        )


output_options: Decorator = option_group(
    "outputs",
    OutputOptions,
    click.option(
        "--report",
        "report_path",
        type=_OUT_FILE,
        default=DEFAULT_REPORT,
        show_default=True,
        help="Where to write the report (JSON).",
    ),
    click.option(
        "--items",
        "items_path",
        type=_OUT_FILE,
        default=None,
        help="Where to write per-query scores [default: REPORT with .items.jsonl].",
    ),
    click.option("--no-items", is_flag=True, help="Do not write the items file."),
    click.option(
        "--html",
        "html_path",
        type=_OUT_FILE,
        default=None,
        help="Also write the report as one self-contained HTML page.",
    ),
    progress_option,
    force_option,
)


def run_flags(
    inputs: InputOptions,
    stages: StageOptions,
    scoring: ScoringOptions,
    statistics: StatisticsOptions,
    execution: ExecutionOptions,
) -> RunFlags:
    """The run-shaping flags of the groups, as :func:`build_run_config` takes them."""
    return RunFlags(
        config=inputs.config_file,
        corpus=inputs.corpus,
        judgments=inputs.judgments,
        chunker=stages.chunker,
        tokenizer=stages.tokenizer,
        stages=stages.stages,
        baseline=stages.baseline,
        retrievers=stages.retrievers,
        hybrids=stages.hybrids,
        commands=stages.commands,
        command_timeout=stages.command_timeout,
        predictions=stages.predictions,
        id_maps=stages.id_maps,
        level=scoring.level,
        depth=scoring.depth,
        metrics=scoring.metrics,
        min_overlap=scoring.min_overlap,
        seed=statistics.seed,
        resamples=statistics.resamples,
        multiplicity=statistics.multiplicity,
        primary_metric=statistics.primary_metric,
        equivalence_margin=statistics.run_margin,
        embedding_cache=execution.embedding_cache,
        ablation=statistics.ablation,
        ablate=statistics.ablate,
        executor=execution.executor,
    )
