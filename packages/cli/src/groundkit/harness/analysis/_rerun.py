"""Chunk fixes replayed exactly: the diagnosed stage run again with each variant chunker.

A report's rankings cannot tell what larger chunks would have ranked, so the diagnosis can
only estimate a chunk fix from them. The harness can do better: chunk the recorded corpus
with the variant (:func:`groundkit.diagnosis.chunk_variant`, one rule for every caller) and
run the same stage again. The diagnosis then re-scores the re-run's hits with the report's
gold and overlap rule, so the "expected" gain of a chunk fix is what applying it measures.

Only the diagnosed stage runs again: it is the re-run's baseline, so no BM25 baseline is
added beside it. The inputs must be the ones the report was run on: a changed
corpus or judgments file is refused, since the re-run would not replay the same stage.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from groundkit.diagnosis import (
    CHUNK_FIXES,
    FixName,
    RerunStage,
    chunk_variant,
    chunker_text,
)
from groundkit.harness._errors import HarnessError
from groundkit.harness.run._context import ProgressCallback, SharedWork
from groundkit.harness.run._pipeline import evaluate_loaded, load_run_inputs
from groundkit.harness.run._reproduce import (
    MismatchKind,
    ReproductionRefusedError,
    input_mismatches,
    recorded_run_config,
)
from groundkit.judgments import EvalReport, load_report

__all__ = ["rerun_chunk_fixes"]


def _stage_only(report: EvalReport, name: str) -> EvalReport:
    """The report with a recorded configuration of the one stage, its own baseline.

    The other stages are not re-run, the BM25 baseline included.
    """
    raw: dict[str, Any] = dict(report.run.config)
    stages = [s for s in raw.get("stages", []) if isinstance(s, dict) and s.get("name") == name]
    if not stages:
        raise HarnessError(
            f"the report records no configuration for stage {name!r}: it cannot be re-run"
        )
    raw["stages"] = stages
    raw["baseline"] = name
    raw["ablation"] = None
    return report.model_copy(update={"run": report.run.model_copy(update={"config": raw})})


def rerun_chunk_fixes(
    report: EvalReport | str | Path,
    stage: str,
    *,
    fixes: Sequence[FixName] = CHUNK_FIXES,
    corpus: str | Path | None = None,
    judgments: str | Path | None = None,
    trust_code: bool = False,
    progress: ProgressCallback | None = None,
) -> list[RerunStage]:
    """Run ``stage`` of ``report`` again with each chunk fix applied, for the diagnosis.

    Pass the result to :func:`groundkit.diagnosis.diagnose` (``reruns=``): the chunk fixes
    are then replayed exactly instead of estimated.

    Args:
        report: The report, or its file.
        stage: The stage to re-run (one that chunks the corpus: bm25, dense...).
        fixes: The chunk fixes to apply (default: every one with a variant).
        corpus: Read the corpus from here instead of the recorded path (a moved folder).
        judgments: Read the judgments from here instead of the recorded path.
        trust_code: Accept a stage (or Ray address) that runs code the report names.
        progress: Optional ``(phase, done, total)`` callback of the re-runs.

    Returns:
        One :class:`~groundkit.diagnosis.RerunStage` per fix with a variant chunker, in the
        order of ``fixes`` (none when the stage brings its own spans or cuts no chunks).

    Raises:
        HarnessError: Unknown or failed stage; the recorded inputs are not found or differ
            from the ones the report was run on (:class:`ReproductionRefusedError`); the
            re-run itself fails.
        groundkit.harness.run.UntrustedReportError: The stage runs code the report names
            and ``trust_code`` is false.
    """
    source = None if isinstance(report, EvalReport) else Path(report)
    recorded = report if isinstance(report, EvalReport) else load_report(report)
    target = next((s for s in recorded.stages if s.name == stage), None)
    if target is None or target.error is not None:
        why = "is not in the report" if target is None else "failed in this run"
        raise HarnessError(f"stage {stage!r} {why}: nothing to re-run", path=source)
    variants = [(fix, chunk_variant(target.chunker, fix)) for fix in fixes]
    chosen = [(fix, variant) for fix, variant in variants if variant is not None]
    if not chosen or target.chunker is None:
        return []
    config = recorded_run_config(
        _stage_only(recorded, stage),
        corpus=corpus,
        judgments=judgments,
        source=source,
        trust_code=trust_code,
    )
    loaded, judgment_list = load_run_inputs(config, progress)
    # Packages the re-run stage does not use are not loaded now, and cannot move its figures.
    mismatches = [
        m
        for m in input_mismatches(recorded, config, loaded, judgment_list)
        if m.kind is not MismatchKind.PACKAGE or m.now is not None
    ]
    if mismatches:
        raise ReproductionRefusedError(mismatches, path=source)
    shared = SharedWork()
    raw = config.model_dump(mode="json")
    before = chunker_text(target.chunker)
    reruns: list[RerunStage] = []
    for fix, variant in chosen:
        stage_raw = {**raw["stages"][0], "chunker": variant.model_dump()}
        changed = config.model_validate({**raw, "stages": [stage_raw]})
        rerun = evaluate_loaded(changed, loaded, judgment_list, progress=progress, shared=shared)
        result = rerun.stage(stage)
        if result.error is not None:
            raise HarnessError(
                f"stage {stage!r} re-run with chunks {chunker_text(variant)} failed: "
                f"{result.error}",
                path=source,
            )
        reruns.append(
            RerunStage(
                fix=fix,
                detail=f"chunks {chunker_text(variant)} instead of {before}",
                hits={r.query_id: list(r.hits) for r in result.queries},
            )
        )
    return reruns
