"""The ``ray`` executor of dense stages: chunk embeddings from Ray Data actors (extra ``ray``).

The chunk texts not in the embedding cache are cut into the same length-sorted groups as the
local path (:func:`groundkit.harness.dense._model.length_groups`); each group is one row of a Ray
dataset, and ``map_batches`` hands one row at a time to an actor that loaded the model once.
An actor encodes its group with one ``encode`` call of the stage's ``batch_size``, as the
local path does, so the batches — and the embeddings — are the same. The groups stream back to
the driver, which writes each to the embedding cache as it arrives (the crash safety of the
local path). Actors take a GPU each when the cluster has GPUs and the stage's device allows
one; otherwise one CPU each. The queries are encoded on the driver, whose copy of the model
loads while the actors start: :meth:`RayGroups.start` connects, then iterates in a thread.

Ray is imported only when a run asks for it.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from groundkit.harness._errors import HarnessError
from groundkit.harness.retrievers._builtin import DenseRetriever

__all__ = ["RAY_INSTALL_HINT", "GroupEncoder", "RayGroups", "RayResults", "require_ray"]

RAY_INSTALL_HINT = "pip install 'groundkit-cli[ray]'"
FloatMatrix = npt.NDArray[np.float32]


def require_ray(stage: str) -> Any:
    """The ``ray`` module (with Ray Data).

    Raises:
        HarnessError: Ray is not installed (naming the extra).
    """
    try:
        import ray
        import ray.data  # Ray Data is in the extra, not in every ray install
    except ImportError:
        raise HarnessError(
            f"stage {stage!r}: executor = 'ray' needs Ray Data: {RAY_INSTALL_HINT}"
        ) from None
    return ray


class GroupEncoder:
    """A Ray actor: the model loaded once, one group of texts encoded per row.

    Args:
        model: The model name or folder.
        device: The requested device (``auto`` is resolved on the actor's machine).
        batch_size: Texts per encoder batch.
        threads: The driver's CPU thread count for the model (``None``: Ray's default).
        precision: The floating-point format the driver resolved (``fp32``, ``fp16``,
            ``bf16``): every actor's vectors go to the driver's cache for that precision.
    """

    def __init__(
        self,
        model: str,
        device: str,
        batch_size: int,
        threads: int | None,
        precision: str = "fp32",
    ) -> None:
        from groundkit.harness.dense._loading import load_sentence_transformer, resolve_device

        self.device = resolve_device(device)
        if threads is not None and self.device == "cpu":
            # Ray starts an actor with one thread per CPU it reserved; a CPU matrix product
            # sums in an order that depends on the thread count, so the actor takes the
            # driver's count and its vectors equal the local path's bit for bit.
            import torch

            torch.set_num_threads(threads)
        if precision == "fp16" and self.device == "cpu":
            from groundkit.harness._errors import HarnessError

            raise HarnessError("precision 'fp16' needs a CUDA device; a Ray actor runs on cpu")
        self.model = load_sentence_transformer(
            model, stage="ray actor", device=self.device, precision=precision
        )
        self.batch_size = batch_size

    def __call__(self, batch: dict[str, Any]) -> dict[str, Any]:
        """Positions and raw float32 embeddings of every text of the batch's groups."""
        positions, vectors = [], []
        for group, texts in zip(batch["positions"], batch["texts"], strict=True):
            encoded = self.model.encode(
                [str(text) for text in texts],
                batch_size=self.batch_size,
                convert_to_numpy=True,
                normalize_embeddings=False,
                show_progress_bar=False,
            )
            positions.append(np.asarray(group, dtype=np.int64))
            vectors.append(np.asarray(encoded, dtype=np.float32).reshape(len(group), -1))
        return {
            "position": np.concatenate(positions),
            "vector": np.concatenate(vectors),
            "device": np.asarray([self.device] * sum(len(p) for p in positions)),
        }


def _driver_threads() -> int:
    """The CPU threads torch uses in this process: the count the local path would use.

    torch is imported when it is not loaded yet (a dense stage needs it anyway): reading the
    count only from a loaded torch gave the actors 1 thread when the Ray path ran before any
    local encoding, and a matrix product summed with another thread count differs in its last
    bits. 1 when torch is not installed.
    """
    try:
        import torch
    except ImportError:
        return 1
    return int(torch.get_num_threads())


