"""Small data files decoded once per process: a table that takes a commit a minute keeps a tail
of small files between compaction steps, and opening and decoding each costs a read more than
its rows do. A data file never changes once written, so the rows of a small one, in the table
schema they were read in, are kept (least recently used first out, in a quarter of
``WORKBENCH_FILE_CACHE_MB``, counted in Arrow bytes). Keys hold the store's identity, so one
catalog never sees what another's credentials read."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from workbench.core.base.caches import BoundedCache
from workbench.core.storage.file_cache import capacity

if TYPE_CHECKING:
    import pyarrow as pa

    from workbench.core.delta.data_files import DataFile

# Files up to this size on disk are kept decoded; bigger ones cost their rows, not their opening.
SMALL_FILE_BYTES = 1024**2


def bound() -> int:
    """The bytes kept decoded at most: a quarter of the file cache's."""
    return capacity() // 4


KEPT: BoundedCache[tuple[str, bytes, str, int], pa.Table] = BoundedCache(
    "delta.decoded_files", lambda table: table.nbytes, bound
)


def is_small(f: DataFile) -> bool:
    """True for a file kept decoded: small, and its row count known from the log."""
    return f.size <= SMALL_FILE_BYTES and f.rows > 0


def file_tables(
    store: str,
    schema: pa.Schema,
    files: list[DataFile],
    read: Callable[[list[DataFile]], pa.Table],
    keep: bool = True,
) -> list[pa.Table] | None:
    """The rows of each of ``files`` (small ones) in ``schema``: those kept, the others from
    ``read`` (one scan of the missing files, in order), kept for next time unless not to
    ``keep`` (files a writer is replacing). None when that scan's rows do not add up to the
    files' counts in the log (nothing is kept then)."""
    layout = schema.serialize().to_pybytes()
    keys = [(store, layout, f.absolute, f.size) for f in files]
    found = [KEPT.get(k) for k in keys]
    missing = [i for i, table in enumerate(found) if table is None]
    if missing:
        rows = read([files[i] for i in missing])
        if rows.num_rows != sum(files[i].rows for i in missing):
            return None
        start = 0
        for i in missing:
            found[i] = rows.slice(start, files[i].rows)
            start += files[i].rows
            if keep:
                KEPT.keep(keys[i], found[i])
    return found  # type: ignore[return-value]


def clear() -> None:
    """Forget every decoded file."""
    KEPT.clear()
