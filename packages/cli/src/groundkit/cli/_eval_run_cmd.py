"""`grk eval run`: evaluate retrieval stages against quote-anchored judgments.

The command only gathers its flags into :class:`~groundkit.cli._eval_config.RunFlags` (merged
over the config file and validated once there) and hands the configuration to
:func:`~groundkit.cli._eval_run.execute`.
"""

from __future__ import annotations

from pathlib import Path

import click

from groundkit.cli._console import make_console, progress_option
from groundkit.cli._defaults import (
    DEFAULT_CHUNKERS,
    DEFAULT_COMMAND_TIMEOUT,
    DEFAULT_DEPTH,
    DEFAULT_METRICS,
    DEFAULT_MIN_OVERLAP,
    DEFAULT_MULTIPLICITY,
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    DEPTH_RANGE,
)
from groundkit.cli._describe import describe_option
from groundkit.cli._errors import InputError
from groundkit.cli._eval_config import RunFlags, build_run_config
from groundkit.cli._eval_run import DEFAULT_REPORT, command_record, default_items_path, execute
from groundkit.cli._outputs import force_option
from groundkit.cli._types import FiniteFloatRange
from groundkit.harness import MAX_RESAMPLES

__all__ = ["run_command"]

_OUT_FILE = click.Path(dir_okay=False, path_type=Path)
_IN_PATH = click.Path(path_type=Path)


