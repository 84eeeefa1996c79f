"""Every cache is bounded in entries and in bytes, least recently used first (issue 37,
part 3): the store (:class:`BoundedLRU`), its size estimate, the one table of bounds,
the embedding vector cache, and the pages' ``bounded`` caches filled past their bounds."""

from __future__ import annotations

import re
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import chunking
from chunking.embedding import cache as vector_cache
from chunking.runtime.limits import CACHE_BOUNDS, MB, CacheBound, total_bytes
from chunking.runtime.lru import BoundedLRU, approx_bytes, shared_cache

ROOT = Path(__file__).resolve().parents[1]


def _sized(entries: int, max_bytes: int) -> BoundedLRU[str, bytes]:
    return BoundedLRU(entries, max_bytes, sizeof=len)


def test_past_the_entry_bound_the_least_recently_used_goes() -> None:
    cache = _sized(3, 10_000)
    for key in "abc":
        cache.put(key, b"x")
    assert cache.get("a") == b"x"  # a is now the most recently used
    cache.put("d", b"x")
    assert cache.recency() == ["c", "a", "d"]  # b went: used longest ago
    assert "b" not in cache and len(cache) == 3
    assert cache.stats().evictions == 1


def test_past_the_byte_bound_the_least_recently_used_go_until_it_holds() -> None:
    cache = _sized(100, 100)
    cache.put("a", b"a" * 40)
    cache.put("b", b"b" * 40)
    cache.get("a")
    cache.put("c", b"c" * 50)  # 130 bytes: b goes, a (used since) stays
    assert cache.recency() == ["a", "c"] and cache.nbytes == 90
    cache.put("d", b"d" * 95)  # alone nearly the bound: both others go
    assert cache.recency() == ["d"] and cache.nbytes == 95


def test_a_value_over_the_byte_bound_is_not_kept() -> None:
    cache = _sized(10, 100)
    cache.put("a", b"a" * 10)
    assert cache.put("a", b"a" * 101) is False  # and the old value under a is gone
    assert "a" not in cache and cache.nbytes == 0
    assert cache.get_or_compute("big", lambda: b"z" * 500) == b"z" * 500
    assert "big" not in cache


def test_replacing_a_value_counts_its_bytes_once() -> None:
    cache = _sized(10, 1000)
    cache.put("a", b"a" * 300)
    cache.put("a", b"a" * 200)
    assert cache.nbytes == 200 and len(cache) == 1


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(["put", "get"]), st.integers(0, 7), st.integers(1, 60)),
        max_size=60,
    ),
    st.integers(1, 5),
    st.integers(1, 120),
)
def test_the_store_behaves_as_a_reference_lru(
    ops: list[tuple[str, int, int]], entries: int, max_bytes: int
) -> None:
    cache = _sized(entries, max_bytes)
    model: list[tuple[int, int]] = []  # (key, size), least recently used first
    for op, key, size in ops:
        known = [k for k, _ in model]
        if op == "get":
            found = cache.get(key)
            assert (found is not None) == (key in known)
            if key in known:
                model.append(model.pop(known.index(key)))
            continue
        cache.put(key, b"x" * size)
        model = [(k, s) for k, s in model if k != key]
        if size <= max_bytes:
            model.append((key, size))
        while len(model) > entries or sum(s for _, s in model) > max_bytes:
            model.pop(0)
        assert cache.recency() == [k for k, _ in model]
        assert cache.nbytes == sum(s for _, s in model)
        assert len(cache) <= entries and cache.nbytes <= max_bytes


