"""The sharded embedding cache: kill -9 mid-embedding, torn shards, old caches, sharing, device.

A deterministic fake encoder stands in for the model (the vector of a text is a function of
the text alone), so these tests run without the dense extra and the embeddings of a resumed
run can be compared with a clean run's exactly.
"""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from groundkit.harness import DenseRetriever
from groundkit.harness.dense._cache import EmbeddingCache, text_digest
from groundkit.harness.dense._loading import resolve_device
from groundkit.harness.dense._model import DenseIndex

MODEL = "fake/slow-encoder"
TOTAL = 320  # 10 groups of batch_size 4 * 8


def _vector(text: str) -> np.ndarray:
    raw = hashlib.blake2b(text.encode("utf-8"), digest_size=32).digest()
    return (np.frombuffer(raw, dtype=np.uint8).astype(np.float32) - 127.5)[:8]


class FakeEncoder:
    """A sentence-transformers stand-in that records what it was asked to embed."""

    max_seq_length = 128

    def __init__(self, delay: float = 0.0) -> None:
        self.delay = delay
        self.seen: list[str] = []

    def encode(self, texts: list[str], **_: Any) -> np.ndarray:
        time.sleep(self.delay)
        self.seen.extend(texts)
        return np.stack([_vector(t) for t in texts]) if texts else np.zeros((0, 8), np.float32)

    def get_sentence_embedding_dimension(self) -> int:
        return 8


def _texts() -> list[str]:
    return [f"passage {i} " + "word " * (i % 13) for i in range(TOTAL)]


def _settings() -> DenseRetriever:
    return DenseRetriever(model=MODEL, batch_size=4, device="cpu")


