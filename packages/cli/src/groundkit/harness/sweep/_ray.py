"""The ``ray`` executor of a sweep: each arm that must run is one Ray task (extra ``ray``).

The corpus and judgments go into Ray's object store once; each task runs its arm through
:func:`~groundkit.harness.run._pipeline.evaluate_loaded`, the local path's one pipeline, with
work shared inside the arm (chunks, BM25 indexes) and across arms only through the embedding
cache on disk (keyed by model and chunk text, as for local arms). An arm with a dense or rerank
stage takes the driver's torch thread count, so its vectors equal the local sweep's bit for
bit (a CPU matrix product sums in an order that depends on the thread count), and reserves
that many CPUs. The driver writes each arm's report as its task ends, in the order tasks end.

Ray is imported only when a sweep asks for it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from groundkit.harness.dense._ray import _connect, _driver_threads, raise_cause, require_ray
from groundkit.harness.run._context import SharedWork
from groundkit.harness.run._pipeline import evaluate_loaded
from groundkit.harness.sweep._config import SweepArm
from groundkit.judgments import Corpus, EvalReport, Judgment

__all__ = ["ray_arm_reports"]

_TORCH_KINDS = frozenset({"dense", "rerank"})

ArmResult = tuple[EvalReport, float, dict[str, int]]


def _evaluate_arm(
    config: Any, corpus: Corpus, judgments: list[Judgment], threads: int | None
) -> ArmResult:
    """One arm, in a Ray worker: its report, its seconds and the work it did."""
    if threads is not None:
        import torch

        torch.set_num_threads(threads)
    shared = SharedWork()
    start = time.perf_counter()
    report = evaluate_loaded(config, corpus, judgments, shared=shared)
    return report, time.perf_counter() - start, dict(shared.counts)


def _uses_torch(arm: SweepArm) -> bool:
    return any(stage.retriever.kind in _TORCH_KINDS for stage in arm.config.stages)


def ray_arm_reports(
    arms: Sequence[SweepArm],
    inputs: tuple[Corpus, list[Judgment]],
    *,
    address: str | None,
    started: Callable[[SweepArm], None],
) -> Iterator[tuple[SweepArm, EvalReport, float, dict[str, int]]]:
    """Run ``arms`` as Ray tasks; yield ``(arm, report, seconds, work counts)`` as each ends.

    Args:
        arms: The arms to run (those not resumed).
        inputs: The loaded corpus and judgments.
        address: The Ray cluster (``None``: ``RAY_ADDRESS``, a Ray started in this process,
            else a local one).
        started: Called for each arm once its task is submitted.

    Raises:
        HarnessError: Ray is not installed, or an arm's input error (re-raised as the task
            raised it).
    """
    if not arms:
        return
    ray = require_ray("sweep")
    _connect(ray, address)
    corpus, judgments = inputs
    corpus_ref, judgments_ref = ray.put(corpus), ray.put(judgments)
    cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))
    threads = _driver_threads() if any(_uses_torch(arm) for arm in arms) else None
    task = ray.remote(_evaluate_arm).options(num_cpus=min(threads or 1, cpus), max_retries=0)
    submitted: dict[Any, SweepArm] = {}
    for arm in arms:
        ref = task.remote(arm.config, corpus_ref, judgments_ref, threads)
        submitted[ref] = arm
        started(arm)
    waiting = list(submitted)
    while waiting:
        done, waiting = ray.wait(waiting, num_returns=1)
        try:
            report, seconds, counts = ray.get(done[0])
        except ray.exceptions.RayTaskError as error:
            for ref in waiting:
                ray.cancel(ref)
            raise_cause(error)
        yield submitted[done[0]], report, seconds, counts
