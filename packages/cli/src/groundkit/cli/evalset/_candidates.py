"""`grk evalset review --candidates LIST`: accept judged-relevant hits as new gold quotes.

The candidates are the lines of an adjudication list flagged ``possibly_missing_from_gold``.
Each decision (accept, reject, skip) is appended to a journal beside the output
(``<out stem>.candidates.jsonl``) and fsync'd before the next key is read; running the same
command again replays it and shows only the undecided candidates. The output judgments (a new
file: the input is never replaced) are written atomically when the review ends or is quit, as
the input plus every accepted span as a grade-1 gold quote, so a killed review leaves the old
output or the new one, and the journal keeps every decision made.

Two ways decide without a person: ``--accept-all-judged-relevant`` accepts every undecided
flagged candidate (decisions already in the journal stand); ``--decisions FILE`` records the
decisions written in FILE (JSON lines of ``CandidateDecision``: ``action`` accept, reject or
skip, ``query_id``, ``doc``, ``start``, ``end``), all checked before the first is recorded.

Journal format: line 1 is a header binding the journal to its judgments and list
(``{"kind": "groundkit-candidate-journal", "version": 1, "judgments_fingerprint": ...,
"list_sha256": ...}``); every further line is one ``CandidateDecision``. A last line torn by a
crash is ignored; anything else that does not parse is an error.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import click
from pydantic import ValidationError

from groundkit.cli._errors import InputError
from groundkit.cli._outputs import output_set
from groundkit.cli.evalset._review import read_key
from groundkit.evalset import EvalSetError, apply_candidate_decisions
from groundkit.evalset.judge import CandidateAction, CandidateDecision, CandidateLine
from groundkit.judgments import Judgment
from groundkit.judgments.files import append_line
from groundkit.judgments.gold import judgments_fingerprint, judgments_text

__all__ = ["CANDIDATE_JOURNAL_KIND", "candidate_journal_path", "run_candidate_review"]

CANDIDATE_JOURNAL_KIND = "groundkit-candidate-journal"
_VERSION = 1
_KEYS: dict[str, CandidateAction] = {"a": "accept", "r": "reject", "s": "skip"}
_HELP = "[a]ccept as gold  [r]eject  [s]kip  [q]uit"


def candidate_journal_path(output: Path) -> Path:
    """The decisions journal of a candidate review: ``<output stem>.candidates.jsonl``."""
    return output.with_name(output.stem + ".candidates.jsonl")


class _Journal:
    def __init__(self, path: Path, header: dict[str, Any]) -> None:
        self.path = path
        self.header = header

    def load(self) -> list[CandidateDecision]:
        if not self.path.exists():
            return []
        raw = self.path.read_bytes()
        lines = raw.split(b"\n")
        decisions: list[CandidateDecision] = []
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                data = json.loads(line.decode("utf-8"))
                if number == 1:
                    self._check(data)
                    continue
                decisions.append(CandidateDecision.model_validate(data))
            except (UnicodeDecodeError, json.JSONDecodeError, ValidationError):
                if number == len(lines) and not raw.endswith(b"\n"):
                    self._truncate(len(raw) - len(line))  # torn by a crash: never confirmed
                    break
                raise InputError(f"{self.path}:{number}: not a candidate decision") from None
        return decisions

    def _check(self, data: object) -> None:
        if not isinstance(data, dict) or data.get("kind") != CANDIDATE_JOURNAL_KIND:
            raise InputError(f"{self.path}:1: not a groundkit candidate journal")
        if data != self.header:
            raise InputError(
                f"{self.path}:1: this journal belongs to other judgments or another list; move "
                "it away to start a new review"
            )

    def _truncate(self, size: int) -> None:
        if size == 0:
            self.path.unlink()
            return
        with self.path.open("r+b") as handle:
            handle.truncate(size)
            os.fsync(handle.fileno())

    def append(self, decision: CandidateDecision) -> None:
        try:
            if not self.path.exists() or self.path.stat().st_size == 0:
                append_line(self.path, json.dumps(self.header, sort_keys=True))
            append_line(self.path, decision.model_dump_json())
        except OSError as error:
            raise InputError(
                f"{self.path}: cannot save a decision: {error.strerror or error}; the journal "
                "keeps every earlier decision"
            ) from None


def _decision(line: CandidateLine, action: CandidateAction) -> CandidateDecision:
    return CandidateDecision(
        action=action, query_id=line.query_id, doc=line.doc, start=line.start, end=line.end
    )


def _show(line: CandidateLine, passage: str, position: str, gold: Sequence[str]) -> None:
    click.echo("")
    click.secho(f"[{position}] {line.query_id}  ({line.stage}, rank {line.rank})", bold=True)
    click.echo(f"  question:  {line.query}")
    for quote in gold:
        click.echo(f"  gold:      {' '.join(quote.split())[:300]}")
    click.echo(f"  candidate: {line.doc} {line.start}-{line.end}, grades {line.grades}, "
               f"majority {line.majority}")  # fmt: skip
    click.echo(f"             {' '.join(passage.split())}")
    click.echo(_HELP)


def _ask(
    line: CandidateLine, corpus: Mapping[str, str], judgments: Mapping[str, Judgment], at: str
) -> CandidateAction | None:
    """The person's decision on one candidate (``None``: quit)."""
    judgment = judgments.get(line.query_id)
    gold = [g.quote for g in judgment.gold] if judgment is not None else []
    _show(line, corpus.get(line.doc, "")[line.start : line.end], at, gold)
    while True:
        try:
            key = read_key()
        except (EOFError, KeyboardInterrupt):
            return None
        if key in {"", "q", "Q"}:
            return None
        if key in _KEYS:
            return _KEYS[key]
        click.echo(f"unknown key {key!r}; {_HELP}")


