"""`grk eval pool`: precision@k and recall relative to the pool, without gold.

Pools every stage's top k (of one report or several on the same corpus), judges a stratified
sample (strata = home stage × rank band) and estimates each stage with stratified Wilson
intervals; stages are compared on the judged items by the stats engine. Exit 2 on bad input
(a report without hits, reports on different corpora, an unreachable endpoint), with nothing
written but the finished calls in the judge's cache.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from rich.table import Table

from groundkit.cli._errors import InputError
from groundkit.cli._lazy import lazy
from groundkit.cli._outputs import force_option, guard, output_set
from groundkit.cli.console._fit import print_table
from groundkit.cli.console._report import VERDICT_MARKS, format_interval, make_console, render_notes
from groundkit.cli.judges._options import judge_options
from groundkit.cli.run._describe import describe_option
from groundkit.judgments._errors import JudgmentError

if TYPE_CHECKING:
    from groundkit.cli._checked import load_checked_report
    from groundkit.cli.commands._eval_adjudicate import report_corpus
    from groundkit.cli.judges._clients import JudgeSettings
    from groundkit.evalset import PoolReport, run_pool
    from groundkit.judgments import EvalReport
    from groundkit.stats import ProportionInterval
else:  # imported when the command runs, not for --help
    report_corpus = lazy("groundkit.cli.commands._eval_adjudicate", "report_corpus")
    load_checked_report = lazy("groundkit.cli._checked", "load_checked_report")
    JudgeSettings = lazy("groundkit.cli.judges._clients", "JudgeSettings")
    PoolReport = lazy("groundkit.evalset", "PoolReport")
    run_pool = lazy("groundkit.evalset", "run_pool")
    EvalReport = lazy("groundkit.judgments", "EvalReport")
    ProportionInterval = lazy("groundkit.stats", "ProportionInterval")

__all__ = ["pool_command"]

_FILE = click.Path(dir_okay=False, path_type=Path)


def _bands(text: str) -> list[int]:
    try:
        bands = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise InputError(
            f"--bands {text!r}: give ranks separated by commas, e.g. 3 or 3,10"
        ) from None
    if any(b < 1 for b in bands):
        raise InputError(f"--bands {text!r}: ranks start at 1")
    return bands


def _labels(paths: tuple[Path, ...]) -> list[str]:
    stems = [p.stem if p.stem != "report" else p.parent.name or p.stem for p in paths]
    if len(set(stems)) == len(stems):
        return stems
    return [f"r{i}" for i in range(1, len(paths) + 1)]


def _reports(paths: tuple[Path, ...]) -> list[tuple[str, EvalReport]]:
    loaded = []
    for label, path in zip(_labels(paths), paths, strict=True):
        report = load_checked_report(path)
        if not any(r.hits for s in report.stages for r in s.queries):
            raise InputError(f"{path}: the report has no hits to pool")
        loaded.append((label, report))
    return loaded


@click.command("pool")
@click.argument("report_paths", metavar="REPORT...", nargs=-1, required=True, type=_FILE)
@click.option(
    "--k", default=10, show_default=True, type=click.IntRange(min=1), help="Cutoff pooled."
)
@click.option("--n", "size", default=200, show_default=True, type=click.IntRange(min=1),
              help="Pool items to judge (split equally over the strata).")  # fmt: skip
@click.option(
    "--seed", default=0, show_default=True, type=click.IntRange(min=0), help="Seed of the draw."
)
@click.option("--bands", default="3", show_default=True,
              help="Upper rank of each band but the last: 3 gives bands 1-3 and 4-k.")  # fmt: skip
@click.option("--stage", "stage_names", multiple=True,
              help="Pool only these stages (repeat; LABEL:stage for several reports)")  # fmt: skip
@judge_options
@click.option("--corpus", "corpus_path", type=click.Path(path_type=Path), default=None,
              help="The corpus [default: the one the first report recorded].")  # fmt: skip
@click.option("--out", "out_path", type=_FILE, required=True, help="The pool's JSON.")
@click.option("--cache", "cache_path", type=_FILE, default=None,
              help="The judge's cache [default: the judge's own, shared by every "
                   "command: see 'grk doctor'].")  # fmt: skip
@force_option
@describe_option("report")
def pool_command(**options: Any) -> None:
    """Pool every stage's top k, judge a stratified sample, estimate precision and pooled recall.

    \b
    grk eval pool report.json --k 10 --n 200 --judge recorded:answers.jsonl --out pool.json
    grk eval pool a/report.json b/report.json --judge http --model M --base-url URL --out p.json

    Needs no gold. Recall is relative to the pool (what any pooled stage found). Calls,
    tokens and seconds are printed and recorded; a rerun on the same cache makes no call.
    """  # noqa: D301 (click needs a real \b to keep the example lines as they are)
    settings = JudgeSettings.pop(options)
    paths: tuple[Path, ...] = options["report_paths"]
    out: Path = options["out_path"]
    cache = options["cache_path"] or settings.default_cache()
    guard(
        [("--out", out, "pool report"), ("--cache", cache, "judge cache")],
        [*(("REPORT", p) for p in paths), ("--corpus", options["corpus_path"])],
        force=options["force"],
        appends=["--cache"],
    )
    bands = _bands(options["bands"])
    reports = _reports(paths)
    corpus = report_corpus(reports[0][1], options["corpus_path"], paths[0])
    judge = settings.judge(cache)
    sources = {label: str(path) for (label, _), path in zip(reports, paths, strict=True)}
    try:
        result = run_pool(
            reports,
            corpus,
            judge,
            k=options["k"],
            n=options["size"],
            seed=options["seed"],
            bands=bands,
            sources=sources,
            stages=options["stage_names"] or None,
        )
    except JudgmentError as error:  # an EvalSetError too
        raise InputError(str(error)) from None
    with output_set([out]) as outputs:
        outputs.temporary(out).write_text(result.model_dump_json(indent=1) + "\n", encoding="utf-8")
    render_pool(result)
    make_console().print(f"pool: {out}", highlight=False)


def _cell(interval: ProportionInterval | None) -> str:
    if interval is None:
        return "—"
    return f"{interval.estimate:.3f} {format_interval(interval.low, interval.high)}"


def render_pool(result: PoolReport) -> None:
    """Print the pool's stage table, comparisons, cost line and notes."""
    console = make_console()
    console.print(
        f"pool of {result.pool_size} items ({result.queries} queries, top {result.k}); "
        f"judged {sum(s.sampled for s in result.strata)} in {len(result.strata)} strata "
        f"(sizes {', '.join(f'{s.stage} {s.band}: {s.size}' for s in result.strata)})",
        highlight=False,
    )
    table = Table(title=f"judged by {result.judge}: precision@{result.k} and recall of the pool")
    for column in ("stage", "items", "judged", f"precision@{result.k}", "recall (pool)"):
        table.add_column(column, justify="left" if column == "stage" else "right")
    for stage in result.stages:
        table.add_row(stage.stage, str(stage.hits), str(stage.sampled), _cell(stage.precision),
                      _cell(stage.recall))  # fmt: skip
    print_table(console, table)
    for c in result.comparisons:
        mark = VERDICT_MARKS.get(c.verdict, (c.verdict, ""))[0]
        console.print(
            f"{c.stage} vs {c.baseline}: {mark} (pooled recall {c.difference:+.3f} "
            f"{format_interval(c.low, c.high, signed=True)}, +{c.gained}/-{c.lost} of "
            f"{c.items} judged items, p {c.p_adjusted:.3g})",
            highlight=False,
        )
    u = result.usage
    console.print(
        f"calls {u.calls} (cached {u.cached}, failed {u.failed}), tokens {u.tokens}, "
        f"seconds {u.seconds:.2f}",
        highlight=False,
    )
    render_notes(console, result.notes)
