"""The HTML pages: one self-contained file per report or sweep, no statistics of their own.

``render(report)`` returns the evaluation report's page (every number read from the report,
which the statistics engine wrote); ``render_sweep(summary)`` the sweep's page; ``write``
renders a report's page into a file atomically. Sections live in private modules here and
nowhere else in the command-line package. The sweep's page draws its scatter plot with
matplotlib, so its module is imported when ``render_sweep`` is first called: the report's
page (``grk eval report``) never loads matplotlib.
"""

from typing import TYPE_CHECKING

from groundkit.cli._lazy import lazy
from groundkit.cli.html._report import render_html_report as render
from groundkit.cli.html._report import write_html_report as write

if TYPE_CHECKING:
    from groundkit.cli.html._sweep import render_sweep_html as render_sweep
else:  # imported when a sweep's page is written, not for a report's page
    render_sweep = lazy("groundkit.cli.html._sweep", "render_sweep_html")

__all__ = ["render", "render_sweep", "write"]
