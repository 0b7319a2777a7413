"""The ``ray`` executor of dense stages: chunk embeddings from Ray actors (extra ``ray``).

The chunk texts not in the embedding cache are cut into the same length-sorted groups as the
local path (:func:`groundkit.harness.dense._model.length_groups`); each free actor, which
loaded the model once, is handed the next group. An actor encodes its group with one
``encode`` call of the stage's ``batch_size``, as the local path does, so the batches — and
the embeddings — are the same. The groups stream back to the driver, which writes each to the
embedding cache as it arrives (the crash safety of the local path). Actors take a GPU each
when the cluster has GPUs and the stage's device allows one; otherwise the driver's CPU thread
count each. The queries are encoded on the driver, whose copy of the model loads while Ray
starts and the actors load theirs: :meth:`RayGroups.start` connects, then iterates in a
thread.

Ray is imported only when a run asks for it.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any, NoReturn

import numpy as np
import numpy.typing as npt

from groundkit.harness._errors import HarnessError
from groundkit.harness.retrievers._builtin import DenseRetriever

__all__ = [
    "RAY_INSTALL_HINT",
    "GroupEncoder",
    "RayGroups",
    "RayResults",
    "raise_cause",
    "require_ray",
]

RAY_INSTALL_HINT = "pip install 'groundkit-cli[ray]'"
FloatMatrix = npt.NDArray[np.float32]
_STARTING_POLL_SECONDS = 0.05
DRIVER_HELPS = True
"""Whether the driver encodes groups itself until the first actor's group is back (tests
switch it off to have the actors encode everything)."""


def require_ray(stage: str) -> Any:
    """The ``ray`` module (Ray Core: actors and tasks; Ray Data is not used).

    Raises:
        HarnessError: Ray is not installed (naming the extra).
    """
    try:
        import ray
    except ImportError:
        raise HarnessError(
            f"stage {stage!r}: executor = 'ray' needs Ray: {RAY_INSTALL_HINT}"
        ) from None
    return ray


class GroupEncoder:
    """A Ray actor: the model loaded once, one group of texts encoded per row.

    Args:
        model: The model name or folder.
        device: The requested device (``auto`` is resolved on the actor's machine).
        batch_size: Texts per encoder batch (``auto`` is resolved for the actor's device).
        threads: The driver's CPU thread count for the model (``None``: Ray's default).
        precision: The floating-point format the driver resolved (``fp32``, ``fp16``,
            ``bf16``): every actor's vectors go to the driver's cache for that precision.
    """

    def __init__(
        self,
        model: str,
        device: str,
        batch_size: int | str,
        threads: int | None,
        precision: str = "fp32",
    ) -> None:
        from groundkit.harness.dense._loading import (
            load_sentence_transformer,
            resolve_batch_size,
            resolve_device,
        )

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
        self.batch_size = resolve_batch_size(batch_size, self.device)

    def ready(self) -> bool:
        """True once the model is loaded (the actor's construction is done)."""
        return True

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
        actor_groups: Groups the actors encoded.
        driver_groups: Groups the driver encoded while the actors started.
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
        self.texts = texts
        self._groups = groups
        self._config = config
        self._address = address
        self._handed = 0
        self._lock = threading.Lock()
        self.devices: set[str] = set()
        self.actor_groups = 0
        self.driver_groups = 0

    def take(self) -> int | None:
        """The number of the next group nobody took yet (actors and driver share them)."""
        with self._lock:
            if self._handed >= len(self._groups):
                return None
            self._handed += 1
            return self._handed - 1

    def group(self, number: int) -> npt.NDArray[np.int64]:
        """The positions (in :attr:`texts`) of group ``number``."""
        return self._groups[number]

    def _item(self, number: int) -> dict[str, Any]:
        positions = self._groups[number].tolist()
        return {"positions": [positions], "texts": [[self.texts[i] for i in positions]]}

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
        resources = ray.cluster_resources()
        gpus = int(resources.get("GPU", 0))
        device = self._config.device
        wants_gpu = gpus > 0 and (device == "auto" or device.startswith("cuda"))
        cpus = max(1, int(resources.get("CPU", 1)))
        threads = None if wants_gpu else min(_driver_threads(), cpus)
        workers = gpus if threads is None else max(1, cpus // threads)
        placement = {"num_gpus": 1} if threads is None else {"num_cpus": threads}
        # Plain actors, each fed its next group when it is free (the first result came about
        # a second sooner than through Ray Data's streaming executor on a 2-core machine).
        actor = ray.remote(max_restarts=0, **placement)(GroupEncoder)
        actors = [
            actor.remote(
                model=self._config.model,
                device=self._config.device,
                batch_size=self._config.batch_size,
                threads=threads,
                precision=self._precision,
            )
            for _ in range(max(1, min(len(self._groups), workers)))
        ]
        try:
            yield from self._results(ray, actors)
        finally:
            for each in actors:
                ray.kill(each)

    def _results(
        self, ray: Any, actors: list[Any]
    ) -> Iterator[tuple[npt.NDArray[np.int64], FloatMatrix]]:
        """Each group's embeddings as an actor finishes it, the next group given to that actor.

        An actor is given its first group once its model is loaded, not before: a group
        queued on an actor still starting would wait there while the driver, already loaded,
        could encode it (:meth:`RayResults.helped`). Nothing left to give and nothing
        running ends the iteration, even with actors still starting.
        """
        starting = {each.ready.remote(): each for each in actors}
        running: dict[Any, Any] = {}
        while running or (starting and self.left()):
            # Only actors still starting: look again now and then whether the driver took
            # what was left (then nothing waits for them).
            timeout = None if running else _STARTING_POLL_SECONDS
            done_refs, _ = ray.wait([*starting, *running], num_returns=1, timeout=timeout)
            if not done_refs:
                continue
            done = done_refs[0]
            free = starting.pop(done, None)
            batch = None
            if free is None:
                free = running.pop(done)
                batch = _result(ray, done)
            else:
                _result(ray, done)  # the actor's own error, when its model did not load
            number = self.take()
            if number is not None:
                running[free.__call__.remote(self._item(number))] = free
            if batch is not None:
                self.actor_groups += 1
                self.devices.update(str(d) for d in np.unique(batch["device"]).tolist())
                yield (
                    np.asarray(batch["position"], dtype=np.int64),
                    np.asarray(batch["vector"], dtype=np.float32),
                )

    def left(self) -> bool:
        """Whether a group is still to be taken."""
        with self._lock:
            return self._handed < len(self._groups)


def raise_cause(error: BaseException) -> NoReturn:
    """Raise the remote code's own exception a Ray error carries (its ``cause``), else it."""
    cause = getattr(error, "cause", None)
    if isinstance(cause, Exception):
        raise cause from None
    raise error


def _result(ray: Any, ref: Any) -> Any:
    """``ray.get(ref)``, an actor's own exception raised as it was raised there."""
    try:
        return ray.get(ref)
    except ray.exceptions.RayError as error:
        raise_cause(error)


class RayResults:
    """The groups of a :class:`RayGroups`, produced by a thread, read as they arrive.

    Args:
        groups: The groups to iterate (in the thread).
    """

    def __init__(self, groups: RayGroups) -> None:
        self.groups = groups
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
        return self.helped(None)

    def helped(
        self, encode: Callable[[npt.NDArray[np.int64]], FloatMatrix] | None
    ) -> Iterator[tuple[npt.NDArray[np.int64], FloatMatrix]]:
        """The groups as they arrive; until the first arrives, ``encode`` takes groups too.

        Ray starts in seconds and each actor loads its own model; the driver's model is
        loaded by then, so it encodes groups itself (the local path's batches: the same
        vectors) rather than wait. Once an actor's first group is back, the driver only
        reads: on one machine the two would share the same cores, and a driver slower than
        the actors (a CPU beside GPUs) must not hold many groups.

        Args:
            encode: The driver's encoder of a group's texts (by positions); ``None``: read only.
        """
        waiting = encode is not None and DRIVER_HELPS
        while True:
            message: tuple[str, Any] | None = None
            if waiting:
                try:
                    message = self._arrived.get_nowait()
                except queue.Empty:
                    number = self.groups.take()
                    if number is not None and encode is not None:
                        positions = self.groups.group(number)
                        self.groups.driver_groups += 1
                        yield positions, encode(positions)
                        continue
            kind, value = message if message is not None else self._arrived.get()
            if kind == "end":
                return
            if kind == "error":
                raise value
            waiting = False
            yield value
