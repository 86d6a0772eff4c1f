"""The data files of a table version: the one reader of Delta add actions, their write order,
and a pyarrow dataset over them in the table's schema, for engines to read."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

from workbench.core.delta.deletion_vectors import (
    Descriptor,
    kept_rows,
    read_vector,
    vectors_in_log,
    without_deleted,
)
from workbench.core.storage.store import is_local

if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa
    import pyarrow.dataset as pads
    from deltalake import DeltaTable

    from workbench.core.catalog.tables import OpenTable
    from workbench.core.delta.data_files import WrittenFile
    from workbench.core.storage.store import Storage

# Writers may truncate long string statistics (Delta allows it), so a long maximum is not an
# upper bound; strings at least this long are treated as unbounded above.
TRUNCATED_STRING_STATS = 32
# Deleted rows at least this far apart on average are left out by zero-copy slices of the runs
# between them (cheaper than a filter's copy, and the runs stay long enough to be useful chunks).
MIN_KEPT_RUN = 512
# Files of an object store read together are fetched whole, at once, up to this many bytes in all.
WHOLE_FILES_BYTES = 64 * 1024**2


@dataclass(frozen=True)
class DataFile:
    """One data file of a table version, with its row count and per-column min/max."""

    path: str  # relative and URL-encoded, as in the Delta log
    absolute: str  # path or URI to open
    size: int
    rows: int
    modified: int  # ms since the epoch; files of later commits are newer
    low: dict[str, Any]
    high: dict[str, Any]
    deletion_vector: Descriptor | None = None  # rows of the file deleted since it was written

    @property
    def identity(self) -> tuple[str, str | None]:
        """What tells a table's file entries apart: its path and its deletion vector."""
        vector = self.deletion_vector
        return self.path, None if vector is None else f"{vector.path_or_inline}@{vector.offset}"

    @property
    def live_rows(self) -> int:
        """Rows a reader sees: those written, less those its deletion vector deletes."""
        return self.rows - (self.deletion_vector.cardinality if self.deletion_vector else 0)

    def upper(self, column: str) -> Any:
        """The column's maximum when it is a true upper bound (None if unknown)."""
        high = self.high.get(column)
        if isinstance(high, str) and len(high) >= TRUNCATED_STRING_STATS:
            return None
        return high

    @classmethod
    def from_written(cls, written: WrittenFile, folder: str) -> DataFile:
        """A file just written into ``folder``, before any Delta log names it."""
        stats = json.loads(written.stats)
        path = written.uri[len(folder.rstrip("/")) + 1 :]
        low, high = stats.get("minValues", {}), stats.get("maxValues", {})
        return cls(path, written.uri, written.size, stats["numRecords"], 0, low, high)

    @classmethod
    def from_add(cls, add: dict[str, Any], table_uri: str) -> DataFile:
        """A file of an ``add`` action (its statistics JSON decoded; times stay text)."""
        stats = json.loads(add.get("stats") or "{}")
        return cls(
            add["path"],
            f"{table_uri.rstrip('/')}/{unquote(add['path'])}",
            add["size"],
            stats.get("numRecords", 0),
            add.get("modificationTime", 0),
            stats.get("minValues", {}),
            stats.get("maxValues", {}),
            Descriptor.from_action(add["deletionVector"]) if add.get("deletionVector") else None,
        )


def in_write_order(files: list[DataFile]) -> list[DataFile]:
    """Files oldest commit first, and within a commit by name (writers number their parts)."""
    return sorted(files, key=lambda f: (f.modified, f.path))


def data_files_of(delta: DeltaTable, table_uri: str) -> list[DataFile]:
    """The files of a Delta table version in write order, with statistics."""
    import pyarrow as pa

    actions = pa.table(delta.get_add_actions(flatten=True))
    if not actions.num_rows:
        return []
    stats = {
        name: actions.column(name).to_pylist()
        for name in actions.column_names
        if name.startswith(("min.", "max."))
    }
    base = table_uri.rstrip("/")
    vectors = {}
    if "deletionVectors" in (delta.protocol().reader_features or ()):
        vectors = vectors_in_log(table_uri, delta.version())

    def bound(prefix: str, i: int) -> dict[str, Any]:
        return {n[4:]: v[i] for n, v in stats.items() if n.startswith(prefix) and v[i] is not None}

    return in_write_order(
        [
            DataFile(
                path,
                f"{base}/{unquote(path)}",
                size,
                rows or 0,
                modified,
                bound("min.", i),
                bound("max.", i),
                vectors.get(path),
            )
            for i, (path, size, rows, modified) in enumerate(
                zip(
                    actions.column("path").to_pylist(),
                    actions.column("size_bytes").to_pylist(),
                    actions.column("num_records").to_pylist(),
                    actions.column("modification_time").cast(pa.int64()).to_pylist(),
                    strict=True,
                )
            )
        ]
    )


