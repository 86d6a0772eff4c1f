"""A table version as a Ray Datasource: one lazy read task per data file, planned from the
Delta statistics, so nothing is opened until the Dataset runs."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from ray.data import Datasource, ReadTask
from ray.data.block import BlockMetadata

from workbench.core.delta.reading import live_file_rows

if TYPE_CHECKING:
    import pyarrow as pa

    from workbench.core.delta.data_files import DataFile
    from workbench.core.storage.store import Storage


class TableFiles(Datasource):
    """The given files of a table, read in the table's schema."""

    def __init__(
        self,
        files: list[DataFile],
        table_uri: str,
        schema: pa.Schema,
        columns: list[str] | None,
        storage: Storage,
        path_column: str | None = None,
    ):
        self.files, self.table_uri, self.schema, self.columns = files, table_uri, schema, columns
        self.storage, self.path_column = storage, path_column

    def estimate_inmemory_data_size(self) -> int:
        return sum(f.size for f in self.files)

    def get_read_tasks(
        self, parallelism: int, per_task_row_limit: int | None = None, **_: Any
    ) -> list[ReadTask]:
        import pyarrow as pa

        schema = self.schema if self.columns is None else self.schema.select(self.columns)
        if self.path_column:
            schema = schema.append(pa.field(self.path_column, pa.string()))
        tasks = []
        for f in self.files:

            def read(f: DataFile = f) -> Iterator[pa.Table]:
                data = live_file_rows(f, self.table_uri, self.schema, self.storage, self.columns)
                if self.path_column:
                    paths = pa.array([f.absolute] * data.num_rows, pa.string())
                    data = data.append_column(self.path_column, paths)
                yield data

            metadata = BlockMetadata(
                num_rows=f.live_rows, size_bytes=f.size, exec_stats=None, input_files=[f.absolute]
            )
            tasks.append(ReadTask(read, metadata, schema, per_task_row_limit))
        return tasks
