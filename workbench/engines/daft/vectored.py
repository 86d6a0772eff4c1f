"""Files with a deletion vector as a lazy Daft source: one task per file reads it with pyarrow
(only the columns the query asks for) and leaves out the rows its vector deletes, when the
DataFrame runs."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from daft.io.source import DataSource, DataSourceTask

from workbench.core.delta.snapshot import live_file_rows

if TYPE_CHECKING:
    import pyarrow as pa
    from daft.io.pushdowns import Pushdowns
    from daft.recordbatch import RecordBatch

    from workbench.core.delta.snapshot import DataFile
    from workbench.core.storage.store import Storage


class VectoredFiles(DataSource):
    """Table files that have deletion vectors, in ``arrow`` (the table's schema, plus the
    path column when asked for)."""

    def __init__(
        self,
        files: list[DataFile],
        table_uri: str,
        arrow: pa.Schema,
        storage: Storage,
        path_column: str | None,
    ):
        self.files, self.table_uri, self.arrow = files, table_uri, arrow
        self.storage, self.path_column = storage, path_column

    @property
    def name(self) -> str:
        return "workbench files with deletion vectors"

    @property
    def schema(self) -> Any:
        from daft import Schema

        return Schema.from_pyarrow_schema(self.arrow)

    async def get_tasks(self, pushdowns: Pushdowns) -> AsyncIterator[DataSourceTask]:
        import pyarrow as pa

        wanted = pushdowns.columns
        arrow = self.arrow if wanted is None else pa.schema([self.arrow.field(n) for n in wanted])
        for f in self.files:
            yield _FileTask(f, self, arrow)


class _FileTask(DataSourceTask):
    def __init__(self, f: DataFile, source: VectoredFiles, arrow: pa.Schema):
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
