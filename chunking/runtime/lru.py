"""A least-recently-used store bounded in entries and in bytes (:class:`BoundedLRU`), the
size estimate it keeps its bytes with (:func:`approx_bytes`), and the process-wide stores
named in :data:`chunking.runtime.limits.CACHE_BOUNDS` (:func:`shared_cache`).

Streamlit's ``st.cache_*`` bound entries (``max_entries``, ``ttl``) but not bytes, and
eight cached 50 MB documents are 400 MB. A :class:`BoundedLRU` drops the entry used
longest ago until both bounds hold; an entry larger than the byte bound alone is returned
but not kept. It is thread-safe (a Streamlit server runs every session in its own
thread), and :meth:`BoundedLRU.get_or_compute` computes a missing key once however many
threads ask for it at the same moment.
"""

from __future__ import annotations

import sys
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator, Mapping
from dataclasses import dataclass
from types import BuiltinFunctionType, FunctionType, MethodType, ModuleType
from typing import Any, Generic, TypeVar

from .limits import CACHE_BOUNDS

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

#: Libraries whose objects are counted by their own ``sys.getsizeof`` only: a model or a
#: session inside a value is not the cache's to count (nor cheap to walk).
_OPAQUE = ("torch", "onnxruntime", "tokenizers", "transformers", "sentence_transformers")
_ATOMS = (str, bytes, bytearray, int, float, complex, bool, type(None), range)
_SKIP = (type, ModuleType, FunctionType, MethodType, BuiltinFunctionType)


def approx_bytes(value: object) -> int:
    """About how many bytes ``value`` holds: its objects' ``sys.getsizeof``, each object
    counted once, walking containers, dataclasses (slots too) and objects' attributes;
    a NumPy array or an Arrow table counts its buffers (``nbytes``), a pandas object its
    deep memory use."""
    seen: set[int] = set()
    total = 0
    stack: list[object] = [value]
    while stack:
        item = stack.pop()
        if id(item) in seen or isinstance(item, _SKIP):
            continue
        seen.add(id(item))
        if isinstance(item, _ATOMS):
            total += sys.getsizeof(item)
            continue
        module = type(item).__module__
        if module.startswith(("numpy", "pyarrow")) and isinstance(
            getattr(item, "nbytes", None), int
        ):  # a NumPy array or an Arrow table: header + buffers
            total += 112 + int(item.nbytes)  # type: ignore[attr-defined]
            continue
        if module.startswith("pandas") and hasattr(item, "memory_usage"):
            used = item.memory_usage(deep=True)
            total += int(used.sum() if hasattr(used, "sum") else used)
            continue
        total += sys.getsizeof(item)
        if module.split(".", 1)[0] in _OPAQUE:
            continue
        if isinstance(item, Mapping):
            stack.extend(item)
            stack.extend(item.values())
        elif isinstance(item, (list, tuple, set, frozenset)):
            stack.extend(item)
        else:
            stack.extend(_attributes(item))
    return total


def _attributes(item: object) -> Iterator[object]:
    """The values of an object's ``__dict__`` and ``__slots__``."""
    found = getattr(item, "__dict__", None)
    if isinstance(found, dict):
        yield from found.values()
    for cls in type(item).__mro__:
        for slot in getattr(cls, "__slots__", ()):
            if isinstance(slot, str) and slot not in ("__dict__", "__weakref__"):
                try:
                    yield getattr(item, slot)
                except AttributeError:
                    continue


@dataclass(frozen=True)
class CacheStats:
    """What a store holds and has done: entries, bytes, and its hits, misses and
    evictions since it was made."""

    entries: int
    bytes: int
    hits: int
    misses: int
    evictions: int


_MISSING: Any = object()


