"""The one SparkSession workbench uses, created on first use with Arrow enabled."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

from workbench.engines.spark.settings import current

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

BASE_CONF = {
    "spark.sql.execution.arrow.pyspark.enabled": "true",
    "spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS",
    "spark.sql.session.timeZone": "UTC",
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.shuffle.partitions": "8",
}


def spark_session() -> SparkSession:
    """The shared session (``local[*]`` unless configured; see ``settings``)."""
    from pyspark.sql import SparkSession

    # Python workers must run this interpreter (with workbench and pyarrow), not the PATH one.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    settings = current()
    builder = SparkSession.builder.master(settings.master).appName("workbench")
    builder = builder.config("spark.driver.memory", settings.driver_memory)
    for key, value in {**BASE_CONF, **settings.conf}.items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    from workbench.engines.spark.datasource import WorkbenchDataSource

    session.dataSource.register(WorkbenchDataSource)
    return session