@click.command("run")
@describe_option("config", "judgments")
@click.option("--config", "config_file", type=_IN_PATH, help="A groundkit.toml run configuration.")
@click.option("--corpus", type=_IN_PATH, help="Corpus folder or .jsonl file.")
@click.option("--judgments", type=_IN_PATH, help="Judgments .jsonl file.")
@click.option(
    "--chunker",
    metavar="SPEC",
    help="Default chunker: document, paragraphs[:MAX_CHARS], sentences[:N[:MAX_CHARS]], "
    f"chars:SIZE[:OVERLAP], tokens:SIZE[:OVERLAP]  [default: {DEFAULT_CHUNKERS}].",
)
@click.option(
    "--stage",
    "stages",
    multiple=True,
    metavar="[NAME=]KIND[@CHUNKER]",
    help="Add a stage: bm25, dense[:MODEL] or hybrid:A+B, with its own chunker after @, "
    "e.g. --stage small=bm25@chars:400:50. Repeatable.",
)
@click.option(
    "--retriever",
    "retrievers",
    multiple=True,
    metavar="KIND",
    help="Add a stage named after its retriever on the default chunker (bm25, dense).",
)
@click.option(
    "--hybrid",
    "hybrids",
    multiple=True,
    metavar="[NAME=]A,B",
    help="Add a reciprocal-rank fusion of earlier stages (named 'hybrid' unless NAME=).",
)
@click.option(
    "--command",
    "commands",
    multiple=True,
    metavar="NAME=CMD",
    help="Add a stage run by an external program (no shell); {in}/{out} in CMD are the "
    "queries and predictions files, else stdin/stdout.",
)
@click.option(
    "--command-timeout",
    type=FiniteFloatRange(min=0, min_open=True),
    default=None,
    metavar="SECONDS",
    help=f"Timeout of --command stages [default: {DEFAULT_COMMAND_TIMEOUT:g}].",
)
@click.option(
    "--predictions",
    multiple=True,
    metavar="NAME=PATH",
    help="Add a stage read from a predictions .jsonl (or a TREC run file).",
)
@click.option(
    "--id-map",
    "id_maps",
    multiple=True,
    metavar="NAME=PATH",
    help="The id_map.json mapping the ids of predictions stage NAME's TREC run to the "
    "corpus's [default: the one beside the corpus folder, as grk beir adapt writes it].",
)
@click.option(
    "--level",
    type=click.Choice(["chunk", "document"]),
    default=None,
    help="chunk: hits must overlap the gold quotes [default]; document: trec_eval semantics.",
)
@click.option(
    "--k",
    "depth",
    type=click.IntRange(*DEPTH_RANGE),
    default=None,
    help=f"Hits retrieved and recorded per query and stage [default: {DEFAULT_DEPTH}].",
)
@click.option(
    "--metric",
    "metrics",
    multiple=True,
    metavar="METRIC",
    help=f"Headline metric (repeatable) [default: {DEFAULT_METRICS}].",
)
@click.option(
    "--min-overlap",
    type=FiniteFloatRange(0.0, 1.0),
    default=None,
    help=f"Share of a quote's span a hit must cover [default: {DEFAULT_MIN_OVERLAP:g}, one "
    "character].",
)
@click.option(
    "--seed",
    type=click.IntRange(min=0),
    default=None,
    help=f"Seed of every random step [default: {DEFAULT_SEED}].",
)
@click.option(
    "--resamples",
    type=click.IntRange(min=1, max=MAX_RESAMPLES),
    default=None,
    help="Random sign patterns where a test cannot be enumerated exactly "
    f"[default: {DEFAULT_RESAMPLES}].",
)
@click.option(
    "--multiplicity",
    type=click.Choice(["holm", "bh"]),
    default=None,
    help="Family-wise control over every stage × headline metric: holm (the chance of any "
    "false claim stays at alpha) or bh (Benjamini–Hochberg: the false discovery rate) "
    f"[default: {DEFAULT_MULTIPLICITY}].",
)
@click.option(
    "--primary-metric",
    default=None,
    metavar="METRIC",
    help="Only this headline metric decides; the others are shown as guardrails.",
)
@click.option(
    "--equivalence-margin",
    "run_margin",
    type=click.FloatRange(min=0.0, min_open=True, max=1.0),
    default=None,
    metavar="M",
    help="Also test equivalence within ±M (TOST) for every comparison.",
)
@click.option(
    "--ablation/--no-ablation",
    default=None,
    help="Score each component of the hybrid and rerank stages beside the whole (replayed "
    "from the run's ranked lists; its own family of comparisons) [default: on when the run "
    "has such a stage].",
)
@click.option(
    "--ablate",
    multiple=True,
    metavar="STAGE",
    help="Ablate only this hybrid or rerank stage (repeatable).",
)
@click.option(
    "--embedding-cache", type=_IN_PATH, default=None, help="Embedding cache folder of dense stages."
)
@click.option(
    "--executor",
    type=click.Choice(["local", "ray"]),
    default=None,
    help="Where dense stages embed: this process, or Ray actors (extra 'ray'; RAY_ADDRESS "
    "or ray_address in the config joins a cluster) [default: local].",
)
@click.option(
    "--report",
    "report_path",
    type=_OUT_FILE,
    default=DEFAULT_REPORT,
    show_default=True,
    help="Where to write the report (JSON).",
)
@click.option(
    "--items",
    "items_path",
    type=_OUT_FILE,
    default=None,
    help="Where to write per-query scores [default: REPORT with .items.jsonl].",
)
@click.option("--no-items", is_flag=True, help="Do not write the items file.")
@click.option(
    "--html",
    "html_path",
    type=_OUT_FILE,
    default=None,
    help="Also write the report as one self-contained HTML page.",
)
@progress_option
@force_option
@click.pass_context
def run_command(
    ctx: click.Context,
    config_file: Path | None,
    corpus: Path | None,
    judgments: Path | None,
    chunker: str | None,
    stages: tuple[str, ...],
    retrievers: tuple[str, ...],
    hybrids: tuple[str, ...],
    commands: tuple[str, ...],
    command_timeout: float | None,
    predictions: tuple[str, ...],
    id_maps: tuple[str, ...],
    level: str | None,
    depth: int | None,
    metrics: tuple[str, ...],
    min_overlap: float | None,
    seed: int | None,
    resamples: int | None,
    multiplicity: str | None,
    primary_metric: str | None,
    run_margin: float | None,
    ablation: bool | None,
    ablate: tuple[str, ...],
    embedding_cache: Path | None,
    executor: str | None,
    report_path: Path,
    items_path: Path | None,
    no_items: bool,
    html_path: Path | None,
    progress: bool | None,
    force: bool,
) -> None:
    """Evaluate retrieval stages against quote-anchored judgments and write a report.

    \b
    grk eval run --corpus docs/ --judgments judgments.jsonl --retriever dense --hybrid bm25,dense
    grk eval run --config groundkit.toml --seed 1 --report runs/today.json

    The BM25 baseline 'bm25' is always the first stage. Each other stage is compared with it
    on every headline metric, all comparisons as one family (exact paired tests, Holm over the
    whole report by default). The report (JSON, schema-checked) and the per-query items are
    written even when a stage fails; the command then exits 1 with the stage's error.
    """  # noqa: D301 (click needs a real \b to keep the example lines as they are)
    if no_items and items_path is not None:
        raise InputError("--items and --no-items contradict each other")
    flags = RunFlags(
        config=config_file,
        corpus=corpus,
        judgments=judgments,
        chunker=chunker,
        stages=stages,
        retrievers=retrievers,
        hybrids=hybrids,
        commands=commands,
        command_timeout=command_timeout,
        predictions=predictions,
        id_maps=id_maps,
        level=level,
        depth=depth,
        metrics=metrics,
        min_overlap=min_overlap,
        seed=seed,
        resamples=resamples,
        multiplicity=multiplicity,
        primary_metric=primary_metric,
        equivalence_margin=run_margin,
        embedding_cache=embedding_cache,
        ablation=ablation,
        ablate=ablate,
        executor=executor,
    )
    config = build_run_config(flags)
    execute(
        config,
        console=make_console(),
        report_path=report_path,
        items_path=None if no_items else (items_path or default_items_path(report_path)),
        command=command_record(ctx),
        progress=progress,
        html_path=html_path,
        inputs=[("--config", config_file)],
        force=force,
    )
