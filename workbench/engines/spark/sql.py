"""Spark SQL over catalog tables: ``namespace.table`` names become temporary views."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from workbench.core.sql import qualified_names
from workbench.core.tables import locate, open_table
from workbench.engines.spark.read import read_table
from workbench.engines.spark.session import spark_session

if TYPE_CHECKING:
    from pyspark.sql import DataFrame


def run_sql(query: str, as_of: Any = None, catalog: str | None = None) -> DataFrame:
    """Register each referenced table (at the snapshot or ``as_of``) and run ``query``."""
    spark = spark_session()

    def view_for(namespace: str, name: str) -> str:
        view = f"wb__{namespace}__{name}".replace("-", "_")
        read_table(
            open_table(locate(name, namespace, catalog), as_of=as_of)
        ).createOrReplaceTempView(view)
        return f"`{view}`"

    return spark.sql(qualified_names(query, view_for, catalog, as_of))
