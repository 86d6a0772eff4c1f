"""The Spark engine: Spark DataFrames read, written, merged and queried with SQL."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from functools import partial
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from workbench.core.base.types import DatasetType
from workbench.core.data.engine import Engine
from workbench.core.delta.data_files import Rewrite
from workbench.core.schema.merge_order import Ranking
from workbench.core.schema.table_schema import Schema
from workbench.engines.spark import file_writes, write
from workbench.engines.spark.files import arrow_schema
from workbench.engines.spark.settings import check

T = TypeVar("T")

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import DataFrame

    from workbench.core.catalog.locations import OpenTable
    from workbench.core.data.predict_plan import PredictPlan
    from workbench.core.delta.data_files import DataFile, WrittenFile
    from workbench.core.filters.table_filter import TableFilter
    from workbench.core.inference.model import Model
    from workbench.core.storage.store import Storage


class SparkEngine(Engine):
    """One shared local (or configured) SparkSession; Spark computes and writes Parquet."""

    name = "spark"
    clustered = True
    applies_deletion_vectors = True  # files with a vector are read by tasks that apply it
    merges_predictions = True  # tasks write predictions; the merge-back is a Spark job
    data_modules: ClassVar[tuple[str, ...]] = ("pyspark",)
    dataset_types: ClassVar[tuple[DatasetType, ...]] = (DatasetType.SPARK,)
    sql_result_type = DatasetType.SPARK

    @classmethod
    def check_settings(cls, settings: Mapping[str, Any]) -> dict[str, Any]:
        return check(settings)

    def read(
        self,
        table: OpenTable,
        read_as: DatasetType,
        columns: list[str] | None,
        limit: int | None,
        path_column: str | None = None,
        row_filter: TableFilter | None = None,
    ) -> DataFrame:
        from workbench.engines.spark.filters import where
        from workbench.engines.spark.read import read_table

        frame = read_table(table, path_column)
        if row_filter is not None:
            frame = where(frame, row_filter)
        frame = (
            frame.select(*columns, *([path_column] if path_column else [])) if columns else frame
        )
        return frame.limit(limit) if limit is not None else frame

    def source(self, data: DataFrame) -> DataFrame:
        return data

    def schema(self, source: DataFrame) -> pa.Schema:
        return arrow_schema(source.schema)

    def cast_exact(
        self, source: DataFrame, targets: Mapping[str, pa.DataType]
    ) -> tuple[DataFrame, list[str]]:
        """One Spark job finds the columns holding a value that does not convert (not a whole
        number in the target's range, not of its fixed width; one flag per column comes back);
        an integer cast is part of the frame."""
        return write.cast_exact(source, targets)

    def keyed(
        self,
        source: DataFrame,
        keys: list[str],
        table: str,
        dedupe: str | None,
        order: Ranking = (),
    ) -> DataFrame:
        return write.checked_keys(source, keys, table, dedupe, order)

    def write_files(self, source: DataFrame, schema: Schema, folder: str) -> list[WrittenFile]:
        return file_writes.write_files(source, schema, folder)

    def merge(
        self, table: OpenTable, source: DataFrame, schema: Schema, keys: list[str]
    ) -> Rewrite:
        return write.merge(table, source, schema, keys)

    def delete(self, table: OpenTable, source: DataFrame, keys: list[str]) -> Rewrite:
        return write.delete(table, source, keys)

    def sql(self, query: str, tables: Mapping[str, OpenTable]) -> DataFrame:
        from workbench.engines.spark.sql import run_sql

        return run_sql(query, tables)

    def predict_files(
        self, source: DataFrame, model: Model, plan: PredictPlan, schema: pa.Schema, folder: str
    ) -> Iterator[WrittenFile]:
        from workbench.engines.spark.predict import predict_files

        return predict_files(source, model, plan, schema, folder)

    def map_files(self, files: list[DataFile], function: Callable[[DataFile], T]) -> list[T]:
        from workbench.engines.spark.session import spark_session

        if not files:
            return []
        return spark_session().sparkContext.parallelize(files, len(files)).map(function).collect()

    def read_staged(
        self, files: list[DataFile], folder: str, schema: pa.Schema, storage: Storage
    ) -> DataFrame:
        from workbench.engines.spark.read import read_files

        return read_files(files, folder, Schema.of(schema), storage)

    def one_part(self, data: DataFrame, clustering: list[str]) -> DataFrame:
        single = data.coalesce(1)
        if not clustering:
            return single
        return single.mapInArrow(partial(_clustered_batches, clustering), single.schema)

    def to_arrow(self, data: DataFrame) -> pa.Table:
        return data.toArrow()

    def from_arrow(self, table: pa.Table) -> DataFrame:
        from workbench.engines.spark.session import spark_session

        return spark_session().createDataFrame(table)


def _clustered_batches(clustering: list[str], batches: Iterator[pa.RecordBatch]) -> Iterator[Any]:
    """A partition's rows (on a Spark worker) in the clustering order of ``clustering``."""
    import pyarrow as pa

    from workbench.core.delta.clustering import clustered

    held = list(batches)
    if held:
        yield from clustered(pa.Table.from_batches(held), clustering).to_batches()
