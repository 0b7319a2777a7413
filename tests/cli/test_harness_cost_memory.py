"""The per-stage peak memory: a high-water mark reset that does not take is not trusted.

A sandboxed ``/proc`` can accept the write to ``clear_refs`` and keep the old high-water
mark; the stage's peak was then an earlier stretch's (a bm25 stage showed 4.1 GiB on one
GPU machine where the CPU machines showed 0.2 GiB). The meter checks the reset and falls
back to the resident set after minus before, saying so.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from groundkit.harness.run import _cost
from groundkit.harness.run._cost import CostMeter

GIB_KIB = 1 << 20


def _status(folder: Path, rss_kib: int, hwm_kib: int) -> None:
    (folder / "status").write_text(
        f"Name:\tpython\nVmHWM:\t{hwm_kib} kB\nVmRSS:\t{rss_kib} kB\nThreads:\t1\n",
        encoding="ascii",
    )


def test_a_reset_that_does_not_take_falls_back_to_the_resident_delta(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The write is accepted (a plain file) but the high-water mark stays at 4 GiB.
    _status(tmp_path, rss_kib=200 * 1024, hwm_kib=4 * GIB_KIB)
    (tmp_path / "clear_refs").write_text("", encoding="ascii")
    monkeypatch.setattr(_cost, "_PROC", tmp_path)
    meter = CostMeter()
    _status(tmp_path, rss_kib=260 * 1024, hwm_kib=4 * GIB_KIB)
    cost = meter.record(object(), queries=1)
    assert cost.memory_method == "rss_delta"
    assert cost.peak_memory_bytes == 60 * 1024 * 1024


def test_a_refused_reset_falls_back_to_the_resident_delta(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _status(tmp_path, rss_kib=100 * 1024, hwm_kib=300 * 1024)
    monkeypatch.setattr(_cost, "_PROC", tmp_path)  # no clear_refs: the write fails
    (tmp_path / "clear_refs").mkdir()
    meter = CostMeter()
    _status(tmp_path, rss_kib=90 * 1024, hwm_kib=300 * 1024)
    cost = meter.record(object(), queries=1)
    assert (cost.memory_method, cost.peak_memory_bytes) == ("rss_delta", 0)


def test_no_proc_records_no_peak(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_cost, "_PROC", tmp_path / "absent")
    cost = CostMeter().record(object(), queries=1)
    assert (cost.memory_method, cost.peak_memory_bytes) == (None, None)


def _resident_kib() -> int:
    (resident,) = _cost._status_kib("VmRSS")
    assert resident is not None
    return resident


@pytest.mark.skipif(sys.platform != "linux", reason="the kernel's /proc high-water mark")
def test_a_real_reset_measures_only_the_stretch() -> None:
    # An earlier, larger peak of this process is not this stretch's; a peak freed before the
    # stretch ends is (the high-water mark, not the resident set at the end). The block's
    # growth is read independently, while it is held: a worker's other threads may free
    # memory meanwhile (CI once saw a stretch whose resident set never rose), so an attempt
    # counts only when the kernel showed the block resident.
    earlier = np.ones(64 * 1024 * 1024 // 8)
    del earlier
    if CostMeter().record(object(), queries=1).memory_method != "rss_peak_reset":
        pytest.skip("this kernel does not reset the high-water mark")
    for _ in range(5):
        meter = CostMeter()
        start = _resident_kib()
        block = np.ones(32 * 1024 * 1024 // 8)  # 32 MiB touched during the stretch
        grown = (_resident_kib() - start) * 1024
        del block  # freed before the stretch ends: only the high-water mark still has it
        cost = meter.record(object(), queries=1)
        if grown < 30 * 1024 * 1024:
            continue
        assert cost.memory_method == "rss_peak_reset"
        assert cost.peak_memory_bytes is not None
        assert grown - 4 * 1024 * 1024 <= cost.peak_memory_bytes < 60 * 1024 * 1024
        return
    pytest.skip("the kernel never showed a touched 32 MiB block as resident")
