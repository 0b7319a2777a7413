"""Reproducing a report: check what it was run on, rerun what it recorded, compare every score.

The configuration comes from the report alone (``RunInfo.config``, the resolved run
configuration ``grk eval run`` records), validated by the same :class:`RunConfig` model as a
config file: there is no second way to build a run. Before anything runs, the corpus and
judgments fingerprints and the recorded package versions are checked; a difference refuses
(:class:`ReproductionRefusedError`) unless ``force``. After the rerun every recorded per-query score
is compared with the new one.

A report is data, not code: a stage whose kind runs code of its own (an external command, a
Python function, a framework object, a plugin; see
:attr:`~groundkit.harness.RetrieverKind.runs_user_code`) and a Ray cluster address are refused
(:class:`UntrustedReportError`) before anything is validated, loaded or run, unless the caller
trusts the report (``trust_code``). Nothing a report names is imported to decide: a kind that is
not registered counts as code.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from groundkit.harness._errors import HarnessError
from groundkit.harness.retrievers._registry import stage_runs_user_code
from groundkit.harness.run._config import RunConfig
from groundkit.harness.run._config_load import run_config_from_dict
from groundkit.harness.run._context import ProgressCallback
from groundkit.harness.run._pipeline import evaluate_loaded, load_run_inputs
from groundkit.harness.run._record import package_versions
from groundkit.judgments import Corpus, EvalReport, Judgment, StageReport, load_report
from groundkit.judgments.gold import judgments_fingerprint
from groundkit.judgments.report import InputKind, recorded_input

__all__ = [
    "InputMismatch",
    "MismatchKind",
    "Reproduction",
    "ReproductionRefusedError",
    "ScoreDifference",
    "UntrustedReportError",
    "code_parts",
    "input_mismatches",
    "recorded_run_config",
    "reproduce_report",
]

_SHOWN_DIGITS = 12


class MismatchKind(StrEnum):
    """What differs between the report's inputs and today's."""

    CORPUS = "corpus"
    JUDGMENTS = "judgments"
    PACKAGE = "package"


@dataclass(frozen=True, slots=True)
class InputMismatch:
    """One input that is not what the report recorded.

    Attributes:
        kind: Corpus fingerprint, judgments fingerprint or a package version.
        name: ``corpus``, ``judgments`` or the distribution's name.
        recorded: What the report recorded.
        now: What there is now (``None``: the distribution is not installed).
    """

    kind: MismatchKind
    name: str
    recorded: str
    now: str | None

    def __str__(self) -> str:
        if self.kind is MismatchKind.PACKAGE:
            now = "not installed" if self.now is None else self.now
            return f"{self.name} {self.recorded} recorded, {now} now"
        now = "none" if self.now is None else self.now[:_SHOWN_DIGITS] + "…"
        return f"{self.name} fingerprint {self.recorded[:_SHOWN_DIGITS]}… recorded, {now} now"


@dataclass(frozen=True, slots=True)
class ScoreDifference:
    """A per-query score (or a stage, or a query) that the rerun did not reproduce.

    Attributes:
        stage: The stage.
        query_id: The query (``None`` for the whole stage).
        metric: The metric (``None`` for a whole query or stage).
        recorded: The recorded score, when there is one.
        now: The rerun's score, when there is one.
        detail: What happened, when it is not two numbers (a stage that failed, a query
            not scored).
    """

    stage: str
    query_id: str | None = None
    metric: str | None = None
    recorded: float | None = None
    now: float | None = None
    detail: str | None = None

    def __str__(self) -> str:
        where = f"stage {self.stage!r}"
        if self.query_id is not None:
            where = f"query {self.query_id!r}, {where}"
        if self.metric is not None:
            where += f", {self.metric}"
        if self.detail is not None:
            return f"{where}: {self.detail}"
        return f"{where}: {self.recorded!r} recorded, {self.now!r} now"


class ReproductionRefusedError(HarnessError):
    """The report was run on other inputs or other package versions (nothing was rerun).

    Args:
        mismatches: What differs.
        path: The report, when it was read from a file.

    Attributes:
        mismatches: What differs, corpus and judgments first.
    """

    def __init__(self, mismatches: Sequence[InputMismatch], *, path: str | Path | None = None):
        self.mismatches = tuple(mismatches)
        super().__init__(
            "not the inputs the report was run on: " + "; ".join(str(m) for m in self.mismatches),
            path=path,
        )

    def __reduce__(self) -> tuple[object, ...]:
        return (_rebuild_refused, (self.mismatches, self.path))


def _rebuild_refused(
    mismatches: Sequence[InputMismatch], path: str | None
) -> ReproductionRefusedError:
    return ReproductionRefusedError(mismatches, path=path)


class UntrustedReportError(HarnessError):
    """The report's run would run code the report names (nothing was loaded or run).

    Args:
        parts: What would run, one phrase each (``stage 'x' (command)``).
        path: The report, when it was read from a file.

    Attributes:
        parts: What would run, in the report's order.
    """

    def __init__(self, parts: Sequence[str], *, path: str | Path | None = None):
        self.parts = tuple(parts)
        super().__init__(
            f"the report names code to run: {', '.join(self.parts)}; a report is rerun with "
            "its code only when trusted (trust_code=True; CLI: --trust-report)",
            path=path,
        )

    def __reduce__(self) -> tuple[object, ...]:
        return (_rebuild_untrusted, (self.parts, self.path))


def _rebuild_untrusted(parts: Sequence[str], path: str | None) -> UntrustedReportError:
    return UntrustedReportError(parts, path=path)


def code_parts(config: Mapping[str, Any]) -> list[str]:
    """What a raw run configuration would run or reach that the configuration itself names.

    Every stage whose kind runs code (decided by the registry from the raw ``retriever``
    table, no plugin loaded), and a Ray cluster address (the corpus and the embedding code
    would go to that machine). Read before validation, which would load a plugin's kind.

    Args:
        config: The configuration as a report records it (``RunInfo.config``).

    Returns:
        One phrase each, in order: ``stage 'name' (kind)``, ``ray_address 'host:port'``.
    """
    found: list[str] = []
    stages = config.get("stages")
    for index, stage in enumerate(stages if isinstance(stages, list) else []):
        table = stage.get("retriever") if isinstance(stage, Mapping) else None
        if not stage_runs_user_code(table):
            continue
        name = stage.get("name") if isinstance(stage, Mapping) else None
        kind = table.get("kind") if isinstance(table, Mapping) else None
        shown = repr(name) if isinstance(name, str) else f"#{index + 1}"
        found.append(f"stage {shown} ({kind if isinstance(kind, str) else 'unknown kind'})")
    address = config.get("ray_address")
    if config.get("executor") == "ray" and address is not None:
        found.append(f"ray_address {address!r} (the corpus would be sent there)")
    return found


@dataclass(frozen=True, slots=True)
class Reproduction:
    """The outcome of :func:`reproduce_report`.

    Attributes:
        recorded: The report that was reproduced.
        report: The rerun's report.
        mismatches: Input differences that ``force`` went past (empty without them).
        differences: Every score that differs, in report order (stage, query, metric).
        compared: How many recorded per-query scores were compared.
    """

    recorded: EvalReport
    report: EvalReport
    mismatches: tuple[InputMismatch, ...]
    differences: tuple[ScoreDifference, ...]
    compared: int

    @property
    def identical(self) -> bool:
        """Whether every recorded score came out the same."""
        return not self.differences

    @property
    def span_rule_note(self) -> str | None:
        """Why span figures may differ: the report counted a repeated quote at every copy.

        Returns:
            One sentence when the report was scored by the span rule of schema 2.2 or older
            (``RunInfo.span_gold``) and a span metric differs, else ``None``.
        """
        if self.recorded.run.span_gold == self.report.run.span_gold:
            return None
        spans = [d for d in self.differences if d.metric is not None and _is_span(d.metric)]
        if not spans:
            return None
        return (
            f"{len(spans)} span-metric difference(s) may come from the rule, not the run: the "
            f"report (schema {self.recorded.schema_version}) counted a quote found at several "
            "places at every occurrence; report schema 2.3 counts it once, at its best-covered "
            "occurrence"
        )


def _is_span(metric: str) -> bool:
    return metric.startswith("span_") or metric == "precision_omega"


def recorded_run_config(
    report: EvalReport,
    *,
    corpus: str | Path | None = None,
    judgments: str | Path | None = None,
    source: str | Path | None = None,
    trust_code: bool = False,
) -> RunConfig:
    """The run configuration a report recorded, validated like a config file.

    Args:
        report: The report.
        corpus: Read the corpus from here instead of the recorded path (a moved folder).
        judgments: Read the judgments from here instead of the recorded path.
        source: The report's file, for messages.
        trust_code: Accept stages that run code the report names (see :func:`code_parts`).

    Raises:
        UntrustedReportError: The configuration names code to run and ``trust_code`` is
            false (checked first: no plugin is loaded, nothing is read).
        HarnessError: The report records no corpus or judgments path and none is given.
        ConfigError: The recorded configuration is not valid for this version.
    """
    raw: dict[str, Any] = dict(report.run.config)
    parts = code_parts(raw)
    if parts and not trust_code:
        raise UntrustedReportError(parts, path=source)
    inputs: tuple[tuple[InputKind, str | Path | None, str], ...] = (
        ("corpus", corpus, "--corpus"),
        ("judgments", judgments, "--judgments"),
    )
    for key, override, flag in inputs:
        found = recorded_input(report, key, source) if override is None else None
        if override is not None:
            raw[key] = str(override)
        elif key not in raw:
            raise HarnessError(
                f"the report records no {key} path (it was not run from files); give the "
                f"{key} to reproduce it on ({flag}, or {key}= in Python)",
                path=source,
            )
        elif found is not None:
            # Looked for from the report's folder first, then as the run was given it; the
            # recorded text is kept when it leads there (the configuration stays the same).
            if not isinstance(raw[key], str) or Path(raw[key]).resolve() != found.resolve():
                raw[key] = str(found)
        elif isinstance(raw[key], str):
            raise HarnessError(
                f"the recorded {key} {raw[key]!r} is not there (looked from the report's "
                f"folder and from {Path.cwd()}); give where it is now ({flag}, or {key}= in "
                "Python)",
                path=source,
            )
    return run_config_from_dict(raw, source=None if source is None else Path(source))


def input_mismatches(
    report: EvalReport, config: RunConfig, corpus: Corpus, judgments: Sequence[Judgment]
) -> list[InputMismatch]:
    """What differs from the report's record: fingerprints first, then package versions.

    Only the packages the report recorded are checked (one installed since cannot have
    changed its numbers).
    """
    found: list[InputMismatch] = []
    for kind, recorded, now in (
        (MismatchKind.CORPUS, report.run.corpus_fingerprint, corpus.fingerprint()),
        (
            MismatchKind.JUDGMENTS,
            report.run.judgments_fingerprint,
            judgments_fingerprint(judgments),
        ),
    ):
        if recorded != now:
            found.append(InputMismatch(kind, kind.value, recorded, now))
    installed = package_versions(sorted({s.retriever.kind for s in config.stages}))
    for name, version in sorted(report.run.package_versions.items()):
        if installed.get(name) != version:
            found.append(InputMismatch(MismatchKind.PACKAGE, name, version, installed.get(name)))
    return found


def _stage_differences(recorded: StageReport, now: StageReport | None) -> list[ScoreDifference]:
    if now is None:
        return [ScoreDifference(recorded.name, detail="not in the rerun")]
    if (recorded.error is None) != (now.error is None):
        detail = (
            f"failed in the rerun: {now.error}"
            if now.error is not None
            else "failed when recorded, ran now"
        )
        return [ScoreDifference(recorded.name, detail=detail)]
    return []


def _check_tolerance(tolerance: float) -> None:
    if not (math.isfinite(tolerance) and tolerance >= 0.0):
        raise HarnessError(f"tolerance must be a finite number >= 0, got {tolerance!r}")


def score_differences(
    recorded: EvalReport, now: EvalReport, *, tolerance: float = 0.0
) -> tuple[list[ScoreDifference], int]:
    """Every recorded per-query score against the rerun's, and how many were compared.

    Args:
        recorded: The report.
        now: The rerun.
        tolerance: Largest absolute difference still counted as the same (0: exactly equal).

    Raises:
        HarnessError: ``tolerance`` is negative or not finite (``nan`` would call every
            difference "the same").
    """
    _check_tolerance(tolerance)
    differences: list[ScoreDifference] = []
    compared = 0
    by_name = {stage.name: stage for stage in now.stages}
    for stage in recorded.stages:
        rerun = by_name.get(stage.name)
        problems = _stage_differences(stage, rerun)
        if problems or rerun is None:
            differences.extend(problems)
            continue
        rows: Mapping[str, dict[str, float]] = {q.query_id: q.scores for q in rerun.queries}
        for result in stage.queries:
            row = rows.get(result.query_id)
            if row is None:
                differences.append(
                    ScoreDifference(stage.name, result.query_id, detail="not scored in the rerun")
                )
                continue
            for metric, value in result.scores.items():
                compared += 1
                new = row.get(metric)
                if new is None or abs(new - value) > tolerance:
                    differences.append(
                        ScoreDifference(stage.name, result.query_id, metric, value, new)
                    )
        extra = set(rows) - {q.query_id for q in stage.queries}
        differences.extend(
            ScoreDifference(stage.name, query_id, detail="scored in the rerun, not in the report")
            for query_id in sorted(extra)
        )
    return differences, compared


def reproduce_report(  # noqa: PLR0913 (keyword-only options of the public API)
    report: EvalReport | str | Path,
    *,
    corpus: str | Path | None = None,
    judgments: str | Path | None = None,
    force: bool = False,
    tolerance: float = 0.0,
    config: RunConfig | None = None,
    progress: ProgressCallback | None = None,
    command: Sequence[str] | None = None,
    trust_code: bool = False,
) -> Reproduction:
    """Rerun a report from its recorded configuration and compare every per-query score.

    Args:
        report: The report, or its file.
        corpus: Read the corpus from here instead of the recorded path.
        judgments: Read the judgments from here instead of the recorded path.
        force: Rerun even when the fingerprints or package versions differ (they are then
            listed in :attr:`Reproduction.mismatches`).
        tolerance: Largest absolute score difference counted as the same (default: exact).
        config: The configuration, when already built by :func:`recorded_run_config`
            (``corpus`` and ``judgments`` are then ignored).
        progress: Optional ``(phase, done, total)`` callback of the rerun.
        command: The command line to record in the rerun's report.
        trust_code: Run stages that run code the report names (an external command, a
            Python function, a framework object, a plugin) and use its Ray address; without
            it they are refused before anything is loaded. Only for a report you trust.

    Returns:
        What was compared and every difference; nothing is written.

    Raises:
        UntrustedReportError: The report (or ``config``) names code to run and
            ``trust_code`` is false (raised before anything is loaded or run).
        ReproductionRefusedError: The inputs differ from the record and ``force`` is false
            (raised before anything is rerun).
        HarnessError: A tolerance that is negative or not finite; an unreadable report, corpus
            or judgments, or a recorded configuration that is no longer valid.
    """
    _check_tolerance(tolerance)  # refused before any rerun
    source = None if isinstance(report, EvalReport) else Path(report)
    recorded = report if isinstance(report, EvalReport) else load_report(report)
    if config is None:
        config = recorded_run_config(
            recorded, corpus=corpus, judgments=judgments, source=source, trust_code=trust_code
        )
    else:
        parts = code_parts(config.model_dump(mode="json"))
        if parts and not trust_code:
            raise UntrustedReportError(parts, path=source)
    start = time.perf_counter()
    loaded, judgment_list = load_run_inputs(config, progress)
    loading = time.perf_counter() - start
    mismatches = input_mismatches(recorded, config, loaded, judgment_list)
    if mismatches and not force:
        raise ReproductionRefusedError(mismatches, path=source)
    rerun = evaluate_loaded(
        config, loaded, judgment_list, loading=loading, progress=progress, command=command
    )
    differences, compared = score_differences(recorded, rerun, tolerance=tolerance)
    return Reproduction(
        recorded=recorded,
        report=rerun,
        mismatches=tuple(mismatches),
        differences=tuple(differences),
        compared=compared,
    )
