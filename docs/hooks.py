r"""MkDocs hooks of the groundkit site (post-processing of rendered pages).

* Docstrings in the packages use Sphinx cross-reference roles (:func:`name`), which
  mkdocstrings renders literally: the role is dropped so the name shows as code.
* Click help texts mark verbatim example lines with a ``\b`` line, which mkdocs-click
  renders literally: such a paragraph becomes a code block.
* mkdocs-click prints click's "no default" sentinel (``Sentinel.UNSET`` since click 8.3) in
  the default column: it is shown as a dash.
"""

from __future__ import annotations

import re
from typing import Any

# ":func:<code>~groundkit.judgments.metrics.overlaps</code>" -> "<code>overlaps</code>"
_ROLE = re.compile(r":(?:py:)?(?:func|class|meth|data|attr|mod|exc|obj):<code>(~?)([^<]*)</code>")
_VERBATIM = re.compile(r"<p>\\b\n(.*?)</p>", re.DOTALL)
_UNSET = re.compile(r"<code>Sentinel\.UNSET</code>")


def _role(match: re.Match[str]) -> str:
    short, target = match.group(1), match.group(2)
    name = target.rsplit(".", 1)[-1] if short else target
    return f"<code>{name}</code>"


def on_page_content(html: str, **_: Any) -> str:
    """Clean up rendered API docstrings and CLI help texts."""
    html = _ROLE.sub(_role, html)
    html = _VERBATIM.sub(lambda m: f"<pre><code>{m.group(1)}</code></pre>", html)
    return _UNSET.sub("—", html)
