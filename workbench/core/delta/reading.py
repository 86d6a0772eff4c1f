"""The rows of a table version's files, with the rows deletion vectors delete left out: one
parallel scan of many files, a pyarrow dataset for SQL, one file for an engine's task, the files
as they are for ``PYARROW_PARQUET``. A reader names the table by ``StoredTable``: its folder,
files, schema, properties and storage (a catalog's open table is one)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, Protocol

from workbench.core.delta.data_files import DataFile
from workbench.core.delta.decoded_files import bound, file_tables, is_small
from workbench.core.delta.deleted_positions import (
    deleted_positions,
    kept_runs,
    sparse,
    without_deleted,
    without_positions,
)
from workbench.core.delta.deletion_vectors import vector_uri
from workbench.core.delta.tiny_files import WHOLE_FILES_BYTES, decode, fetched_whole, is_tiny
from workbench.core.storage.store import is_local

if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa
    import pyarrow.dataset as pads

    from workbench.core.filters.expression import Expr
    from workbench.core.schema.table_schema import Schema
    from workbench.core.storage.store import Storage


class StoredTable(Protocol):
    """A table version as its rows are read: where its folder is, its files, schema and
    properties, and the storage holding them."""

    @property
    def uri(self) -> str: ...

    @property
    def files(self) -> list[DataFile]: ...

    @property
    def schema(self) -> Schema: ...

    @property
    def properties(self) -> dict[str, str]: ...

    @property
    def storage(self) -> Storage: ...


def check_files_readable(opened: StoredTable, files: list[DataFile]) -> None:
    """Raise ``FileNotFoundError`` when a file of ``files`` or a deletion vector file they
    need is gone (``dc.vacuum`` removed it), ``StorageUnreachableError`` when the store
    refuses: what a lazy read checks before it plans, so it never fails half-way in an engine's
    own words (a listing per folder, not a request per file)."""
    uris = [f.absolute for f in files]
    vectors = [f.deletion_vector for f in files if f.deletion_vector is not None]
    uris += sorted({vector_uri(opened.uri, v) for v in vectors if not v.inline})
    if uris:
        opened.storage.check_readable(*uris)


def plain_schema(opened: StoredTable) -> pa.Schema:
    """The table's Arrow schema as stored in its files (no workbench metadata)."""
    import pyarrow as pa

    return pa.schema([pa.field(f.name, f.type) for f in opened.schema])


def ordered_dataset(
    opened: StoredTable, files: list[DataFile] | None = None, predicate: Expr | None = None
) -> pads.Dataset:
    """The table's files (or ``files``) as one pyarrow dataset in the table's schema, in write
    order, for readers that push their own projection down (SQL); columns missing from older
    files read as nulls. Rows deletion vectors delete are left out: the files with a vector are
    read when the dataset is made, the others lazily, and each file's rows keep their place.
    ``predicate``: on an object store, row groups whose statistics rule it out are left out
    (the reader still filters the rows; see ``_dataset``)."""
    import itertools

    import numpy as np
    import pyarrow.dataset as pads

    chosen = opened.files if files is None else files
    vectored = [f for f in chosen if f.deletion_vector is not None]
    if not vectored:
        return _dataset(opened, chosen, predicate)
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
            parts.append(_dataset(opened, list(group), predicate))
            continue
        parts += [pads.InMemoryDataset(remaining[f.identity], schema=schema) for f in group]
    return parts[0] if len(parts) == 1 else pads.UnionDataset(schema, parts)


def live_table(
    opened: StoredTable,
    files: list[DataFile] | None = None,
    columns: list[str] | None = None,
    keep: bool = True,
) -> pa.Table:
    """The rows of the table's files (or ``files``) that no deletion vector deletes, in write
    order and the table's schema, ``columns`` only: one parallel read of every file, and the
    runs of rows between the positions the vectors delete (decoded once per process) sliced
    out, batch by batch as a local table's big files are decoded (a read after many merges
    costs little more than a plain one). ``keep=False``: a writer reading files it is about
    to replace keeps none of them decoded."""
    chosen = opened.files if files is None else files
    with opened.storage.access_errors():  # a store refusing: a typed error
        if all(f.deletion_vector is None for f in chosen):
            return _scan(opened, chosen, columns, keep)
        if columns != [] and is_local(opened.storage.root) and not all(map(is_small, chosen)):
            overlapped = _live_overlapped(opened, chosen, columns, keep)
            if overlapped is not None:
                return overlapped
        rows = _scan(opened, chosen, columns, keep)  # first: a file vacuum removed fails as such
        return without_positions(rows, _deleted_rows(opened, chosen))