class BoundedLRU(Generic[K, V]):
    """At most ``max_entries`` values and ``max_bytes`` bytes (as ``sizeof`` counts them,
    default :func:`approx_bytes`); the least recently used value goes first."""

    def __init__(
        self,
        max_entries: int,
        max_bytes: int,
        sizeof: Callable[[Any], int] = approx_bytes,
        name: str = "",
    ) -> None:
        if max_entries < 1 or max_bytes < 1:
            raise ValueError(f"cache {name or '?'}: bounds must be positive")
        self.max_entries, self.max_bytes, self.name = max_entries, max_bytes, name
        self._sizeof = sizeof
        self._items: OrderedDict[K, tuple[V, int]] = OrderedDict()
        self._lock = threading.Lock()
        self._computing: dict[K, threading.Lock] = {}
        self._bytes = self._hits = self._misses = self._evictions = 0

    def get(self, key: K, default: Any = None) -> Any:
        """The value kept for ``key`` (now the most recently used), or ``default``."""
        with self._lock:
            found = self._items.get(key, _MISSING)
            if found is _MISSING:
                self._misses += 1
                return default
            self._items.move_to_end(key)
            self._hits += 1
            return found[0]

    def put(self, key: K, value: V, size: int | None = None) -> bool:
        """Keep ``value`` (``size`` bytes, else counted); drop the least recently used
        until both bounds hold. False when the value alone is over the byte bound: it is
        not kept (and an older value under ``key`` is dropped)."""
        size = self._sizeof(value) if size is None else size
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self._bytes -= old[1]
            if size > self.max_bytes:
                return False
            self._items[key] = (value, size)
            self._bytes += size
            while len(self._items) > self.max_entries or self._bytes > self.max_bytes:
                _, (_, dropped) = self._items.popitem(last=False)
                self._bytes -= dropped
                self._evictions += 1
            return True

    def get_or_compute(self, key: K, compute: Callable[[], V]) -> V:
        """The value for ``key``, computed by ``compute()`` when missing, once even when
        several threads ask at the same time (the others wait for it). An exception is
        raised to the caller and nothing is kept."""
        found = self.get(key, _MISSING)
        if found is not _MISSING:
            return found
        with self._lock:
            lock = self._computing.setdefault(key, threading.Lock())
        try:
            with lock:
                with self._lock:  # computed by another thread while this one waited?
                    done = self._items.get(key, _MISSING)
                    if done is not _MISSING:
                        self._items.move_to_end(key)
                        return done[0]
                value = compute()
                self.put(key, value)
                return value
        finally:
            with self._lock:
                if self._computing.get(key) is lock and not lock.locked():
                    del self._computing[key]

    def __contains__(self, key: object) -> bool:
        with self._lock:
            return key in self._items

    def __len__(self) -> int:
        with self._lock:
            return len(self._items)

    def recency(self) -> list[K]:
        """The keys, least recently used first."""
        with self._lock:
            return list(self._items)

    @property
    def nbytes(self) -> int:
        """The bytes held, as counted when the values were kept."""
        with self._lock:
            return self._bytes

    def stats(self) -> CacheStats:
        with self._lock:
            return CacheStats(
                len(self._items), self._bytes, self._hits, self._misses, self._evictions
            )

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self._bytes = 0


_SHARED: dict[str, BoundedLRU[Any, Any]] = {}
_SHARED_LOCK = threading.Lock()


def shared_cache(name: str) -> BoundedLRU[Any, Any]:
    """The process-wide store ``name``, bounded as :data:`CACHE_BOUNDS` says (made on
    first use). ``KeyError`` for a name the table does not hold."""
    bound = CACHE_BOUNDS[name]
    if bound.max_bytes is None:
        raise KeyError(f"{name}: the table bounds it by entries only (see its reason)")
    with _SHARED_LOCK:
        cache = _SHARED.get(name)
        if cache is None:
            cache = _SHARED[name] = BoundedLRU(bound.max_entries, bound.max_bytes, name=name)
        return cache


def shared_stats() -> dict[str, CacheStats]:
    """What every shared store made so far holds, by name."""
    with _SHARED_LOCK:
        caches = dict(_SHARED)
    return {name: cache.stats() for name, cache in caches.items()}
