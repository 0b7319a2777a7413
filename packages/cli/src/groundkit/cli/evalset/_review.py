"""`grk evalset review`: an interactive, resumable review in the terminal.

Every decision is appended to a JSON Lines journal beside the output and fsync'd before the
next key is read, so quitting, Ctrl-C or a crash loses nothing: running the same command again
replays the journal and continues where the review stopped. The output judgments are written
atomically when the review ends or is quit (undecided items stay in it, unreviewed).

Journal format: line 1 is a header binding the journal to its judgments
(``{"kind": "groundkit-review-journal", "version": 1, "judgments_fingerprint": ...,
"reviewed_key": ...}``); every further line is one ``Decision``. A last line torn by a crash
(no newline, not JSON) is ignored with a note; anything else that does not parse is an error.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
from pydantic import ValidationError

from groundkit.cli._errors import InputError
from groundkit.cli._outputs import output_set
from groundkit.evalset import Decision, EvalSetError, ReviewQueue
from groundkit.evalset.filters import QUESTION_TYPES
from groundkit.judgments import Judgment
from groundkit.judgments.files import append_line, shown_path
from groundkit.judgments.gold import format_validation_error, judgments_fingerprint, judgments_text

__all__ = [
    "JOURNAL_KIND",
    "ReviewJournal",
    "default_output",
    "journal_path",
    "read_key",
    "run_review",
]

JOURNAL_KIND = "groundkit-review-journal"
_JOURNAL_VERSION = 1
_HELP = (
    "[a]ccept  [r]eject  [R]eject with a reason  [s]kip  [e]dit  [t]ype  [u]ndo  [q]uit  [?]help"
)


def default_output(judgments_path: Path) -> Path:
    """``<stem>.reviewed.jsonl`` beside the judgments."""
    return judgments_path.with_name(judgments_path.stem + ".reviewed.jsonl")


def journal_path(output: Path) -> Path:
    """The decisions journal of an output file: ``<output stem>.decisions.jsonl`` beside it."""
    return output.with_name(output.stem + ".decisions.jsonl")


class ReviewJournal:
    """The append-only decisions journal of one review.

    Args:
        path: The journal file.
        fingerprint: Fingerprint of the judgments under review.
        reviewed_key: The ``meta`` key of the review.
    """

    def __init__(self, path: Path, fingerprint: str, reviewed_key: str) -> None:
        self.path = path
        self.fingerprint = fingerprint
        self.reviewed_key = reviewed_key
        self.torn_line: int | None = None

    def _header(self) -> dict[str, Any]:
        return {
            "kind": JOURNAL_KIND,
            "version": _JOURNAL_VERSION,
            "judgments_fingerprint": self.fingerprint,
            "reviewed_key": self.reviewed_key,
        }

    def load(self) -> list[Decision]:
        """The decisions recorded so far (none when the journal does not exist yet).

        Raises:
            InputError: A journal of other judgments, or a line that is not a decision.
        """
        if not self.path.exists():
            return []
        try:
            raw = self.path.read_bytes()
        except OSError as error:
            raise InputError(f"{self.path}: cannot read journal: {error.strerror}") from None
        lines = raw.split(b"\n")
        complete = raw.endswith(b"\n")
        decisions: list[Decision] = []
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            last_torn = number == len(lines) and not complete
            try:
                data = json.loads(line.decode("utf-8"))
                if number == 1:
                    self._check_header(data)
                    continue
                decisions.append(Decision.model_validate(data))
            except (UnicodeDecodeError, json.JSONDecodeError, ValidationError) as error:
                if last_torn:
                    # A crash mid-write: that line was never confirmed to the reviewer.
                    self.torn_line = number
                    self._truncate(len(raw) - len(line))
                    break
                detail = (
                    format_validation_error(error)
                    if isinstance(error, ValidationError)
                    else "not a JSON object"
                )
                raise InputError(f"{self.path}:{number}: not a review decision: {detail}") from None
        return decisions

    def _check_header(self, data: object) -> None:
        if not isinstance(data, dict) or data.get("kind") != JOURNAL_KIND:
            raise InputError(f"{self.path}:1: not a groundkit review journal")
        if data.get("judgments_fingerprint") != self.fingerprint:
            raise InputError(
                f"{self.path}:1: this journal belongs to other judgments (the file changed since "
                "the review started); move the journal away to start a new review"
            )
        if data.get("reviewed_key") != self.reviewed_key:
            raise InputError(
                f"{self.path}:1: this journal was made with --reviewed-key "
                f"{data.get('reviewed_key')!r}, not {self.reviewed_key!r}"
            )

    def _truncate(self, size: int) -> None:
        if size == 0:  # not even the header was complete: start the journal afresh
            self.path.unlink()
            return
        with self.path.open("r+b") as handle:
            handle.truncate(size)
            handle.flush()
            os.fsync(handle.fileno())

    def append(self, decision: Decision) -> None:
        """Append one decision durably (the header first, for a new journal).

        Raises:
            InputError: The disk refused the line (full, read-only); the journal ends as it
                did, with every earlier decision.
        """
        try:
            if not self.path.exists() or self.path.stat().st_size == 0:
                append_line(self.path, json.dumps(self._header(), sort_keys=True))
            append_line(self.path, decision.model_dump_json(exclude_none=True))
        except OSError as error:
            raise InputError(
                f"{shown_path(self.path)}: cannot save the {decision.action} of "
                f"{decision.query_id or 'the last decision'}: {error.strerror or error}; the "
                "journal keeps every "
                "earlier decision: free some space and run the same command to resume"
            ) from None


def _show(judgment: Judgment, position: str) -> None:
    click.echo("")
    click.secho(f"[{position}] {judgment.query_id}", bold=True)
    click.echo(f"  question: {judgment.query}")
    if judgment.qtype:
        click.echo(f"  type:     {judgment.qtype}")
    if judgment.answer:
        click.echo(f"  answer:   {judgment.answer}")
    if not judgment.gold:
        click.echo("  gold:     none (unanswerable)")
    for index, gold in enumerate(judgment.gold):
        quote = " ".join(gold.quote.split())
        click.echo(f"  gold[{index}]:  {gold.doc} (grade {gold.grade})")
        click.echo(f"            {quote}")
    click.echo(_HELP)


def read_key() -> str:
    """One key press; from standard input when there is no terminal to put in raw mode.

    ``click.getchar`` opens the controlling terminal when standard input is not one; without
    any (a pipe under ``setsid``, some CI runners) keys are read from standard input instead,
    one character at a time, so a scripted review still works.
    """
    try:
        return click.getchar()
    except OSError:
        return sys.stdin.read(1)


def _prompt_edit(queue: ReviewQueue, current: Judgment) -> None:
    question = click.prompt("question", default=current.query).strip()
    changes: dict[str, Any] = {}
    if question != current.query:
        changes["question"] = question
    if current.gold:
        first = current.gold[0]
        quote = click.prompt("quote of gold[0]", default=first.quote)
        if quote != first.quote:
            changes["quote"] = quote
        grade = click.prompt("grade of gold[0]", default=first.grade, type=click.IntRange(min=1))
        if grade != first.grade:
            changes["grade"] = grade
    else:
        click.echo("  (no gold quote to edit: reject the item or add evidence to the file)")
    note = click.prompt("note", default="", show_default=False).strip()
    if not changes:
        click.echo("nothing changed: not edited")
        return
    queue.edit(note=note or None, **changes)


def _prompt_type(queue: ReviewQueue) -> None:
    listing = "  ".join(f"{number}) {name}" for number, name in enumerate(QUESTION_TYPES, 1))
    click.echo(f"type: {listing}  (any other key: cancel)")
    key = read_key()
    if key.isdigit() and 1 <= int(key) <= len(QUESTION_TYPES):
        queue.mark(QUESTION_TYPES[int(key) - 1])
        click.echo(f"type set to {QUESTION_TYPES[int(key) - 1]}")
    else:
        click.echo("type unchanged")


def _reject_with_reason(queue: ReviewQueue) -> None:
    reason = click.prompt("reason", default="", show_default=False).strip()
    queue.reject(reason or None)


def run_review(judgments: list[Judgment], output: Path, *, reviewed_key: str) -> int:
    """Run the interactive review; returns the number of decisions made in this session.

    Raises:
        InputError: A journal that does not fit the judgments.
    """
    journal = ReviewJournal(journal_path(output), judgments_fingerprint(judgments), reviewed_key)
    logged = journal.load()
    try:
        queue = ReviewQueue(judgments, reviewed_key=reviewed_key, decisions=logged)
    except EvalSetError as error:
        raise InputError(f"{journal.path}: {error}") from None
    total = queue.progress().total
    if total == 0:
        click.echo(f"nothing to review: every item has meta.{reviewed_key} = true")
        return 0
    if journal.torn_line is not None:
        click.echo(f"note: ignored an incomplete last line ({journal.path}:{journal.torn_line})")
    if logged:
        click.echo(f"resuming: {queue.progress()} decided ({journal.path})")
    else:
        click.echo(f"reviewing {total} unreviewed item(s); decisions are saved to {journal.path}")
    made, interrupted = _ask_until_stopped(queue, journal, total)
    _write_result(queue, output)
    if interrupted:
        raise click.exceptions.Exit(130)
    return made


def _ask_until_stopped(queue: ReviewQueue, journal: ReviewJournal, total: int) -> tuple[int, bool]:
    """Read keys until the reviewer stops, journaling each decision as it is made.

    Returns:
        The decisions made, and whether Ctrl-C stopped the review.
    """
    made = 0
    actions: dict[str, Callable[[], None]] = {
        "a": queue.accept,
        "r": queue.reject,
        "R": lambda: _reject_with_reason(queue),
        "s": queue.skip,
        "u": lambda: click.echo(f"undid {queue.undo().action}"),
        "t": lambda: _prompt_type(queue),
    }
    while True:
        current = queue.current
        if current is None:
            click.echo(
                f"all {total} decided: press u to undo the last decision, any other key to finish"
            )
        else:
            _show(current, f"{queue.progress().done + 1}/{total}")
        try:
            key = read_key()
        except (EOFError, KeyboardInterrupt) as stop:
            return made, isinstance(stop, KeyboardInterrupt)
        if key in {"", "q", "Q"} or (current is None and key != "u"):
            return made, False
        before = len(queue.decisions)
        if not _apply_key(queue, key, current, actions):
            return made, False
        for decision in queue.decisions[before:]:
            journal.append(decision)
            made += 1


def _apply_key(
    queue: ReviewQueue,
    key: str,
    current: Judgment | None,
    actions: dict[str, Callable[[], None]],
) -> bool:
    """Do what ``key`` asks; ``False`` when a prompt was cut short (the review stops there)."""
    if key == "?":
        click.echo(_HELP)
        return True
    try:
        if key == "e" and current is not None:
            _prompt_edit(queue, current)
        elif key in actions:
            actions[key]()
        else:
            click.echo(f"unknown key {key!r}; press ? for help")
    except EvalSetError as error:
        click.echo(f"error: {error}")
    except (click.Abort, EOFError, KeyboardInterrupt):
        click.echo("")  # a prompt was cut short: nothing was decided, stop here
        return False
    return True


def _write_result(queue: ReviewQueue, output: Path) -> None:
    """Write the reviewed judgments (undecided items stay, unreviewed) and say what was done."""
    text = judgments_text(queue.result())
    with output_set([output]) as outputs:
        outputs.write_text(output, text)
    counts = queue.counts()
    summary = ", ".join(f"{counts[k]} {k}" for k in ("accept", "edit", "reject", "skip"))
    click.echo(f"{queue.progress()} decided ({summary}); wrote {output}")
    if not queue.finished:
        click.echo("run the same command again to resume")
