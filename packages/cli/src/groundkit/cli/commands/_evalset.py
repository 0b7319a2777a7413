"""`grk evalset assess|filter|classify|generate`: check and improve an eval set.

Exit codes: 0 done, 1 a caution with ``--strict`` or a model endpoint failure, 2 bad input (one
line naming the file, line or id).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from rich.console import Console

from groundkit.cli._errors import InputError, StageFailedError
from groundkit.cli._lazy import lazy
from groundkit.cli._option_groups import option_group
from groundkit.cli._outputs import force_option, guard, output_set
from groundkit.cli._types import FiniteFloatRange
from groundkit.cli.console._report import ProgressDisplay, make_console
from groundkit.cli.run._describe import describe_option

if TYPE_CHECKING:
    from groundkit.cli._checked import load_checked_report
    from groundkit.cli.evalset._render import (
        render_distribution,
        render_filter_result,
        render_quality,
    )
    from groundkit.cli.judges._http import ChatClient, client_from_options
    from groundkit.evalset import (
        Classifier,
        FilterChain,
        assess,
        default_filters,
        draft_questions,
        split_passages,
    )
    from groundkit.evalset.filters import FilterResult, type_distribution
    from groundkit.judgments import Corpus, Judgment, load_judgments, resolve_judgments
    from groundkit.judgments.gold import judgments_text
else:  # imported when the command runs, not for --help
    load_checked_report = lazy("groundkit.cli._checked", "load_checked_report")
    render_distribution = lazy("groundkit.cli.evalset._render", "render_distribution")
    render_filter_result = lazy("groundkit.cli.evalset._render", "render_filter_result")
    render_quality = lazy("groundkit.cli.evalset._render", "render_quality")
    ChatClient = lazy("groundkit.cli.judges._http", "ChatClient")
    client_from_options = lazy("groundkit.cli.judges._http", "client_from_options")
    Classifier = lazy("groundkit.evalset", "Classifier")
    FilterChain = lazy("groundkit.evalset", "FilterChain")
    assess = lazy("groundkit.evalset", "assess")
    default_filters = lazy("groundkit.evalset", "default_filters")
    draft_questions = lazy("groundkit.evalset", "draft_questions")
    split_passages = lazy("groundkit.evalset", "split_passages")
    FilterResult = lazy("groundkit.evalset.filters", "FilterResult")
    type_distribution = lazy("groundkit.evalset.filters", "type_distribution")
    Corpus = lazy("groundkit.judgments", "Corpus")
    Judgment = lazy("groundkit.judgments", "Judgment")
    load_judgments = lazy("groundkit.judgments", "load_judgments")
    resolve_judgments = lazy("groundkit.judgments", "resolve_judgments")
    judgments_text = lazy("groundkit.judgments.gold", "judgments_text")

__all__ = [
    "assess_command",
    "classify_command",
    "filter_command",
    "generate_command",
]

_PATH = click.Path(path_type=Path)
_ASKING = "asking the model"


def _console() -> Console:
    return make_console()


@dataclass(frozen=True)
class ModelOptions:
    """``--model``, ``--base-url``, ``--api-key-env``, ``--timeout``: an optional chat model."""

    model: str | None
    base_url: str | None
    api_key_env: str | None
    timeout: float

    def client(self) -> ChatClient | None:
        """The chat client of the options (``None`` without a model)."""
        return client_from_options(
            self.model, self.base_url, self.api_key_env, timeout=self.timeout
        )


_model_options = option_group(
    "chat",
    ModelOptions,
    click.option("--model", help="Model name at an OpenAI-compatible chat endpoint."),
    click.option(
        "--base-url",
        help="Endpoint root, e.g. http://127.0.0.1:8080/v1 (POST {base-url}/chat/completions).",
    ),
    click.option(
        "--api-key-env",
        metavar="VAR",
        help="Environment variable holding the API key (sent as a Bearer token).",
    ),
    click.option(
        "--timeout",
        type=FiniteFloatRange(min=0, min_open=True),
        default=120.0,
        show_default=True,
        help="Seconds to wait for each model reply.",
    ),
)


def _read_scores(path: Path) -> dict[str, Any]:
    """A JSON object of query id to a score (or a list of scores, one per system)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(f"{path}: scores file not found") from None
    except (OSError, UnicodeDecodeError) as error:
        raise InputError(f"{path}: cannot read scores: {error}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise InputError(f"{path}:{error.lineno}: not JSON: {error.msg}") from None
    if not isinstance(data, dict):
        raise InputError(
            f"{path}: scores must be a JSON object of query id to a score in [0, 1] "
            "(or to a list of scores, one per system)"
        )
    for query_id, value in data.items():
        if isinstance(value, list):
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise InputError(f"{path}: {query_id}: score must be a number, got {value!r}")
    return data


def _resolution(judgments: list[Judgment], corpus_path: Path | None, source: Path) -> Any:
    if corpus_path is None:
        return None
    return resolve_judgments(judgments, Corpus.load(corpus_path), source=source)


def _write_filtered(
    result: FilterResult, out: Path, rejected: Path | None, judgments: list[Judgment]
) -> None:
    """The kept items and the rejections, written as one set."""
    kept = judgments_text(judgments)
    with output_set([out, rejected]) as outputs:
        outputs.write_text(out, kept)
        if rejected is not None:
            lines = [rejection.model_dump_json() + "\n" for rejection in result.rejected]
            outputs.write_text(rejected, "".join(lines))


@click.command("assess", short_help="How small a difference the set detects; cautions.")
@describe_option("judgments")
@click.argument("judgments", type=_PATH)
@click.option("--corpus", type=_PATH, help="Corpus folder or .jsonl: check that gold resolves.")
@click.option(
    "--report",
    type=_PATH,
    help="Report of `grk eval run`: observed paired floors and questions every stage scores "
    "the same.",
)
@click.option(
    "--scores",
    type=_PATH,
    help="JSON object: query id to a baseline score in [0, 1], or to one score per system.",
)
@click.option("--metric", help="Report metric to use (default: its first headline metric).")
@click.option("--reviewed-key", default="reviewed", show_default=True, help="meta key of reviews.")
@click.option("--strict", is_flag=True, help="Exit with code 1 when there is any CAUTION.")
@_model_options
def assess_command(
    judgments: Path,
    corpus: Path | None,
    report: Path | None,
    scores: Path | None,
    metric: str | None,
    reviewed_key: str,
    strict: bool,
    chat: ModelOptions,
) -> None:
    """Say how large a difference JUDGMENTS can detect and what in it may mislead.

    The detection floor is the classic unpaired size calculation; the paired floors beside it
    show how pairing changes it. A gap below the floor cannot be claimed from this set; a gap
    above it still needs `grk eval compare` to be called real. With --model/--base-url, every
    question with a reference answer is also put to the model closed-book.
    """
    items = load_judgments(judgments)
    client = chat.client()
    quality = assess(
        items,
        corpus=None if corpus is None else Corpus.load(corpus),
        baseline_scores=None if scores is None else _read_scores(scores),
        reviewed_key=reviewed_key,
        report=None if report is None else load_checked_report(report),
        metric=metric,
        answerer=client,
    )
    render_quality(_console(), quality)
    if strict and any(note.level == _caution_level() for note in quality.notes):
        raise StageFailedError("the eval set has cautions (see above) and --strict is set")


@click.command("filter", short_help="Drop items that would mislead, with reasons.")
@describe_option("judgments")
@click.argument("judgments", type=_PATH)
@click.option("--out", "-o", type=_PATH, required=True, help="Where to write the kept items.")
@click.option("--corpus", type=_PATH, help="Corpus: enables the unresolved-evidence filter.")
@click.option("--scores", type=_PATH, help="Baseline scores (JSON): enables non-discriminating.")
@click.option("--rejected", type=_PATH, help="Also write the rejections here (JSON Lines).")
@_model_options
@force_option
def filter_command(
    judgments: Path,
    out: Path,
    corpus: Path | None,
    scores: Path | None,
    rejected: Path | None,
    chat: ModelOptions,
    force: bool,
) -> None:
    """Drop the items of JUDGMENTS that would mislead, and say why for each.

    Filters, cheapest first: too-short, dangling-reference, unresolved-evidence (needs
    --corpus), near-duplicate, non-discriminating (needs --scores), general-knowledge (needs
    --model and --base-url). A filter without its input keeps everything and says so. The kept
    items are written to --out with the set version bumped.
    """
    guard(
        [("--out", out, "judgments file"), ("--rejected", rejected, "rejections file")],
        [("JUDGMENTS", judgments), ("--corpus", corpus), ("--scores", scores)],
        force=force,
    )
    items = load_judgments(judgments)
    client = chat.client()
    chain = FilterChain(
        default_filters(
            baseline_scores=None if scores is None else _read_scores(scores),
            answerer=client,
            resolved=_resolution(items, corpus, judgments),
        )
    )
    result = chain.run(items)
    _write_filtered(result, out, rejected, result.as_judgments())
    console = _console()
    render_filter_result(console, result)
    console.print(f"wrote {result.kept_count} item(s) to {out}")


@click.command("classify", short_help="Label question types.")
@describe_option("judgments")
@click.argument("judgments", type=_PATH)
@click.option("--out", "-o", type=_PATH, help="Write the labelled items here (else only show).")
@click.option("--overwrite", is_flag=True, help="Replace types a person set too.")
@_model_options
@force_option
def classify_command(
    judgments: Path,
    out: Path | None,
    overwrite: bool,
    chat: ModelOptions,
    force: bool,
) -> None:
    """Label the question type of every item of JUDGMENTS.

    Without a model a regex heuristic decides (summarisation, comparative, tabular, numeric,
    multi-hop, else factoid); a model's reply is used only when it names one of those types.
    Types a person set are kept unless --overwrite.
    """
    guard([("--out", out, "judgments file")], [("JUDGMENTS", judgments)], force=force)
    items = load_judgments(judgments)
    client = chat.client()
    classifier = Classifier(client, overwrite=overwrite)
    labelled = classifier.classify(items)
    console = _console()
    render_distribution(console, type_distribution(labelled))
    if client is not None:
        console.print(
            f"model replies used: {classifier.model_replies}; "
            f"refused (heuristic decided): {classifier.model_fallbacks}"
        )
    if out is not None:
        text = judgments_text(labelled)
        with output_set([out]) as outputs:
            outputs.write_text(out, text)
        console.print(f"wrote {len(labelled)} item(s) to {out}")


@dataclass(frozen=True)
class ChatEndpoint:
    """``--model``, ``--base-url``, ``--api-key-env`` of `grk evalset generate` (required)."""

    model: str
    base_url: str
    api_key_env: str | None


@dataclass(frozen=True)
class DraftShape:
    """``--per-doc`` and ``--passage-chars``: how many drafts per document, from how much text."""

    per_doc: int
    passage_chars: int


@contextmanager
def _progress(total: int) -> Iterator[Callable[[], None]]:
    """A progress bar of the drafts on standard error when it is a terminal."""
    with ProgressDisplay() as display:
        done = 0
        display(_ASKING, done, total)

        def advance() -> None:
            nonlocal done
            done += 1
            display(_ASKING, done, total)

        yield advance


@click.command("generate", short_help="Draft questions from a corpus with a chat model.")
@click.option("--corpus", type=_PATH, required=True, help="Corpus folder or .jsonl.")
@option_group(
    "endpoint",
    ChatEndpoint,
    click.option("--model", required=True, help="Model name at the chat endpoint."),
    click.option(
        "--base-url",
        required=True,
        help="Endpoint root, e.g. http://127.0.0.1:8080/v1 (POST {base-url}/chat/completions).",
    ),
    click.option("--api-key-env", metavar="VAR", help="Environment variable holding the API key."),
)
@option_group(
    "drafting",
    DraftShape,
    click.option(
        "--per-doc",
        type=click.IntRange(min=1),
        default=3,
        show_default=True,
        help="Questions (passages) per document.",
    ),
    click.option(
        "--passage-chars",
        type=click.IntRange(min=200),
        default=2000,
        show_default=True,
        help="Longest passage shown to the model.",
    ),
)
@click.option(
    "--out",
    "-o",
    type=_PATH,
    default=Path("drafts.jsonl"),
    show_default=True,
    help="Where to write the drafts that pass the filters.",
)
@click.option("--rejected", type=_PATH, help="Also write the filter rejections (JSON Lines).")
@click.option(
    "--no-closed-book",
    is_flag=True,
    help="Do not ask the model the drafted questions closed-book (general-knowledge).",
)
@click.option(
    "--timeout",
    type=FiniteFloatRange(min=0, min_open=True),
    default=120.0,
    show_default=True,
    help="Seconds to wait for each model reply.",
)
@force_option
def generate_command(
    corpus: Path,
    endpoint: ChatEndpoint,
    drafting: DraftShape,
    out: Path,
    rejected: Path | None,
    no_closed_book: bool,
    timeout: float,
    force: bool,
) -> None:
    """Draft questions from corpus passages with an OpenAI-compatible chat model.

    Each draft carries a quote that must be verbatim in its document (drafts whose quote is not
    found are dropped and counted), is marked unreviewed, and goes through the filters; the
    same model answers each draft closed-book for the general-knowledge filter unless
    --no-closed-book. Review the result with `grk evalset review`.
    """
    guard(
        [("--out", out, "judgments file"), ("--rejected", rejected, "rejections file")],
        [("--corpus", corpus)],
        force=force,
    )
    documents = Corpus.load(corpus)
    client = client_from_options(
        endpoint.model, endpoint.base_url, endpoint.api_key_env, timeout=timeout, required=True
    )
    assert client is not None  # required=True raises instead
    per_doc, passage_chars = drafting.per_doc, drafting.passage_chars
    total = sum(min(per_doc, len(split_passages(documents[d], passage_chars))) for d in documents)
    with _progress(total) as advance:

        def ask(prompt: str) -> str:
            reply = client(prompt)
            advance()
            return reply

        drafts = draft_questions(
            documents,
            ask,
            per_doc=per_doc,
            passage_chars=passage_chars,
            meta={"generator": endpoint.model},
        )
    resolved = resolve_judgments(drafts.judgments, documents)
    chain = FilterChain(
        default_filters(answerer=None if no_closed_book else client, resolved=resolved)
    )
    result = chain.run(drafts.judgments)
    _write_filtered(result, out, rejected, result.as_judgments())
    console = _console()
    console.print(drafts.summary())
    for dropped in drafts.dropped[:10]:
        console.print(f"  dropped {dropped.doc} passage {dropped.passage}: {dropped.detail}")
    if len(drafts.dropped) > 10:
        console.print(f"  ... and {len(drafts.dropped) - 10} more")
    render_filter_result(console, result)
    console.print(f"wrote {result.kept_count} unreviewed draft(s) to {out}")


def _caution_level() -> str:
    """The note level of a caution (a value: imported when a command runs)."""
    from groundkit.evalset import CAUTION

    return CAUTION
