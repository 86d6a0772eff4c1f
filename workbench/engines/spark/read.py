"""Catalog tables as Spark DataFrames: the files of the resolved Delta version, read natively."""

from __future__ import annotations

from typing import TYPE_CHECKING

from workbench.core.base.errors import TableValidationError
from workbench.core.catalog.tables import OpenTable
from workbench.core.schema.table_schema import Schema
from workbench.core.storage.store import Storage, is_local
from workbench.engines.spark.files import spark_schema
from workbench.engines.spark.remote import read_remote
from workbench.engines.spark.session import spark_session

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

# Reader features that leave the Parquet files readable as they are.
PLAIN_PARQUET_FEATURES = {"timestampNtz"}


def read_files(
    paths: list[str], schema: Schema, storage: Storage, path_column: str | None = None
) -> DataFrame:
    """Parquet files as one DataFrame with the table's schema (columns absent in old files are
    null; ``path_column`` names each row's file); no files gives an empty frame. Local files
    are read by Spark itself, object-store files through pyarrow (no hadoop-aws here)."""
    from pyspark.sql import functions as F

    spark = spark_session()
    structure = spark_schema(schema.arrow)
    if not paths:
        frame = spark.createDataFrame([], structure)
        return frame.withColumn(path_column, F.lit("")) if path_column else frame
    if not is_local(storage.root):
        return read_remote(spark, paths, schema, storage, path_column)
    frame = spark.read.schema(structure).parquet(*paths)
    if path_column:
        frame = frame.withColumn(path_column, F.col("_metadata.file_path"))
    return frame


def read_table(opened: OpenTable, path_column: str | None = None) -> DataFrame:
    """The table at the opened version as a Spark DataFrame (``path_column``: each row's
    file)."""
    unreadable = set(opened.reader_features) - PLAIN_PARQUET_FEATURES
    if opened.reader_version == 2 or unreadable:
        raise TableValidationError(
            f"Table {opened.loc.qualified!r} needs Delta reader features "
            f"{sorted(unreadable) or ['column mapping']}, which Spark without the Delta jars "
            "cannot apply to its Parquet files."
        )
    files = [f.absolute for f in opened.files]
    return read_files(files, opened.schema, opened.loc.catalog.storage, path_column)
