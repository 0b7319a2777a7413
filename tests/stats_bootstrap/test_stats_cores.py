"""The cores groundkit uses: the process's affinity, capped by its control group's CPU quota.

Each case builds a fake ``/sys/fs/cgroup`` tree and ``/proc/self/cgroup`` under ``tmp_path``,
laid out as the kernel lays them out (cgroup v2's ``cpu.max``, cgroup v1's
``cpu.cfs_quota_us`` and ``cpu.cfs_period_us``, with and without a cgroup namespace).
"""

from __future__ import annotations

import math
import os
from pathlib import Path

import pytest

from groundkit.stats.kernels import _cores, available_cores, cgroup_cpu_limit


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _membership(tmp_path: Path, text: str) -> Path:
    _write(tmp_path / "proc" / "cgroup", text)
    return tmp_path / "proc" / "cgroup"


def test_cgroup_v2_in_a_container_namespace(tmp_path: Path) -> None:
    # docker --cpus=1.5: the container's group is the mount's root.
    root = tmp_path / "cgroup"
    _write(root / "cpu.max", "150000 100000\n")
    assert cgroup_cpu_limit(root, _membership(tmp_path, "0::/\n")) == 1.5


def test_cgroup_v2_takes_the_tightest_ancestor(tmp_path: Path) -> None:
    # A pod limited to 4 CPUs, its container to 2; the process sits in a leaf with no limit.
    root = tmp_path / "cgroup"
    _write(root / "kubepods" / "cpu.max", "400000 100000\n")
    _write(root / "kubepods" / "pod1" / "cpu.max", "200000 100000\n")
    _write(root / "kubepods" / "pod1" / "leaf" / "cpu.max", "max 100000\n")
    membership = _membership(tmp_path, "0::/kubepods/pod1/leaf\n")
    assert cgroup_cpu_limit(root, membership) == 2.0


def test_no_limit_anywhere_is_none(tmp_path: Path) -> None:
    root = tmp_path / "cgroup"
    _write(root / "user.slice" / "cpu.max", "max 100000\n")
    assert cgroup_cpu_limit(root, _membership(tmp_path, "0::/user.slice\n")) is None
    # This machine's layout (cgroup v1, quota -1) reads as no limit too.
    _write(root / "cpu" / "cpu.cfs_quota_us", "-1\n")
    _write(root / "cpu" / "cpu.cfs_period_us", "100000\n")
    assert cgroup_cpu_limit(root, _membership(tmp_path, "2:cpuacct:/\n1:cpu:/\n0::/\n")) is None


def test_cgroup_v1_with_joined_controllers(tmp_path: Path) -> None:
    # Without a cgroup namespace the mount shows the container's group at its root, so the
    # host path below it does not exist: the limit is found on the way up.
    root = tmp_path / "cgroup"
    _write(root / "cpu,cpuacct" / "cpu.cfs_quota_us", "250000\n")
    _write(root / "cpu,cpuacct" / "cpu.cfs_period_us", "100000\n")
    membership = _membership(tmp_path, "4:cpu,cpuacct:/docker/abc\n3:memory:/docker/abc\n")
    assert cgroup_cpu_limit(root, membership) == 2.5


@pytest.mark.parametrize(
    "text",
    ["garbage\n", "", "0::/x\n", "1:cpu:/../../etc\n"],
    ids=["garbage", "empty", "missing group", "path escaping the mount"],
)
def test_unreadable_or_odd_membership_is_no_limit(tmp_path: Path, text: str) -> None:
    root = tmp_path / "cgroup"
    _write(tmp_path / "etc" / "cpu.cfs_quota_us", "100000")  # never read: ".." is dropped
    _write(tmp_path / "etc" / "cpu.cfs_period_us", "100000")
    assert cgroup_cpu_limit(root, _membership(tmp_path, text)) is None
    assert cgroup_cpu_limit(root, tmp_path / "absent") is None


@pytest.mark.parametrize("text", ["0 100000", "100000 0", "x 100000", "100000", "-5 100000"])
def test_malformed_quotas_are_ignored(tmp_path: Path, text: str) -> None:
    root = tmp_path / "cgroup"
    _write(root / "cpu.max", text)
    assert cgroup_cpu_limit(root, _membership(tmp_path, "0::/\n")) is None


@pytest.mark.parametrize(
    ("limit", "affinity", "expected"), [(1.5, 16, 2), (0.2, 16, 1), (8.0, 4, 4), (None, 3, 3)]
)
def test_available_cores_is_the_affinity_capped_by_the_quota(
    monkeypatch: pytest.MonkeyPatch, limit: float | None, affinity: int, expected: int
) -> None:
    monkeypatch.setattr(_cores, "cgroup_cpu_limit", lambda: limit)
    monkeypatch.setattr(os, "sched_getaffinity", lambda _pid: set(range(affinity)), raising=False)
    assert available_cores() == expected


def test_this_machine() -> None:
    affinity = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    limit = cgroup_cpu_limit()
    assert available_cores() == (
        affinity if limit is None else min(affinity or 1, math.ceil(limit))
    )


def test_the_harness_counts_the_same_cores() -> None:
    harness = pytest.importorskip("groundkit.harness._cores")  # absent when stats stands alone
    assert harness.available_cores is available_cores
