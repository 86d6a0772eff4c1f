"""``dc.read(..., filter=...)`` in this process: the rows a filter holds for, in write order,
read by DuckDB from the files file skipping left (only the filter's and the asked-for
columns decoded, row groups the footers rule out left unread), or, for an object-store table,
filtered by DuckDB after the live rows of the row groups the statistics allow are read."""

from __future__ import annotations

from typing import TYPE_CHECKING

from workbench.core.delta.reading import live_table, ordered_dataset, plain_schema
from workbench.core.filters.duck import filter_rows
from workbench.core.io.duck_scans import FILE_INDEX, reads_files, rows_where

if TYPE_CHECKING:
    import pyarrow as pa

    from workbench.core.catalog.locations import OpenTable
    from workbench.core.filters.table_filter import TableFilter


def filtered_rows(
    opened: OpenTable,
    columns: list[str] | None,
    limit: int | None,
    path_column: str | None,
    row_filter: TableFilter,
) -> pa.Table:
    """The rows of ``opened`` (its files: the candidates) ``row_filter`` holds for, the first
    ``limit`` in write order, ``columns`` (all by default) and ``path_column`` naming each
    row's file, in the table's stored types."""
    import pyarrow as pa

    names = list(opened.schema.names) if columns is None else list(columns)
    schema = plain_schema(opened)
    target = pa.schema([schema.field(n) for n in names])
    if opened.files and not reads_files(opened):
        if path_column is not None:
            return _with_paths(opened, target, path_column, row_filter, limit)
        needed = names + sorted(row_filter.columns - set(names))
        rows = filter_rows(_candidate_rows(opened, needed), row_filter).select(names)
        return (rows if limit is None else rows.slice(0, limit)).cast(target)
    if not opened.files:
        rows = target.empty_table()
    else:
        positions = path_column is not None
        rows = rows_where(opened, names, row_filter.duckdb_sql, limit, positions)
    if path_column is None:
        return rows.select(names).cast(target)
    if not opened.files:
        return rows.append_column(path_column, pa.array([], pa.string()))
    paths = rows.column(FILE_INDEX)
    rows = rows.select(names).cast(target)
    located = pa.array([opened.storage.fs_path(f.absolute) for f in opened.files], pa.string())
    return rows.append_column(path_column, located.take(paths))


def _candidate_rows(opened: OpenTable, columns: list[str]) -> pa.Table:
    """The live rows of an object-store table's candidate files, ``columns`` only: of each
    file only the row groups whose statistics allow a row of the filter its files were
    chosen by (all rows when none chose them)."""
    if opened.narrowed_by is None:
        return live_table(opened, columns=columns)
    with opened.storage.access_errors():
        return ordered_dataset(opened, predicate=opened.narrowed_by).to_table(columns=columns)


def _with_paths(
    opened: OpenTable,
    target: pa.Schema,
    path_column: str,
    row_filter: TableFilter,
    limit: int | None,
) -> pa.Table:
    """Rows of an object-store table with the file each came from: the filter applied file by
    file."""
    import pyarrow as pa

    names = target.names
    needed = names + sorted(row_filter.columns - set(names))
    parts, remaining = [], limit
    for f in opened.files:
        kept = filter_rows(live_table(opened, [f], needed), row_filter).select(names)
        if remaining is not None:
            kept = kept.slice(0, remaining)
            remaining -= kept.num_rows
        path = pa.array([opened.storage.fs_path(f.absolute)] * kept.num_rows, pa.string())
        parts.append(kept.cast(target).append_column(path_column, path))
        if remaining == 0:
            break
    schema = target.append(pa.field(path_column, pa.string()))
    return pa.concat_tables(parts) if parts else schema.empty_table()
