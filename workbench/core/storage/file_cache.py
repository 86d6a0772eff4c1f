"""Bytes of immutable files read from object stores, kept in this process (least recently
used first out, bounded): a Delta table's data and deletion-vector files never change once
written (a change writes new files), so a table read again fetches only the files not yet
seen. Entries are keyed by the store's identity (its root and a digest of its storage
options, so one catalog never sees what another's credentials fetched) and the file's key.
``WORKBENCH_FILE_CACHE_MB`` bounds it (default 256; 0 turns it off); files bigger than a tenth
of it are never kept."""

from __future__ import annotations

import os
from collections.abc import Callable

from workbench.core.base.caches import BoundedCache

DEFAULT_MB = 256


def capacity() -> int:
    """The cache's size in bytes (``WORKBENCH_FILE_CACHE_MB``)."""
    try:
        megabytes = float(os.environ.get("WORKBENCH_FILE_CACHE_MB", DEFAULT_MB))
    except ValueError:
        megabytes = DEFAULT_MB
    return max(int(megabytes * 1024**2), 0)


KEPT: BoundedCache[tuple[str, str], bytes] = BoundedCache("storage.file_cache", len, capacity)


def get_many(
    store: str, keys: list[str], fetch: Callable[[list[str]], list[bytes | None]]
) -> list[bytes | None]:
    """The bytes of each key of ``store`` (its identity): those kept, and the others from
    ``fetch`` (which gets only the missing keys, at once), kept for next time."""
    if not capacity():
        return fetch(keys)
    found = {k: KEPT.get((store, k)) for k in keys}
    missing = [k for k, data in found.items() if data is None]
    if missing:
        found.update(zip(missing, fetch(missing), strict=True))
        for k in missing:
            if found[k] is not None:
                KEPT.keep((store, k), found[k])  # type: ignore[arg-type]
    return [found[k] for k in keys]


def clear() -> None:
    """Forget every kept file (tests, or to free the memory)."""
    KEPT.clear()
