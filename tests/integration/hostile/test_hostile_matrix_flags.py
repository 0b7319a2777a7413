"""Every number option of every command, given values no number option may accept.

The matrix is read from the CLI itself (each command's options whose type is a number), so a
new option joins the suite without being listed: for each, ``nan``, infinities, a value too
large for a float, words and an empty string must be refused in one line naming the option,
exit 2, before anything is read or written.
"""

from __future__ import annotations

from collections.abc import Iterator

import click
import pytest
from tests.integration.hostile.conftest import Tally, check_case

from groundkit.cli import cli

VALUES = ("nan", "inf", "-inf", "1e400", "abc", "", "0x10", "1,5")
"""Values no number option accepts (``1,5``: a decimal comma)."""


def _commands() -> Iterator[tuple[list[str], click.Command]]:
    context = click.Context(cli)

    def walk(group: click.Group, path: list[str]) -> Iterator[tuple[list[str], click.Command]]:
        for name in group.list_commands(context):
            command = group.get_command(context, name)
            if isinstance(command, click.Group):
                yield from walk(command, [*path, name])
            elif command is not None:
                yield [*path, name], command

    yield from walk(cli, [])


def _number_options() -> list[tuple[str, str]]:
    """(command path, option) for every option whose value is a number."""
    found = []
    for path, command in _commands():
        for param in command.params:
            number = isinstance(param.type, click.types.IntParamType | click.types.FloatParamType)
            if isinstance(param, click.Option) and number and not param.is_flag:
                found.append((" ".join(path), param.opts[0]))
    return sorted(found)


NUMBER_OPTIONS = _number_options()


def test_the_matrix_finds_the_number_options() -> None:
    # A guard on the finder itself: these options exist and are numbers.
    for expected in [("eval run", "--k"), ("eval compare", "--fail-under"), ("eval trec", "-M")]:
        assert expected in NUMBER_OPTIONS
    assert len(NUMBER_OPTIONS) >= 40


@pytest.mark.parametrize("value", VALUES)
@pytest.mark.parametrize(("command", "option"), NUMBER_OPTIONS)
def test_a_number_option_refuses_what_is_not_a_number(
    command: str, option: str, value: str, tally: Tally
) -> None:
    check_case(tally, "flags: numbers", [*command.split(), option, value], place=option)
