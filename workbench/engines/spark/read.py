"""Catalog tables as Spark DataFrames: the files of the resolved Delta version, read natively."""

from __future__ import annotations

from typing import TYPE_CHECKING

from workbench.core.errors import TableValidationError
from workbench.core.schema import Schema
from workbench.core.tables import OpenTable
from workbench.engines.spark.files import spark_schema
from workbench.engines.spark.session import spark_session

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

# Reader features that leave the Parquet files readable as they are.
PLAIN_PARQUET_FEATURES = {"timestampNtz"}


def read_files(paths: list[str], schema: Schema) -> DataFrame:
    """Parquet files as one DataFrame with the table's schema (columns absent in old files are
    null); no files gives an empty frame."""
    spark = spark_session()
    structure = spark_schema(schema.arrow)
    if not paths:
        return spark.createDataFrame([], structure)
    return spark.read.schema(structure).parquet(*paths)


def read_table(opened: OpenTable) -> DataFrame:
    """The table at the opened version as a Spark DataFrame."""
    unreadable = set(opened.reader_features) - PLAIN_PARQUET_FEATURES
    if opened.reader_version == 2 or unreadable:
        raise TableValidationError(
            f"Table {opened.loc.qualified!r} needs Delta reader features "
            f"{sorted(unreadable) or ['column mapping']}, which Spark without the Delta jars "
            "cannot apply to its Parquet files."
        )
    return read_files([f.absolute for f in opened.files], opened.schema)