def _connect(ray: Any, address: str | None) -> None:
    if ray.is_initialized():
        return
    # address None: RAY_ADDRESS when set, else a new local instance.
    ray.init(address=address, ignore_reinit_error=True)


class RayGroups:
    """The groups' embeddings from Ray actors, iterated as ``(positions, vectors)``.

    Args:
        texts: The texts to embed.
        groups: Their positions, one encoder call per group.
        config: The dense settings (model, device, batch size).
        address: The Ray cluster (``None``: ``RAY_ADDRESS``, or a local instance).
        stage: Stage name, for messages.
        precision: The floating-point format of the actors' models (resolved by the driver).

    Attributes:
        devices: The devices the actors ran on (known once iterated).
    """

    def __init__(
        self,
        texts: Sequence[str],
        groups: Sequence[npt.NDArray[np.int64]],
        config: DenseRetriever,
        address: str | None,
        stage: str,
        precision: str = "fp32",
    ) -> None:
        self._ray = require_ray(stage)
        self._precision = precision
        self._texts = texts
        self._groups = groups
        self._config = config
        self._address = address
        self.devices: set[str] = set()

    def start(self) -> RayResults:
        """Connect here, then run the groups in a thread; iterate the result as they arrive.

        The actors start and encode while the caller goes on (loading its model); an error
        raised by Ray is raised again where the result is iterated. ``close()`` on the result
        stops the thread after the group in hand (the caller failed: nothing will read more).
        """
        _connect(self._ray, self._address)  # in the calling thread: Ray sets signal handlers
        return RayResults(self)

    def __iter__(self) -> Iterator[tuple[npt.NDArray[np.int64], FloatMatrix]]:
        ray = self._ray
        _connect(ray, self._address)
        context = ray.data.DataContext.get_current()
        context.enable_progress_bars = False  # the harness draws its own bar
        items = [
            {"positions": group.tolist(), "texts": [self._texts[i] for i in group.tolist()]}
            for group in self._groups
        ]
        resources = ray.cluster_resources()
        gpus = int(resources.get("GPU", 0))
        device = self._config.device
        wants_gpu = gpus > 0 and (device == "auto" or device.startswith("cuda"))
        cpus = max(1, int(resources.get("CPU", 1)))
        threads = None if wants_gpu else min(_driver_threads(), cpus)
        workers = gpus if threads is None else max(1, cpus // threads)
        placement = {"num_gpus": 1} if threads is None else {"num_cpus": threads}
        dataset = ray.data.from_items(items).map_batches(
            GroupEncoder,
            fn_constructor_kwargs={
                "model": self._config.model,
                "device": self._config.device,
                "batch_size": self._config.batch_size,
                "threads": threads,
                "precision": self._precision,
            },
            batch_size=1,
            batch_format="numpy",
            compute=ray.data.ActorPoolStrategy(size=max(1, min(len(items), workers))),
            **placement,
        )
        for batch in dataset.iter_batches(batch_size=None, batch_format="numpy"):
            self.devices.update(str(d) for d in np.unique(batch["device"]).tolist())
            yield (
                np.asarray(batch["position"], dtype=np.int64),
                np.asarray(batch["vector"], dtype=np.float32),
            )


class RayResults:
    """The groups of a :class:`RayGroups`, produced by a thread, read as they arrive.

    Args:
        groups: The groups to iterate (in the thread).
    """

    def __init__(self, groups: RayGroups) -> None:
        self._arrived: queue.Queue[tuple[str, Any]] = queue.Queue()
        self._stop = threading.Event()
        threading.Thread(
            target=self._run, args=(groups,), name="groundkit-ray-groups", daemon=True
        ).start()

    def _run(self, groups: RayGroups) -> None:
        try:
            for item in groups:
                if self._stop.is_set():
                    return
                self._arrived.put(("item", item))
        except BaseException as error:  # handed to the reader, raised there
            self._arrived.put(("error", error))
        else:
            self._arrived.put(("end", None))

    def close(self) -> None:
        """Stop after the group in hand (the reader will read no more)."""
        self._stop.set()

    def __iter__(self) -> Iterator[tuple[npt.NDArray[np.int64], FloatMatrix]]:
        while True:
            kind, value = self._arrived.get()
            if kind == "end":
                return
            if kind == "error":
                raise value
            yield value
