"""Spark SQL over table versions: each becomes a temporary view of its files."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from workbench.engines.spark.read import read_table
from workbench.engines.spark.session import spark_session

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from workbench.core.catalog.locations import OpenTable


def run_sql(query: str, tables: Mapping[str, OpenTable]) -> DataFrame:
    """Register each table version under its name and run ``query``."""
    spark = spark_session()
    for name, opened in tables.items():
        read_table(opened).createOrReplaceTempView(name)
    return spark.sql(query)
