"""option_group: options added as the decorators would, values passed as one frozen object."""

from __future__ import annotations

from dataclasses import FrozenInstanceError, dataclass

import click
import pytest
from click.testing import CliRunner

from groundkit.cli._option_groups import option_group


@dataclass(frozen=True)
class _Pair:
    first: int
    second: tuple[str, ...]


_pair = option_group(
    "pair",
    _Pair,
    click.option("--first", type=int, default=3, show_default=True, help="The first."),
    click.option("--second", multiple=True, help="The second (repeat)."),
)


def _grouped() -> click.Command:
    @click.command("grouped")
    @click.option("--before", default="b")
    @_pair
    @click.option("--after", is_flag=True)
    @click.pass_context
    def grouped(ctx: click.Context, before: str, pair: _Pair, after: bool) -> None:
        """Say what arrived."""
        assert isinstance(ctx, click.Context)
        click.echo(f"{before} {pair!r} {after}")
        with pytest.raises(FrozenInstanceError):
            pair.first = 0  # type: ignore[misc]

    return grouped


def _inline() -> click.Command:
    @click.command("grouped")
    @click.option("--before", default="b")
    @click.option("--first", type=int, default=3, show_default=True, help="The first.")
    @click.option("--second", multiple=True, help="The second (repeat).")
    @click.option("--after", is_flag=True)
    def inline(**_: object) -> None:
        """Say what arrived."""

    return inline


def test_values_arrive_as_one_object() -> None:
    result = CliRunner().invoke(
        _grouped(), ["--second", "x", "--first", "7", "--second", "y", "--after"]
    )
    assert result.exit_code == 0, result.output
    assert result.output == "b _Pair(first=7, second=('x', 'y')) True\n"
    defaults = CliRunner().invoke(_grouped(), [])
    assert defaults.output == "b _Pair(first=3, second=()) False\n"


def test_help_and_parameters_match_the_inline_decorators() -> None:
    grouped, inline = _grouped(), _inline()
    assert [p.to_info_dict() for p in grouped.params] == [p.to_info_dict() for p in inline.params]
    assert grouped.get_help(click.Context(grouped)) == inline.get_help(click.Context(inline))


def test_fields_that_differ_from_the_options_are_refused() -> None:
    with pytest.raises(TypeError, match="do not match fields"):

        @option_group("pair", _Pair, click.option("--first", type=int))
        def command(pair: _Pair) -> None:
            raise AssertionError("never called")
