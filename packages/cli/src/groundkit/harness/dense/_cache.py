"""The embedding cache: append-only shards, one per encoder batch, safe against kill -9.

Layout: one folder per model in the cache folder, named after the model id
(``<slug>-<sha256[:12]>/``). Each batch of new embeddings is one shard of two files:

* ``NNNNNN-<pid>-<random>.npy``: the raw float32 vectors (before normalisation), ``np.save``;
* ``NNNNNN-<pid>-<random>.keys``: written *after* its ``.npy``: a magic line, a JSON header
  line (``rows``, ``dim``, ``checksum``: BLAKE2b of the ``.npy`` bytes followed by the keys)
  and the ``rows`` 16-byte BLAKE2b digests of the embedded texts (document prefix included).

Both files are written to a temporary name and renamed, so a shard is either whole or absent
under its final name. A shard counts only when its ``.keys`` file is there and its lengths and
checksum match: a ``.npy`` without its keys (the process was killed between the two renames) or
a torn pair (a power cut after a rename whose data never reached the disk) is ignored and its
texts are embedded again. Neither file is fsynced: the checksum, not the disk, decides whether
a shard is whole, so a flush costs no disk round trip. Shard names are unique per process and
call, so concurrent runs sharing a cache never write the same file; when two of them embed the
same text, the first shard in name order wins (the vectors are the same model's).

The single ``<slug>-<tag>.npz`` file of groundkit 0.x caches (``keys``, ``vectors``) is read
through, never rewritten: its embeddings are found, new ones go to shards.
"""

from __future__ import annotations

import hashlib
import io
import itertools
import json
import os
import re
import secrets
import tempfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

__all__ = ["EmbeddingCache", "text_digest"]

FloatMatrix = npt.NDArray[np.float32]
_MAGIC = b"groundkit-embeddings-shard 1\n"
_DIGEST = 16
_SERIAL = itertools.count()  # shard names unique within a process, whatever the cache object


def text_digest(text: str) -> bytes:
    """The 16-byte BLAKE2b digest a text is cached under."""
    return hashlib.blake2b(text.encode("utf-8"), digest_size=_DIGEST).digest()


def _checksum(vectors: bytes, keys: bytes) -> str:
    digest = hashlib.blake2b(vectors, digest_size=16)
    digest.update(keys)
    return digest.hexdigest()


