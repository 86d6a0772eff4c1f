"""The Ray engine: Ray starts only when something asks for it (see ``runtime``).

Reads are lazy Ray Datasets with one read task per data file. Writes run the Dataset and let
each Ray task write its blocks as Parquet in the table's declared types; the driver only
collects the file descriptions and commits them. Key checks (``keys``), MERGE and DELETE
(``merge``) keep the source in the object store and run in Ray tasks.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from workbench.core.base.types import DatasetType
from workbench.core.catalog.locations import check_readable
from workbench.core.data.engine import Engine
from workbench.core.delta.clustering import clustered
from workbench.core.delta.data_files import (
    Rewrite,
    WrittenFile,
    discard_batch,
    new_batch,
    write_part,
)
from workbench.core.delta.reading import plain_schema
from workbench.core.delta.snapshot import leading_files
from workbench.core.schema.merge_order import Ranking
from workbench.core.schema.table_schema import Schema
from workbench.core.storage.known import storage_for
from workbench.engines.ray import runtime
from workbench.engines.ray.keys import unique_blocks
from workbench.engines.ray.merge import delete_keys, merge_blocks
from workbench.engines.ray.tasks import Task

T = TypeVar("T")

if TYPE_CHECKING:
    import pyarrow as pa
    import ray.data

    from workbench.core.catalog.locations import OpenTable
    from workbench.core.data.predict_plan import PredictPlan
    from workbench.core.delta.data_files import DataFile
    from workbench.core.filters.table_filter import TableFilter
    from workbench.core.inference.model import Model
    from workbench.core.storage.store import Storage


class RayEngine(Engine):
    """Ray Data on a local Ray instance or a cluster."""

    name = "ray"
    applies_deletion_vectors = True  # reads filter each file; MERGE and DELETE write vectors
    merges_predictions = True  # actors write predictions; the merge-back runs in Ray tasks
    clustered = True
    data_modules: ClassVar[tuple[str, ...]] = ("ray",)
    dataset_types: ClassVar[tuple[DatasetType, ...]] = (DatasetType.RAY_DATASET,)

    def __init__(self, settings: Mapping[str, Any] | None = None):
        super().__init__(settings)
        runtime.ensure_ray()

    @classmethod
    def check_settings(cls, settings: Mapping[str, Any]) -> dict[str, Any]:
        return runtime.check(settings)

    def read(
        self,
        table: OpenTable,
        read_as: DatasetType,
        columns: list[str] | None,
        limit: int | None,
        path_column: str | None = None,
        row_filter: TableFilter | None = None,
    ) -> ray.data.Dataset:
        import pyarrow as pa
        import ray.data

        from workbench.engines.ray.datasource import TableFiles

        files = table.files if row_filter is not None else leading_files(table.files, limit)
        if not files:
            empty = plain_schema(table).empty_table()
            empty = empty.select(columns) if columns else empty
            if path_column:
                empty = empty.append_column(path_column, pa.array([], pa.string()))
            frame = ray.data.from_arrow(empty)
        else:
            check_readable(table, files)
            storage = table.loc.catalog.storage
            frame = ray.data.read_datasource(
                TableFiles(
                    files, table.uri, plain_schema(table), columns, storage, path_column, row_filter
                )
            )
        return frame.limit(limit) if limit is not None else frame

    def source(self, data: ray.data.Dataset) -> ray.data.Dataset:
        """``data`` with Arrow blocks: pandas blocks (``from_pandas``, pandas batches) are
        converted in Ray tasks as local pandas data is, so their schema is Arrow's."""
        import pyarrow as pa

        if isinstance(_schema_of(data).base_schema, pa.Schema):
            return data
        return data.map_batches(_arrow_block, batch_format=None, batch_size=None)

    def schema(self, source: ray.data.Dataset) -> pa.Schema:
        return _schema_of(source).base_schema

    def cast_exact(
        self, source: ray.data.Dataset, targets: Mapping[str, pa.DataType]
    ) -> tuple[ray.data.Dataset, list[str]]:
        """Each block is checked in its own task (one flag per column comes back); the cast
        runs lazily in the tasks that write."""
        checks = source.map_batches(
            _inexact_block, batch_format="pyarrow", batch_size=None, fn_kwargs={"targets": targets}
        ).take_all()
        exact = {n: t for n, t in targets.items() if not any(c[n] for c in checks)}
        if not exact:
            return source, []
        cast = source.map_batches(
            _cast_block, batch_format="pyarrow", batch_size=None, fn_kwargs={"targets": exact}
        )
        return cast, list(exact)

    def keyed(
        self,
        source: ray.data.Dataset,
        keys: list[str],
        table: str,
        dedupe: str | None,
        order: Ranking = (),
    ) -> ray.data.Dataset:
        """Keys are checked in Ray tasks (see ``keys``); the blocks stay in the object store
        and, when de-duplicating, are filtered there."""
        import ray.data

        blocks = source.to_arrow_refs()
        kept = unique_blocks(blocks, keys, table, dedupe, order)
        return ray.data.from_arrow_refs(kept) if blocks else source

    def write_files(
        self, source: ray.data.Dataset, schema: Schema, folder: str
    ) -> list[WrittenFile]:
        batch = new_batch()
        try:
            records = source.map_batches(
                _write_block,
                batch_format="pyarrow",
                batch_size=None,
                fn_kwargs={
                    "schema": schema,
                    "folder": folder,
                    "batch": batch,
                    "storage": storage_for(folder),
                },
            ).take_all()
        except BaseException:
            discard_batch(folder, batch)
            raise
        return sorted((WrittenFile(*json.loads(r["file"])) for r in records), key=lambda f: f.uri)

    def merge(
        self, table: OpenTable, source: ray.data.Dataset, schema: Schema, keys: list[str]
    ) -> Rewrite:
        present = Schema(f for f in schema if f.name in source.columns())
        return merge_blocks(table, source.to_arrow_refs(), schema, present, keys)

    def delete(self, table: OpenTable, source: ray.data.Dataset, keys: list[str]) -> Rewrite:
        return delete_keys(table, source.select_columns(keys).to_arrow_refs(), keys)

    def predict_files(
        self,
        source: ray.data.Dataset,
        model: Model,
        plan: PredictPlan,
        schema: pa.Schema,
        folder: str,
    ) -> Iterator[WrittenFile]:
        from workbench.engines.ray.predict import predict_files

        return predict_files(source, model, plan, schema, folder)

    def map_files(self, files: list[DataFile], function: Callable[[DataFile], T]) -> list[T]:
        import ray

        return ray.get([_applied.remote(function, f) for f in files])

    def read_staged(
        self, files: list[DataFile], folder: str, schema: pa.Schema, storage: Storage
    ) -> ray.data.Dataset:
        import ray.data

        from workbench.engines.ray.datasource import TableFiles

        source = TableFiles(files, folder, schema, None, storage)
        # a block per file: Ray would split them into many small blocks, a task each to merge
        return ray.data.read_datasource(source, override_num_blocks=len(files))

    def one_part(self, data: ray.data.Dataset, clustering: list[str]) -> ray.data.Dataset:
        single = data.repartition(1)
        if not clustering:
            return single
        return single.map_batches(
            clustered, batch_format="pyarrow", batch_size=None, fn_args=(clustering,)
        )

    def to_arrow(self, data: ray.data.Dataset) -> pa.Table:
        import pyarrow as pa
        import ray

        tables = ray.get(data.to_arrow_refs())
        return pa.concat_tables(tables) if tables else data.schema().base_schema.empty_table()

    def from_arrow(self, table: pa.Table) -> ray.data.Dataset:
        import ray.data

        return ray.data.from_arrow(table)