def test_a_missing_value_is_computed_once_for_threads_asking_together() -> None:
    cache: BoundedLRU[str, int] = BoundedLRU(4, 10_000)
    calls: list[int] = []

    def slow() -> int:
        calls.append(1)
        time.sleep(0.2)
        return 42

    results: list[int] = []
    threads = [
        threading.Thread(target=lambda: results.append(cache.get_or_compute("k", slow)))
        for _ in range(6)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == [42] * 6 and len(calls) == 1


def test_an_exception_is_raised_and_nothing_is_kept() -> None:
    cache: BoundedLRU[str, int] = BoundedLRU(4, 10_000)

    def fails() -> int:
        raise ValueError("no")

    with pytest.raises(ValueError, match="no"):
        cache.get_or_compute("k", fails)
    assert "k" not in cache
    assert cache.get_or_compute("k", lambda: 1) == 1


def test_bounds_must_be_positive() -> None:
    with pytest.raises(ValueError, match="positive"):
        BoundedLRU(0, 10)


# ------------------------------------------------------------------- sizes


def test_sizes_count_text_arrays_and_shared_objects_once() -> None:
    text = "x" * 1_000_000
    assert 1_000_000 <= approx_bytes(text) < 1_000_200
    assert approx_bytes((text, text, [text])) < 1_000_400  # the same string once
    array = np.zeros((1000, 384), dtype=np.float32)
    assert array.nbytes <= approx_bytes({"v": array}) < array.nbytes + 1000
    chunks = tuple(chunking.chunk("Some words here. " * 20_000, size=200))
    counted = approx_bytes(chunks)
    assert counted > sum(len(c.text) for c in chunks)  # every chunk's text and more
    assert counted < 20 * sum(len(c.text) + 100 for c in chunks)


# ------------------------------------------------------------------- the table


def test_every_cache_is_in_the_table_with_both_bounds_or_a_reason() -> None:
    for name, bound in CACHE_BOUNDS.items():
        assert bound.max_entries > 0, name
        assert (bound.max_bytes or 0) > 0 or bound.why, name
        source = (ROOT / bound.where).read_text(encoding="utf-8")
        said = any(
            f"{use}{name}" in source for use in ('bounded("', 'CACHE_BOUNDS["', 'shared_cache("')
        )
        assert said, f"{name} is not used in {bound.where}"
    assert total_bytes() < 2 * 1024 * MB


def test_no_page_cache_states_its_own_entry_bound() -> None:
    """Every ``max_entries`` of a page comes from the table."""
    for path in sorted((ROOT / "pages").glob("*.py")):
        found = re.findall(r"max_entries=(\w[^,)\n]*)", path.read_text(encoding="utf-8"))
        assert all(value.startswith("CACHE_BOUNDS") for value in found), (path.name, found)


# ------------------------------------------------------------- embedding vectors


def test_the_vector_cache_has_the_table_bounds() -> None:
    bound = CACHE_BOUNDS["embedding_vectors"]
    assert vector_cache._VECTORS.max_entries == bound.max_entries == vector_cache.MAX_CACHED_VECTORS
    assert vector_cache._VECTORS.max_bytes == bound.max_bytes


def test_the_vector_cache_drops_the_least_recently_used_by_entries_and_bytes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    one = 384 * 4 + vector_cache.VECTOR_OVERHEAD
    small = BoundedLRU(3, 10 * one, name="embedding_vectors")
    monkeypatch.setattr(vector_cache, "_VECTORS", small)
    vector = np.ones(384, dtype=np.float32)
    vector_cache.memory_put("m", [("a", vector), ("b", vector), ("c", vector)])
    assert vector_cache.memory_get("m", ["a"])[0] is not None  # a used again
    vector_cache.memory_put("m", [("d", vector)])
    assert [v is not None for v in vector_cache.memory_get("m", ["a", "b", "c", "d"])] == [
        True,
        False,
        True,
        True,
    ]
    assert vector_cache.memory_stats().bytes == 3 * one
    big = np.ones(1024 * 2, dtype=np.float32)  # 8 KB + overhead: four fill 10 small ones
    small.max_entries = 10
    vector_cache.memory_put("m", [(f"big{i}", big) for i in range(2)])
    # 3 small + 2 big are over the bytes: the small ones go, least recently used first
    assert small.recency() == [("m", "big0"), ("m", "big1")]
    assert small.nbytes == 2 * (big.nbytes + vector_cache.VECTOR_OVERHEAD) <= 10 * one


# ------------------------------------------------------------------- page caches


def test_a_bounded_page_cache_keys_copies_and_evicts(monkeypatch: pytest.MonkeyPatch) -> None:
    from pages.cached import bounded

    monkeypatch.setitem(CACHE_BOUNDS, "test_tiny", CacheBound(2, 2_000, "test", "tests"))
    calls: list[str] = []

    @bounded("test_tiny", copy=True)
    def double(key: str, _data: list[int]) -> list[int]:
        calls.append(key)
        return [x * 2 for x in _data]

    first = double("a", [1, 2])
    first.append(99)  # a copy: the kept value is untouched
    assert double("a", [5]) == [2, 4]  # _data is not part of the key
    double("b", [1])
    double("c", [1])  # a went: two entries at most
    assert double("a", [3]) == [6] and calls == ["a", "b", "c", "a"]
    double("big", list(range(2_000)))  # over 2,000 bytes pickled: returned, not kept
    assert double("big", [0]) == [0] and calls[-2:] == ["big", "big"]
    store = shared_cache("test_tiny")
    assert len(store) <= 2 and store.nbytes <= 2_000


def test_the_chunk_cache_is_filled_past_its_entry_bound() -> None:
    from pages import cached

    source = cached.Source.from_text("One sentence. Another one here. " * 30, "t.txt", "paste")
    bound = CACHE_BOUNDS["chunks"].max_entries
    store = shared_cache("chunks")
    configs = [chunking.Config.create("fixed", size=100 + i) for i in range(bound + 1)]
    first = cached.chunks(source, configs[0])
    assert cached.chunks(source, configs[0]) is first  # one shared copy
    for config in configs[1:]:
        cached.chunks(source, config)
    assert len(store) == bound
    kept = {key[2][1] for key in store.recency()}  # (where, ("key", ...), ("config_json", ...))
    assert configs[0].to_json() not in kept and configs[-1].to_json() in kept
    assert cached.chunks(source, configs[0]) is not first  # computed again
