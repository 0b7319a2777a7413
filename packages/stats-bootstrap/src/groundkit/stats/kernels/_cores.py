"""The cores this process may run on: the one count every parallel part of groundkit starts from.

The bootstrap's threads, and in ``groundkit-cli`` the BM25 analysis and search, chunking and
near-duplicate marking, all start from :func:`available_cores`.

Two limits apply: the processors the scheduler lets this process use (``sched_getaffinity``:
``taskset``, a cpuset) and the processor time its control group may take (a container's
``--cpus``, a Kubernetes CPU limit: ``cpu.max`` in cgroup v2, ``cpu.cfs_quota_us`` over
``cpu.cfs_period_us`` in cgroup v1). A pod limited to 2 CPUs on a 64-core node sees 64
processors but gets the time of 2: starting 64 workers there only adds memory and throttling.
The quota is rounded up (1.5 CPUs: 2 workers) and the tightest of the group and its
ancestors applies.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from pathlib import Path

__all__ = ["allowed_processors", "available_cores", "cgroup_cpu_limit"]

_CGROUP_ROOT = Path("/sys/fs/cgroup")
_PROC_CGROUP = Path("/proc/self/cgroup")


def allowed_processors() -> int:
    """The processors the scheduler lets this process use (``sched_getaffinity``)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - macOS and Windows
        return max(1, os.cpu_count() or 1)


def available_cores() -> int:
    """The cores this process may run on: its affinity, capped by its control group's quota."""
    cores = allowed_processors()
    limit = cgroup_cpu_limit()
    return cores if limit is None else max(1, min(cores, math.ceil(limit)))


def cgroup_cpu_limit(root: Path = _CGROUP_ROOT, membership: Path = _PROC_CGROUP) -> float | None:
    """The CPUs' worth of time this process's control group may use (``None``: no limit found).

    Args:
        root: Where the control group file systems are mounted.
        membership: The process's groups (``/proc/self/cgroup``: ``id:controllers:path``).

    Returns:
        The smallest quota over period of the group and its ancestors, in CPUs; ``None`` when
        no group sets one or the files cannot be read (not Linux, no ``/sys``).
    """
    try:
        lines = membership.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return None
    limits: list[float] = []
    for line in lines:
        fields = line.split(":", 2)
        if len(fields) != 3:
            continue
        _, controllers, path = fields
        if controllers == "":  # cgroup v2: one hierarchy
            limits.extend(_quotas(root, path, _v2_limit))
        elif "cpu" in controllers.split(","):
            mount = root / controllers if (root / controllers).is_dir() else root / "cpu"
            limits.extend(_quotas(mount, path, _v1_limit))
    return min(limits) if limits else None


def _quotas(mount: Path, path: str, read: Callable[[Path], float | None]) -> list[float]:
    """The limits set on the group at ``path`` under ``mount`` and on each of its ancestors.

    In a container with its own cgroup namespace the path is ``/`` and the mount is the
    group itself; otherwise the mount holds the whole tree and the group sits at ``path``.
    """
    parts = [p for p in path.split("/") if p not in ("", ".", "..")]
    folders = [mount.joinpath(*parts[:depth]) for depth in range(len(parts), -1, -1)]
    found = []
    for folder in folders:
        limit = read(folder)
        if limit is not None:
            found.append(limit)
    return found


def _v2_limit(folder: Path) -> float | None:
    """``cpu.max`` of a cgroup v2 group: ``"quota period"`` or ``"max period"``."""
    fields = _read(folder / "cpu.max").split()
    if len(fields) != 2 or fields[0] == "max":
        return None
    return _ratio(fields[0], fields[1])


def _v1_limit(folder: Path) -> float | None:
    """``cpu.cfs_quota_us`` over ``cpu.cfs_period_us`` of a cgroup v1 group (-1: none)."""
    return _ratio(_read(folder / "cpu.cfs_quota_us"), _read(folder / "cpu.cfs_period_us"))


def _ratio(quota: str, period: str) -> float | None:
    """Quota over period, when both are positive whole numbers."""
    try:
        over, per = int(quota), int(period)
    except ValueError:
        return None
    return over / per if over > 0 and per > 0 else None


def _read(path: Path) -> str:
    """The file's text stripped, or ``""`` when it is absent or unreadable."""
    try:
        return path.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return ""
