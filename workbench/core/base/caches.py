"""The process-wide caches of workbench, each registered where it lives, so they can all be
dropped at once (between tests ``tests/conftest.py`` does so before each test, or to free
their memory), or only what they hold of one catalog (``dc.pop_catalog`` does so). Each cache
only speeds things up: dropping one changes no result."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, MutableMapping
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")

_clearers: dict[str, Callable[[], None]] = {}
_forgetters: dict[str, Callable[[str], None]] = {}


def process_cache(
    name: str, clear: Callable[[], None], forget: Callable[[str], None] | None = None
) -> None:
    """Register the cache ``name`` (e.g. ``"delta.table_cache"``), how to empty it, and how to
    drop what it holds of one catalog given the catalog's identity (``Catalog.identity``: its
    root and a digest of its storage options); no ``forget`` for a cache that holds nothing a
    popped catalog should lose."""
    _clearers[name] = clear
    if forget is not None:
        _forgetters[name] = forget


def clear_process_caches() -> None:
    """Empty every registered cache."""
    for clear in _clearers.values():
        clear()


def forget_catalog(identity: str) -> None:
    """Drop what every registered cache holds of the catalog with this identity."""
    for forget in _forgetters.values():
        forget(identity)


def cache_names(forgetting: bool = False) -> list[str]:
    """The registered caches, by name (``forgetting``: those that drop one catalog's part)."""
    return sorted(_forgetters if forgetting else _clearers)


def drop_where(cache: MutableMapping[K, V], test: Callable[[K], bool]) -> list[V]:
    """Remove the entries of ``cache`` whose key passes ``test``; their values (whose sizes a
    bounded cache gives back)."""
    return [cache.pop(key) for key in [k for k in cache if test(k)]]


class BoundedCache(Generic[K, V]):
    """Values of things that never change once written (a data file, a deletion vector),
    kept in this process least recently used first out, their sizes summed under a bound read
    at each use (an environment variable may set it; 0 keeps nothing); a value over a tenth of
    it is never kept. Keys start with a store's identity, so a popped catalog's part goes."""

    def __init__(self, name: str, size: Callable[[V], int], bound: Callable[[], int]):
        self._entries: OrderedDict[K, V] = OrderedDict()
        self._size_of, self._bound = size, bound
        self.size = 0
        self._lock = threading.Lock()
        process_cache(name, self.clear, forget=self.forget)

    def bound(self) -> int:
        """Bytes kept at most, now."""
        return self._bound()

    def get(self, key: K) -> V | None:
        """The value kept under ``key`` (now the most recently used), or None."""
        with self._lock:
            value = self._entries.get(key)
            if value is not None:
                self._entries.move_to_end(key)
            return value

    def keep(self, key: K, value: V) -> None:
        """Keep ``value``, dropping the least recently used ones beyond the bound."""
        limit, size = self._bound(), self._size_of(value)
        if size > limit // 10:
            return
        with self._lock:
            if key in self._entries:
                return
            self._entries[key] = value
            self.size += size
            while self.size > limit:
                _, dropped = self._entries.popitem(last=False)
                self.size -= self._size_of(dropped)

    def values(self) -> list[V]:
        """What is kept, least recently used first."""
        with self._lock:
            return list(self._entries.values())

    def clear(self) -> None:
        """Forget everything kept."""
        with self._lock:
            self._entries.clear()
            self.size = 0

    def forget(self, store: str) -> None:
        """Forget what was kept of one store (its identity, the keys' first part)."""
        with self._lock:
            dropped = drop_where(self._entries, lambda key: key[0] == store)  # type: ignore[index]
            self.size -= sum(map(self._size_of, dropped))
