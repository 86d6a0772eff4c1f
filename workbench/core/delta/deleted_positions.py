"""The row positions a deletion vector deletes, as a sorted read-only array, kept in this
process (least recently used first out, bounded): a vector never changes once written (a change
writes a new one), so the reads of a table whose files carry vectors decode each one once. Keys
hold the store's identity (root and a digest of its options), so one catalog never sees what
another's credentials read."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

from workbench.core.base.caches import BoundedCache
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

# Bytes of positions kept in all (8 each); a vector bigger than a tenth of it is not kept.
MAX_KEPT_BYTES = 64 * 1024**2

KEPT: BoundedCache[tuple[str, str, Descriptor], np.ndarray] = BoundedCache(
    "delta.deleted_positions", lambda positions: positions.nbytes, lambda: MAX_KEPT_BYTES
)


def deleted_positions(
    table_uri: str, descriptor: Descriptor, storage: Storage | None = None
) -> np.ndarray:
    """The positions, in increasing order, of the rows of a data file its vector deletes (an
    int64 array nobody may change)."""
    storage = storage or storage_for(table_uri)
    key = (storage.identity, table_uri.rstrip("/"), descriptor)
    positions = KEPT.get(key)
    if positions is None:
        positions = _decoded(read_vector(table_uri, descriptor, storage))
        KEPT.keep(key, positions)
    return positions


def _decoded(deleted: object) -> np.ndarray:
    import numpy as np

    positions = np.fromiter(deleted, dtype=np.int64, count=len(deleted))  # type: ignore[arg-type]
    positions.sort()  # a bitmap iterates in order already: this only makes sure
    positions.flags.writeable = False
    return positions


def without_positions(rows: pa.Table, deleted: np.ndarray) -> pa.Table:
    """``rows`` less those at the positions ``deleted`` (increasing). When they are few and far
    between (a read after many small merges) the runs of kept rows are sliced out of the
    scan's batches without copying; otherwise each column is filtered (a copy)."""
    import numpy as np
    import pyarrow as pa

    if not rows.num_columns:  # a row count only
        return rows.slice(0, rows.num_rows - len(deleted))
    if not sparse(deleted, rows.num_rows):
        mask = np.ones(rows.num_rows, dtype=bool)
        mask[deleted] = False
        bits = pa.py_buffer(np.packbits(mask, bitorder="little"))
        keep = pa.BooleanArray.from_buffers(pa.bool_(), len(mask), [None, bits])
        return pa.Table.from_arrays([c.filter(keep) for c in rows.columns], schema=rows.schema)
    runs = kept_runs(rows.to_batches(), deleted, rows.num_rows)
    return pa.Table.from_batches(list(runs), rows.schema)


def sparse(deleted: np.ndarray, rows: int) -> bool:
    """True when ``deleted`` positions among ``rows`` are far enough apart to be left out by
    slicing the runs between them."""
    return len(deleted) * MIN_KEPT_RUN <= rows


def kept_runs(
    batches: Iterable[pa.RecordBatch], deleted: np.ndarray, rows: int
) -> Iterator[pa.RecordBatch]:
    """The runs of rows between the positions ``deleted`` (increasing) of ``batches`` read one
    after another (``rows`` in all), as slices of each batch (no copy), batch by batch as the
    batches come."""
    import numpy as np

    starts, ends = np.append(0, deleted + 1), np.append(deleted, rows)
    kept = ends > starts
    starts, ends = starts[kept], ends[kept]
    low = 0
    for batch in batches:
        high = low + batch.num_rows
        first = np.searchsorted(ends, low, side="right")  # the runs overlapping this batch
        last = np.searchsorted(starts, high, side="left")
        offsets = np.maximum(starts[first:last], low) - low
        lengths = np.minimum(ends[first:last], high) - low - offsets
        yield from map(batch.slice, offsets.tolist(), lengths.tolist())
        low = high


def without_deleted(
    rows: pa.Table, f: DataFile, table_uri: str, storage: Storage | None = None
) -> pa.Table:
    """All the rows of file ``f`` (``rows``, in file order) less those its vector deletes."""
    if f.deletion_vector is None:
        return rows
    return without_positions(rows, deleted_positions(table_uri, f.deletion_vector, storage))


def clear() -> None:
    """Forget every decoded vector."""
    KEPT.clear()