def _write_atomic(path: Path, data: bytes) -> None:
    handle, temp = tempfile.mkstemp(prefix=".tmp-", dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        Path(temp).replace(path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def _read_shard(keys_path: Path) -> tuple[list[bytes], FloatMatrix] | None:
    """A shard's digests and vectors, or ``None`` when it is incomplete or torn."""
    try:
        raw = keys_path.read_bytes()
        vector_bytes = keys_path.with_suffix(".npy").read_bytes()
    except OSError:
        return None
    if not raw.startswith(_MAGIC):
        return None
    header_line, _, keys = raw[len(_MAGIC) :].partition(b"\n")
    try:
        header = json.loads(header_line)
        rows, dim, checksum = int(header["rows"]), int(header["dim"]), str(header["checksum"])
    except (ValueError, KeyError, TypeError):
        return None
    if len(keys) != rows * _DIGEST or _checksum(vector_bytes, keys) != checksum:
        return None
    try:
        vectors = np.load(io.BytesIO(vector_bytes), allow_pickle=False)
    except (OSError, ValueError):
        return None
    if vectors.shape != (rows, dim) or vectors.dtype != np.float32:
        return None
    return [keys[i : i + _DIGEST] for i in range(0, len(keys), _DIGEST)], vectors


def _read_legacy(path: Path) -> tuple[list[bytes], FloatMatrix] | None:
    try:
        with np.load(path, allow_pickle=False) as data:
            keys = data["keys"]
            vectors = data["vectors"].astype(np.float32, copy=False)
    except (OSError, KeyError, ValueError):
        return None
    if keys.ndim != 1 or vectors.ndim != 2 or len(keys) != len(vectors):
        return None
    # numpy drops the trailing NUL bytes of an "S16" value: put them back.
    return [bytes(k).ljust(_DIGEST, b"\0") for k in keys.tolist()], vectors


class EmbeddingCache:
    """Embeddings of one model, keyed by a digest of the embedded text.

    Args:
        folder: The cache folder (the model's shard folder is created on first write).
        model_id: The model name or path the embeddings come from.

    Attributes:
        path: The model's shard folder.
        legacy_path: The single-file cache of earlier versions (read, never written).
        shards: Complete shards read when the cache was opened.
    """

    def __init__(self, folder: Path, model_id: str) -> None:
        slug = re.sub(r"[^A-Za-z0-9._-]+", "_", model_id).strip("._")[-60:] or "model"
        tag = hashlib.sha256(model_id.encode("utf-8")).hexdigest()[:12]
        self.path = folder / f"{slug}-{tag}"
        self.legacy_path = folder / f"{slug}-{tag}.npz"
        self._parts: list[FloatMatrix] = []
        self._matrix: FloatMatrix | None = None
        self._index: dict[bytes, int] = {}
        self._rows = 0
        self.shards = 0
        self._load()

    def _take(self, keys: list[bytes], vectors: FloatMatrix) -> None:
        if self._parts and vectors.shape[1] != self._parts[0].shape[1]:
            return  # another width: not this model's vectors
        self._parts.append(vectors)
        self._matrix = None
        for row, key in enumerate(keys, start=self._rows):
            self._index.setdefault(key, row)
        self._rows += len(keys)

    def _load(self) -> None:
        legacy = _read_legacy(self.legacy_path)
        if legacy is not None:
            self._take(*legacy)
        if not self.path.is_dir():
            return
        for keys_path in sorted(self.path.glob("*.keys")):
            shard = _read_shard(keys_path)
            if shard is not None:
                self._take(*shard)
                self.shards += 1

    def __len__(self) -> int:
        return len(self._index)

    def lookup(self, texts: Sequence[str]) -> tuple[list[int | None], list[bytes]]:
        """Row of each text in the cache (``None`` when absent), and the texts' digests."""
        digests = [text_digest(text) for text in texts]
        index = self._index
        return [index.get(d) for d in digests], digests

    def vectors(self, rows: Sequence[int]) -> FloatMatrix:
        """Cached vectors by row."""
        if self._matrix is None:
            self._matrix = np.concatenate(self._parts) if len(self._parts) != 1 else self._parts[0]
        return self._matrix[np.asarray(rows, dtype=np.int64)]

    def add(self, digests: Sequence[bytes], vectors: FloatMatrix) -> None:
        """Append new embeddings as one shard (texts already cached are left out)."""
        fresh = [i for i, d in enumerate(digests) if d not in self._index]
        if not fresh:
            return
        keys = [digests[i] for i in fresh]
        chosen = np.ascontiguousarray(vectors[fresh] if len(fresh) < len(digests) else vectors)
        chosen = chosen.astype(np.float32, copy=False)
        buffer = io.BytesIO()
        np.save(buffer, chosen, allow_pickle=False)
        vector_bytes = buffer.getvalue()
        key_bytes = b"".join(keys)
        header = {
            "rows": len(keys),
            "dim": int(chosen.shape[1]),
            "checksum": _checksum(vector_bytes, key_bytes),
        }
        self.path.mkdir(parents=True, exist_ok=True)
        name = f"{self.shards + next(_SERIAL):06d}-{os.getpid()}-{secrets.token_hex(4)}"
        _write_atomic(self.path / f"{name}.npy", vector_bytes)
        # The keys last: a shard without them is incomplete and ignored.
        _write_atomic(
            self.path / f"{name}.keys",
            _MAGIC + json.dumps(header).encode("ascii") + b"\n" + key_bytes,
        )
        self._take(keys, chosen)
