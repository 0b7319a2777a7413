"""`grk evalset review`: review JUDGMENTS, or an adjudication list's gold candidates.

Without ``--candidates`` the items of JUDGMENTS are reviewed (see ``_evalset_review``); with
it, the judged-relevant hits of the list (see ``_evalset_candidates``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import click

from groundkit.cli._errors import InputError
from groundkit.cli._lazy import lazy
from groundkit.cli._outputs import force_option, guard
from groundkit.cli.run._describe import describe_option
from groundkit.judgments._errors import JudgmentError

if TYPE_CHECKING:
    from groundkit.cli.evalset._candidates import candidate_journal_path, run_candidate_review
    from groundkit.cli.evalset._review import default_output, journal_path, run_review
    from groundkit.evalset import read_candidates
    from groundkit.evalset.judge import read_candidate_decisions
    from groundkit.judgments import Corpus, load_judgments
else:  # imported when the command runs, not for --help
    candidate_journal_path = lazy("groundkit.cli.evalset._candidates", "candidate_journal_path")
    run_candidate_review = lazy("groundkit.cli.evalset._candidates", "run_candidate_review")
    default_output = lazy("groundkit.cli.evalset._review", "default_output")
    journal_path = lazy("groundkit.cli.evalset._review", "journal_path")
    run_review = lazy("groundkit.cli.evalset._review", "run_review")
    read_candidates = lazy("groundkit.evalset", "read_candidates")
    read_candidate_decisions = lazy("groundkit.evalset.judge", "read_candidate_decisions")
    Corpus = lazy("groundkit.judgments", "Corpus")
    load_judgments = lazy("groundkit.judgments", "load_judgments")

__all__ = ["review_command"]

_PATH = click.Path(path_type=Path)


@click.command("review", short_help="Review items one key at a time (resumable).")
@describe_option("judgments")
@click.argument("judgments", type=_PATH)
@click.option(
    "--out",
    "-o",
    type=_PATH,
    help="Where to write the reviewed set (default: <JUDGMENTS stem>.reviewed.jsonl beside it).",
)
@click.option("--reviewed-key", default="reviewed", show_default=True, help="meta key of reviews.")
@click.option(
    "--candidates",
    "candidates_path",
    type=_PATH,
    default=None,
    help="Review the judged-relevant hits of an adjudication list (grk eval adjudicate --list) "
    "instead: each accepted span becomes a new gold quote.",
)
@click.option(
    "--corpus",
    "corpus_path",
    type=click.Path(path_type=Path),
    default=None,
    help="With --candidates: the corpus the list was judged on (the quotes' text).",
)
@click.option(
    "--accept-all-judged-relevant",
    "accept_all",
    is_flag=True,
    help="With --candidates: accept every undecided candidate without asking (for scripts).",
)
@click.option(
    "--decisions",
    "decisions_path",
    type=_PATH,
    default=None,
    help="With --candidates: record the decisions of this JSONL file (action accept|reject|skip, "
    "query_id, doc, start, end) without asking.",
)
@force_option
def review_command(
    judgments: Path,
    out: Path | None,
    reviewed_key: str,
    candidates_path: Path | None,
    corpus_path: Path | None,
    accept_all: bool,
    decisions_path: Path | None,
    force: bool,
) -> None:
    """Review the unreviewed items of JUDGMENTS one key at a time.

    Keys: a accept, r reject, R reject with a reason, s skip, e edit (question, first quote,
    grade), t type, u undo, q quit, ? help. Each decision is saved at once to a journal beside
    the output (<out stem>.decisions.jsonl); run the same command again to resume. Rejected and
    skipped items leave the set; accepted and edited ones get meta.reviewed and meta.verdict.

    With --candidates LIST --corpus CORPUS: show each hit the judge found relevant but no gold
    covers (keys: a accept as gold, r reject, s skip, q quit; journal <out stem>.candidates.jsonl,
    resumable); the output is JUDGMENTS plus every accepted span as a grade-1 gold quote.
    """
    output = default_output(judgments) if out is None else out
    if candidates_path is not None:
        sources = _CandidateSources(candidates_path, corpus_path, decisions_path)
        _review_candidates(judgments, sources, output, accept_all, force)
        return
    if corpus_path is not None or accept_all or decisions_path is not None:
        raise InputError(
            "--corpus, --decisions and --accept-all-judged-relevant go with --candidates only"
        )
    guard(
        [("--out", output, "judgments file"), ("journal", journal_path(output), "review journal")],
        [("JUDGMENTS", judgments)],
        force=force,
        appends=["journal"],
    )
    items = load_judgments(judgments)
    run_review(items, output, reviewed_key=reviewed_key)


@dataclass(frozen=True)
class _CandidateSources:
    candidates: Path
    corpus: Path | None
    decisions: Path | None


def _review_candidates(
    judgments: Path, sources: _CandidateSources, output: Path, accept_all: bool, force: bool
) -> None:
    if sources.corpus is None:
        raise InputError("--candidates needs --corpus: the corpus the list was judged on")
    if accept_all and sources.decisions is not None:
        raise InputError("give --accept-all-judged-relevant or --decisions, not both")
    journal = candidate_journal_path(output)
    guard(
        [("--out", output, "judgments file"), ("journal", journal, "candidate journal")],
        [
            ("JUDGMENTS", judgments),
            ("--candidates", sources.candidates),
            ("--corpus", sources.corpus),
            ("--decisions", sources.decisions),
        ],
        force=force,
        appends=["journal"],
    )
    items = load_judgments(judgments)
    try:
        candidates = read_candidates(sources.candidates)
        given = None if sources.decisions is None else read_candidate_decisions(sources.decisions)
        corpus = Corpus.load(sources.corpus)
    except JudgmentError as error:
        raise InputError(str(error)) from None
    run_candidate_review(
        items, candidates, sources.candidates, corpus, output, accept_all=accept_all, given=given
    )
