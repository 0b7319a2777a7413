"""What a run records about itself: package versions, inputs and settings; the collector.

Split from the pipeline (:mod:`groundkit.harness.run._pipeline`), which builds the report.
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import importlib.metadata
from collections.abc import Iterator, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from groundkit.harness.retrievers._registry import retriever_kind
from groundkit.harness.run._config import EvalSettings
from groundkit.harness.run._tokenizer import tokenizer_record
from groundkit.judgments import Corpus, Judgment
from groundkit.judgments.gold import judgments_fingerprint
from groundkit.judgments.report import RunInfo

__all__ = ["RunRecord", "collector_relaxed", "package_versions", "run_info"]

# Every distribution of the project (scanning all installed distributions is slow).
_GROUNDKIT_DISTRIBUTIONS = (
    "groundkit-adapters-beir",
    "groundkit-cli",
    "groundkit-core-judgments",
    "groundkit-diagnosis-fixes",
    "groundkit-evalset-quality",
    "groundkit-stats-bootstrap",
)


# Automatic collections run this much less often during a run (see collector_relaxed).
_RELAXED_GC_THRESHOLDS = (100_000, 50, 50)


@contextlib.contextmanager
def collector_relaxed() -> Iterator[None]:
    """Run Python's cyclic garbage collector far less often; its thresholds come back on exit.

    A run allocates millions of small containers (token lists, hits, report models) that stay
    alive until the report is built: collections at the default thresholds walk them again and
    again without freeing anything (about 0.2 s of a 1.3 s SciFact run). Raising the thresholds,
    rather than disabling the collector, keeps cyclic garbage bounded on long runs (a dense
    stage over a large corpus) while removing almost all of that cost.
    """
    previous = gc.get_threshold()
    gc.set_threshold(
        *(max(old, new) for old, new in zip(previous, _RELAXED_GC_THRESHOLDS, strict=True))
    )
    try:
        yield
    finally:
        gc.set_threshold(*previous)


def package_versions(kinds: Sequence[str] = ()) -> dict[str, str]:
    """Versions of the installed ``groundkit-*`` distributions and retriever libraries.

    The libraries are those the given retriever kinds register as theirs (``bm25s``,
    ``PyStemmer``, ``sentence-transformers``, a plugin's distribution...).
    """
    versions: dict[str, str] = {}
    for name in _GROUNDKIT_DISTRIBUTIONS:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue
    for kind in kinds:
        for package in retriever_kind(kind).packages:
            try:
                versions[package] = importlib.metadata.version(package)
            except importlib.metadata.PackageNotFoundError:
                continue
    return dict(sorted(versions.items()))


@dataclasses.dataclass(frozen=True)
class RunRecord:
    """What the report records about where its inputs came from."""

    config: Mapping[str, Any] | None = None
    judgments_source: str | None = None
    loading: float | None = None


def run_info(
    settings: EvalSettings,
    loaded: Corpus,
    judgment_list: Sequence[Judgment],
    command: Sequence[str] | None,
    record: RunRecord,
) -> RunInfo:
    document_level = settings.level == "document"
    kinds = sorted({s.retriever.kind for s in settings.stages})
    return RunInfo(
        created_at=datetime.now(UTC).isoformat(timespec="seconds"),
        package_versions=package_versions(kinds),
        command=None if command is None else list(command),
        config=dict(record.config)
        if record.config is not None
        else settings.model_dump(mode="json"),
        corpus_source=loaded.source,
        judgments_source=record.judgments_source,
        corpus_fingerprint=loaded.fingerprint(),
        judgments_fingerprint=judgments_fingerprint(judgment_list),
        level=settings.level,
        depth=settings.depth,
        cutoffs=list(settings.cutoffs),
        budgets=[] if document_level else list(settings.budgets),
        min_overlap_fraction=settings.min_overlap_fraction,
        headline_metrics=list(settings.headline_metrics),
        bootstrap=settings.bootstrap,
        tokenizer=tokenizer_record(settings),
    )