def _decide(
    pending: Sequence[CandidateLine],
    corpus: Mapping[str, str],
    judgments: Mapping[str, Judgment],
    journal: _Journal,
    accept_all: bool,
) -> tuple[list[CandidateDecision], bool]:
    made: list[CandidateDecision] = []
    for index, line in enumerate(pending, start=1):
        action = (
            "accept" if accept_all else _ask(line, corpus, judgments, f"{index}/{len(pending)}")
        )
        if action is None:
            return made, False
        decision = _decision(line, action)
        journal.append(decision)
        made.append(decision)
    return made, True


def run_candidate_review(
    judgments: list[Judgment],
    candidates: list[CandidateLine],
    list_path: Path,
    corpus: Mapping[str, str],
    output: Path,
    *,
    accept_all: bool,
    given: Sequence[CandidateDecision] | None = None,
) -> int:
    """Review the flagged candidates; write the judgments with accepted quotes to ``output``.

    ``accept_all`` accepts every undecided candidate; ``given`` decisions (``--decisions``)
    are recorded as they are, in order, with no question asked.

    Returns:
        The number of decisions made in this session.

    Raises:
        InputError: A journal of other judgments or list, a candidate of an unknown query, a
            corpus other than the judged one.
    """
    header = {
        "kind": CANDIDATE_JOURNAL_KIND,
        "version": _VERSION,
        "judgments_fingerprint": judgments_fingerprint(judgments),
        "list_sha256": hashlib.sha256(list_path.read_bytes()).hexdigest(),
    }
    journal = _Journal(candidate_journal_path(output), header)
    logged = journal.load()
    flagged = [c for c in candidates if c.possibly_missing_from_gold]
    try:
        # Accepting every flagged candidate checks them all before any key is read: an
        # unknown query or another corpus is named now, not halfway through the review.
        apply_candidate_decisions(
            judgments, flagged, [_decision(c, "accept") for c in flagged], corpus
        )
    except EvalSetError as error:
        raise InputError(f"{list_path}: {error}") from None
    if given is not None:
        try:  # every given decision is checked before one is recorded
            apply_candidate_decisions(judgments, flagged, given, corpus)
        except EvalSetError as error:
            raise InputError(f"--decisions: {error}") from None
    decided = {d.key for d in logged}
    pending = [c for c in flagged if c.key not in decided]
    if logged:
        click.echo(f"resuming: {len(decided)} of {len(flagged)} decided ({journal.path})")
    else:
        click.echo(f"{len(flagged)} candidate(s) judged relevant; decisions go to {journal.path}")
    if given is None:
        made, finished = _decide(
            pending, corpus, {j.query_id: j for j in judgments}, journal, accept_all
        )
    else:
        made = list(given)
        for decision in made:
            journal.append(decision)
        finished = {d.key for d in made} >= {c.key for c in pending}
    decisions = logged + made
    result = apply_candidate_decisions(judgments, flagged, decisions, corpus)
    with output_set([output]) as outputs:
        outputs.write_text(output, judgments_text(result))
    accepted = sum(1 for d in {d.key: d for d in decisions}.values() if d.action == "accept")
    click.echo(
        f"{len({d.key for d in decisions})}/{len(flagged)} decided, {accepted} accepted as gold; "
        f"wrote {output}"
    )
    if not finished:
        click.echo("run the same command again to resume")
    return len(made)
