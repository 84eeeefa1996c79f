"""Maps of chunk embeddings: 2D or 3D coordinates from UMAP, or PCA when UMAP cannot work.

>>> import numpy as np
>>> vectors = np.eye(4, 8, dtype=np.float32)
>>> projection = project(vectors, dims=2)        # 4 points: too few for UMAP
>>> projection.method, projection.coords.shape
('pca', (4, 2))

UMAP is reproducible here: ``random_state`` is fixed (:data:`RANDOM_STATE`, 42), which
also makes UMAP run single-threaded. Neighbours are computed exactly with numpy (cosine
distance) up to :data:`EXACT_KNN_LIMIT` points and handed to UMAP, which skips both its
slow pure-Python pairwise path for small data and the long compile of pynndescent.

The first UMAP fit of a process compiles UMAP's numba functions (about 20 seconds on a
laptop). :func:`warm_up` starts that compile in a background thread, once per process.
UMAP does not ask numba to keep what it compiles, so :func:`load_umap` switches numba's
on-disk cache on for UMAP's functions and points ``NUMBA_CACHE_DIR`` at
``~/.cache/chunk-explorer/numba`` (unless it is already set): the next process loads the
compiled code instead of compiling again.

Projections are remembered in an in-process LRU keyed by the SHA-1 of the vectors and
every parameter, so showing the same map again costs nothing.

This module has no user interface and imports umap (and with it numba) only inside
functions.
"""

from __future__ import annotations

import hashlib
import os
import sys
import threading
import time
import warnings
from collections import OrderedDict
from dataclasses import dataclass, replace
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

#: The seed of every UMAP fit: the same vectors always give the same map.
RANDOM_STATE = 42
#: Fewer points than this are projected with PCA (UMAP's graph needs neighbours).
MIN_UMAP_POINTS = 10
DEFAULT_NEIGHBORS = 15
DEFAULT_MIN_DIST = 0.1
#: Optimisation rounds; UMAP's own default for small data is 500, which looks the same
#: for a chunk map and takes 2.5 times longer.
DEFAULT_EPOCHS = 200
#: Up to this many points, neighbours are found exactly with numpy (n² work).
EXACT_KNN_LIMIT = 20_000
#: Projections kept in memory.
CACHE_ENTRIES = 32
METHODS = ("umap", "pca")
NUMBA_CACHE_ENV = "NUMBA_CACHE_DIR"
#: UMAP's modules whose numba functions are compiled for a fit.
_UMAP_MODULES = ("umap.umap_", "umap.layouts", "umap.utils", "umap.spectral", "umap.distances")
_BLOCK_ROWS = 1024


class MapError(ValueError):
    """The vectors cannot be projected (wrong shape, wrong parameters)."""


@dataclass(frozen=True, eq=False)
class Projection:
    """Coordinates of each row, how they were made and, for PCA, why not UMAP.

    ``coords`` is read-only, shape ``(n, dims)``. ``method`` is ``"umap"`` or ``"pca"``;
    ``reason`` says why PCA was used when UMAP was asked for (``None`` otherwise).
    ``seconds`` is the time the projection took when it was computed; ``from_cache`` is
    true when this call found it in the LRU.
    """

    coords: np.ndarray
    method: str
    reason: str | None
    dims: int
    n_neighbors: int
    seconds: float
    from_cache: bool = False

    def __len__(self) -> int:
        return len(self.coords)


# --- numba's disk cache -----------------------------------------------------------------


def numba_cache_dir() -> Path:
    """``~/.cache/chunk-explorer/numba`` (``$XDG_CACHE_HOME`` is honoured)."""
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "chunk-explorer" / "numba"


def configure_numba_cache() -> str:
    """Point ``NUMBA_CACHE_DIR`` at :func:`numba_cache_dir` unless it is set; return it.

    Numba reads the variable when it is imported; if it already was, its configuration
    is reloaded so that the directory still applies.
    """
    if not os.environ.get(NUMBA_CACHE_ENV):
        os.environ[NUMBA_CACHE_ENV] = str(numba_cache_dir())
    if "numba" in sys.modules:
        from numba.core import config

        # CACHE_DIR is set by numba's config loader, so type checkers cannot see it.
        if os.environ[NUMBA_CACHE_ENV] != getattr(config, "CACHE_DIR", None):
            config.reload_config()
    return os.environ[NUMBA_CACHE_ENV]


