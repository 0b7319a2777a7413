"""The options every judging command shares (click only: a command's --help loads nothing else)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from groundkit.cli._types import FiniteFloatRange

__all__ = ["judge_options"]


def judge_options(function: Callable[..., Any]) -> Callable[..., Any]:
    """The options every judging command shares: the judge, its endpoint, repeats, cache."""
    options = [
        click.option(
            "--judge",
            "judge_spec",
            required=True,
            help="http (with --model/--base-url), recorded:FILE, or python:MODULE:FUNCTION "
            "or python:FILE.py:FUNCTION (a function of the current folder).",
        ),
        click.option("--model", default=None, help="Model name (--judge http)."),
        click.option(
            "--base-url", default=None, help="OpenAI-compatible endpoint root (--judge http)."
        ),
        click.option("--api-key-env", default=None, help="Environment variable holding the key."),
        click.option(
            "--timeout",
            default=60.0,
            show_default=True,
            type=FiniteFloatRange(min=0.001),
            help="Seconds per call: from connecting to the reply's last byte (http), or for "
            "the function to return (python:).",
        ),
        click.option(
            "--judge-deadline",
            default=None,
            type=FiniteFloatRange(min=0, min_open=True),
            metavar="SECONDS",
            help="Seconds for all the calls of the run (--judge http); later calls fail "
            "at once [default: no limit].",
        ),
        click.option(
            "--retries",
            default=2,
            show_default=True,
            type=click.IntRange(min=0),
            help="Retries after a timeout, a transport fault or HTTP 429/5xx.",
        ),
        click.option(
            "--repeats",
            default=3,
            show_default=True,
            type=click.IntRange(min=1),
            help="Calls per hit; the majority decides.",
        ),
        click.option(
            "--concurrency",
            default=4,
            show_default=True,
            type=click.IntRange(min=1),
            help="Calls in flight at once.",
        ),
        click.option(
            "--min-success",
            default=None,
            type=FiniteFloatRange(min=0.0, max=1.0),
            metavar="SHARE",
            help="Share of the judged hits the judge must decide (a majority grade), else exit "
            "1 naming the commonest failure and writing nothing [default: at least one].",
        ),
    ]
    for option in reversed(options):
        function = option(function)
    return function
