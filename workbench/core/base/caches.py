"""The process-wide caches of workbench, each registered where it lives, so they can all be
dropped at once (between tests ``tests/conftest.py`` does so before each test, or to free
their memory), or only what they hold of one catalog (``dc.pop_catalog`` does so). Each cache
only speeds things up: dropping one changes no result."""

from __future__ import annotations

from collections.abc import Callable, MutableMapping
from typing import TypeVar

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