def candidate_files(
    files: list[DataFile], low: dict[str, Any], high: dict[str, Any]
) -> list[DataFile]:
    """Files whose statistics allow a key within [low, high] on every key column; files without
    usable statistics are always candidates."""
    return [f for f in files if all(_may_overlap(f, k, low[k], high[k]) for k in low)]


def _may_overlap(f: DataFile, key: str, low: Any, high: Any) -> bool:
    file_low, file_high = f.low.get(key), f.upper(key)
    try:
        if file_low is not None and file_low > high:
            return False
        return not (file_high is not None and file_high < low)
    except TypeError:  # statistics of another representation (e.g. naive vs aware times)
        return True


def plain_schema(opened: OpenTable) -> pa.Schema:
    """The table's Arrow schema as stored in its files (no workbench metadata)."""
    import pyarrow as pa

    return pa.schema([pa.field(f.name, f.type) for f in opened.schema])


def ordered_dataset(opened: OpenTable, files: list[DataFile] | None = None) -> pads.Dataset:
    """The table's files (or ``files``) as one pyarrow dataset in the table's schema, in write
    order, for readers that push their own projection down (SQL); columns missing from older
    files read as nulls. Rows deletion vectors delete are left out: the files with a vector are
    read when the dataset is made, the others lazily, and each file's rows keep their place."""
    import itertools

    import numpy as np
    import pyarrow.dataset as pads

    chosen = opened.files if files is None else files
    vectored = [f for f in chosen if f.deletion_vector is not None]
    if not vectored:
        return _dataset(opened, chosen)
    live = live_table(opened, vectored)
    starts = np.cumsum([0] + [f.live_rows for f in vectored])
    remaining = {
        f.identity: live.slice(start, f.live_rows)
        for f, start in zip(vectored, starts, strict=False)
    }
    schema = opened.schema.arrow
    parts: list[pads.Dataset] = []
    for has_vector, group in itertools.groupby(chosen, lambda f: f.deletion_vector is not None):
        if not has_vector:
            parts.append(_dataset(opened, list(group)))
            continue
        parts += [pads.InMemoryDataset(remaining[f.identity], schema=schema) for f in group]
    return parts[0] if len(parts) == 1 else pads.UnionDataset(schema, parts)


def live_table(
    opened: OpenTable, files: list[DataFile] | None = None, columns: list[str] | None = None
) -> pa.Table:
    """The rows of the table's files (or ``files``) that no deletion vector deletes, in write
    order and the table's schema, ``columns`` only: one parallel read of every file, then one
    mask over all of them (a read after many merges costs little more than a plain one)."""
    chosen = opened.files if files is None else files
    with opened.loc.catalog.storage.access_errors():  # a store refusing: a typed error
        rows = _scan(opened, chosen, columns)
        if all(f.deletion_vector is None for f in chosen):
            return rows
        return _filtered(rows, _live_mask(opened, chosen))


def _scan(opened: OpenTable, files: list[DataFile], columns: list[str] | None) -> pa.Table:
    """The rows of ``files`` in the table's schema, in order: one parallel scan. On an object
    store, small files are fetched whole, all at once (one request each, where pyarrow makes
    two or three in turn; none for files read before: see ``file_cache``), then read from
    memory."""
    storage = opened.loc.catalog.storage
    if is_local(storage.root) or not files or sum(f.size for f in files) > WHOLE_FILES_BYTES:
        return _dataset(opened, files).to_table(columns=columns)
    import pyarrow as pa
    import pyarrow.dataset as pads

    parquet = pads.ParquetFileFormat()
    fetched = storage.get_many([f.absolute for f in files], immutable=True)
    fragments = []
    for f, data in zip(files, fetched, strict=True):
        if data is None:
            raise FileNotFoundError(f.absolute)
        fragments.append(parquet.make_fragment(pa.BufferReader(data)))
    return pads.FileSystemDataset(fragments, opened.schema.arrow, parquet).to_table(columns=columns)


