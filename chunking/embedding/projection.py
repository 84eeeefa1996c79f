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

New rows (questions) are placed on a fitted map with :func:`place`, which never refits:
PCA's own linear transform, or UMAP's transform (its initial placement at the weighted
mean of the nearest chunks, then its optimisation with the chunks held still), run with
UMAP's own functions on exact neighbours, since UMAP's ``transform`` needs the
approximate-neighbour index that the exact neighbours replace. A projection is saved
and reloaded as JSON (:func:`save_projection`, :func:`load_projection`): its parameters,
seed, coordinates and the SHA-1 of the vectors it was fitted on; never a pickle.

This module has no user interface and imports umap (and with it numba) only inside
functions.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import sys
import threading
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from ..runtime.limits import CACHE_BOUNDS
from ..runtime.lru import BoundedLRU, shared_cache

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
#: Projections kept in memory (and their bytes: ``CACHE_BOUNDS["core_projections"]``).
CACHE_ENTRIES = CACHE_BOUNDS["core_projections"].max_entries
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
    min_dist: float = DEFAULT_MIN_DIST
    #: The seed of the fit (and of placing new rows).
    random_state: int = RANDOM_STATE
    epochs: int = DEFAULT_EPOCHS
    #: :func:`array_key` of the vectors it was fitted on ("" when unknown).
    vectors_key: str = ""
    #: PCA only: the mean row and the components, ``coords = (x - mean) @ components.T``.
    mean: np.ndarray | None = None
    components: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.coords)


# --- more points than a map shows -------------------------------------------------------


def even_sample(count: int, keep: int) -> tuple[int, ...]:
    """``keep`` indices spread evenly over ``range(count)``, first and last included
    (all of them when ``keep >= count``)."""
    if keep >= count:
        return tuple(range(count))
    if keep <= 0:
        return ()
    return tuple(int(i) for i in np.unique(np.linspace(0, count - 1, keep).round()))


