"""Tables that fit the terminal: a table too wide is folded into column groups, never cut.

Rich shrinks a table wider than the console by cutting its cells (``bm25-c…``, ``[0.747, 0.…``)
and, when that is not enough, by giving a column no width at all. Neither is acceptable for a
table whose first column says which stage a row is and whose cells are intervals. So a table
is measured first; when it is wider than the console, its columns are split into groups, as
a wide data frame is printed: each group repeats the key columns (the stage) and holds as
many of the other columns as fit, in their order. Nothing is cut, and the table printed to a
wide console (piped output) is the table as built.
"""

from __future__ import annotations

from rich.console import Console, ConsoleOptions, RenderableType
from rich.measure import Measurement
from rich.table import Column, Table
from rich.text import Text

__all__ = ["fold_table", "print_table"]

# A column that may wrap (a setup description) is given at least this many cells.
_WRAP_WIDTH = 24


def _column_width(console: Console, options: ConsoleOptions, column: Column) -> int:
    """The cells a column needs: its widest line, or a wrapping column's longest word."""
    widest, narrowest = 0, 0
    for cell in [column.header, *column.cells]:
        measured = Measurement.get(console, options, cell)
        widest = max(widest, measured.maximum)
        narrowest = max(narrowest, measured.minimum)
    if column.no_wrap:
        return widest
    return min(widest, max(narrowest, _WRAP_WIDTH))


def _table_width(widths: list[int], table: Table) -> int:
    """A table's width from its columns' widths: cells, padding and the vertical rules."""
    _, right, _, left = table.padding
    edges = 2 if table.show_edge and table.box is not None else 0
    rules = (len(widths) - 1) if table.box is not None else 0
    return sum(widths) + len(widths) * (left + right) + rules + edges


def _copy_column(column: Column) -> Column:
    return Column(
        header=column.header,
        footer=column.footer,
        header_style=column.header_style,
        footer_style=column.footer_style,
        style=column.style,
        justify=column.justify,
        vertical=column.vertical,
        overflow=column.overflow,
        width=column.width,
        min_width=column.min_width,
        max_width=column.max_width,
        ratio=column.ratio,
        no_wrap=column.no_wrap,
    )


def _groups(widths: list[int], table: Table, keep: int, room: int) -> list[list[int]]:
    """Column indexes per group: the first ``keep`` in each, then as many more as fit."""
    keys = list(range(min(keep, len(widths))))
    groups: list[list[int]] = []
    current = list(keys)
    for index in range(len(keys), len(widths)):
        trial = [*current, index]
        if len(current) > len(keys) and _table_width([widths[i] for i in trial], table) > room:
            groups.append(current)
            current = [*keys, index]
        else:
            current = trial
    groups.append(current)
    return groups


def _group_table(table: Table, indexes: list[int], part: int) -> Table:
    # A later group's title is short: it follows the first group directly.
    title = table.title if part == 0 or table.title is None else "(continued)"
    folded = Table(
        *[_copy_column(table.columns[i]) for i in indexes],
        title=title,
        caption=None,  # printed once below the groups, at the console's width
        box=table.box,
        padding=table.padding,
        show_header=table.show_header,
        show_edge=table.show_edge,
        show_lines=table.show_lines,
        title_justify=table.title_justify,
        caption_justify=table.caption_justify,
        title_style=table.title_style,
        caption_style=table.caption_style,
        header_style=table.header_style,
        border_style=table.border_style,
    )
    cells = [list(table.columns[i].cells) for i in indexes]
    for row_index, row in enumerate(table.rows):
        folded.add_row(*[column[row_index] for column in cells], style=row.style)
    return folded


def fold_table(console: Console, table: Table, *, keep: int = 1) -> list[RenderableType]:
    """``table`` as it is when it fits ``console``, else split into column groups that do.

    Args:
        console: The console it will be printed on (its width decides).
        table: The table as built.
        keep: Leading columns repeated in every group (what names a row).

    Returns:
        What to print, in order: the table itself when it fits, else its column groups and
        then its caption (at the console's width).
    """
    options = console.options
    widths = [_column_width(console, options, column) for column in table.columns]
    if _table_width(widths, table) <= console.width or len(widths) <= keep + 1:
        return [table]
    groups = _groups(widths, table, keep, console.width)
    if len(groups) == 1:
        return [table]
    parts: list[RenderableType] = [
        _group_table(table, group, part) for part, group in enumerate(groups)
    ]
    if table.caption is not None:
        caption = table.caption.copy() if isinstance(table.caption, Text) else Text(table.caption)
        caption.stylize(table.caption_style or "table.caption")
        parts.append(caption)
    return parts


def print_table(console: Console, table: Table, *, keep: int = 1) -> None:
    """Print ``table`` folded into column groups when it is wider than the console."""
    for part in fold_table(console, table, keep=keep):
        console.print(part)
