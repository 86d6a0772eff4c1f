"""The row positions a deletion vector deletes, as a sorted read-only array, kept in this
process (least recently used first out, bounded): a vector never changes once written (a change
writes a new one), so the reads of a table whose files carry vectors decode each one once. Keys
hold the store's identity (root and a digest of its options), so one catalog never sees what
another's credentials read."""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import TYPE_CHECKING

from workbench.core.base.caches import drop_where, process_cache
from workbench.core.delta.deletion_vectors import read_vector
from workbench.core.storage.known import storage_for

if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa

    from workbench.core.delta.data_files import DataFile
    from workbench.core.delta.vector_descriptor import Descriptor
    from workbench.core.storage.store import Storage

# Deleted rows at least this far apart on average are left out by zero-copy slices of the runs
# between them (cheaper than a filter's copy, and the runs stay long enough to be useful chunks).
MIN_KEPT_RUN = 512

# Positions kept in all (8 bytes each: 64 MiB); a vector bigger than a tenth of it is not kept.
MAX_KEPT_POSITIONS = 8 * 1024**2

_kept: OrderedDict[tuple[str, str, Descriptor], np.ndarray] = OrderedDict()
_count = 0
_lock = threading.Lock()


def deleted_positions(
    table_uri: str, descriptor: Descriptor, storage: Storage | None = None
) -> np.ndarray:
    """The positions, in increasing order, of the rows of a data file its vector deletes (an
    int64 array nobody may change)."""
    storage = storage or storage_for(table_uri)
    key = (storage.identity, table_uri.rstrip("/"), descriptor)
    with _lock:
        found = _kept.get(key)
        if found is not None:
            _kept.move_to_end(key)
            return found
    positions = _decoded(read_vector(table_uri, descriptor, storage))
    _keep(key, positions)
    return positions


def _decoded(deleted: object) -> np.ndarray:
    import numpy as np

    positions = np.fromiter(deleted, dtype=np.int64, count=len(deleted))  # type: ignore[arg-type]
    positions.sort()  # a bitmap iterates in order already: this only makes sure
    positions.flags.writeable = False
    return positions


def _keep(key: tuple[str, str, Descriptor], positions: np.ndarray) -> None:
    global _count
    if len(positions) > MAX_KEPT_POSITIONS // 10:
        return
    with _lock:
        if key in _kept:
            return
        _kept[key] = positions
        _count += len(positions)
        while _count > MAX_KEPT_POSITIONS:
            _, dropped = _kept.popitem(last=False)
            _count -= len(dropped)


def without_positions(rows: pa.Table, deleted: np.ndarray) -> pa.Table:
    """``rows`` less those at the positions ``deleted`` (increasing). When they are few and far
    between (a read after many small merges) the runs of kept rows are sliced out of the
    scan's batches without copying; otherwise each column is filtered (a copy)."""
    import numpy as np
    import pyarrow as pa

    if not rows.num_columns:  # a row count only
        return rows.slice(0, rows.num_rows - len(deleted))
    if len(deleted) * MIN_KEPT_RUN > rows.num_rows:
        mask = np.ones(rows.num_rows, dtype=bool)
        mask[deleted] = False
        bits = pa.py_buffer(np.packbits(mask, bitorder="little"))
        keep = pa.BooleanArray.from_buffers(pa.bool_(), len(mask), [None, bits])
        return pa.Table.from_arrays([c.filter(keep) for c in rows.columns], schema=rows.schema)
    starts, ends = np.append(0, deleted + 1), np.append(deleted, rows.num_rows)
    kept = ends > starts
    starts, ends = starts[kept], ends[kept]
    runs, low = [], 0
    for batch in rows.to_batches():
        high = low + batch.num_rows
        first = np.searchsorted(ends, low, side="right")
        last = np.searchsorted(starts, high, side="left")
        bounds = zip(
            np.maximum(starts[first:last], low).tolist(),
            np.minimum(ends[first:last], high).tolist(),
            strict=True,
        )
        runs += [batch.slice(start - low, end - start) for start, end in bounds]
        low = high
    return pa.Table.from_batches(runs, rows.schema)


def without_deleted(
    rows: pa.Table, f: DataFile, table_uri: str, storage: Storage | None = None
) -> pa.Table:
    """All the rows of file ``f`` (``rows``, in file order) less those its vector deletes."""
    if f.deletion_vector is None:
        return rows
    return without_positions(rows, deleted_positions(table_uri, f.deletion_vector, storage))


def clear() -> None:
    """Forget every decoded vector."""
    global _count
    with _lock:
        _kept.clear()
        _count = 0


def forget(store: str) -> None:
    """Forget the vectors decoded from one store (its identity)."""
    global _count
    with _lock:
        _count -= sum(map(len, drop_where(_kept, lambda key: key[0] == store)))


process_cache("delta.deleted_positions", clear, forget=forget)