def point_budgets(counts: Sequence[int], limit: int) -> list[int]:
    """How many points of each group (a configuration's chunks) to draw, ``limit`` in
    all when the groups hold more: shares in proportion to the counts, rounded down, the
    rest handed out by largest remainder; but at least one point for every group that
    has any, so that none vanishes from the map (more groups than ``limit`` then get one
    each)."""
    total = sum(counts)
    if total <= limit:
        return list(counts)
    budgets = [min(n, max(1, limit * n // total)) for n in counts]
    by_remainder = sorted(range(len(counts)), key=lambda i: limit * counts[i] % total)
    for i in reversed(by_remainder):  # hand out what rounding down left over
        if sum(budgets) < limit and budgets[i] < counts[i]:
            budgets[i] += 1
    while sum(budgets) > limit and max(budgets) > 1:  # the ones raised to 1 took points
        budgets[budgets.index(max(budgets))] -= 1
    return budgets


def sample_points(counts: Sequence[int], limit: int) -> list[tuple[int, ...]]:
    """For each group, the indices of its points to draw: every one when all groups
    fit within ``limit``, else an even sample of :func:`point_budgets` points each."""
    budgets = point_budgets(counts, limit)
    return [even_sample(n, keep) for n, keep in zip(counts, budgets, strict=True)]


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
    return pca_fit(vectors, dims)[0]


def pca_fit(vectors: np.ndarray, dims: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`pca`'s coordinates, with the mean row and the (signed) components that
    place any row: ``(x - mean) @ components.T`` (a missing component is zeros)."""
    x = np.asarray(vectors, dtype=np.float64)
    out = np.zeros((len(x), dims), dtype=np.float32)
    width = x.shape[1] if x.ndim == 2 else 0
    mean = x.mean(axis=0) if len(x) else np.zeros(width)
    components = np.zeros((dims, width))
    if len(x) < 2:
        return out, mean, components
    centred = x - mean
    u, s, vt = np.linalg.svd(centred, full_matrices=False)
    keep = min(dims, int(np.sum(s > 1e-12 * max(1.0, float(s[0])))))
    for j in range(keep):
        sign = 1.0 if vt[j, np.argmax(np.abs(vt[j]))] >= 0 else -1.0
        out[:, j] = u[:, j] * s[j] * sign
        components[j] = vt[j] * sign
    return out, mean, components


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


_CACHE: BoundedLRU[tuple, Projection] = shared_cache("core_projections")
_FIT_LOCK = threading.Lock()


def clear_cache() -> None:
    """Forget every remembered projection."""
    _CACHE.clear()


def _remember(key: tuple, projection: Projection) -> None:
    _CACHE.max_entries = CACHE_ENTRIES  # read here, so that it can be changed
    _CACHE.put(key, projection)


def _recall(key: tuple) -> Projection | None:
    found: Projection | None = _CACHE.get(key)
    return found


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
    mean = components = None
    if coords is None:
        coords, mean, components = pca_fit(vectors, dims)
    coords.setflags(write=False)
    projection = Projection(
        coords,
        used,
        reason,
        dims,
        k,
        time.perf_counter() - started,
        min_dist=float(min_dist),
        random_state=random_state,
        epochs=epochs,
        vectors_key=key[0],
        mean=mean,
        components=components,
    )
    _remember(key, projection)
    return projection


# --- placing new rows on a fitted map -------------------------------------------------------


def place(projection: Projection, vectors: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Coordinates of new ``rows`` (questions, say) on the map ``projection`` fitted on
    ``vectors``, without refitting: the map's own points stay where they are.

    ``vectors`` must be the very vectors the map was fitted on (checked by their
    SHA-1). PCA places rows with its linear transform; UMAP with its transform (see the
    module docstring), reproducible through the projection's seed.
    """
    vectors, rows = np.asarray(vectors), np.asarray(rows)
    if projection.vectors_key and array_key(vectors) != projection.vectors_key:
        raise MapError("these are not the vectors the map was fitted on; project them first")
    if len(vectors) != len(projection.coords):
        raise MapError(f"the map has {len(projection.coords)} points, not {len(vectors)}")
    if rows.ndim != 2 or (len(rows) and rows.shape[1] != vectors.shape[1]):
        raise MapError(
            f"rows of shape {rows.shape} cannot go on a map of {vectors.shape[1]}-d vectors"
        )
    if not len(rows):
        return np.zeros((0, projection.dims), dtype=np.float32)
    if projection.method == "pca":
        mean = projection.mean if projection.mean is not None else pca_fit(vectors, 1)[1]
        components = projection.components
        if components is None:
            components = pca_fit(vectors, projection.dims)[2]
        return ((np.asarray(rows, dtype=np.float64) - mean) @ components.T).astype(np.float32)
    with _FIT_LOCK:
        return _umap_place(projection, vectors, rows)


def _umap_place(projection: Projection, vectors: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """UMAP's transform of ``rows`` onto ``projection`` (fitted on ``vectors``), with the
    exact cosine neighbours of :func:`exact_knn`'s kind and UMAP's own functions."""
    load_umap()
    import scipy.sparse  # type: ignore[import-untyped, unused-ignore]
    from umap.layouts import optimize_layout_euclidean  # type: ignore[import-untyped, unused-ignore]
    from umap.umap_ import (  # type: ignore[import-untyped, unused-ignore]
        INT32_MAX,
        INT32_MIN,
        compute_membership_strengths,
        find_ab_params,
        init_graph_transform,
        make_epochs_per_sample,
        smooth_knn_dist,
    )

    train, asked = unit_rows(vectors), unit_rows(rows)
    k = projection.n_neighbors
    distances = np.clip(1.0 - asked @ train.T, 0.0, 2.0)
    nearest = np.argsort(distances, axis=1, kind="stable")[:, :k].astype(np.int32)
    dists = np.take_along_axis(distances, nearest, axis=1).astype(np.float32)
    nearest[dists >= 2.0] = -1  # UMAP's disconnection distance for cosine
    sigmas, rhos = smooth_knn_dist(dists, float(k), local_connectivity=0.0)
    head, tail, weights, _ = compute_membership_strengths(
        nearest, dists, sigmas, rhos, bipartite=True
    )
    graph = scipy.sparse.coo_matrix((weights, (head, tail)), shape=(len(asked), len(train)))
    linked = graph.tocsr()
    linked.eliminate_zeros()
    coords = np.asarray(projection.coords, dtype=np.float32)
    start = np.asarray(init_graph_transform(linked, coords), dtype=np.float32)
    epochs = max(1, projection.epochs // 3)  # as UMAP's transform: a third of the fit's
    graph.data[graph.data < graph.data.max() / float(epochs)] = 0.0
    graph.eliminate_zeros()
    a, b = find_ab_params(1.0, projection.min_dist)
    seed = np.random.RandomState(projection.random_state)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        placed = optimize_layout_euclidean(
            start,
            coords.copy(),
            graph.row,
            graph.col,
            epochs,
            len(train),
            make_epochs_per_sample(graph.data, epochs),
            a,
            b,
            seed.randint(INT32_MIN, INT32_MAX, 3).astype(np.int64),
            1.0,  # repulsion strength, UMAP's default
            0.25,  # UMAP's transform: a quarter of the default learning rate
            5,  # negative samples per edge, UMAP's default
        )
    return np.asarray(placed, dtype=np.float32)


# --- saving and loading -----------------------------------------------------------------------

#: The ``format`` of a saved projection file.
PROJECTION_FORMAT = "chunk-explorer projection"
PROJECTION_VERSION = 1


def projection_to_json(projection: Projection) -> str:
    """The projection as JSON: parameters, seed, coordinates, the vectors' SHA-1 and,
    for PCA, its mean and components."""
    data: dict[str, Any] = {
        "format": PROJECTION_FORMAT,
        "version": PROJECTION_VERSION,
        "method": projection.method,
        "reason": projection.reason,
        "dims": projection.dims,
        "n_neighbors": projection.n_neighbors,
        "min_dist": projection.min_dist,
        "random_state": projection.random_state,
        "epochs": projection.epochs,
        "vectors_key": projection.vectors_key,
        "coords": np.asarray(projection.coords, dtype=np.float64).tolist(),
    }
    if projection.mean is not None and projection.components is not None:
        data["mean"] = np.asarray(projection.mean, dtype=np.float64).tolist()
        data["components"] = np.asarray(projection.components, dtype=np.float64).tolist()
    return json.dumps(data)


def _matrix(data: dict[str, Any], name: str, shape: tuple[int | None, ...]) -> np.ndarray:
    try:
        array = np.asarray(data[name], dtype=np.float64)
    except (KeyError, TypeError, ValueError):
        raise MapError(f"a saved projection needs {name!r} as a list of numbers") from None
    wanted = [n if n is not None else array.shape[i] for i, n in enumerate(shape)]
    if array.ndim != len(shape) or list(array.shape) != wanted or not np.isfinite(array).all():
        raise MapError(f"the saved projection's {name!r} has shape {array.shape}, or a non-number")
    return array


def projection_from_json(text: str) -> Projection:
    """A projection saved by :func:`projection_to_json`; ``MapError`` saying what is
    wrong otherwise."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise MapError(f"not a saved projection: invalid JSON ({exc.msg})") from None
    if not isinstance(data, dict) or data.get("format") != PROJECTION_FORMAT:
        raise MapError(f'not a saved projection (no "format": "{PROJECTION_FORMAT}")')
    if data.get("version") != PROJECTION_VERSION:
        raise MapError(
            f"saved projection version {data.get('version')!r}; this reads {PROJECTION_VERSION}"
        )
    try:
        method, dims = str(data["method"]), int(data["dims"])
        k, min_dist = int(data["n_neighbors"]), float(data["min_dist"])
        seed, epochs, key = int(data["random_state"]), int(data["epochs"]), str(data["vectors_key"])
    except (KeyError, TypeError, ValueError) as exc:
        raise MapError(f"the saved projection lacks a valid {exc}") from None
    if method not in METHODS or dims not in (2, 3) or not math.isfinite(min_dist):
        raise MapError(f"the saved projection's method {method!r} or dims {dims} is unknown")
    coords = _matrix(data, "coords", (None, dims)).astype(np.float32)
    mean = components = None
    if method == "pca":
        mean = _matrix(data, "mean", (None,))
        components = _matrix(data, "components", (dims, len(mean)))
    coords.setflags(write=False)
    reason = data.get("reason")
    return Projection(
        coords,
        method,
        str(reason) if reason is not None else None,
        dims,
        k,
        0.0,
        min_dist=min_dist,
        random_state=seed,
        epochs=epochs,
        vectors_key=key,
        mean=mean,
        components=components,
    )


def save_projection(projection: Projection, path: str | Path) -> Path:
    """Write the projection to ``path`` as JSON (see :func:`projection_to_json`)."""
    target = Path(path)
    target.write_text(projection_to_json(projection), encoding="utf-8")
    return target


def load_projection(path: str | Path) -> Projection:
    """Read a projection written by :func:`save_projection`."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise MapError(f"{path}: not a saved projection (not UTF-8 text)") from None
    return projection_from_json(text)


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
    """Compile everything a UMAP fit and :func:`place` use, on a small random input."""
    try:
        rng = np.random.default_rng(RANDOM_STATE)
        sample = rng.normal(size=(3 * MIN_UMAP_POINTS, 16)).astype(np.float32)
        with _FIT_LOCK:
            coords = _umap_coords(sample, 2, 5, DEFAULT_MIN_DIST, RANDOM_STATE, 5)
            fitted = Projection(coords, "umap", None, 2, 5, 0.0, epochs=5)
            _umap_place(fitted, sample, sample[:3])
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
