"""Small data files decoded once per process: a table that takes a commit a minute keeps a tail
of small files between compaction steps, and opening and decoding each costs a read more than
its rows do. A data file never changes once written, so the rows of a small one, in the table
schema they were read in, are kept (least recently used first out, in a quarter of
``WORKBENCH_FILE_CACHE_MB``, counted in Arrow bytes). Keys hold the store's identity, so one
catalog never sees what another's credentials read."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING

from workbench.core.base.caches import drop_where, process_cache
from workbench.core.storage.file_cache import capacity

if TYPE_CHECKING:
    import pyarrow as pa

    from workbench.core.delta.data_files import DataFile

# Files up to this size on disk are kept decoded; bigger ones cost their rows, not their opening.
SMALL_FILE_BYTES = 1024**2

Key = tuple[str, bytes, str, int]

_kept: OrderedDict[Key, pa.Table] = OrderedDict()
_size = 0
_lock = threading.Lock()


def bound() -> int:
    """The bytes kept decoded at most: a quarter of the file cache's."""
    return capacity() // 4


def is_small(f: DataFile) -> bool:
    """True for a file kept decoded: small, and its row count known from the log."""
    return f.size <= SMALL_FILE_BYTES and f.rows > 0


def file_tables(
    store: str,
    schema: pa.Schema,
    files: list[DataFile],
    read: Callable[[list[DataFile]], pa.Table],
) -> list[pa.Table] | None:
    """The rows of each of ``files`` (small ones) in ``schema``: those kept, the others from
    ``read`` (one scan of the missing files, in order), kept for next time. None when that
    scan's rows do not add up to the files' counts in the log (nothing is kept then)."""
    limit = bound()
    layout = schema.serialize().to_pybytes()
    keys = [(store, layout, f.absolute, f.size) for f in files]
    with _lock:
        found = [_kept.get(k) for k in keys]
        for k, table in zip(keys, found, strict=True):
            if table is not None:
                _kept.move_to_end(k)
    missing = [i for i, table in enumerate(found) if table is None]
    if missing:
        rows = read([files[i] for i in missing])
        if rows.num_rows != sum(files[i].rows for i in missing):
            return None
        start = 0
        for i in missing:
            found[i] = rows.slice(start, files[i].rows)
            start += files[i].rows
            _keep(keys[i], found[i], limit)
    return found  # type: ignore[return-value]


def _keep(key: Key, table: pa.Table, limit: int) -> None:
    global _size
    size = table.nbytes
    if size > limit // 10:
        return
    with _lock:
        if key in _kept:
            return
        _kept[key] = table
        _size += size
        while _size > limit:
            _, dropped = _kept.popitem(last=False)
            _size -= dropped.nbytes


def clear() -> None:
    """Forget every decoded file."""
    global _size
    with _lock:
        _kept.clear()
        _size = 0


def forget(store: str) -> None:
    """Forget the files decoded from one store (its identity)."""
    global _size
    with _lock:
        _size -= sum(t.nbytes for t in drop_where(_kept, lambda key: key[0] == store))


process_cache("delta.decoded_files", clear, forget=forget)
