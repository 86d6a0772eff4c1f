"""A table's files as one lazy Daft source: the files the filter Daft pushes down could match
(by the log's statistics), Daft's native Parquet reader for plain files, a task per file with
a deletion vector that reads it with pyarrow (only the columns the query asks for) and leaves
out the rows its vector deletes, when the DataFrame runs. A filter DuckDB reads with the same
meaning, on a local table, is read by DuckDB instead (a task per group of files): its reader
prunes row groups by their statistics and Bloom filters, and applies vectors without decoding
the columns the query does not need.

A count of every row is answered from the log's row counts, no file opened.

One source rather than a concat of two: Daft 0.7 can drop the error of a Python task that fails
inside a concat and return the other side's rows alone, and a read must fail whole."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from daft.io.source import DataSource, DataSourceTask

from workbench.core.delta.reading import live_file_rows

# Files a DuckDB task reads at most (their bytes): a task holds its matching rows at once.
DUCKDB_TASK_BYTES = 256 * 1024**2

if TYPE_CHECKING:
    import daft
    import pyarrow as pa
    from daft.io.pushdowns import Pushdowns
    from daft.recordbatch import RecordBatch

    from workbench.core.catalog.locations import OpenTable
    from workbench.core.delta.data_files import DataFile
    from workbench.core.filters.expression import Expr
    from workbench.core.storage.store import Storage


class TableFiles(DataSource):
    """``files`` of a table in ``arrow`` (the table's schema, plus the path column when asked
    for), in the order given; ``duckdb``: the same files as a table version DuckDB can read
    (None: Daft reads them all)."""

    def __init__(
        self,
        files: list[DataFile],
        table_uri: str,
        arrow: pa.Schema,
        storage: Storage,
        path_column: str | None,
        io_config: daft.io.IOConfig | None,
        duckdb: OpenTable | None = None,
    ):
        self.files, self.table_uri, self.arrow = files, table_uri, arrow
        self.storage, self.path_column, self.io_config = storage, path_column, io_config
        self.duckdb = duckdb

    @property
    def name(self) -> str:
        return "workbench table files"

    @property
    def schema(self) -> Any:
        from daft import Schema

        return Schema.from_pyarrow_schema(self.arrow)

    def supports_count_pushdown(self) -> bool:
        """A count of every row is the log's: each file's row count less what its vector
        deletes, when every file has one (a file written without statistics shows 0)."""
        return all(f.rows > 0 for f in self.files)

    async def get_tasks(self, pushdowns: Pushdowns) -> AsyncIterator[DataSourceTask]:
        import pyarrow as pa
        from daft.daft import StorageConfig

        counted = _counted_field(pushdowns)
        if counted is not None and self.supports_count_pushdown():
            yield _CountTask(sum(f.live_rows for f in self.files), counted)
            return
        arrow = self.arrow
        if pushdowns.columns is not None:  # a task's rows also carry what Daft filters them by
            wanted = set(pushdowns.columns) | pushdowns.filter_required_column_names()
            arrow = pa.schema([f for f in self.arrow if f.name in wanted])
        predicate = self._pushed(pushdowns)
        candidates = self._candidates(predicate)
        prefilter = self._duckdb_prefilter(predicate, arrow)
        if prefilter is not None:
            for group in _groups(candidates):
                yield _DuckDbFilesTask(group, self, arrow, prefilter)
            return
        storage = StorageConfig(True, self.io_config)
        for f in candidates:
            if f.deletion_vector is not None:
                yield _VectoredFileTask(f, self, arrow)
            else:
                yield DataSourceTask.parquet(
                    path=f.absolute,
                    schema=self.schema,
                    pushdowns=pushdowns,
                    num_rows=f.rows or None,
                    size_bytes=f.size,
                    partition_values=self._path_value(f),
                    storage_config=storage,
                )

    def _pushed(self, pushdowns: Pushdowns) -> Expr | None:
        """The pushed filter as a tree typed by the table's columns (None: nothing pushed, or
        nothing of it the tree can hold)."""
        if pushdowns.filters is None:
            return None
        from workbench.core.base.errors import InvalidFilterError
        from workbench.core.filters.binding import bind
        from workbench.engines.daft.filters import from_daft

        try:
            return bind(from_daft(pushdowns.filters), self.arrow, "", lenient=True)
        except InvalidFilterError:
            return None

    def _candidates(self, predicate: Expr | None) -> list[DataFile]:
        """The files whose statistics allow a row ``predicate`` holds for (all without one)."""
        if predicate is None:
            return self.files
        from workbench.core.delta.skipping import skip_files

        return skip_files(self.files, predicate, self.arrow, self.storage.identity).kept

    def _duckdb_prefilter(self, predicate: Expr | None, arrow: pa.Schema) -> str | None:
        """DuckDB SQL for ``predicate`` when DuckDB can read these files with it and the
        task's columns (None: Daft reads them)."""
        if predicate is None or self.duckdb is None:
            return None
        if not [n for n in arrow.names if n != self.path_column]:
            return None  # only the path: Daft's reader adds it to no column
        from workbench.engines.daft.filters import duckdb_prefilter

        return duckdb_prefilter(predicate, self.arrow)

    def _path_value(self, f: DataFile) -> RecordBatch | None:
        """The path column as a per-file constant the native reader adds to each row."""
        if self.path_column is None:
            return None
        import pyarrow as pa
        from daft import Series
        from daft.recordbatch import RecordBatch

        path = Series.from_arrow(pa.array([f.absolute], pa.string()), self.path_column)
        return RecordBatch.from_pydict({self.path_column: path})


