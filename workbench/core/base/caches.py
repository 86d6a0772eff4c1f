"""The process-wide caches of workbench, each registered where it lives, so they can all be
dropped at once: between tests (``tests/conftest.py`` does so before each test), or to free
their memory. Each cache only speeds things up: dropping one changes no result."""

from __future__ import annotations

from collections.abc import Callable

_clearers: dict[str, Callable[[], None]] = {}


def process_cache(name: str, clear: Callable[[], None]) -> None:
    """Register the cache ``name`` (e.g. ``"delta.table_cache"``) and how to empty it."""
    _clearers[name] = clear


def clear_process_caches() -> None:
    """Empty every registered cache."""
    for clear in _clearers.values():
        clear()


def cache_names() -> list[str]:
    """The registered caches, by name."""
    return sorted(_clearers)
