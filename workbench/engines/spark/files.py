"""Where Spark writes its Parquet files in a table folder, and Spark/Arrow schema conversion."""

from __future__ import annotations

import glob
import os
import uuid
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlparse

if TYPE_CHECKING:
    import pyarrow as pa


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