def _counted_field(pushdowns: Pushdowns) -> str | None:
    """The field a count of every row is asked under, when Daft pushes one down (None for
    anything else: a count of non-null values, or no count)."""
    if pushdowns.aggregation is None or pushdowns.filters is not None:
        return None
    from daft.daft import CountMode

    pushed = pushdowns._to_pypushdowns()  # Daft's own sources read the count this way
    fields = pushed.aggregation_required_column_names()
    if pushed.aggregation_count_mode() != CountMode.All or not fields:
        return None
    return fields[0]


class _CountTask(DataSourceTask):
    """The answer of a pushed-down count, from the log: one row, the count as ``uint64``."""

    def __init__(self, rows: int, field: str):
        self.rows, self.field = rows, field

    @property
    def schema(self) -> Any:
        import pyarrow as pa
        from daft import Schema

        return Schema.from_pyarrow_schema(pa.schema([(self.field, pa.uint64())]))

    async def read(self) -> AsyncIterator[RecordBatch]:
        import pyarrow as pa
        from daft.recordbatch import RecordBatch

        yield RecordBatch.from_arrow_table(
            pa.table({self.field: pa.array([self.rows], pa.uint64())})
        )


class _VectoredFileTask(DataSourceTask):
    def __init__(self, f: DataFile, source: TableFiles, arrow: pa.Schema):
        self.file, self.source, self.arrow = f, source, arrow

    @property
    def schema(self) -> Any:
        from daft import Schema

        return Schema.from_pyarrow_schema(self.arrow)

    async def read(self) -> AsyncIterator[RecordBatch]:
        import pyarrow as pa
        from daft.recordbatch import RecordBatch

        source = self.source
        stored = [f for f in self.arrow if f.name != source.path_column]
        rows = live_file_rows(self.file, source.table_uri, pa.schema(stored), source.storage)
        if source.path_column in self.arrow.names:
            paths = pa.array([self.file.absolute] * rows.num_rows, pa.string())
            rows = rows.append_column(source.path_column, paths)
        yield RecordBatch.from_arrow_table(rows.select(self.arrow.names).cast(self.arrow))


def _groups(files: list[DataFile]) -> list[list[DataFile]]:
    """``files`` in order, cut into runs of at most ``DUCKDB_TASK_BYTES`` (one file each at
    least)."""
    groups: list[list[DataFile]] = []
    size = DUCKDB_TASK_BYTES
    for f in files:
        if size + f.size > DUCKDB_TASK_BYTES:
            groups.append([])
            size = 0
        groups[-1].append(f)
        size += f.size
    return groups


class _DuckDbFilesTask(DataSourceTask):
    """Rows of a run of files that ``where`` (DuckDB SQL) keeps, read by DuckDB."""

    def __init__(self, files: list[DataFile], source: TableFiles, arrow: pa.Schema, where: str):
        self.files, self.source, self.arrow, self.where = files, source, arrow, where

    @property
    def schema(self) -> Any:
        from daft import Schema

        return Schema.from_pyarrow_schema(self.arrow)

    async def read(self) -> AsyncIterator[RecordBatch]:
        import pyarrow as pa
        from daft.recordbatch import RecordBatch

        from workbench.core.io.duck_scans import FILE_INDEX, rows_where

        source = self.source
        assert source.duckdb is not None
        opened = source.duckdb.with_files(self.files)
        stored = [n for n in self.arrow.names if n != source.path_column]
        paths = source.path_column in self.arrow.names
        rows = rows_where(opened, stored, self.where, None, positions=paths)
        if paths:  # the file index may go by the path column's name: dropped first
            located = pa.array([f.absolute for f in self.files], pa.string())
            index = rows.column(FILE_INDEX)
            rows = rows.drop_columns([FILE_INDEX])
            rows = rows.append_column(source.path_column, located.take(index))
        yield RecordBatch.from_arrow_table(rows.select(self.arrow.names).cast(self.arrow))
