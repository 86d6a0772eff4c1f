"""Bytes of immutable files read from object stores, kept in this process (least recently
used first out, bounded): a Delta table's data and deletion-vector files never change once
written (a change writes new files), so a table read again fetches only the files not yet
seen. Entries are keyed by the store's identity (its root and a digest of its storage
options, so one catalog never sees what another's credentials fetched) and the file's key.
``WORKBENCH_FILE_CACHE_MB`` bounds it (default 256; 0 turns it off); files bigger than a tenth
of it are never kept."""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Callable

from workbench.core.base.caches import drop_where, process_cache

DEFAULT_MB = 256

_entries: OrderedDict[tuple[str, str], bytes] = OrderedDict()
_size = 0
_lock = threading.Lock()


def capacity() -> int:
    """The cache's size in bytes (``WORKBENCH_FILE_CACHE_MB``)."""
    try:
        megabytes = float(os.environ.get("WORKBENCH_FILE_CACHE_MB", DEFAULT_MB))
    except ValueError:
        megabytes = DEFAULT_MB
    return max(int(megabytes * 1024**2), 0)


def get_many(
    store: str, keys: list[str], fetch: Callable[[list[str]], list[bytes | None]]
) -> list[bytes | None]:
    """The bytes of each key of ``store`` (its identity): those kept, and the others from
    ``fetch`` (which gets only the missing keys, at once), kept for next time."""
    limit = capacity()
    if not limit:
        return fetch(keys)
    with _lock:
        found = {k: _entries.get((store, k)) for k in keys}
        for k, data in found.items():
            if data is not None:
                _entries.move_to_end((store, k))
    missing = [k for k, data in found.items() if data is None]
    if missing:
        found.update(zip(missing, fetch(missing), strict=True))
        for k in missing:
            _keep((store, k), found[k], limit)
    return [found[k] for k in keys]


def _keep(key: tuple[str, str], data: bytes | None, limit: int) -> None:
    global _size
    if data is None or len(data) > limit // 10:
        return
    with _lock:
        if key in _entries:
            return
        _entries[key] = data
        _size += len(data)
        while _size > limit:
            _, dropped = _entries.popitem(last=False)
            _size -= len(dropped)


def clear() -> None:
    """Forget every kept file (tests, or to free the memory)."""
    global _size
    with _lock:
        _entries.clear()
        _size = 0


def forget(store: str) -> None:
    """Forget the files kept of one store (its identity)."""
    global _size
    with _lock:
        _size -= sum(map(len, drop_where(_entries, lambda key: key[0] == store)))


process_cache("storage.file_cache", clear, forget=forget)
