"""Projections of chunk embeddings: exact neighbours, PCA fallback, UMAP, caching, warm-up."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from chunking.embedding import projection as maps

ROOT = Path(__file__).resolve().parents[1]


def _clusters(n_per: int = 15, dims: int = 24, seed: int = 3) -> np.ndarray:
    """Three well-separated groups of unit vectors."""
    rng = np.random.default_rng(seed)
    centres = np.eye(3, dims) * 5
    rows = [c + rng.normal(scale=0.3, size=(n_per, dims)) for c in centres]
    return maps.unit_rows(np.vstack(rows))


@pytest.fixture(autouse=True)
def _fresh_cache() -> None:
    maps.clear_cache()


# ----------------------------------------------------------------- neighbours, PCA


def test_exact_knn_matches_brute_force_cosine() -> None:
    rng = np.random.default_rng(7)
    x = rng.normal(size=(1300, 12)).astype(np.float32)  # more rows than one block
    k = 6
    indices, distances = maps.exact_knn(x, k)
    u = x / np.linalg.norm(x, axis=1, keepdims=True)
    full = 1.0 - u @ u.T
    assert indices.shape == distances.shape == (len(x), k)
    assert (indices[:, 0] == np.arange(len(x))).all()  # every row is its own nearest
    assert np.allclose(distances[:, 0], 0)
    for row in (0, 700, 1299):
        expected = np.sort(full[row])[1:k]
        assert np.allclose(distances[row, 1:], expected, atol=1e-5)
        assert np.allclose(full[row, indices[row, 1:]], expected, atol=1e-5)
    assert (np.diff(distances, axis=1) >= 0).all()


def test_exact_knn_rejects_an_impossible_k() -> None:
    with pytest.raises(maps.MapError, match="between 1 and"):
        maps.exact_knn(np.eye(3), 4)


def test_pca_keeps_the_main_direction_and_is_deterministic() -> None:
    x = np.zeros((5, 4))
    x[:, 2] = [-2, -1, 0, 1, 2]  # all variance along one axis
    coords = maps.pca(x, 2)
    assert coords.shape == (5, 2)
    assert np.allclose(np.abs(coords[:, 0]), [2, 1, 0, 1, 2])
    assert np.allclose(coords[:, 1], 0)  # no second component: zeros
    assert np.array_equal(coords, maps.pca(x, 2))


def test_pca_of_one_row_is_the_origin() -> None:
    assert np.array_equal(maps.pca(np.ones((1, 8)), 3), np.zeros((1, 3)))


# ------------------------------------------------------------------- fallbacks


@pytest.mark.parametrize("n", [1, 2, maps.MIN_UMAP_POINTS - 1])
def test_too_few_points_use_pca_and_say_why(n: int) -> None:
    vectors = np.random.default_rng(n).normal(size=(n, 16))
    projection = maps.project(vectors, 2)
    assert projection.method == "pca"
    assert projection.reason is not None and f"only {n} chunk" in projection.reason
    assert projection.coords.shape == (n, 2)


def test_identical_embeddings_use_pca_and_say_why() -> None:
    projection = maps.project(np.ones((30, 8)), 3)
    assert projection.method == "pca"
    assert "1 distinct embedding" in (projection.reason or "")
    assert projection.coords.shape == (30, 3)


def test_asking_for_pca_gives_pca_without_a_reason() -> None:
    projection = maps.project(_clusters(), 2, method="pca")
    assert projection.method == "pca" and projection.reason is None


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"dims": 4}, "2 or 3 dimensions"),
        ({"method": "tsne"}, "unknown projection"),
        ({"n_neighbors": 1}, "n_neighbors"),
        ({"min_dist": 1.0}, "min_dist"),
    ],
)
def test_bad_parameters_are_explained(kwargs: dict, message: str) -> None:
    with pytest.raises(maps.MapError, match=message):
        maps.project(_clusters(), **kwargs)


def test_an_empty_input_is_explained() -> None:
    with pytest.raises(maps.MapError, match="non-empty"):
        maps.project(np.zeros((0, 4)))


# ------------------------------------------------------------------------- UMAP


@pytest.mark.parametrize("dims", [2, 3])
def test_umap_is_reproducible_and_keeps_clusters_apart(dims: int) -> None:
    vectors = _clusters()
    first = maps.project(vectors, dims)
    assert first.method == "umap" and first.reason is None
    assert first.coords.shape == (len(vectors), dims)
    maps.clear_cache()
    again = maps.project(vectors, dims)
    assert not again.from_cache
    assert np.allclose(first.coords, again.coords)  # random_state=42 fixes the layout
    labels = np.repeat(np.arange(3), 15)
    centres = np.array([first.coords[labels == g].mean(axis=0) for g in range(3)])
    spread = max(
        np.linalg.norm(first.coords[labels == g] - centres[g], axis=1).mean() for g in range(3)
    )
    gaps = [np.linalg.norm(centres[a] - centres[b]) for a, b in ((0, 1), (0, 2), (1, 2))]
    assert min(gaps) > spread  # each group is tighter than the distance between groups


def test_small_inputs_lower_n_neighbors() -> None:
    vectors = _clusters(n_per=4)  # 12 points
    projection = maps.project(vectors, 2, n_neighbors=15)
    assert projection.method == "umap"
    assert projection.n_neighbors == len(vectors) - 1


def test_a_repeated_projection_comes_from_the_cache() -> None:
    vectors = _clusters()
    first = maps.project(vectors, 2)
    second = maps.project(vectors.copy(), 2)
    assert not first.from_cache and second.from_cache
    assert np.array_equal(first.coords, second.coords)
    assert not second.coords.flags.writeable
    other = maps.project(vectors, 2, min_dist=0.5)  # another parameter: computed again
    assert not other.from_cache


def test_the_cache_keeps_only_the_latest_entries(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(maps, "CACHE_ENTRIES", 2)
    arrays = [np.random.default_rng(s).normal(size=(4, 3)) for s in range(3)]
    for a in arrays:
        maps.project(a, 2)
    assert maps.project(arrays[2], 2).from_cache
    assert not maps.project(arrays[0], 2).from_cache  # evicted


def test_array_key_depends_on_values_shape_and_dtype() -> None:
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    assert maps.array_key(a) == maps.array_key(a.copy())
    assert maps.array_key(a) != maps.array_key(a.reshape(4, 3))
    assert maps.array_key(a) != maps.array_key(a.astype(np.float64))
    b = a.copy()
    b[0, 0] = 99
    assert maps.array_key(a) != maps.array_key(b)


# ----------------------------------------------------------------- warm-up, numba


def test_warm_up_runs_once_and_becomes_ready() -> None:
    maps.warm_up()
    thread = maps._WARM.thread
    maps.warm_up()
    assert maps._WARM.thread is thread  # one thread per process
    assert thread is not None and thread.daemon
    assert maps.wait_until_warm(timeout=600)
    status = maps.warm_status()
    assert status["state"] == "ready", status
    assert maps.is_warm()


def test_numba_cache_dir_follows_xdg_cache_home(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", "/somewhere/cache")
    assert maps.numba_cache_dir() == Path("/somewhere/cache/chunk-explorer/numba")


def _child(env: dict[str, str]) -> dict:
    code = (
        "import json, os; from chunking.embedding import projection as maps; "
        "d = maps.configure_numba_cache(); "
        "import numba.core.config as c; "
        "print(json.dumps({'dir': d, 'env': os.environ['NUMBA_CACHE_DIR'], 'numba': c.CACHE_DIR}))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, cwd=ROOT, capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_numba_cache_dir_is_set_only_when_unset(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env["XDG_CACHE_HOME"] = str(tmp_path)
    unset = _child(env)
    expected = str(tmp_path / "chunk-explorer" / "numba")
    assert unset == {"dir": expected, "env": expected, "numba": expected}
    chosen = _child({**env, "NUMBA_CACHE_DIR": str(tmp_path / "mine")})
    assert chosen["dir"] == chosen["numba"] == str(tmp_path / "mine")


def test_loading_umap_switches_numba_disk_caching_on() -> None:
    maps.load_umap()
    assert maps.LOAD_INFO["cached_functions"] > 0
    import umap.layouts

    serial = umap.layouts._nb_optimize_layout_euclidean_single_epoch
    parallel = umap.layouts._nb_optimize_layout_euclidean_single_epoch_parallel
    assert type(serial._cache).__name__ != "NullCache"
    assert type(parallel._cache).__name__ == "NullCache"  # same function: would share files


# ------------------------------------------------------ more chunks than the map shows


@pytest.mark.parametrize(
    ("counts", "limit"), [([2, 32], 10), ([1, 1, 500, 500], 10), ([3, 40, 7], 12), ([5, 5], 10)]
)
def test_point_budgets_keep_every_configuration_within_the_limit(
    counts: list[int], limit: int
) -> None:
    budgets = maps.point_budgets(counts, limit)
    assert all(1 <= b <= n for b, n in zip(budgets, counts, strict=True))
    assert sum(budgets) == min(limit, sum(counts))
    if sum(counts) > limit:  # shares follow the chunk counts
        assert budgets[counts.index(max(counts))] == max(budgets)


@given(st.lists(st.integers(0, 3000), min_size=1, max_size=6), st.integers(1, 5000))
def test_point_budgets_share_the_limit_and_keep_every_group(counts: list[int], limit: int) -> None:
    budgets = maps.point_budgets(counts, limit)
    assert all(0 <= b <= n for b, n in zip(budgets, counts, strict=True))
    assert all(b >= 1 for b, n in zip(budgets, counts, strict=True) if n)  # none vanishes
    groups = sum(1 for n in counts if n)
    if sum(counts) <= limit:
        assert budgets == counts  # everything fits: nothing is sampled
    elif groups <= limit:
        assert sum(budgets) == limit
        for b, n in zip(budgets, counts, strict=True):  # within one point of the fair share
            assert b <= max(1, -(-limit * n // sum(counts))) + 1
    else:
        assert budgets == [1 if n else 0 for n in counts]


@given(st.integers(0, 2000), st.integers(0, 2000))
def test_an_even_sample_spreads_over_the_whole_range(count: int, keep: int) -> None:
    sample = maps.even_sample(count, keep)
    assert list(sample) == sorted(set(sample))
    assert all(0 <= i < count for i in sample)
    assert len(sample) == min(count, keep)
    if len(sample) >= 2:
        assert (sample[0], sample[-1]) == (0, count - 1)
        gaps = np.diff(sample)
        assert gaps.max() - gaps.min() <= 1  # evenly spaced, up to rounding


def test_sample_points_draws_every_point_when_all_fit() -> None:
    assert maps.sample_points([3, 2], 10) == [(0, 1, 2), (0, 1)]
    few, many = maps.sample_points([4, 400], 10)
    assert len(few) + len(many) == 10 and len(few) >= 1
    assert many == maps.even_sample(400, len(many))
