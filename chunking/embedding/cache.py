"""The embedding cache: vectors kept in memory for the process, and optionally on disk
as ``.npy`` files (never pickles), keyed by model and the SHA-1 of the text.

The disk cache outlives the process, so a restarted app does not embed a document it
has seen before. It is bounded: once it holds more than :func:`disk_limit` bytes, the
vectors used longest ago are deleted (:func:`prune`); reading a vector marks it used.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import tempfile
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

from ..runtime.limits import CACHE_BOUNDS
from ..runtime.lru import BoundedLRU, CacheStats

#: Vectors kept in memory before the least recently used are dropped, and the bytes
#: they may take (vectors, their keys and array headers): ``CACHE_BOUNDS`` in
#: :mod:`chunking.runtime.limits` states both (100,000 and 192 MB: 384 floats each fill
#: the entries first, a 1,024-dimension model the bytes).
MAX_CACHED_VECTORS = CACHE_BOUNDS["embedding_vectors"].max_entries
MAX_CACHED_VECTOR_BYTES = CACHE_BOUNDS["embedding_vectors"].max_bytes or 0
#: Environment variable: most megabytes the disk cache may hold (default 1024).
DISK_LIMIT_ENV = "CHUNK_EXPLORER_EMBEDDING_CACHE_MB"
DEFAULT_DISK_LIMIT_MB = 1024


def text_key(text: str) -> str:
    """The cache key of a text: the SHA-1 of its UTF-8 bytes."""
    return hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()


def default_cache_dir() -> Path:
    """Where the optional disk cache lives: ``~/.cache/chunk-explorer/embeddings``."""
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "chunk-explorer" / "embeddings"


# --- the in-memory cache shared by every embedder ----------------------------------

#: Bytes counted for one kept vector besides its buffer: the array's header and the
#: (model, SHA-1) key.
VECTOR_OVERHEAD = 112 + 200
_VECTORS: BoundedLRU[tuple[str, str], np.ndarray] = BoundedLRU(
    MAX_CACHED_VECTORS, MAX_CACHED_VECTOR_BYTES, name="embedding_vectors"
)


def memory_get(model: str, keys: Sequence[str]) -> list[np.ndarray | None]:
    """The vectors kept for ``keys`` (None where there is none); each found one becomes
    the most recently used."""
    return [_VECTORS.get((model, k)) for k in keys]


def memory_put(model: str, items: Iterable[tuple[str, np.ndarray]]) -> None:
    """Keep vectors; the least recently used go once either bound is passed."""
    for key, vector in items:
        _VECTORS.put((model, key), vector, size=int(vector.nbytes) + VECTOR_OVERHEAD)


def memory_stats() -> CacheStats:
    """How many vectors and bytes the memory cache holds (and its hits and evictions)."""
    return _VECTORS.stats()


def clear_cache() -> None:
    """Forget every vector kept in memory (the disk cache is untouched)."""
    _VECTORS.clear()


# --- the optional disk cache (.npy files, never pickle) ------------------------------


def _model_dir_name(model: str) -> str:
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", model).strip("._")[-60:] or "model"
    return f"{safe}-{text_key(model)[:8]}"


def _disk_path(cache_dir: Path, model: str, key: str) -> Path:
    return cache_dir / _model_dir_name(model) / key[:2] / f"{key}.npy"


def disk_get(cache_dir: Path, model: str, key: str, dimension: int) -> np.ndarray | None:
    path = _disk_path(cache_dir, model, key)
    try:
        vector = np.load(path, allow_pickle=False)
    except (OSError, ValueError):
        return None
    if vector.shape != (dimension,) or vector.dtype != np.float32:
        return None  # a stale or damaged file: embed again and overwrite it
    _touch(path)
    return vector


def _touch(path: Path) -> None:
    """Mark a vector as used now, so that :func:`prune` deletes it last."""
    with contextlib.suppress(OSError):
        os.utime(path)


def disk_put(cache_dir: Path, model: str, key: str, vector: np.ndarray) -> None:
    path = _disk_path(cache_dir, model, key)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        with os.fdopen(fd, "wb") as f:
            np.save(f, vector, allow_pickle=False)
        os.replace(tmp, path)  # atomic: readers never see half a file
    except OSError:
        return  # a cache that cannot be written only costs time
    _note_written(cache_dir, path)


# --- the disk cache's size limit ------------------------------------------------------

_WRITTEN: dict[Path, int] = {}
_WRITTEN_LOCK = threading.Lock()


def disk_limit() -> int:
    """Most bytes the disk cache may hold: ``CHUNK_EXPLORER_EMBEDDING_CACHE_MB`` megabytes
    (1024 when unset or not a positive whole number)."""
    raw = os.environ.get(DISK_LIMIT_ENV, "").strip()
    megabytes = int(raw) if raw.isdigit() and int(raw) > 0 else DEFAULT_DISK_LIMIT_MB
    return megabytes * 2**20


def _note_written(cache_dir: Path, path: Path) -> None:
    """Count what this process wrote; prune on the first write and then after every
    tenth of the limit, so that checking the size costs little."""
    try:
        size = path.stat().st_size
    except OSError:
        return
    limit = disk_limit()
    with _WRITTEN_LOCK:
        first = cache_dir not in _WRITTEN
        _WRITTEN[cache_dir] = _WRITTEN.get(cache_dir, 0) + size
        due = first or _WRITTEN[cache_dir] >= limit // 10
        if due:
            _WRITTEN[cache_dir] = 0
    if due:
        prune(cache_dir, limit)


def prune(cache_dir: Path, limit: int | None = None) -> int:
    """Delete the vectors used longest ago until the cache holds at most ``limit`` bytes
    (default :func:`disk_limit`); returns the bytes left. Safe while others write: a
    file that vanished in between is skipped."""
    limit = disk_limit() if limit is None else limit
    files = []
    for path in cache_dir.glob("*/*/*.npy"):
        try:
            info = path.stat()
        except OSError:
            continue
        files.append((info.st_mtime, info.st_size, path))
    total = sum(size for _, size, _ in files)
    for _, size, path in sorted(files, key=lambda f: f[0]):
        if total <= limit:
            break
        path.unlink(missing_ok=True)
        total -= size
    return total
