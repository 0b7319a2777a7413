"""Every number a command takes is finite: ``nan`` and ``inf`` are refused where they are read.

``click.FloatRange`` compares with ``<`` and ``>``, which are false for ``nan``, so a ``nan``
tolerance called every difference "the same" (``reproduce``) and a ``nan`` margin or threshold
passed unchecked. Every float option of every command uses the finite type.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

import click
import pytest
from click.testing import CliRunner

from groundkit.cli import cli
from groundkit.cli._types import FiniteFloatRange
from groundkit.harness import HarnessError
from groundkit.harness.run._reproduce import score_differences
from groundkit.judgments import EvalReport


def _commands(
    group: click.Group, ctx: click.Context, path: str
) -> Iterator[tuple[str, click.Command]]:
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        assert command is not None, name
        if isinstance(command, click.Group):
            yield from _commands(command, ctx, f"{path} {name}")
        else:
            yield f"{path} {name}", command


def _float_options() -> list[tuple[str, click.Parameter]]:
    ctx = click.Context(cli)
    found = []
    for name, command in _commands(cli, ctx, "grk"):
        for param in command.params:
            if isinstance(param.type, click.types.FloatParamType):
                found.append((f"{name} --{param.name}", param))
    return found


def test_there_are_float_options() -> None:
    names = [name for name, _ in _float_options()]
    assert "grk eval reproduce --tolerance" in names
    assert len(names) >= 5


@pytest.mark.parametrize(("name", "param"), _float_options(), ids=lambda v: str(v))
def test_every_float_option_refuses_non_finite_numbers(name: str, param: click.Parameter) -> None:
    assert isinstance(param.type, FiniteFloatRange), name
    for text in ("nan", "inf", "-inf"):
        with pytest.raises(click.BadParameter, match="not a finite number"):
            param.type.convert(text, param, None)


def test_reproduce_tolerance_nan_exits_2_before_reading_anything() -> None:
    result = CliRunner().invoke(
        cli, ["eval", "reproduce", "no-such-report.json", "--tolerance", "nan"]
    )
    assert result.exit_code == 2, result.output
    assert "not a finite number" in result.output


@pytest.mark.parametrize("tolerance", [math.nan, math.inf, -0.1])
def test_the_python_api_refuses_the_same(tolerance: float) -> None:
    empty = EvalReport.model_construct()
    with pytest.raises(HarnessError, match="tolerance must be a finite number"):
        score_differences(empty, empty, tolerance=tolerance)
