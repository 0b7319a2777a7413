"""The HTML pages: one self-contained file per report or sweep, no statistics of their own.

``render(report)`` returns the evaluation report's page (every number read from the report,
which the statistics engine wrote); ``render_sweep(summary)`` the sweep's page; ``write``
renders a report's page into a file atomically. Sections live in private modules here and
nowhere else in the command-line package.
"""

from groundkit.cli.html._report import render_html_report as render
from groundkit.cli.html._report import write_html_report as write
from groundkit.cli.html._sweep import render_sweep_html as render_sweep

__all__ = ["render", "render_sweep", "write"]
