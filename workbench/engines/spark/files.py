"""Where Spark writes its Parquet files in a table folder, which table files can hold a
source's keys, and Spark/Arrow schema conversion."""

from __future__ import annotations

import glob
import os
import uuid
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlparse

from workbench.core.base.identifiers import quote_identifier
from workbench.core.delta.snapshot import candidate_files

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import DataFrame

    from workbench.core.catalog.locations import OpenTable
    from workbench.core.delta.data_files import DataFile


def staging_folder(table_path: str) -> str:
    """A fresh folder inside the table for one Spark write (a plain data folder to Delta)."""
    return os.path.join(table_path, f"spark-{uuid.uuid4().hex}")


def written_files(folder: str) -> list[str]:
    """The Parquet files Spark wrote into ``folder``."""
    return sorted(glob.glob(os.path.join(folder, "*.parquet")))


def path_key(uri: str) -> str:
    """A file's path as Spark and workbench both name it (schemes and encoding aside)."""
    parsed = urlparse(uri)  # "file:/x", "file:///x" and "s3://b/x" all have a scheme
    return os.path.normpath(unquote(parsed.path) if parsed.scheme else uri)


def spark_schema(schema: pa.Schema) -> Any:
    """The Spark StructType of an Arrow schema."""
    from pyspark.sql.pandas.types import from_arrow_schema

    return from_arrow_schema(schema.remove_metadata())


def arrow_schema(spark_type: Any) -> pa.Schema:
    """The Arrow schema of a Spark StructType."""
    from pyspark.sql.pandas.types import to_arrow_schema

    return to_arrow_schema(spark_type, timezone="UTC")


def key_candidates(table: OpenTable, source: DataFrame, keys: list[str]) -> list[DataFile]:
    """The table files whose key statistics can hold one of the source's keys."""
    from pyspark.sql import functions as F

    bounds = source.agg(
        *[F.min(quote_identifier(k)).alias(f"lo{i}") for i, k in enumerate(keys)],
        *[F.max(quote_identifier(k)).alias(f"hi{i}") for i, k in enumerate(keys)],
    ).collect()[0]
    if bounds["lo0"] is None:
        return []
    low = {k: bounds[f"lo{i}"] for i, k in enumerate(keys)}
    high = {k: bounds[f"hi{i}"] for i, k in enumerate(keys)}
    return candidate_files(table.files, low, high)