_CHILD = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    sys.path.insert(0, sys.argv[3])
    from test_harness_dense_cache import FakeEncoder, _settings, _texts
    from groundkit.harness.dense._model import DenseIndex

    DenseIndex(_texts(), _settings(), stage="s", cache_dir=Path(sys.argv[1]),
               model=FakeEncoder(float(sys.argv[2])))
    print("finished", flush=True)
    """
)


def _child(cache: Path, delay: float) -> subprocess.Popen[str]:
    here = str(Path(__file__).resolve().parent)
    return subprocess.Popen(
        [sys.executable, "-c", _CHILD, str(cache), str(delay), here],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _shard_folder(cache: Path) -> Path:
    return EmbeddingCache(cache, MODEL).path


def test_kill_9_mid_embedding_then_rerun_embeds_only_unfinished_groups(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    child = _child(cache, delay=0.4)
    deadline = time.monotonic() + 90
    folder = _shard_folder(cache)
    while time.monotonic() < deadline and len(list(folder.glob("*.keys"))) < 3:
        assert child.poll() is None, child.communicate()
        time.sleep(0.02)
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    assert child.returncode == -signal.SIGKILL
    # A torn last shard (vectors written, the process killed before its keys) and a torn
    # keys file are ignored.
    (folder / "999998-1-torn.npy").write_bytes(b"\x93NUMPY half a shard")
    (folder / "999999-1-torn.keys").write_bytes(b'groundkit-embeddings-shard 1\n{"rows": 32')
    survived = EmbeddingCache(cache, MODEL)
    complete = len(survived)
    assert survived.shards >= 3
    assert complete == 32 * survived.shards
    assert 0 < complete < TOTAL
    print(f"killed after {survived.shards} complete shards: {complete} of {TOTAL} texts kept")

    rerun = FakeEncoder()
    resumed = DenseIndex(_texts(), _settings(), stage="s", cache_dir=cache, model=rerun)
    assert resumed.embedded == TOTAL - complete
    assert len(rerun.seen) == TOTAL - complete

    clean = DenseIndex(
        _texts(), _settings(), stage="s", cache_dir=tmp_path / "clean", model=FakeEncoder()
    )
    assert clean.embedded == TOTAL
    np.testing.assert_array_equal(resumed.vectors, clean.vectors)
    # Everything is cached now: a third run embeds nothing.
    third = FakeEncoder()
    DenseIndex(_texts(), _settings(), stage="s", cache_dir=cache, model=third)
    assert third.seen == []


def test_concurrent_runs_sharing_a_cache_leave_it_whole(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    children = [_child(cache, delay=0.01) for _ in range(2)]
    for child in children:
        out, err = child.communicate(timeout=120)
        assert child.returncode == 0, err
        assert "finished" in out
    shared = EmbeddingCache(cache, MODEL)
    assert len(shared) == TOTAL
    assert shared.shards == len(list(shared.path.glob("*.keys")))  # every shard is whole
    assert not list(shared.path.glob(".tmp-*"))
    rows, _ = shared.lookup(_texts())
    assert None not in rows
    vectors = shared.vectors([r for r in rows if r is not None])
    np.testing.assert_array_equal(vectors, np.stack([_vector(t) for t in _texts()]))


def test_an_old_single_file_cache_is_read_through(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    texts = _texts()
    old = texts[:100]
    legacy = EmbeddingCache(cache, MODEL).legacy_path
    np.savez(
        legacy,
        keys=np.asarray([text_digest(t) for t in old], dtype="S16"),
        vectors=np.stack([_vector(t) for t in old]),
    )
    before = legacy.read_bytes()
    encoder = FakeEncoder()
    index = DenseIndex(texts, _settings(), stage="s", cache_dir=cache, model=encoder)
    assert index.embedded == TOTAL - 100
    assert set(encoder.seen) == set(texts[100:])
    expected = np.stack([_vector(t) for t in texts])
    expected /= np.linalg.norm(expected, axis=1, keepdims=True)
    np.testing.assert_allclose(index.vectors, expected, rtol=1e-6)
    assert legacy.read_bytes() == before  # read, never rewritten


def test_device_auto_prefers_cuda_then_mps_then_cpu(monkeypatch: pytest.MonkeyPatch) -> None:
    torch = pytest.importorskip("torch")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: True)
    assert resolve_device("auto") == "cuda"
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert resolve_device("auto") == "mps"
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: False)
    assert resolve_device("auto") == "cpu"
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert resolve_device("cpu") == "cpu"  # an explicit device is honoured
    assert resolve_device("cuda:1") == "cuda:1"


def test_an_unknown_device_is_a_config_error() -> None:
    with pytest.raises(ValueError, match="device"):
        DenseRetriever(device="tpu")


def test_the_index_records_its_device_and_reports_the_model_load_step(tmp_path: Path) -> None:
    phases: list[tuple[str, int, int]] = []
    index = DenseIndex(
        _texts()[:40],
        DenseRetriever(model=MODEL, batch_size=4, device="cpu"),
        stage="s",
        cache_dir=tmp_path,
        model=FakeEncoder(),
        progress=lambda *p: phases.append(p),
    )
    assert index.device == "cpu"
    assert phases[0] == ("load model", 1, 1)
    embeds = [p for p in phases if p[0] == "embed"]
    assert embeds[0] == ("embed", 0, 40)
    assert embeds[-1] == ("embed", 40, 40)
    assert [d for _, d, _ in embeds] == sorted(d for _, d, _ in embeds)


def test_executor_flag_and_missing_ray_extra(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from groundkit.cli.run._config import RunFlags, build_run_config
    from groundkit.harness import HarnessError
    from groundkit.harness.dense._ray import RAY_INSTALL_HINT, require_ray

    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.txt").write_text("alpha", encoding="utf-8")
    (tmp_path / "j.jsonl").write_text("", encoding="utf-8")
    flags = RunFlags(corpus=tmp_path / "docs", judgments=tmp_path / "j.jsonl", executor="ray")
    assert build_run_config(flags).executor == "ray"
    assert (
        build_run_config(
            RunFlags(corpus=tmp_path / "docs", judgments=tmp_path / "j.jsonl")
        ).executor
        == "local"
    )
    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(HarnessError, match=r"stage 's': executor = 'ray' needs Ray: ") as raised:
        require_ray("s")
    assert RAY_INSTALL_HINT in str(raised.value)
