"""The one SparkSession workbench uses, created on first use with Arrow enabled."""

from __future__ import annotations

import os
import sys
import warnings
from typing import TYPE_CHECKING

from workbench.core.base.resources import package_path
from workbench.core.catalog.registry import on_catalogs_changed
from workbench.engines.spark.settings import current

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

LOG_CONFIG = package_path("workbench.engines.spark", "log4j2.properties")
BASE_CONF = {
    "spark.sql.execution.arrow.pyspark.enabled": "true",
    "spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS",
    "spark.sql.session.timeZone": "UTC",
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.shuffle.partitions": "8",
    # the workbench source skips files by the filters Spark pushes into it (scan_files)
    "spark.sql.python.filterPushdown.enabled": "true",
    "spark.driver.extraJavaOptions": f"-Dlog4j2.configurationFile={LOG_CONFIG}",
}
_registered: set[int] = set()


def spark_session() -> SparkSession:
    """The shared session (``local[*]`` unless configured; see ``settings``)."""
    from pyspark.sql import SparkSession

    from workbench.engines.spark.load import install_load
    from workbench.engines.spark.save import install_save
    from workbench.engines.spark.stream_start import install_streams

    # Python workers must run this interpreter (with workbench and pyarrow), not the PATH one;
    # a local session binds to loopback.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    warnings.filterwarnings("ignore", message="PySpark does not yet fully support pandas")
    settings = current()
    builder = SparkSession.builder.master(settings.master).appName("workbench")
    builder = builder.config("spark.driver.memory", settings.driver_memory)
    for key, value in {**BASE_CONF, **settings.conf}.items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    if id(session) not in _registered:
        _registered.add(id(session))
        register_source(session)
        install_save()
        install_load()
        install_streams()
        on_catalogs_changed(lambda: register_source(session))
    return session


def register_source(session: SparkSession) -> None:
    """Register the ``workbench`` data source with the catalogs this process has now, and the
    ``workbench_files`` source that reads object-store files."""
    from workbench.engines.spark.datasource import source_for_driver
    from workbench.engines.spark.remote import FilesSource

    session.dataSource.register(source_for_driver())
    session.dataSource.register(FilesSource)
