"""`grk eval run`: evaluate retrieval stages against quote-anchored judgments.

The command only gathers its option groups (:mod:`groundkit.cli.run._options`) into
:class:`~groundkit.cli.run._config.RunFlags` (merged over the config file and validated once
there) and hands the configuration to :func:`~groundkit.cli.run._run.run_and_write`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from groundkit.cli._lazy import lazy
from groundkit.cli.console._report import make_console
from groundkit.cli.run._describe import describe_option
from groundkit.cli.run._options import (
    ExecutionOptions,
    InputOptions,
    OutputOptions,
    ScoringOptions,
    StageOptions,
    StatisticsOptions,
    execution_options,
    input_options,
    output_options,
    run_flags,
    scoring_options,
    stage_options,
    statistics_options,
)

if TYPE_CHECKING:
    from groundkit.cli.run._config import build_run_config
    from groundkit.cli.run._run import command_record, run_and_write
else:  # the harness, numpy and the config models: imported when the command runs
    build_run_config = lazy("groundkit.cli.run._config", "build_run_config")
    command_record = lazy("groundkit.cli.run._run", "command_record")
    run_and_write = lazy("groundkit.cli.run._run", "run_and_write")

__all__ = ["run_command"]


@click.command("run")
@describe_option("config", "judgments")
@input_options
@stage_options
@scoring_options
@statistics_options
@execution_options
@output_options
@click.pass_context
def run_command(
    ctx: click.Context,
    inputs: InputOptions,
    stages: StageOptions,
    scoring: ScoringOptions,
    statistics: StatisticsOptions,
    execution: ExecutionOptions,
    outputs: OutputOptions,
) -> None:
    """Evaluate retrieval stages against quote-anchored judgments and write a report.

    \b
    grk eval run --corpus docs/ --judgments judgments.jsonl --retriever dense --hybrid bm25,dense
    grk eval run --config groundkit.toml --seed 1 --report runs/today.json

    The baseline runs first: the BM25 stage 'bm25' unless --baseline names another stage.
    Each other stage is compared with it on every headline metric, all comparisons as one
    family (exact paired tests, Holm over the whole report by default). The report (JSON,
    schema-checked) and the per-query items are written even when a stage fails; the command
    then exits 1 with the stage's error.
    """  # noqa: D301 (click needs a real \b to keep the example lines as they are)
    targets = outputs.outputs()
    config = build_run_config(run_flags(inputs, stages, scoring, statistics, execution))
    run_and_write(
        config,
        targets,
        console=make_console(),
        command=command_record(ctx),
        inputs=[("--config", inputs.config_file)],
    )
