"""A table's files as one lazy Daft source: the files the filter Daft pushes down could match
(by the log's statistics), Daft's native Parquet reader for plain files, a task per file with
a deletion vector that reads it with pyarrow (only the columns the query asks for) and leaves
out the rows its vector deletes, when the DataFrame runs.

One source rather than a concat of two: Daft 0.7 can drop the error of a Python task that fails
inside a concat and return the other side's rows alone, and a read must fail whole."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from daft.io.source import DataSource, DataSourceTask

from workbench.core.delta.reading import live_file_rows

if TYPE_CHECKING:
    import daft
    import pyarrow as pa
    from daft.io.pushdowns import Pushdowns
    from daft.recordbatch import RecordBatch

    from workbench.core.delta.data_files import DataFile
    from workbench.core.storage.store import Storage


class TableFiles(DataSource):
    """``files`` of a table in ``arrow`` (the table's schema, plus the path column when asked
    for), in the order given."""

    def __init__(
        self,
        files: list[DataFile],
        table_uri: str,
        arrow: pa.Schema,
        storage: Storage,
        path_column: str | None,
        io_config: daft.io.IOConfig | None,
    ):
        self.files, self.table_uri, self.arrow = files, table_uri, arrow
        self.storage, self.path_column, self.io_config = storage, path_column, io_config

    @property
    def name(self) -> str:
        return "workbench table files"

    @property
    def schema(self) -> Any:
        from daft import Schema

        return Schema.from_pyarrow_schema(self.arrow)

    async def get_tasks(self, pushdowns: Pushdowns) -> AsyncIterator[DataSourceTask]:
        import pyarrow as pa
        from daft.daft import StorageConfig

        arrow = self.arrow
        if pushdowns.columns is not None:  # a task's rows also carry what Daft filters them by
            wanted = set(pushdowns.columns) | pushdowns.filter_required_column_names()
            arrow = pa.schema([f for f in self.arrow if f.name in wanted])
        storage = StorageConfig(True, self.io_config)
        for f in self._candidates(pushdowns):
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

    def _candidates(self, pushdowns: Pushdowns) -> list[DataFile]:
        """The files whose statistics allow a row the pushed filter holds for (all when
        nothing is pushed, or nothing of it can be read against the statistics)."""
        if pushdowns.filters is None:
            return self.files
        from workbench.core.base.errors import InvalidFilterError
        from workbench.core.delta.skipping import skip_files
        from workbench.core.filters.binding import bind
        from workbench.engines.daft.filters import from_daft

        try:
            predicate = bind(from_daft(pushdowns.filters), self.arrow, "", lenient=True)
        except InvalidFilterError:
            return self.files
        return skip_files(self.files, predicate, self.arrow).kept

    def _path_value(self, f: DataFile) -> RecordBatch | None:
        """The path column as a per-file constant the native reader adds to each row."""
        if self.path_column is None:
            return None
        import pyarrow as pa
        from daft import Series
        from daft.recordbatch import RecordBatch

        path = Series.from_arrow(pa.array([f.absolute], pa.string()), self.path_column)
        return RecordBatch.from_pydict({self.path_column: path})


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
