"""The harness builds its reports through validation, so the writer need not read them back.

Also: shingling in small batches gives the duplicate finder exactly the cache one large batch
gave (the order key table is counted over the same first spans).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from pydantic import ValidationError
from tests.cli.test_harness_duplicates import _near_copies
from tests.cli.test_harness_pipeline import DOCS, JUDGMENTS, _settings, _write_inputs

from groundkit.harness import EvalSettings, RunConfig, evaluate
from groundkit.harness.analysis._duplicates import DuplicateFinder
from groundkit.harness.run import SharedWork
from groundkit.harness.run._pipeline import evaluate_loaded, load_run_inputs
from groundkit.harness.run._results import rebuilt
from groundkit.judgments import EvalReport
from groundkit.judgments.report import checked_report_json, report_to_json


def _two_stage_settings(**kwargs: object) -> EvalSettings:
    return _settings(
        **kwargs,
        stages=[
            {"name": "bm25", "retriever": {"kind": "bm25"}},
            {"name": "bm25-tuned", "retriever": {"kind": "bm25", "k1": 0.9, "b": 0.4}},
            {"name": "fused", "retriever": {"kind": "hybrid", "stages": ["bm25", "bm25-tuned"]}},
        ],
    )


@pytest.mark.parametrize("level", ["chunk", "document"])
def test_reports_are_valid_as_built(level: str) -> None:
    settings = _two_stage_settings(level=level)
    report = evaluate(DOCS, JUDGMENTS, settings)
    assert report.stages[2].comparisons, "comparisons are filled in"
    text = checked_report_json(report, revalidate=False)
    # What the skipped check would have read back: the same report, and the same text.
    assert text == checked_report_json(report)
    again = EvalReport.model_validate_json(text)
    assert report_to_json(again) == text


def test_loaded_run_records_its_inputs_once(tmp_path: Path) -> None:
    corpus_path, judgments_path = _write_inputs(tmp_path)
    config = RunConfig.model_validate(
        {**_two_stage_settings().model_dump(), "corpus": corpus_path, "judgments": judgments_path}
    )
    corpus, judgments = load_run_inputs(config)
    shared = SharedWork()
    first = evaluate_loaded(config, corpus, judgments, loading=0.25, shared=shared)
    second = evaluate_loaded(config, corpus, judgments, shared=shared)  # stages reused
    for report in (first, second):
        assert report.run.judgments_source == str(judgments_path)
        assert next(iter(report.timings)) == "load"
        text = checked_report_json(report, revalidate=False)
        assert text == checked_report_json(report)
    assert first.timings["load"] == 0.25
    assert [s.name for s in second.stages] == [s.name for s in first.stages]


def test_unknown_run_options_are_refused() -> None:
    with pytest.raises(TypeError, match="progres"):
        evaluate(DOCS, JUDGMENTS, _settings(), progres=None)  # type: ignore[call-arg]


def test_rebuilt_validates_what_model_copy_does_not() -> None:
    report = evaluate(DOCS, JUDGMENTS, _settings())
    stage = report.stages[0]
    assert rebuilt(stage, judged={"10": 0.5}).judged == {"10": 0.5}
    assert rebuilt(stage, judged={"10": 0.5}).queries[0] is stage.queries[0]
    with pytest.raises(ValidationError):
        rebuilt(stage, judged={"10": "half"})
    with pytest.raises(ValidationError):
        rebuilt(report, stages=[rebuilt(stage, baseline=False)])  # no baseline first


def test_small_shingle_batches_fill_the_same_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    import groundkit.harness.analysis._duplicates as module
    import groundkit.harness.analysis._similar_sets as similar

    corpus = _near_copies(8)
    docs = np.arange(len(corpus), dtype=np.int64)
    starts = np.zeros(len(corpus), dtype=np.int64)
    ends = np.asarray([len(t) for t in corpus], dtype=np.int64)
    monkeypatch.setattr(module, "_HASH_CHARS", 1 << 20)
    whole = DuplicateFinder(corpus)
    expected = whole.duplicate_of(docs, starts, ends)
    monkeypatch.setattr(module, "_HASH_CHARS", 700)
    monkeypatch.setattr(similar, "_SKETCH_SETS", 3)
    small = DuplicateFinder(corpus)
    assert small.duplicate_of(docs, starts, ends) == expected
    assert any(rank is not None for rank in expected)
    assert whole._frequency is not None
    assert small._frequency is not None
    assert np.array_equal(whole._frequency, small._frequency)
    assert whole._cache.keys() == small._cache.keys()
    for key, (text_hash, shingles, prefix) in whole._cache.items():
        other = small._cache[key]
        assert other[0] == text_hash
        assert np.array_equal(other[1], shingles)
        assert np.array_equal(other[2], prefix)
