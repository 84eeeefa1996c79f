"""The embedding cache: vectors kept in memory for the process, and optionally on disk
as ``.npy`` files (never pickles), keyed by model and the SHA-1 of the text."""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

#: Vectors kept in memory before the oldest are dropped (384 floats each: ~150 MB).
MAX_CACHED_VECTORS = 100_000


def text_key(text: str) -> str:
    """The cache key of a text: the SHA-1 of its UTF-8 bytes."""
    return hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()


def default_cache_dir() -> Path:
    """Where the optional disk cache lives: ``~/.cache/chunk-explorer/embeddings``."""
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "chunk-explorer" / "embeddings"


# --- the in-memory cache shared by every embedder ----------------------------------

_VECTORS: dict[tuple[str, str], np.ndarray] = {}
_VECTORS_LOCK = threading.Lock()


def memory_get(model: str, keys: Sequence[str]) -> list[np.ndarray | None]:
    with _VECTORS_LOCK:
        return [_VECTORS.get((model, k)) for k in keys]


def memory_put(model: str, items: Iterable[tuple[str, np.ndarray]]) -> None:
    with _VECTORS_LOCK:
        for key, vector in items:
            _VECTORS[(model, key)] = vector
        while len(_VECTORS) > MAX_CACHED_VECTORS:  # oldest first (insertion order)
            del _VECTORS[next(iter(_VECTORS))]


def clear_cache() -> None:
    """Forget every vector kept in memory (the disk cache is untouched)."""
    with _VECTORS_LOCK:
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
    return vector


def disk_put(cache_dir: Path, model: str, key: str, vector: np.ndarray) -> None:
    path = _disk_path(cache_dir, model, key)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        with os.fdopen(fd, "wb") as f:
            np.save(f, vector, allow_pickle=False)
        os.replace(tmp, path)  # atomic: readers never see half a file
    except OSError:
        pass  # a cache that cannot be written only costs time
