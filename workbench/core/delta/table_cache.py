"""One cached ``DeltaTable`` per table incarnation, advanced incrementally instead of reloaded.

Opening a Delta table replays its log; keeping the handle and calling ``update_incremental``
reads only commits made since. Handles are keyed by folder, incarnation and a digest of the
storage options they were opened with (a handle carries its options: a catalog with other
credentials never reads through another's), so a table dropped and created again under the
same name (its versions restart at 0) never reuses a stale handle. Handles for past versions
are not cached; callers get fresh ones.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from workbench.core.base.caches import drop_where, process_cache
from workbench.core.storage.identity import identity_root, options_digest

if TYPE_CHECKING:
    from deltalake import DeltaTable

_handles: dict[tuple[str, ...], DeltaTable] = {}  # (folder, incarnation, options digest)


def _key(uri: str, incarnation: str, storage_options: dict[str, str] | None) -> tuple[str, ...]:
    return (uri, incarnation, options_digest(storage_options))


def _forget_catalog(identity: str) -> None:
    """Drop the handles of every table under the catalog's root (whatever their options)."""
    root = identity_root(identity).rstrip("/") + "/"
    drop_where(_handles, lambda key: key[0].startswith(root))


process_cache("delta.table_cache", _handles.clear, forget=_forget_catalog)


def latest(
    uri: str,
    incarnation: str,
    storage_options: dict[str, str] | None = None,
    refresh: bool = True,
) -> DeltaTable:
    """The table at its newest Delta version (``refresh=False``: as this process last saw it)."""
    from deltalake import DeltaTable

    key = _key(uri, incarnation, storage_options)
    handle = _handles.get(key)
    if handle is None:
        handle = _handles[key] = DeltaTable(uri, storage_options=storage_options)
    elif refresh:
        handle.update_incremental()
    return handle


def head_version(
    uri: str, incarnation: str, storage_options: dict[str, str] | None = None, wanted: int = -1
) -> int:
    """The newest version in a table's Delta log (-1 when it has no commit yet); no I/O when
    the cached handle already reaches ``wanted``."""
    from deltalake.exceptions import TableNotFoundError

    cached = _handles.get(_key(uri, incarnation, storage_options))
    if cached is not None and cached.version() >= wanted >= 0:
        return cached.version()
    try:
        return latest(uri, incarnation, storage_options).version()
    except TableNotFoundError:
        return -1


def at_version(
    uri: str, incarnation: str, version: int, storage_options: dict[str, str] | None = None
) -> DeltaTable:
    """The table at ``version``: the cached handle when it is at (or advances to) that version,
    else a fresh one. A handle already at ``version`` needs no log listing."""
    from deltalake import DeltaTable

    cached = _handles.get(_key(uri, incarnation, storage_options))
    if cached is not None and cached.version() == version:
        return cached
    handle = latest(uri, incarnation, storage_options)
    if handle.version() == version:
        return handle
    return DeltaTable(uri, version=version, storage_options=storage_options)


def forget(uri: str) -> None:
    """Drop cached handles of a folder that was moved or deleted."""
    drop_where(_handles, lambda key: key[0] == uri)
