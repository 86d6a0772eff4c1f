"""Catalog tables as Spark DataFrames: the files of the resolved Delta version, read natively."""

from __future__ import annotations

from typing import TYPE_CHECKING

from workbench.core.base.errors import TableValidationError
from workbench.core.catalog.locations import OpenTable, check_readable
from workbench.core.schema.table_schema import Schema
from workbench.core.storage.store import Storage, is_local
from workbench.engines.spark.files import spark_schema
from workbench.engines.spark.remote import read_by_tasks
from workbench.engines.spark.session import spark_session

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from workbench.core.delta.data_files import DataFile

# Reader features that the reads below apply (the others change how Parquet files are read).
APPLIED_FEATURES = {"timestampNtz", "deletionVectors"}


def read_files(
    files: list[DataFile],
    table_uri: str,
    schema: Schema,
    storage: Storage,
    path_column: str | None = None,
) -> DataFrame:
    """A table's data files as one DataFrame with the table's schema (columns absent in old
    files are null; ``path_column`` names each row's file); no files gives an empty frame.
    Local files are read by Spark itself; files with a deletion vector, and object-store files
    (no hadoop-aws here), by pyarrow in Spark's tasks, which leave out the deleted rows."""
    from pyspark.sql import functions as F

    spark = spark_session()
    structure = spark_schema(schema.arrow)
    if not files:
        frame = spark.createDataFrame([], structure)
        return frame.withColumn(path_column, F.lit("")) if path_column else frame
    if not is_local(storage.root):
        return read_by_tasks(spark, files, table_uri, schema, storage, path_column)
    plain = [f.absolute for f in files if f.deletion_vector is None]
    vectored = [f for f in files if f.deletion_vector is not None]
    frames = []
    if plain:
        frame = spark.read.schema(structure).parquet(*plain)
        if path_column:
            frame = frame.withColumn(path_column, F.col("_metadata.file_path"))
        frames.append(frame)
    if vectored:
        frames.append(read_by_tasks(spark, vectored, table_uri, schema, storage, path_column))
    return frames[0] if len(frames) == 1 else frames[0].unionByName(frames[1])


def read_table(opened: OpenTable, path_column: str | None = None) -> DataFrame:
    """The table at the opened version as a Spark DataFrame (``path_column``: each row's
    file)."""
    unreadable = set(opened.reader_features) - APPLIED_FEATURES
    if opened.reader_version == 2 or unreadable:
        raise TableValidationError(
            f"Table {opened.loc.qualified!r} needs Delta reader features "
            f"{sorted(unreadable) or ['column mapping']}, which Spark without the Delta jars "
            "cannot apply to its Parquet files."
        )
    check_readable(opened)
    return read_files(
        opened.files, opened.uri, opened.schema, opened.loc.catalog.storage, path_column
    )
