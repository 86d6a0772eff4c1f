"""Spark SQL over table versions: each becomes a temporary view of its files."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from workbench.core.base.errors import SqlQueryError
from workbench.engines.spark.read import read_table
from workbench.engines.spark.session import spark_session

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from workbench.core.catalog.locations import OpenTable


def run_sql(query: str, tables: Mapping[str, OpenTable]) -> DataFrame:
    """Register each table version under its name and run ``query``."""
    from pyspark.errors import AnalysisException
    from pyspark.logger import PySparkLogger

    spark = spark_session()
    for name, opened in tables.items():
        read_table(opened).createOrReplaceTempView(name)
    try:
        # Spark's logger of query errors (a PySparkLogger: made as one, whoever asks first)
        # logs what is raised here, in its own words.
        with _quiet(PySparkLogger.getLogger("SQLQueryContextLogger")):
            return spark.sql(query)
    except AnalysisException as e:  # parse errors too: ParseException is one
        raise _query_error(e, query) from e


def _query_error(error: Any, query: str) -> SqlQueryError:
    """Spark's ``error`` about ``query``: its message without its SQLSTATE code or its echo
    of the query, and the offset in ``query`` it names."""
    message = re.sub(r"\s*SQLSTATE: \w+", "", error.getMessage()).split("\n\n== SQL", 1)[0]
    place = re.search(r"\s*\(line (\d+), pos (\d+)\)", str(error))  # a parse error's
    contexts = error.getQueryContext()
    position = None
    if contexts and contexts[0].contextType().name == "SQL":
        position = contexts[0].startIndex()
    elif place is not None:
        lines = query.split("\n")[: int(place.group(1)) - 1]
        position = sum(len(line) + 1 for line in lines) + int(place.group(2))
    if place is not None:
        message = message.replace(place.group(0), "")
    return SqlQueryError(f"The SQL query failed: {message.strip()}", position)


@contextmanager
def _quiet(logger: logging.Logger) -> Iterator[None]:
    was = logger.disabled
    logger.disabled = True
    try:
        yield
    finally:
        logger.disabled = was