def _enable_disk_cache(module: ModuleType) -> int:
    """Switch numba's disk cache on for the module's jitted functions; return how many.

    UMAP declares its functions without ``cache=True``; a dispatcher's cache can be
    switched on before its first compile. Numba's cache is keyed by the Python function,
    not by compile options, so parallel variants (unused with a fixed random state) and
    second dispatchers of one function are left alone. Anything unexpected leaves the
    cache off.
    """
    from numba.core.dispatcher import Dispatcher

    count = 0
    seen: set[int] = set()
    for value in vars(module).values():
        if not isinstance(value, Dispatcher):
            continue
        cache = getattr(value, "_cache", None)
        if type(cache).__name__ != "NullCache" or not hasattr(value, "enable_caching"):
            continue
        if getattr(value, "targetoptions", {}).get("parallel") or id(value.py_func) in seen:
            continue
        seen.add(id(value.py_func))
        try:
            value.enable_caching()
        except Exception:  # e.g. a function whose source cannot be located
            continue
        count += 1
    return count


_UMAP: ModuleType | None = None
_UMAP_LOCK = threading.Lock()
#: Facts about loading UMAP in this process (seconds, cached functions).
LOAD_INFO: dict[str, Any] = {}


def load_umap() -> ModuleType:
    """Import umap once, with numba's disk cache configured and enabled for it.

    Raises ImportError with what to install when umap-learn is missing.
    """
    global _UMAP
    with _UMAP_LOCK:
        if _UMAP is not None:
            return _UMAP
        started = time.perf_counter()
        LOAD_INFO["numba_cache_dir"] = configure_numba_cache()
        try:
            import importlib

            umap = importlib.import_module("umap")
            modules = [importlib.import_module(name) for name in _UMAP_MODULES]
        except ImportError as exc:
            raise ImportError(
                "umap-learn is not installed; install the app extra: "
                f"pip install 'chunk-explorer[app]' ({exc})"
            ) from exc
        LOAD_INFO["cached_functions"] = sum(_enable_disk_cache(m) for m in modules)
        LOAD_INFO["import_seconds"] = time.perf_counter() - started
        _UMAP = umap
        return umap


# --- neighbours, PCA, UMAP ----------------------------------------------------------------


def unit_rows(vectors: np.ndarray) -> np.ndarray:
    """Rows scaled to length 1 as float32 (zero rows stay zero)."""
    v = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(v, axis=1, keepdims=True)
    return v / np.where(norms > 0, norms, 1)


