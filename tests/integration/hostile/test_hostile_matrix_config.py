"""Hostile run configurations: TOML read by ``grk eval run --config``.

Every setting a config file holds goes through the same models as the flags, so what the flags
refuse the file refuses too, in one line naming the file and the key, before any stage runs.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.integration.hostile.conftest import Dataset, Tally, check_case

REFUSED = 2
EITHER = (0, 2)

STAGE = '[[stages]]\nname = "small"\nretriever = { kind = "bm25" }\nchunker = "chars:200:20"\n'

# name -> (settings written after corpus and judgments, acceptable exit codes, key named)
CASES: dict[str, tuple[str, int | tuple[int, ...], str]] = {
    "unknown key": ("depht = 10\n", REFUSED, "depht"),
    "depth zero": ("depth = 0\n", REFUSED, "depth"),
    "depth negative": ("depth = -5\n", REFUSED, "depth"),
    "depth huge": ("depth = 100000000\n", REFUSED, "depth"),
    "depth text": ('depth = "100"\n', REFUSED, "depth"),
    "depth float": ("depth = 10.5\n", REFUSED, "depth"),
    "depth bool": ("depth = true\n", REFUSED, "depth"),
    "depth 2**70": ("depth = 1180591620717411303424\n", REFUSED, "depth"),
    "cutoffs empty": ("cutoffs = []\n", EITHER, "cutoffs"),
    "cutoffs zero": ("cutoffs = [0]\n", REFUSED, "cutoffs"),
    "cutoffs text": ('cutoffs = ["10"]\n', REFUSED, "cutoffs"),
    "budgets negative": ("budgets = [-1]\n", REFUSED, "budgets"),
    "budgets nan": ("budgets = [nan]\n", REFUSED, "budgets"),
    "level unknown": ('level = "page"\n', REFUSED, "level"),
    "overlap above one": ("min_overlap_fraction = 1.5\n", REFUSED, "min_overlap_fraction"),
    "overlap nan": ("min_overlap_fraction = nan\n", REFUSED, "min_overlap_fraction"),
    "overlap inf": ("min_overlap_fraction = inf\n", REFUSED, "min_overlap_fraction"),
    "headline empty": ("headline_metrics = []\n", REFUSED, "headline_metrics"),
    "headline unknown": ('headline_metrics = ["accuracy"]\n', REFUSED, "headline_metrics"),
    "resamples huge": ("[bootstrap]\nresamples = 99999999999999\n", REFUSED, "resamples"),
    "resamples zero": ("[bootstrap]\nresamples = 0\n", REFUSED, "resamples"),
    "seed negative": ("[bootstrap]\nseed = -1\n", REFUSED, "seed"),
    "confidence one": ("[bootstrap]\nconfidence_level = 1.0\n", REFUSED, "confidence_level"),
    "margin five": ("[bootstrap]\nequivalence_margin = 5\n", REFUSED, "equivalence_margin"),
    "margin nan": ("[bootstrap]\nequivalence_margin = nan\n", REFUSED, "equivalence_margin"),
    "multiplicity unknown": ('[bootstrap]\nmultiplicity = "none"\n', REFUSED, "multiplicity"),
    "bootstrap not a table": ("bootstrap = 3\n", REFUSED, "bootstrap"),
    "chunker unknown": ('chunker = "pages:3"\n', REFUSED, "chunker"),
    "chunker overlap too big": ('chunker = "chars:100:100"\n', REFUSED, "chunker"),
    # A silly but valid chunker: one-character chunks hold no word; BM25 finds nothing.
    "chunker one char": ('chunker = "chars:1:0"\n', EITHER, "chunker"),
    "chunker size text": ('chunker = { kind = "chars", size = "big" }\n', REFUSED, "chunker"),
    "stage kind unknown": (
        '[[stages]]\nname = "x"\nretriever = { kind = "magic" }\n',
        REFUSED,
        "stages",
    ),
    "stage name bad": (
        '[[stages]]\nname = "a b"\nretriever = { kind = "bm25" }\n',
        REFUSED,
        "stages",
    ),
    "stage name bidi": (
        '[[stages]]\nname = "\\u202ebm"\nretriever = { kind = "bm25" }\n',
        REFUSED,
        "stages",
    ),
    "stage names repeated": (STAGE + STAGE, REFUSED, "stage names must be unique"),
    "stage k1 negative": (
        '[[stages]]\nname = "x"\nretriever = { kind = "bm25", k1 = -1 }\n',
        REFUSED,
        "k1",
    ),
    "hybrid of unknown stage": (
        '[[stages]]\nname = "h"\nretriever = { kind = "hybrid", stages = ["bm25", "nope"] }\n',
        REFUSED,
        "nope",
    ),
    "command timeout nan": (
        '[[stages]]\nname = "c"\nretriever = { kind = "command", argv = ["x"], timeout = nan }\n',
        REFUSED,
        "timeout",
    ),
    "command argv empty": (
        '[[stages]]\nname = "c"\nretriever = { kind = "command", argv = [] }\n',
        REFUSED,
        "argv",
    ),
    "stages not an array": ('stages = "bm25"\n', REFUSED, "stages"),
    "not toml": ("corpus = = 3\n", REFUSED, "run.toml"),
    "nested deep": ("x = " + "[" * 100_000 + "]" * 100_000 + "\n", REFUSED, "run.toml"),
    "nul byte": ("depth = 10\n# \x00\n", REFUSED, "run.toml"),
    "huge string": (f'notes = "{"x" * 1_000_000}"\n', REFUSED, "notes"),
    "harmless stage": (STAGE, 0, ""),
    "harmless crlf": ("depth = 20\r\n", 0, ""),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_hostile_configs(case: str, dataset: Dataset, tmp_path: Path, tally: Tally) -> None:
    settings, codes, key = CASES[case]
    config = tmp_path / "run.toml"
    head = f"corpus = {str(dataset.corpus)!r}\njudgments = {str(dataset.judgments)!r}\n"
    config.write_bytes((head + settings).encode("utf-8"))
    out = tmp_path / "out"
    out.mkdir()
    check_case(
        tally,
        "config: toml",
        # No --resamples flag: a flag would replace the file's [bootstrap] settings.
        ["eval", "run", "--config", config, "--report", out / "r.json"],
        inputs=[config, dataset.corpus, dataset.judgments],
        outputs=[out / "r.json", out / "r.items.jsonl"],
        exit_code=codes,
        place=["run.toml", key] if key else [],
    )
