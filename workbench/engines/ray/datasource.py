"""A table version as a Ray Datasource: one lazy read task per data file, planned from the
Delta statistics, so nothing is opened until the Dataset runs. A filter Ray pushes into it
(``Dataset.filter(expr=...)``) leaves out the files the log's statistics rule out, and each
task applies it as Ray would (pyarrow); a read's own ``filter=`` is applied with SQL's meaning."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from ray.data import Datasource, ReadTask
from ray.data.block import BlockMetadata

from workbench.core.delta.reading import live_file_rows
from workbench.core.filters.duck import filter_rows

if TYPE_CHECKING:
    import pyarrow as pa

    from workbench.core.delta.data_files import DataFile
    from workbench.core.filters.table_filter import TableFilter
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
        row_filter: TableFilter | None = None,
    ):
        super().__init__()
        self.files, self.table_uri, self.schema, self.columns = files, table_uri, schema, columns
        self.storage, self.path_column, self.row_filter = storage, path_column, row_filter

    def supports_predicate_pushdown(self) -> bool:
        return True

    def _pushed(self) -> tuple[Any, list[DataFile], set[str] | None]:
        """The pyarrow form of the filter Ray pushed (None: none), the files it could match
        by their statistics, and the columns it reads (all files and None, where the tree
        cannot read it)."""
        predicate = self.get_current_predicate()
        if predicate is None:
            return None, self.files, set()
        pushed = predicate.to_pyarrow()
        from workbench.core.base.errors import InvalidFilterError
        from workbench.core.delta.skipping import skip_files
        from workbench.core.filters.arrow_expression import from_arrow
        from workbench.core.filters.binding import bind
        from workbench.core.filters.expression import columns_of

        try:
            tree = bind(from_arrow(pushed), self.schema, "", lenient=True)
        except InvalidFilterError:
            return pushed, self.files, None
        return pushed, skip_files(self.files, tree, self.schema).kept, columns_of(tree)

    def estimate_inmemory_data_size(self) -> int:
        return sum(f.size for f in self.files)

    def get_read_tasks(
        self, parallelism: int, per_task_row_limit: int | None = None, **_: Any
    ) -> list[ReadTask]:
        import pyarrow as pa

        schema = self.schema if self.columns is None else self.schema.select(self.columns)
        if self.path_column:
            schema = schema.append(pa.field(self.path_column, pa.string()))
        pushed, files, pushed_columns = self._pushed()
        reading = self._columns_read(pushed_columns)
        tasks = []
        for f in files:

            def read(f: DataFile = f) -> Iterator[pa.Table]:
                data = live_file_rows(f, self.table_uri, self.schema, self.storage, reading)
                if pushed is not None:
                    data = data.filter(pushed)
                if self.row_filter is not None:
                    data = filter_rows(data, self.row_filter)
                if self.columns is not None:
                    data = data.select(self.columns)
                if self.path_column:
                    paths = pa.array([f.absolute] * data.num_rows, pa.string())
                    data = data.append_column(self.path_column, paths)
                yield data

            metadata = BlockMetadata(
                num_rows=f.live_rows, size_bytes=f.size, exec_stats=None, input_files=[f.absolute]
            )
            tasks.append(ReadTask(read, metadata, schema, per_task_row_limit))
        return tasks

    def _columns_read(self, pushed_columns: set[str] | None) -> list[str] | None:
        """The columns a task reads: those asked for and those the filters need (all, when
        the pushed filter's are not known)."""
        if self.columns is None or pushed_columns is None:
            return None
        needed = pushed_columns | (self.row_filter.columns if self.row_filter else set())
        return self.columns + [n for n in self.schema.names if n in needed - set(self.columns)]
