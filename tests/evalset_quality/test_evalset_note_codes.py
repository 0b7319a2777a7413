"""Eval-set notes carry a typed code: a program matches the code, never the sentence."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from groundkit.evalset import CAUTION, EvalsetNoteCode, Note


def test_a_note_reads_its_code_from_the_stable_name() -> None:
    note = Note(level=CAUTION, code="small-set", message="only 12 answerable queries")
    assert note.code is EvalsetNoteCode.SMALL_SET
    assert json.loads(note.model_dump_json())["code"] == "small-set"


def test_an_unknown_code_is_refused() -> None:
    with pytest.raises(ValidationError):
        Note(level=CAUTION, code="smal-set", message="typo in the code")


def test_every_code_is_kebab_case_and_unique() -> None:
    values = [code.value for code in EvalsetNoteCode]
    assert len(values) == len(set(values))
    assert all(v == v.lower() and " " not in v and "_" not in v for v in values)
