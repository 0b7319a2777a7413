"""The control characters refused in ids and file names, found in one regular-expression scan."""

from __future__ import annotations

import re

__all__ = ["has_control_character"]

# Unicode's Cc category (U+0000-U+001F, U+007F-U+009F; fixed by the standard) and the line and
# paragraph separators, which end a line in str.splitlines() too. A test checks the class
# against unicodedata for every code point.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def has_control_character(text: str) -> bool:
    """Whether ``text`` holds a control character (category Cc) or U+2028/U+2029."""
    return _CONTROL.search(text) is not None
