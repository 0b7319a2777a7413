"""The `grk eval` commands: demo, compare and trec (run: :mod:`groundkit.cli.commands._eval_run`).

The commands are thin: they parse flags, call the library, render with rich and pick the exit
code (0 success; 1 a failed stage or a worse verdict; 2 bad input, raised as ``ValueError``
subclasses and turned into one line by the group).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from groundkit.cli._defaults import (
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
)
from groundkit.cli._errors import EXIT_FAILED, EXIT_OK, InputError
from groundkit.cli._lazy import lazy
from groundkit.cli._outputs import force_option, guard
from groundkit.cli.compare._options import ALLOW_FLAG, CompareOptions, compare_options
from groundkit.cli.console._report import make_console, progress_option
from groundkit.cli.run._describe import describe_option
from groundkit.harness.run import MAX_RESAMPLES, default_headline_metrics

if TYPE_CHECKING:
    from groundkit.cli.compare._guardrail import (
        CostCheck,
        CostGuardrail,
        check_cost_guardrails,
        cost_checks_json,
        render_cost_checks,
        split_guardrails,
    )
    from groundkit.cli.compare._items import (
        ItemsOutcome,
        ItemsSettings,
        compare_item_rows,
        exit_code_for,
        pick_stage_rows,
        render_items_outcome,
    )
    from groundkit.cli.compare._items_files import check_same_gold, read_items_file, stage_rows
else:  # the statistics (numpy) and the items and report models: imported when compare runs
    check_cost_guardrails = lazy("groundkit.cli.compare._guardrail", "check_cost_guardrails")
    cost_checks_json = lazy("groundkit.cli.compare._guardrail", "cost_checks_json")
    render_cost_checks = lazy("groundkit.cli.compare._guardrail", "render_cost_checks")
    split_guardrails = lazy("groundkit.cli.compare._guardrail", "split_guardrails")
    ItemsSettings = lazy("groundkit.cli.compare._items", "ItemsSettings")
    compare_item_rows = lazy("groundkit.cli.compare._items", "compare_item_rows")
    exit_code_for = lazy("groundkit.cli.compare._items", "exit_code_for")
    pick_stage_rows = lazy("groundkit.cli.compare._items", "pick_stage_rows")
    render_items_outcome = lazy("groundkit.cli.compare._items", "render_items_outcome")
    check_same_gold = lazy("groundkit.cli.compare._items_files", "check_same_gold")
    read_items_file = lazy("groundkit.cli.compare._items_files", "read_items_file")
    stage_rows = lazy("groundkit.cli.compare._items_files", "stage_rows")

# The report mode, the demo and trec import what they need in their bodies: comparing two
# items files loads no harness pipeline, HTML or diagnosis (``grk eval compare`` starts fast).

__all__ = ["compare_command", "demo_command", "trec_command"]

# The harness's default headline metrics at both levels: shown when both files have them.
DEFAULT_GUARDRAILS = list(
    dict.fromkeys([*default_headline_metrics("chunk"), *default_headline_metrics("document")])
)

_EXISTING_FILE = click.Path(exists=False, dir_okay=False, path_type=Path)


@click.command("trec")
@click.argument("qrels", type=_EXISTING_FILE)
@click.argument("run", type=_EXISTING_FILE)
@click.option(
    "-m",
    "measures",
    multiple=True,
    metavar="MEASURE",
    help="Measure(s) as trec_eval takes them: official (default), all_trec, P.5,10, ndcg_cut.10...",
)
@click.option("-q", "per_query", is_flag=True, help="Print each query's values, then the summary.")
@click.option(
    "-c", "all_queries", is_flag=True, help="Average over every qrels query (missing run = empty)."
)
@click.option(
    "-l",
    "relevance_level",
    type=int,
    default=1,
    show_default=True,
    metavar="LEVEL",
    help="Minimum relevance counted as relevant.",
)
@click.option(
    "-M",
    "max_per_query",
    type=click.IntRange(min=0),
    default=None,
    metavar="N",
    help="Keep only the first N documents of each ranking.",
)
@click.option(
    "-R",
    "rel_format",
    type=click.Choice(["qrels", "prefs", "qrels_prefs", "qrels_jg"]),
    default="qrels",
    show_default=True,
    help="Format of the judgments file: qrels, preferences, qrels read as preferences, "
    "qrels with judgment groups.",
)
@click.option(
    "-Z",
    "zscores",
    type=_EXISTING_FILE,
    default=None,
    metavar="FILE",
    help="Print z-scores against the 'query measure mean deviation' lines of FILE.",
)
def trec_command(  # noqa: PLR0913
    qrels: Path,
    run: Path,
    measures: tuple[str, ...],
    per_query: bool,
    all_queries: bool,
    relevance_level: int,
    max_per_query: int | None,
    rel_format: str,
    zscores: Path | None,
) -> None:
    """Score a TREC run file against a qrels file, printing exactly what trec_eval prints.

    No compiled dependency: `grk eval trec qrels run | diff - expected` gives no difference
    on every one of trec_eval's own quick-test commands (all measures of trec_eval 10,
    -R prefs/qrels_prefs/qrels_jg judgments, -Z z-scores).
    """
    from groundkit.cli._trec import trec_eval_text

    text = trec_eval_text(
        qrels,
        run,
        measures=measures,
        per_query=per_query,
        all_queries=all_queries,
        relevance_level=relevance_level,
        max_per_query=max_per_query,
        rel_format=rel_format,
        zscores_path=zscores,
    )
    click.echo(text, nl=False)


@click.command("compare")
@describe_option("report")
@click.argument("files", nargs=-1, required=True, type=_EXISTING_FILE)
@compare_options
def compare_command(files: tuple[Path, ...], options: CompareOptions) -> None:
    """Compare two stages of one REPORT, or two items files A and B.

    \b
    grk eval compare report.json --baseline bm25 --candidate dense --metric recall@10
    grk eval compare A.items.jsonl B.items.jsonl [--fail-under 0.6]

    Report mode gives the candidate's verdict against the baseline exactly as the report
    decided it (within the report's family); --all-pairs compares every pair of stages.
    Items mode gives B's verdict against A. Either way a verdict is better or worse only when
    an exact paired test (McNemar for right-or-wrong metrics, sign-flip otherwise) gives
    p < alpha and the interval of the difference excludes zero; "too few queries" when no
    outcome of so few queries could be significant; other metrics present in both items files
    are shown as guardrails. Two items files scored on different judgments or corpus (their
    fingerprints differ) are refused unless --allow-different-gold.

    Exit codes: 0 better, equivalent or inconclusive, 1 worse (or inconclusive / too few
    queries with --fail-on-inconclusive, or under --fail-under), 2 files that cannot be
    compared.
    """  # noqa: D301 (click needs a real \b to keep the example lines as they are)
    fail_under = options.fail_under
    if fail_under is not None and not 0.0 <= fail_under <= 1.0:  # also refuses nan
        raise InputError(f"--fail-under must be a metric value in [0, 1], got {fail_under}")
    guardrails = split_guardrails(options.guardrails)
    if len(files) == 1:
        code, checks = _compare_report(files[0], options, guardrails)
    elif len(files) == 2:
        code, checks = _compare_items(files[0], files[1], options, guardrails)
    else:
        raise click.UsageError("give one report, or two items files A and B")
    if any(not check.passed for check in checks):
        code = max(code, EXIT_FAILED)
    click.get_current_context().exit(code)


def _refuse(flags: Sequence[tuple[str, object]], message: str) -> None:
    """Refuse the first flag given (not ``None``) of ``flags``: ``{flag} {message}``."""
    for flag, value in flags:
        if value is not None:
            raise InputError(f"{flag} {message}")


def _compare_report(
    path: Path, options: CompareOptions, guardrails: tuple[list[str], list[CostGuardrail]]
) -> tuple[int, list[CostCheck]]:
    """Report mode (one file): the report's own verdict, or every pair with --all-pairs."""
    from groundkit.cli.compare._report import compare_report_stages, render_report_outcome
    from groundkit.judgments import load_report

    metric_guardrails, cost_guardrails = guardrails
    _refuse(
        [
            ("--stage-a", options.stage_a),
            ("--stage-b", options.stage_b),
            ("--fail-under", options.fail_under),
            ("--alpha", options.alpha),
            ("--guardrail METRIC", metric_guardrails or None),
            ("--track-record", options.track_record),  # track record
            (ALLOW_FLAG, options.allow_different_gold or None),
        ],
        "applies to two items files, not to a report",
    )
    if options.all_pairs:
        _compare_all_pairs(path, options, cost_guardrails)
        return EXIT_OK, []
    outcome = compare_report_stages(
        path,
        baseline=options.baseline,
        candidate=options.candidate,
        metric=options.metric,
        resamples=options.resamples,
        seed=options.seed,
        equivalence_margin=options.equivalence_margin,
    )
    checks: list[CostCheck] = []
    if cost_guardrails:
        report = load_report(path)
        checks = check_cost_guardrails(
            cost_guardrails,
            report.stage(outcome.baseline).cost,
            report.stage(outcome.candidate).cost,
            where_a=f"{path} stage {outcome.baseline!r}",
            where_b=f"{path} stage {outcome.candidate!r}",
        )
    if options.as_json:
        click.echo(json.dumps(_with_costs(outcome.to_json(), checks), indent=1))
    else:
        console = make_console()
        render_report_outcome(console, outcome)
        render_cost_checks(console, checks)
    code = exit_code_for(outcome.verdict, fail_on_inconclusive=options.fail_on_inconclusive)
    return code, checks


def _compare_all_pairs(
    path: Path, options: CompareOptions, cost_guardrails: Sequence[CostGuardrail]
) -> None:
    from groundkit.cli.compare._report import compare_report_all_pairs, render_all_pairs

    _refuse(
        [
            ("--baseline", options.baseline),
            ("--candidate", options.candidate),
            ("--equivalence-margin", options.equivalence_margin),
            ("--guardrail", [g.text for g in cost_guardrails] or None),
        ],
        "does not apply with --all-pairs",
    )
    pairs = compare_report_all_pairs(
        path, metric=options.metric, resamples=options.resamples, seed=options.seed
    )
    if options.as_json:
        click.echo(json.dumps(pairs.model_dump(mode="json"), indent=1))
    else:
        render_all_pairs(make_console(), pairs)


def _compare_items(
    path_a: Path,
    path_b: Path,
    options: CompareOptions,
    guardrails: tuple[list[str], list[CostGuardrail]],
) -> tuple[int, list[CostCheck]]:
    """Items mode (two files): B's verdict against A, guardrails and cost thresholds."""
    metric_guardrails, cost_guardrails = guardrails
    _refuse(
        [
            ("--baseline", options.baseline),
            ("--candidate", options.candidate),
            ("--all-pairs", options.all_pairs or None),
        ],
        "applies to one report; for items files use --stage-a/--stage-b",
    )
    guard(  # track record
        [("--track-record", options.track_record, "track record")],
        [("A", path_a), ("B", path_b)],
        force=options.force,
        appends=["--track-record"],
    )
    items_a = read_items_file(path_a)
    # Two stages of one file (the same path twice) read it once.
    items_b = items_a if path_b == path_a else read_items_file(path_b)
    name_a, rows_a = pick_stage_rows(
        stage_rows(items_a), options.stage_a, path=path_a, flag="--stage-a"
    )
    name_b, rows_b = pick_stage_rows(
        stage_rows(items_b), options.stage_b, path=path_b, flag="--stage-b"
    )
    notes = check_same_gold(
        items_a.stage(name_a),
        items_b.stage(name_b),
        path_a=path_a,
        path_b=path_b,
        allow=options.allow_different_gold,
    )
    outcome = compare_item_rows(
        rows_a,
        rows_b,
        path_a=path_a,
        path_b=path_b,
        stage_a=name_a,
        stage_b=name_b,
        metric=options.metric,
        settings=_items_settings(options, metric_guardrails),
    )
    outcome = dataclasses.replace(outcome, notes=tuple(notes))
    checks = check_cost_guardrails(
        cost_guardrails,
        items_a.stage(name_a).cost,
        items_b.stage(name_b).cost,
        where_a=f"{path_a} stage {name_a!r}",
        where_b=f"{path_b} stage {name_b!r}",
    )
    _show_items(outcome, checks, as_json=options.as_json)
    if options.track_record is not None:  # --- track record (groundkit.diagnosis) ---
        from groundkit.cli.compare._track_record import ComparedSide, record_compared

        record_compared(
            options.track_record,
            ComparedSide(path_a, name_a, rows_a),
            ComparedSide(path_b, name_b, rows_b),
            applied=options.applied,
            comparison=outcome.decision,
            console=make_console(stderr=options.as_json),
            err_console=make_console(stderr=True),
        )  # --- end track record ---
    code = exit_code_for(
        outcome.decision.verdict,
        fail_on_inconclusive=options.fail_on_inconclusive,
        below_floor=outcome.below_floor,
    )
    return code, checks


def _items_settings(options: CompareOptions, metric_guardrails: list[str]) -> ItemsSettings:
    return ItemsSettings(
        guardrail_metrics=metric_guardrails or DEFAULT_GUARDRAILS,
        guardrails_required=bool(metric_guardrails),
        resamples=DEFAULT_RESAMPLES if options.resamples is None else options.resamples,
        seed=DEFAULT_SEED if options.seed is None else options.seed,
        fail_under=options.fail_under,
        equivalence_margin=options.equivalence_margin,
        alpha=0.05 if options.alpha is None else options.alpha,
    )


def _show_items(outcome: ItemsOutcome, checks: list[CostCheck], *, as_json: bool) -> None:
    if as_json:
        click.echo(json.dumps(_with_costs(outcome.to_json(), checks), indent=1))
    else:
        console = make_console()
        render_items_outcome(console, outcome)
        render_cost_checks(console, checks)


def _with_costs(payload: dict[str, Any], checks: list[CostCheck]) -> dict[str, Any]:
    return {**payload, "cost_guardrails": cost_checks_json(checks)} if checks else payload


@click.command("demo")
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("groundkit-demo"),
    show_default=True,
    help="Folder for report.json, items.jsonl and report.html (created if needed).",
)
@click.option(
    "--html/--no-html",
    default=True,
    show_default=True,
    help="Also write the report as a self-contained HTML page, report.html in --out.",
)
@click.option(
    "--dense/--no-dense",
    default=None,
    help="Include the rerank, dense and hybrid stages [default: when the dense extra is "
    "installed].",
)
@click.option(
    "--seed",
    type=click.IntRange(min=0),
    default=DEFAULT_SEED,
    show_default=True,
    help="Bootstrap seed.",
)
@click.option(
    "--resamples",
    type=click.IntRange(min=1, max=MAX_RESAMPLES),
    default=DEFAULT_RESAMPLES,
    show_default=True,
    help="Bootstrap resamples.",
)
@progress_option
@force_option
@click.pass_context
def demo_command(
    ctx: click.Context,
    out_dir: Path,
    dense: bool | None,
    html: bool,
    seed: int,
    resamples: int,
    progress: bool | None,
    force: bool,
) -> None:
    """Evaluate the built-in example (a company handbook) offline: no arguments, no network.

    Runs BM25 on paragraphs (the baseline), on 200-character windows and on whole documents,
    plus a rerank of the baseline, dense and hybrid retrieval when the dense extra is installed,
    then prints the comparison and writes the report, the items and the HTML page to --out.
    """
    from groundkit.cli.run._run import (
        RunOutputs,
        command_record,
        demo_config,
        demo_data,
        dense_ready,
        run_and_write,
    )
    from groundkit.harness import DENSE_INSTALL_HINT

    console = make_console()
    use_dense = dense_ready() if dense is None else dense
    if use_dense and not dense_ready():
        raise InputError(f"--dense needs the dense extra: {DENSE_INSTALL_HINT}")
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"--out {out_dir}: cannot create the folder ({exc.strerror})") from None
    with demo_data() as (corpus, judgments):
        config = demo_config(corpus, judgments, dense=use_dense, seed=seed, resamples=resamples)
        outputs = RunOutputs(
            report_path=out_dir / "report.json",
            items_path=out_dir / "items.jsonl",
            html_path=out_dir / "report.html" if html else None,
            progress=progress,
            force=force,
        )
        run_and_write(config, outputs, console=console, command=command_record(ctx))
    if not use_dense and dense is None:
        console.print(f"rerank, dense and hybrid stages skipped: {DENSE_INSTALL_HINT}", style="dim")
    if html:
        console.print(f"next: open {out_dir / 'report.html'} in a browser", style="dim")
    console.print(
        f"{'  or' if html else 'next'}: grk eval compare "
        f"{out_dir / 'report.json'} --candidate bm25-document --metric recall@2000c",
        style="dim",
    )