def _schema_of(data: ray.data.Dataset) -> Any:
    """The Dataset's schema; ``SchemaValidationError`` when Ray has none (an empty dataset
    made from pandas keeps no columns)."""
    from workbench.core.base.errors import SchemaValidationError

    schema = data.schema()
    if schema is None:
        raise SchemaValidationError(
            "The Ray Dataset has no schema: Ray keeps none for an empty dataset made from "
            "pandas. Write ray.data.from_arrow(table) of an empty Arrow table (it keeps its "
            "columns), or skip the write."
        )
    return schema


def _arrow_block(block: Any) -> pa.Table:
    """A block as Arrow (a pandas block converted with its dtypes noted, as local data is)."""
    import pyarrow as pa

    from workbench.core.data.pandas_io import arrow_from_pandas

    return block if isinstance(block, pa.Table) else arrow_from_pandas(block)


def _inexact_block(block: pa.Table, targets: Mapping[str, pa.DataType]) -> pa.Table:
    """One row: for each column of ``targets``, whether a value of the block does not convert
    to its type exactly."""
    import pyarrow as pa

    from workbench.core.schema.exact_casts import exactly_cast

    _, cast = exactly_cast(block, targets)
    return pa.table({name: [name not in cast] for name in targets})


def _cast_block(block: pa.Table, targets: Mapping[str, pa.DataType]) -> pa.Table:
    from workbench.core.schema.exact_casts import exactly_cast

    return exactly_cast(block, targets)[0]


def _write_block(
    block: pa.Table, schema: Schema, folder: str, batch: str, storage: Storage
) -> pa.Table:
    import pyarrow as pa

    if not block.num_rows:
        return pa.table({"file": pa.array([], pa.string())})
    written = write_part(block, schema, folder, 0, batch, storage)
    return pa.table({"file": [json.dumps([written.uri, written.size, written.stats])]})


def _apply_impl(function: Callable[[Any], Any], argument: Any) -> Any:
    return function(argument)


_applied = Task(_apply_impl)