def _dataset(opened: OpenTable, files: list[DataFile]) -> pads.FileSystemDataset:
    """Files of the table as one lazy pyarrow dataset in its schema (the sizes from the Delta
    log spare object stores a request per file)."""
    import pyarrow.dataset as pads

    storage = opened.loc.catalog.storage
    parquet = pads.ParquetFileFormat()
    fragments = [
        parquet.make_fragment(storage.fs_path(f.absolute), storage.filesystem, file_size=f.size)
        for f in files
    ]
    return pads.FileSystemDataset(
        fragments, opened.schema.arrow, parquet, filesystem=storage.filesystem
    )


def _live_mask(opened: OpenTable, files: list[DataFile]) -> np.ndarray:
    """One boolean mask over the rows of ``files`` read one after another: False for the rows
    their deletion vectors delete."""
    import numpy as np

    storage = opened.loc.catalog.storage
    mask = np.ones(sum(f.rows for f in files), dtype=bool)
    start = 0
    for f in files:
        if f.deletion_vector is not None:
            deleted = read_vector(opened.uri, f.deletion_vector, storage)
            mask[start : start + f.rows] = kept_rows(f.rows, deleted)
        start += f.rows
    return mask


def _filtered(rows: pa.Table, mask: np.ndarray) -> pa.Table:
    """``rows`` where ``mask`` is True. When the deleted rows are few and far between (a read
    after many small merges) the runs of kept rows are sliced out without copying; otherwise
    each column is filtered (a copy)."""
    import numpy as np
    import pyarrow as pa

    deleted = np.flatnonzero(~mask)
    if rows.num_columns and len(deleted) * MIN_KEPT_RUN <= len(mask):
        starts, ends = np.append(0, deleted + 1), np.append(deleted, len(mask))
        runs = [rows.slice(s, e - s) for s, e in zip(starts, ends, strict=True) if e > s]
        return pa.concat_tables(runs) if runs else rows.slice(0, 0)
    bits = pa.py_buffer(np.packbits(mask, bitorder="little"))
    keep = pa.BooleanArray.from_buffers(pa.bool_(), len(mask), [None, bits])
    if not rows.num_columns:  # a row count only
        return rows.filter(keep)
    return pa.Table.from_arrays([c.filter(keep) for c in rows.columns], schema=rows.schema)


def file_rows(opened: OpenTable, f: DataFile, columns: list[str] | None = None) -> pa.Table:
    """Every row a file holds, deleted ones too (positions match its deletion vector), in the
    table's types: all columns, or ``columns``."""
    import pyarrow.dataset as pads

    storage = opened.loc.catalog.storage
    fragment = pads.ParquetFileFormat().make_fragment(
        storage.fs_path(f.absolute), storage.filesystem, file_size=f.size
    )
    with storage.access_errors():  # a store refusing: a typed error
        return fragment.to_table(schema=opened.schema.arrow, columns=columns)


def live_file_rows(
    f: DataFile,
    table_uri: str,
    schema: pa.Schema,
    storage: Storage,
    columns: list[str] | None = None,
    position_column: str | None = None,
) -> pa.Table:
    """One data file in the table's schema (columns missing from older files are null),
    without the rows its deletion vector deletes: what an engine's task reads per file.
    ``position_column`` adds each row's position in the file (what a vector counts)."""
    import pyarrow as pa
    import pyarrow.dataset as pads

    fs, path = storage.locate(f.absolute)
    with storage.access_errors():  # a store refusing: a typed error
        dataset = pads.dataset(path, schema=schema, format="parquet", filesystem=fs)
        rows = dataset.to_table(columns=columns)
        if position_column:
            positions = pa.array(range(rows.num_rows), pa.int64())
            rows = rows.append_column(position_column, positions)
        return without_deleted(rows, f, table_uri, storage)


def parquet_files(opened: OpenTable) -> Any:
    """The table's Parquet files as lazy ``pyarrow.parquet.ParquetFile`` objects, in write
    order: a list, or the ``ParquetFile`` itself when there is one (as DeltaCAT gives them)."""
    import pyarrow.parquet as pq

    storage = opened.loc.catalog.storage
    files = [
        pq.ParquetFile(storage.filesystem.open_input_file(storage.fs_path(f.absolute)))
        for f in opened.files
    ]
    return files[0] if len(files) == 1 else files