def _live_overlapped(
    opened: StoredTable, files: list[DataFile], columns: list[str] | None, keep: bool
) -> pa.Table | None:
    """``live_table`` of local files, some big: the big ones streamed from a scan set going
    first, while this thread decodes the small ones and the vectors, then the runs between
    deleted rows sliced from each batch as it comes, so the slicing overlaps the decoding (dense
    deletes: filtered once all have come). None when a file's rows differ from the log's."""
    import pyarrow as pa

    big = [f for f in files if not is_small(f)]
    _fail_if_missing(opened, big)  # before their vectors are read
    scan = _dataset(opened, big).scanner(columns=columns).to_reader()  # decoding from now on
    schema = scan.schema
    try:
        small = [f for f in files if is_small(f)]
        kept = _scan(opened, small, columns, keep) if small else None
        deleted = _deleted_rows(opened, files)
        total = sum(f.rows for f in files)
        batches = _in_turn(files, kept, scan)
        if sparse(deleted, total):
            return pa.Table.from_batches(list(kept_runs(batches, deleted, total)), schema)
        return without_positions(pa.Table.from_batches(list(batches), schema), deleted)
    except _RowsDiffer:
        return None
    finally:
        scan.close()


def _fail_if_missing(opened: StoredTable, files: list[DataFile]) -> None:
    """Raise ``FileNotFoundError`` for a local file of ``files`` that is gone (a version
    ``dc.vacuum`` removed fails as unread): a stat each, where ``check_files_readable`` lists
    folders that hold every file ever written."""
    for f in files:
        if not os.path.exists(opened.storage.fs_path(f.absolute)):
            raise FileNotFoundError(f.absolute)


class _RowsDiffer(Exception):
    """A file's rows as scanned differ from its row count in the log."""


def _in_turn(
    files: list[DataFile], kept: pa.Table | None, scan: pa.RecordBatchReader
) -> Iterator[pa.RecordBatch]:
    """The batches of ``files`` in order: a small file's from ``kept`` (the small files' rows,
    in order), a big file's from ``scan`` (the big files', in order; a batch never holds rows
    of two files), each file's as many rows as the log counts."""
    start = 0
    for f in files:
        if is_small(f):
            yield from kept.slice(start, f.rows).to_batches()  # type: ignore[union-attr]
            start += f.rows
            continue
        need = f.rows
        while need > 0:
            batch = next(scan, None)
            if batch is None or batch.num_rows > need:
                raise _RowsDiffer(f.path)
            need -= batch.num_rows
            yield batch
    if any(batch.num_rows for batch in scan):
        raise _RowsDiffer("rows past the last file")


def _scan(
    opened: StoredTable, files: list[DataFile], columns: list[str] | None, keep: bool = True
) -> pa.Table:
    """The rows of ``files`` in the table's schema, in order: small files as this process
    decoded them before (see ``decoded_files``; on an object store, as its file cache, without
    asking the store again), the others in one parallel scan."""
    small = [f for f in files if is_small(f)]
    if not small or columns == [] or not bound():
        return _read(opened, files, columns)
    if is_local(opened.storage.root):
        _fail_if_missing(opened, small)
    schema = opened.schema.arrow
    store = opened.storage.identity
    tables = file_tables(store, schema, small, lambda s: _read_small(opened, s), keep)
    if tables is None:  # the log's row counts do not match the files
        return _read(opened, files, columns)
    others = [f for f in files if not is_small(f)]
    rest = _read(opened, others, columns) if others else None
    if rest is not None and rest.num_rows != sum(f.rows for f in others):
        return _read(opened, files, columns)
    decoded = {
        f.identity: t if columns is None else t.select(columns)
        for f, t in zip(small, tables, strict=True)
    }
    return _in_order(files, decoded, rest)


def _read_small(opened: StoredTable, files: list[DataFile]) -> pa.Table:
    """The rows of small files, all columns, in order: the tiny ones decoded in turn (see
    ``tiny_files``), the others in one parallel scan."""
    tiny = [f for f in files if is_tiny(f)]
    if not tiny:
        return _read(opened, files, None)
    schema = opened.schema.arrow
    tables = decode(opened.storage, tiny, schema, lambda f: _read(opened, [f], None))
    others = [f for f in files if not is_tiny(f)]
    rest = _read(opened, others, None) if others else None
    return _in_order(files, {f.identity: t for f, t in zip(tiny, tables, strict=True)}, rest)