def exact_knn(vectors: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` nearest rows of every row by cosine distance, itself first.

    Returns ``(indices, distances)``, both ``(n, k)``, nearest first, as UMAP's
    ``precomputed_knn`` expects. Computed in blocks of rows to bound memory.
    """
    x = unit_rows(vectors)
    n = len(x)
    if not 1 <= k <= n:
        raise MapError(f"k must be between 1 and the number of rows ({n}); got {k}")
    indices = np.empty((n, k), dtype=np.int64)
    distances = np.empty((n, k), dtype=np.float32)
    for lo in range(0, n, _BLOCK_ROWS):
        block = 1.0 - x[lo : lo + _BLOCK_ROWS] @ x.T
        rows = np.arange(len(block))
        block[rows, lo + rows] = -np.inf  # every row is its own nearest neighbour
        part = np.argpartition(block, k - 1, axis=1)[:, :k]
        part_d = np.take_along_axis(block, part, axis=1)
        order = np.argsort(part_d, axis=1, kind="stable")
        indices[lo : lo + len(block)] = np.take_along_axis(part, order, axis=1)
        best = np.take_along_axis(part_d, order, axis=1)
        distances[lo : lo + len(block)] = np.clip(best, 0.0, 2.0)
    return indices, distances


def pca(vectors: np.ndarray, dims: int) -> np.ndarray:
    """The first ``dims`` principal components of the rows (zeros where there are none).

    Signs are fixed (each component's largest loading is positive), so the result is
    the same on every run.
    """
    x = np.asarray(vectors, dtype=np.float64)
    out = np.zeros((len(x), dims), dtype=np.float32)
    if len(x) < 2:
        return out
    centred = x - x.mean(axis=0)
    u, s, vt = np.linalg.svd(centred, full_matrices=False)
    keep = min(dims, int(np.sum(s > 1e-12 * max(1.0, float(s[0])))))
    for j in range(keep):
        sign = 1.0 if vt[j, np.argmax(np.abs(vt[j]))] >= 0 else -1.0
        out[:, j] = u[:, j] * s[j] * sign
    return out


def umap_problem(vectors: np.ndarray, dims: int) -> str | None:
    """Why UMAP cannot map these rows (then PCA is used), or ``None`` if it can."""
    n = len(vectors)
    if n < MIN_UMAP_POINTS:
        return (
            f"only {n} chunk{'s' if n != 1 else ''} to map: UMAP needs at least "
            f"{MIN_UMAP_POINTS} points to build its neighbour graph, so the map shows "
            "the principal components (PCA) instead"
        )
    distinct = len(np.unique(np.round(unit_rows(vectors), 5), axis=0))
    if distinct <= dims + 1:
        return (
            f"the chunks have only {distinct} distinct embedding"
            f"{'s' if distinct != 1 else ''}, too few for UMAP's {dims}D layout, so the map "
            "shows the principal components (PCA) instead"
        )
    return None


def _umap_coords(
    vectors: np.ndarray,
    dims: int,
    n_neighbors: int,
    min_dist: float,
    random_state: int,
    epochs: int,
) -> np.ndarray:
    umap = load_umap()
    x = unit_rows(vectors)
    knn = exact_knn(x, n_neighbors) if len(x) <= EXACT_KNN_LIMIT else (None, None, None)
    reducer = umap.UMAP(
        n_components=dims,
        n_neighbors=n_neighbors,
        min_dist=min_dist,
        metric="cosine",
        random_state=random_state,
        n_epochs=epochs,
        n_jobs=1,
        precomputed_knn=knn,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # UMAP warns about its own defaults
        coords = reducer.fit_transform(x)
    coords = np.asarray(coords, dtype=np.float32)
    if coords.shape != (len(x), dims) or not np.isfinite(coords).all():
        raise MapError(f"UMAP returned {coords.shape} coordinates with non-finite values")
    return coords


# --- the cached entry point ----------------------------------------------------------------


def array_key(vectors: np.ndarray) -> str:
    """SHA-1 of an array's dtype, shape and bytes: the cache key of its projections."""
    a = np.ascontiguousarray(vectors)
    digest = hashlib.sha1(f"{a.dtype.str}{a.shape}".encode(), usedforsecurity=False)
    digest.update(a.data)
    return digest.hexdigest()


_CACHE: OrderedDict[tuple, Projection] = OrderedDict()
_CACHE_LOCK = threading.Lock()
_FIT_LOCK = threading.Lock()


def clear_cache() -> None:
    """Forget every remembered projection."""
    with _CACHE_LOCK:
        _CACHE.clear()


def _remember(key: tuple, projection: Projection) -> None:
    with _CACHE_LOCK:
        _CACHE[key] = projection
        _CACHE.move_to_end(key)
        while len(_CACHE) > CACHE_ENTRIES:
            _CACHE.popitem(last=False)


def _recall(key: tuple) -> Projection | None:
    with _CACHE_LOCK:
        projection = _CACHE.get(key)
        if projection is not None:
            _CACHE.move_to_end(key)
        return projection


def _check(vectors: np.ndarray, dims: int, method: str, n_neighbors: int, min_dist: float) -> None:
    if vectors.ndim != 2 or len(vectors) == 0:
        raise MapError(f"expected a non-empty 2D array of vectors; got shape {vectors.shape}")
    if dims not in (2, 3):
        raise MapError(f"a map has 2 or 3 dimensions; got {dims}")
    if method not in METHODS:
        raise MapError(f"unknown projection {method!r}; choose umap or pca")
    if n_neighbors < 2:
        raise MapError(f"n_neighbors must be at least 2; got {n_neighbors}")
    if not 0 <= min_dist < 1:
        raise MapError(f"min_dist must be from 0 up to (not including) 1; got {min_dist}")


def project(
    vectors: np.ndarray,
    dims: int = 2,
    *,
    method: str = "umap",
    n_neighbors: int = DEFAULT_NEIGHBORS,
    min_dist: float = DEFAULT_MIN_DIST,
    random_state: int = RANDOM_STATE,
    epochs: int = DEFAULT_EPOCHS,
) -> Projection:
    """Project the rows of ``vectors`` to ``dims`` (2 or 3) dimensions, remembered.

    UMAP (cosine distance) is used when asked for and possible; with fewer than
    :data:`MIN_UMAP_POINTS` rows, nearly identical rows, or a failing fit, PCA is used and
    ``reason`` says why. ``n_neighbors`` is lowered to ``n - 1`` for small inputs.
    """
    vectors = np.asarray(vectors)
    _check(vectors, dims, method, n_neighbors, min_dist)
    k = max(1, min(n_neighbors, len(vectors) - 1))
    key = (array_key(vectors), dims, method, k, float(min_dist), random_state, epochs)
    cached = _recall(key)
    if cached is not None:
        return replace(cached, from_cache=True)
    started = time.perf_counter()
    reason = umap_problem(vectors, dims) if method == "umap" else None
    coords = None
    if method == "umap" and reason is None:
        try:
            with _FIT_LOCK:
                coords = _umap_coords(vectors, dims, k, min_dist, random_state, epochs)
        except (ImportError, MapError, ValueError, RuntimeError) as exc:
            reason = f"UMAP failed ({exc}), so the map shows the principal components (PCA)"
    used = "umap" if coords is not None else "pca"
    if coords is None:
        coords = pca(vectors, dims)
    coords.setflags(write=False)
    projection = Projection(coords, used, reason, dims, k, time.perf_counter() - started)
    _remember(key, projection)
    return projection


# --- warm-up ------------------------------------------------------------------------------------


@dataclass
class _Warm:
    thread: threading.Thread | None = None
    started: float = 0.0
    seconds: float | None = None
    error: str | None = None


_WARM = _Warm()
_WARM_LOCK = threading.Lock()
_WARM_DONE = threading.Event()


def _warm() -> None:
    """Compile everything a UMAP fit uses, on a small random input."""
    try:
        rng = np.random.default_rng(RANDOM_STATE)
        sample = rng.normal(size=(3 * MIN_UMAP_POINTS, 16)).astype(np.float32)
        with _FIT_LOCK:
            _umap_coords(sample, 2, 5, DEFAULT_MIN_DIST, RANDOM_STATE, 5)
    except Exception as exc:  # reported through warm_status(); the app falls back to PCA
        _WARM.error = f"{type(exc).__name__}: {exc}"
    finally:
        _WARM.seconds = time.perf_counter() - _WARM.started
        _WARM_DONE.set()


def warm_up() -> None:
    """Start compiling UMAP in a daemon thread, once per process; returns at once."""
    with _WARM_LOCK:
        if _WARM.thread is not None:
            return
        _WARM.started = time.perf_counter()
        _WARM.thread = threading.Thread(target=_warm, name="umap-warm-up", daemon=True)
        _WARM.thread.start()


def is_warm() -> bool:
    """Whether the warm-up has finished (successfully or not)."""
    return _WARM_DONE.is_set()


def wait_until_warm(timeout: float | None = None) -> bool:
    """Block until the warm-up has finished (starting it if needed) or ``timeout`` passes."""
    warm_up()
    return _WARM_DONE.wait(timeout)


def warm_status() -> dict[str, Any]:
    """``state`` (not started, compiling, ready, failed), ``seconds`` and ``error``."""
    if _WARM.thread is None:
        state = "not started"
    elif not _WARM_DONE.is_set():
        state = "compiling"
    else:
        state = "failed" if _WARM.error else "ready"
    return {"state": state, "seconds": _WARM.seconds, "error": _WARM.error}
