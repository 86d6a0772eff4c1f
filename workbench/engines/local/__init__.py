"""The local engine: in-memory data (pandas, pyarrow, polars, numpy) on pyarrow and deltalake in
this process, with SQL on DuckDB. It reads every dataset type that is materialised in memory."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from workbench.core.base.errors import UnsupportedFeatureError
from workbench.core.base.types import DatasetType
from workbench.core.data.datasets import from_pyarrow, to_pyarrow
from workbench.core.data.engine import Engine
from workbench.core.delta.data_files import Rewrite, WrittenFile, write_parts
from workbench.core.delta.reading import live_table, ordered_dataset, parquet_files
from workbench.core.schema.conform import conform
from workbench.core.schema.merge_keys import unique_keys
from workbench.core.schema.table_schema import Schema
from workbench.core.schema.type_notes import with_written_types
from workbench.engines.local import sql
from workbench.engines.local.filtered import filtered_rows

if TYPE_CHECKING:
    import pyarrow as pa

    from workbench.core.catalog.locations import OpenTable
    from workbench.core.data.predict_plan import PredictPlan
    from workbench.core.filters.table_filter import TableFilter
    from workbench.core.inference.model import Model
    from workbench.core.schema.merge_order import Ranking


class LocalEngine(Engine):
    """pyarrow + deltalake + DuckDB, in this process."""

    name = "local"
    data_modules: ClassVar[tuple[str, ...]] = ("pandas", "pyarrow", "polars", "numpy")
    dataset_types: ClassVar[tuple[DatasetType, ...]] = (
        DatasetType.PYARROW,
        DatasetType.PANDAS,
        DatasetType.POLARS,
        DatasetType.NUMPY,
        DatasetType.PYARROW_PARQUET,
    )
    sql_result_type = DatasetType.PYARROW
    applies_deletion_vectors = True

    def read(
        self,
        table: OpenTable,
        read_as: DatasetType,
        columns: list[str] | None,
        limit: int | None,
        path_column: str | None = None,
        row_filter: TableFilter | None = None,
    ) -> Any:
        if row_filter is not None:
            data = filtered_rows(table, columns, limit, path_column, row_filter)
            return from_pyarrow(with_written_types(data), read_as)
        if read_as is DatasetType.PYARROW_PARQUET:
            if any(f.deletion_vector for f in table.files):
                raise UnsupportedFeatureError(
                    f"read_as=PYARROW_PARQUET gives the files of {table.loc.qualified!r} as they "
                    "are, and some have rows deleted by deletion vectors that a ParquetFile "
                    "would show; fold them with dc.optimize(...) first, or read as PYARROW."
                )
            return parquet_files(table)
        if path_column:
            data = _with_paths(table, columns, limit, path_column)
        elif limit is None or limit >= sum(f.rows for f in table.files):
            data = live_table(table, columns=columns)
        else:
            data = ordered_dataset(table).head(limit, columns=columns)
        return from_pyarrow(with_written_types(data), read_as)

    def source(self, data: Any) -> pa.Table:
        return to_pyarrow(data)

    def schema(self, source: pa.Table) -> pa.Schema:
        return source.schema

    def keyed(
        self, source: pa.Table, keys: list[str], table: str, dedupe: str | None, order: Ranking = ()
    ) -> pa.Table:
        return unique_keys(source, keys, table, dedupe, order)

    def write_files(self, source: pa.Table, schema: Schema, folder: str) -> list[WrittenFile]:
        return write_parts(source, schema, folder)

    def merge(self, table: OpenTable, source: pa.Table, schema: Schema, keys: list[str]) -> Rewrite:
        present = Schema(f for f in schema if f.name in source.column_names)
        source = conform(source, present, fill_missing=False, table=table.loc.qualified)
        from workbench.core.data import arrow_merge  # not imported by a process that only reads

        return arrow_merge.merge(table, source, schema, keys)

    def delete(self, table: OpenTable, source: pa.Table, keys: list[str]) -> Rewrite:
        name = table.loc.qualified
        source = conform(source.select(keys), table.schema, fill_missing=False, table=name)
        from workbench.core.data import arrow_merge

        return arrow_merge.delete(table, unique_keys(source, keys, name, dedupe="first"), keys)

    def predict(self, source: pa.Table, model: Model, plan: PredictPlan) -> Iterator[pa.Table]:
        from workbench.core.inference.worker import in_batches, load

        load(model)  # once, in this process
        return in_batches(model, source, plan)

    def sql(self, query: str, tables: Mapping[str, OpenTable]) -> pa.Table:
        return sql.run(query, tables)

    def sql_plan(self, query: str, tables: Mapping[str, OpenTable]) -> str:
        return sql.run(query, tables, explain=True).column("plan")[0].as_py()

    def to_arrow(self, data: Any) -> pa.Table:
        return to_pyarrow(data)

    def from_arrow(self, table: pa.Table) -> pa.Table:
        return table


def _with_paths(
    table: OpenTable, columns: list[str] | None, limit: int | None, path_column: str
) -> pa.Table:
    """The table's rows (the first ``limit``) with a column naming each row's file, file by
    file in write order (a file's deleted rows left out)."""
    import pyarrow as pa

    storage = table.loc.catalog.storage
    parts, remaining = [], limit
    for f in table.files:
        rows = live_table(table, [f], columns)
        if remaining is not None:
            rows = rows.slice(0, remaining)
            remaining -= rows.num_rows
        path = storage.fs_path(f.absolute)
        parts.append(rows.append_column(path_column, pa.array([path] * rows.num_rows, pa.string())))
        if remaining == 0:
            break
    schema = table.schema.arrow
    if columns is not None:
        schema = pa.schema([schema.field(c) for c in columns])
    schema = schema.append(pa.field(path_column, pa.string()))
    return pa.concat_tables(parts).cast(schema) if parts else schema.empty_table()