def _in_order(
    files: list[DataFile], read: dict[tuple[str, str | None], pa.Table], rest: pa.Table | None
) -> pa.Table:
    """The rows of ``files`` in order: a file's own table from ``read``, else its rows next in
    ``rest`` (one scan of the other files, in order)."""
    import pyarrow as pa

    parts, start = [], 0
    for f in files:
        if f.identity in read:
            parts.append(read[f.identity])
        else:
            parts.append(rest.slice(start, f.rows))  # type: ignore[union-attr]
            start += f.rows
    return pa.concat_tables(parts)


def _read(opened: StoredTable, files: list[DataFile], columns: list[str] | None) -> pa.Table:
    """The rows of ``files`` in the table's schema, in order: one parallel scan."""
    return _dataset(opened, files).to_table(columns=columns)


def _dataset(
    opened: StoredTable, files: list[DataFile], predicate: Expr | None = None
) -> pads.FileSystemDataset:
    """Files of the table as one lazy pyarrow dataset in its schema. On an object store, with
    a ``predicate``, only each file's row groups whose statistics allow a row it holds for
    (see ``row_groups``); without, files up to ``WHOLE_FILES_BYTES`` in all are fetched whole,
    at once and through the file cache (see ``fetched_whole``: a repeated read asks the store
    nothing). Others are read where they are, their sizes from the Delta log (no request per
    file for them)."""
    import pyarrow as pa
    import pyarrow.dataset as pads

    from workbench.core.delta.row_groups import pruned_fragments

    storage = opened.storage
    parquet = pads.ParquetFileFormat()
    local = is_local(storage.root)
    if not local and files and predicate is not None:
        fragments = pruned_fragments(storage, parquet, files, predicate, plain_schema(opened))
    elif local or not files or sum(f.size for f in files) > WHOLE_FILES_BYTES:
        fragments = [
            parquet.make_fragment(storage.fs_path(f.absolute), storage.filesystem, file_size=f.size)
            for f in files
        ]
    else:
        whole = fetched_whole(storage, files)
        fragments = [parquet.make_fragment(pa.BufferReader(data)) for data in whole]
    return pads.FileSystemDataset(
        fragments, opened.schema.arrow, parquet, filesystem=storage.filesystem
    )


def _deleted_rows(opened: StoredTable, files: list[DataFile]) -> np.ndarray:
    """The positions, over the rows of ``files`` read one after another, of the rows their
    deletion vectors delete, in increasing order."""
    import numpy as np

    parts, start = [], 0
    for f in files:
        if f.deletion_vector is not None:
            parts.append(deleted_positions(opened.uri, f.deletion_vector, opened.storage) + start)
        start += f.rows
    return np.concatenate(parts)


def live_file_chunks(opened: StoredTable, f: DataFile) -> Iterator[pa.Table]:
    """The live rows of one file in the table's schema, in order, a record batch at a time when
    the file is big and deletes nothing (a compaction of big files holds a batch of rows, not a
    file's); other files whole, as ``live_table`` reads them."""
    import pyarrow as pa

    if f.deletion_vector is not None or is_small(f):
        yield live_table(opened, [f], keep=False)
        return
    with opened.storage.access_errors():  # a store refusing: a typed error
        if is_local(opened.storage.root):
            _fail_if_missing(opened, [f])  # a version vacuum removed fails as such
        for batch in _dataset(opened, [f]).to_batches(batch_readahead=1, fragment_readahead=1):
            yield pa.Table.from_batches([batch])


def file_rows(opened: StoredTable, f: DataFile, columns: list[str] | None = None) -> pa.Table:
    """Every row a file holds, deleted ones too (positions match its deletion vector), in the
    table's types: all columns, or ``columns``."""
    import pyarrow.dataset as pads

    storage = opened.storage

    def scan(f: DataFile) -> pa.Table:
        fragment = pads.ParquetFileFormat().make_fragment(
            storage.fs_path(f.absolute), storage.filesystem, file_size=f.size
        )
        return fragment.to_table(schema=opened.schema.arrow, columns=columns)

    with storage.access_errors():  # a store refusing: a typed error
        if is_tiny(f):
            return decode(storage, [f], opened.schema.arrow, scan, columns)[0]
        return scan(f)


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


def parquet_files(opened: StoredTable) -> Any:
    """The table's Parquet files as lazy ``pyarrow.parquet.ParquetFile`` objects, in write
    order: a list, or the ``ParquetFile`` itself when there is one (as DeltaCAT gives them)."""
    import pyarrow.parquet as pq

    storage = opened.storage
    files = [
        pq.ParquetFile(storage.filesystem.open_input_file(storage.fs_path(f.absolute)))
        for f in opened.files
    ]
    return files[0] if len(files) == 1 else files
