"""The Spark engine: the shared SparkSession, Spark reads and writes, SQL and the data source.

This package is the only part of workbench that imports pyspark (lazily, on first use).
"""

from workbench.engines.spark.engine import SparkEngine
from workbench.engines.spark.session import spark_session

__all__ = ["SparkEngine", "spark_session"]
