"""A small SVG drawing kit for the report page's plots: axes, ticks, lines, bands, markers, legend.

The report's plots are simple (intervals on a shared axis, curves on a log axis) and drawing
them here costs milliseconds, where matplotlib cost about half a second of ``grk eval
report`` (its import and its renderer). The look follows the page's former matplotlib style:
11-pixel text, left and bottom spines only, light grid, ticks outward, tick positions chosen
as matplotlib's ``MaxNLocator`` chooses them, marker shapes with matplotlib's geometry, dash
patterns scaled by the line width. Coordinates are in points (72 a inch) as in a matplotlib
SVG, so a plot keeps its size on the page.

Output is deterministic (numbers rounded to two decimals), text stays ``<text>`` (selectable,
the page's font), and every element id carries the plot's prefix, so several inline plots
never share one.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = [
    "FONT_SIZE",
    "Canvas",
    "Frame",
    "LegendEntry",
    "legend_columns",
    "legend_height",
    "nice_ticks",
    "text_width",
    "tick_bins",
]

FONT_SIZE = 11.0
"""Text size of every label, in points (the figure's 11 pt at 72 dpi)."""

_TEXT = "#1a1a1a"
_AXIS = "#4d4d4d"
_GRID = "#d9d9d9"
_TICK_LENGTH = 3.5
_TICK_PAD = 3.5
_HANDLE_PAD = 0.8 * FONT_SIZE  # legend: between a sample and its label
_COLUMN_SPACING = 1.6 * FONT_SIZE  # legend: between columns

# Advance widths (in ems) of DejaVu Sans, grouped; enough to lay labels out without a font.
_WIDTHS: dict[str, float] = {
    **dict.fromkeys("il.,:;'|!ijI", 0.28),
    **dict.fromkeys(" ", 0.32),
    **dict.fromkeys("frt()[]-", 0.38),
    **dict.fromkeys("0123456789acesvxyzkJ_", 0.6),
    **dict.fromkeys("bdghnopqu#$", 0.635),
    **dict.fromkeys("+=<>−~", 0.84),
    **dict.fromkeys("mwMW%@", 0.95),
}
_UPPER_WIDTH = 0.7
_DEFAULT_WIDTH = 0.62


def text_width(text: str, size: float = FONT_SIZE, *, bold: bool = False) -> float:
    """Estimated width of ``text`` in points (DejaVu Sans metrics, bold about 10% wider)."""
    ems = sum(_WIDTHS.get(c, _UPPER_WIDTH if c.isupper() else _DEFAULT_WIDTH) for c in text)
    return ems * size * (1.1 if bold else 1.0)


def _n(value: float) -> str:
    """A coordinate with at most two decimals, no trailing zeros (deterministic output)."""
    text = f"{value:.2f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def nice_ticks(low: float, high: float, bins: int) -> list[float]:
    """Tick values inside [low, high] as matplotlib's default locator picks them.

    The smallest step of 1, 2, 2.5, 5 or 10 times a power of ten that splits the range into
    at most ``bins`` intervals, ticks at its multiples (``MaxNLocator`` with its default steps).
    """
    if not high > low:
        return [low]
    raw = (high - low) / max(1, bins)
    scale = 10.0 ** math.floor(math.log10(raw))
    step = next(s * scale for s in (1.0, 2.0, 2.5, 5.0, 10.0) if s * scale >= raw * (1 - 1e-9))
    first = math.ceil(low / step - 1e-9)
    last = math.floor(high / step + 1e-9)
    return [0.0 if i == 0 else i * step for i in range(first, last + 1)]


def tick_bins(length: float, *, vertical: bool) -> int:
    """How many tick intervals fit an axis of ``length`` points (matplotlib's estimate)."""
    per_tick = FONT_SIZE * (2.0 if vertical else 3.0)
    return max(1, min(9, math.floor(length / per_tick)))


@dataclass(frozen=True)
class Frame:
    """The plotting area of one panel and its data limits.

    Attributes:
        left: Left edge, in points from the figure's left.
        top: Top edge, in points from the figure's top.
        width: Width in points.
        height: Height in points.
        x_limits: Data range along x (left to right).
        y_limits: Data range along y (bottom to top).
        log_x: Whether x is on a log scale.
    """

    left: float
    top: float
    width: float
    height: float
    x_limits: tuple[float, float]
    y_limits: tuple[float, float]
    log_x: bool = False

    @property
    def bottom(self) -> float:
        """Bottom edge, in points from the figure's top."""
        return self.top + self.height

    @property
    def right(self) -> float:
        """Right edge, in points from the figure's left."""
        return self.left + self.width

    def x(self, value: float) -> float:
        """The horizontal position of a data value."""
        low, high = self.x_limits
        if self.log_x:
            value, low, high = math.log(value), math.log(low), math.log(high)
        return self.left + (value - low) / (high - low) * self.width

    def y(self, value: float) -> float:
        """The vertical position of a data value (SVG's y grows downwards)."""
        low, high = self.y_limits
        return self.bottom - (value - low) / (high - low) * self.height


@dataclass(frozen=True)
class LegendEntry:
    """One legend row: a sample of the line and/or marker, and its label.

    Attributes:
        label: The text.
        colour: Colour of line and marker.
        marker: Marker code (as matplotlib's: o s ^ v D P X *).
        marker_size: Marker size in points.
        filled: Whether the marker is filled with ``colour`` (else white).
        marker_edge: Edge colour of the marker.
        marker_edge_width: Edge width of the marker.
        line_width: Width of the line sample (0: marker only).
        dashes: Dash pattern of the line sample, unscaled (empty: solid).
    """

    label: str
    colour: str
    marker: str
    marker_size: float
    filled: bool = True
    marker_edge: str | None = None
    marker_edge_width: float = 1.0
    line_width: float = 0.0
    dashes: tuple[float, ...] = ()


def _marker_points(kind: str, size: float) -> list[tuple[float, float]] | None:
    """A polygon marker's vertices around (0, 0), y up, as matplotlib draws it."""
    half = size / 2.0
    if kind == "s":
        return [(-half, -half), (half, -half), (half, half), (-half, half)]
    if kind == "^":
        return [(0.0, half), (-half, -half), (half, -half)]
    if kind == "v":
        return [(0.0, -half), (half, half), (-half, half)]
    if kind == "D":
        reach = half * math.sqrt(2.0)
        return [(0.0, reach), (-reach, 0.0), (0.0, -reach), (reach, 0.0)]
    if kind == "P":
        unit = [(-1, -3), (1, -3), (1, -1), (3, -1), (3, 1), (1, 1), (1, 3), (-1, 3), (-1, 1)]
        unit += [(-3, 1), (-3, -1), (-1, -1)]
        return [(x * size / 6.0, y * size / 6.0) for x, y in unit]
    if kind == "X":
        unit = [(-1, -2), (0, -1), (1, -2), (2, -1), (1, 0), (2, 1), (1, 2), (0, 1), (-1, 2)]
        unit += [(-2, 1), (-1, 0), (-2, -1)]
        return [(x * size / 4.0, y * size / 4.0) for x, y in unit]
    if kind == "*":
        points = []
        for i in range(10):
            radius = half if i % 2 == 0 else half * 0.381966
            angle = math.pi / 2.0 + i * math.pi / 5.0
            points.append((radius * math.cos(angle), radius * math.sin(angle)))
        return points
    return None  # a circle


class Canvas:
    """SVG elements of one figure, in drawing order, and the figure's size.

    Args:
        width: Figure width in points.
        height: Figure height in points.
        prefix: Prefix of every element id (unique per figure on a page).
    """

    def __init__(self, width: float, height: float, *, prefix: str) -> None:
        self.width = width
        self.height = height
        self.prefix = prefix
        self._parts: list[str] = []
        self._clips = 0

    def clip(self, frame: Frame) -> str:
        """A clip path of the frame's area; returns its id."""
        self._clips += 1
        name = f"{self.prefix}-clip{self._clips}"
        self._parts.append(
            f'<clipPath id="{name}"><rect x="{_n(frame.left)}" y="{_n(frame.top)}" '
            f'width="{_n(frame.width)}" height="{_n(frame.height)}"/></clipPath>'
        )
        return name

    def rect(self, frame: Frame, *, fill: str) -> None:
        """The frame's background."""
        self._parts.append(
            f'<rect x="{_n(frame.left)}" y="{_n(frame.top)}" width="{_n(frame.width)}" '
            f'height="{_n(frame.height)}" fill="{fill}"/>'
        )

    def line(
        self,
        points: Sequence[tuple[float, float]],
        *,
        colour: str,
        width: float,
        dashes: Sequence[float] = (),
        clip: str | None = None,
    ) -> None:
        """A polyline through figure coordinates; ``dashes`` are scaled by the line width."""
        if len(points) < 2:
            return
        path = "M" + " L".join(f"{_n(x)} {_n(y)}" for x, y in points)
        dash = f' stroke-dasharray="{" ".join(_n(d * width) for d in dashes)}"' if dashes else ""
        clipped = f' clip-path="url(#{clip})"' if clip else ""
        self._parts.append(
            f'<path d="{path}" fill="none" stroke="{colour}" stroke-width="{_n(width)}"'
            f"{dash}{clipped}/>"
        )

    def band(
        self,
        upper: Sequence[tuple[float, float]],
        lower: Sequence[tuple[float, float]],
        *,
        colour: str,
        opacity: float,
        clip: str | None = None,
    ) -> None:
        """The area between two polylines of the same x positions."""
        outline = [*upper, *reversed(lower)]
        if len(outline) < 3:
            return
        path = "M" + " L".join(f"{_n(x)} {_n(y)}" for x, y in outline) + " Z"
        clipped = f' clip-path="url(#{clip})"' if clip else ""
        self._parts.append(
            f'<path d="{path}" fill="{colour}" fill-opacity="{_n(opacity)}" stroke="none"'
            f"{clipped}/>"
        )

    def marker(
        self,
        x: float,
        y: float,
        kind: str,
        *,
        size: float,
        face: str,
        edge: str,
        edge_width: float,
    ) -> None:
        """A marker centred on (x, y) with matplotlib's shape for ``kind``."""
        paint = f'fill="{face}" stroke="{edge}" stroke-width="{_n(edge_width)}"'
        points = _marker_points(kind, size)
        if points is None:
            self._parts.append(f'<circle cx="{_n(x)}" cy="{_n(y)}" r="{_n(size / 2)}" {paint}/>')
            return
        path = "M" + " L".join(f"{_n(x + dx)} {_n(y - dy)}" for dx, dy in points) + " Z"
        self._parts.append(f'<path d="{path}" {paint} stroke-linejoin="miter"/>')

    def text(
        self,
        x: float,
        y: float,
        text: str,
        *,
        anchor: str = "middle",
        bold: bool = False,
        rotate: bool = False,
        colour: str = _TEXT,
    ) -> None:
        """A label with its baseline at ``y`` (``rotate``: reading upwards, centred on x, y)."""
        weight = ' font-weight="bold"' if bold else ""
        turn = f' transform="rotate(-90 {_n(x)} {_n(y)})"' if rotate else ""
        self._parts.append(
            f'<text x="{_n(x)}" y="{_n(y)}" font-size="{_n(FONT_SIZE)}" '
            f'text-anchor="{anchor}" fill="{colour}"{weight}{turn}>{html.escape(text)}</text>'
        )

    def grid(self, frame: Frame, *, xs: Sequence[float] = (), ys: Sequence[float] = ()) -> None:
        """Light grid lines at the given data positions."""
        for value in xs:
            x = frame.x(value)
            self.line([(x, frame.top), (x, frame.bottom)], colour=_GRID, width=0.6)
        for value in ys:
            y = frame.y(value)
            self.line([(frame.left, y), (frame.right, y)], colour=_GRID, width=0.6)

    def axes(
        self,
        frame: Frame,
        *,
        x_ticks: Sequence[tuple[float, str]],
        y_ticks: Sequence[tuple[float, str]],
        y_tick_length: float = _TICK_LENGTH,
    ) -> None:
        """Left and bottom spines, outward ticks and their labels."""
        self.line(
            [(frame.left, frame.top), (frame.left, frame.bottom), (frame.right, frame.bottom)],
            colour=_AXIS,
            width=0.8,
        )
        label_y = frame.bottom + _TICK_LENGTH + _TICK_PAD + 0.76 * FONT_SIZE
        for value, label in x_ticks:
            x = frame.x(value)
            self.line(
                [(x, frame.bottom), (x, frame.bottom + _TICK_LENGTH)], colour=_AXIS, width=0.8
            )
            self.text(x, label_y, label)
        for value, label in y_ticks:
            y = frame.y(value)
            if y_tick_length > 0:
                self.line(
                    [(frame.left - y_tick_length, y), (frame.left, y)], colour=_AXIS, width=0.8
                )
            self.text(
                frame.left - y_tick_length - _TICK_PAD, y + 0.36 * FONT_SIZE, label, anchor="end"
            )

    def legend(
        self, entries: Sequence[LegendEntry], *, bottom: float, columns: int, handle: float
    ) -> None:
        """The entries in rows of ``columns`` (column by column), centred, ending at ``bottom``."""
        rows = math.ceil(len(entries) / columns)
        cells = [entries[c * rows : (c + 1) * rows] for c in range(columns)]
        widths = _column_widths([e.label for e in entries], columns)
        x = (self.width - _legend_width(widths, handle)) / 2.0
        for column, width in zip(cells, widths, strict=False):
            for row, entry in enumerate(column):
                y = bottom - legend_height(rows) + 0.4 * FONT_SIZE + (row + 0.5) * 1.5 * FONT_SIZE
                self._legend_entry(entry, x, y, handle)
                label_x = x + handle + _HANDLE_PAD
                self.text(label_x, y + 0.36 * FONT_SIZE, entry.label, anchor="start")
            x += handle + _HANDLE_PAD + width + _COLUMN_SPACING

    def _legend_entry(self, entry: LegendEntry, x: float, y: float, handle: float) -> None:
        if entry.line_width > 0:
            self.line(
                [(x, y), (x + handle, y)],
                colour=entry.colour,
                width=entry.line_width,
                dashes=entry.dashes,
            )
        self.marker(
            x + handle / 2.0,
            y,
            entry.marker,
            size=entry.marker_size,
            face=entry.colour if entry.filled else "white",
            edge=entry.marker_edge or entry.colour,
            edge_width=entry.marker_edge_width,
        )

    def svg(self, *, title: str, description: str) -> str:
        """The figure as an accessible ``<svg>`` element (titled, described, ids prefixed)."""
        label = f"{self.prefix}-title {self.prefix}-desc"
        return (
            f'<svg class="plot" role="img" aria-labelledby="{label}" '
            f'style="max-width: {self.width * 96 / 72:.0f}px" '
            f'viewBox="0 0 {_n(self.width)} {_n(self.height)}" '
            'xmlns="http://www.w3.org/2000/svg" version="1.1">'
            f'<title id="{self.prefix}-title">{html.escape(title)}</title>'
            f'<desc id="{self.prefix}-desc">{html.escape(description)}</desc>\n'
            '<g font-family="\'DejaVu Sans\', sans-serif" stroke-linecap="butt" '
            'stroke-linejoin="round">\n' + "\n".join(self._parts) + "\n</g></svg>\n"
        )


def legend_height(rows: int) -> float:
    """Height of a legend of ``rows`` rows, padding included."""
    return rows * 1.5 * FONT_SIZE + 0.8 * FONT_SIZE


def _column_widths(labels: Sequence[str], columns: int) -> list[float]:
    """The widest label of each legend column (filled column by column)."""
    rows = math.ceil(len(labels) / columns)
    chunks = [labels[c * rows : (c + 1) * rows] for c in range(columns)]
    return [max(text_width(label) for label in chunk) for chunk in chunks if chunk]


def _legend_width(widths: Sequence[float], handle: float) -> float:
    entries = sum(handle + _HANDLE_PAD + width for width in widths)
    return entries + _COLUMN_SPACING * (len(widths) - 1)


def legend_columns(labels: Sequence[str], *, most: int, handle: float, room: float) -> int:
    """The most columns (up to ``most``) whose legend fits the width ``room``."""
    for columns in range(max(1, min(most, len(labels))), 1, -1):
        if _legend_width(_column_widths(labels, columns), handle) <= room:
            return columns
    return 1
