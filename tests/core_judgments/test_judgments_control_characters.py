"""The control-character rule of ids and file names, against unicodedata for every code point."""

from __future__ import annotations

import sys
import unicodedata

from groundkit.judgments.files._control import has_control_character


def test_the_rule_is_category_cc_and_the_two_separators_for_every_code_point() -> None:
    expected = [
        chr(code)
        for code in range(sys.maxunicode + 1)
        if unicodedata.category(chr(code)) == "Cc" or chr(code) in "\u2028\u2029"
    ]
    found = [chr(code) for code in range(sys.maxunicode + 1) if has_control_character(chr(code))]
    assert found == expected
    assert has_control_character("policies/\x00leave.md")
    assert has_control_character("a\u2028b")
    assert not has_control_character("policies/leave.md")
    assert not has_control_character("")
