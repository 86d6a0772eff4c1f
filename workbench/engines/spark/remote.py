"""Spark on object stores without hadoop-aws: Parquet read and written with pyarrow's
filesystem inside Spark's Python workers.

Reads go through the ``workbench_files`` data source (one partition per file, deletion vectors
applied in the task, an optional column naming each row's file); writes run ``mapInArrow`` so
each task writes its partition as a part of the table and reports it. The catalog's storage
(root and options) travels with the job, so executors need no configuration of their own.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

from workbench.core.delta.data_files import (
    DataFile,
    WrittenFile,
    discard_batch,
    new_batch,
    write_part,
)
from workbench.core.delta.reading import live_file_rows
from workbench.core.schema.table_schema import Schema
from workbench.core.storage.store import Storage

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import DataFrame, SparkSession

NAME = "workbench_files"
FILE_COLUMN = "__wb_file"
WRITTEN = "uri string, size long, stats string"


@dataclass
class _File(InputPartition):
    file: DataFile


class FilesSource(DataSource):
    """Given Parquet files of a table, read with pyarrow in the table's schema."""

    @classmethod
    def name(cls) -> str:
        return NAME

    def schema(self) -> Any:
        from pyspark.sql.types import StructType

        return StructType.fromJson(json.loads(self.options["schema"]))

    def reader(self, schema: Any) -> DataSourceReader:
        return _FilesReader(self.options)


class _FilesReader(DataSourceReader):
    def __init__(self, options: dict[str, str]):
        self.files = _decode_files(options["files"])
        self.table_uri = options["table"]
        self.arrow = _arrow_schema(options["arrow"])
        self.storage = Storage(options["root"], json.loads(options["storage"]))
        self.path_column = options.get("path_column")
        self.position_column = options.get("position_column")

    def partitions(self) -> list[InputPartition]:
        return [_File(f) for f in self.files]

    def read(self, partition: InputPartition) -> Iterator[Any]:
        import pyarrow as pa

        f = partition.file
        position = self.position_column
        table = live_file_rows(f, self.table_uri, self.arrow, self.storage, None, position)
        if self.path_column:
            table = table.append_column(
                self.path_column, pa.array([f.absolute] * table.num_rows, pa.string())
            )
        yield from table.to_batches()


def _arrow_schema(encoded: str) -> pa.Schema:
    import base64

    import pyarrow as pa

    return pa.ipc.read_schema(pa.py_buffer(base64.b64decode(encoded)))


def _encode_files(files: list[DataFile]) -> str:
    """Data files (with their deletion vectors) as an option string for the workers."""
    import base64
    import pickle

    return base64.b64encode(pickle.dumps(files)).decode()


def _decode_files(encoded: str) -> list[DataFile]:
    import base64
    import pickle

    return pickle.loads(base64.b64decode(encoded))


def _encode(schema: pa.Schema) -> str:
    import base64

    return base64.b64encode(schema.serialize().to_pybytes()).decode()


def read_by_tasks(
    spark: SparkSession,
    files: list[DataFile],
    table_uri: str,
    schema: Schema,
    storage: Storage,
    path_column: str | None = None,
    position_column: str | None = None,
) -> DataFrame:
    """Table files as one DataFrame in ``schema`` (the table's, or some of its columns), each
    read by pyarrow in a Spark task without the rows its deletion vector deletes (object
    stores, and files with vectors anywhere); ``position_column`` gives each row's position in
    its file, ``path_column`` the file."""
    import pyarrow as pa
    from pyspark.sql.types import LongType, StringType, StructField

    from workbench.engines.spark.files import spark_schema

    arrow = pa.schema([pa.field(f.name, f.type) for f in schema])
    structure = spark_schema(arrow)
    if position_column:
        structure = structure.add(StructField(position_column, LongType()))
    if path_column:
        structure = structure.add(StructField(path_column, StringType()))
    return (
        spark.read.format(NAME)
        .option("files", _encode_files(files))
        .option("table", table_uri)
        .option("schema", structure.json())
        .option("arrow", _encode(arrow))
        .option("root", storage.root)
        .option("storage", json.dumps(storage.options))
        .option("path_column", path_column or "")
        .option("position_column", position_column or "")
        .load()
    )


def write_remote(
    frame: DataFrame, schema: Schema, folder: str, storage: Storage
) -> list[WrittenFile]:
    """Let each Spark task write its partition (already in the table's types) as a part."""
    batch = new_batch()

    def write_partition(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        import pyarrow as pa
        from pyspark import TaskContext

        parts = [b for b in batches if b.num_rows]
        if parts:
            table = pa.Table.from_batches(parts)
            index = TaskContext.get().partitionId()  # parts keep the frame's order when read
            yield written_record(write_part(table, schema, folder, index, batch, storage))

    try:
        rows = frame.mapInArrow(write_partition, WRITTEN).collect()
    except BaseException:
        discard_batch(folder, batch, storage)
        raise
    return [written_file(r) for r in rows]


def written_record(written: WrittenFile) -> pa.RecordBatch:
    """A file a task wrote, as the one-row batch it returns (``WRITTEN``)."""
    import pyarrow as pa

    return pa.record_batch({"uri": [written.uri], "size": [written.size], "stats": [written.stats]})


def written_file(row: Any) -> WrittenFile:
    """A file a task reported (a ``WRITTEN`` row)."""
    return WrittenFile(row["uri"], row["size"], row["stats"])
