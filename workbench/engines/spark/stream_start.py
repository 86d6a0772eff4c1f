"""``spark.readStream.format("workbench")...load(table)`` and
``df.writeStream.format("workbench")...start(table)`` on the driver: options, catalog, branch
and table are checked before Spark starts the query (a mistake is workbench's own error), and a
sink's idempotency app is fixed here, where the checkpoint location is known.

A sink missing its table creates it (in the stream's columns) before the query starts, since a
micro-batch's tasks write into the table's folder. ``writeMode`` ``merge`` upserts each
micro-batch by the table's merge keys with ``dc.write(batch, mode="merge",
idempotency=(app, batch id))`` in Spark's ``foreachBatch`` on the driver (a MERGE joins rows
with the table: Spark jobs, which Python workers cannot start); the data source's stream writer
appends (``streams``). A failed query's workbench error reaches ``awaitTermination`` and
``processAllAvailable`` as itself.
"""

from __future__ import annotations

import functools
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from workbench.core.base.errors import InvalidArgumentError, TableNotFoundError
from workbench.core.catalog.locations import locate_in
from workbench.core.catalog.scope import branch_scope
from workbench.engines.spark.datasource import line_for, trunk_for
from workbench.engines.spark.load import checked_load, held_options, readable, restored
from workbench.engines.spark.save import registered_name, table_exists_at, write_on_driver
from workbench.engines.spark.source_options import (
    NAME,
    SourceOptions,
    stream_read_options,
    stream_write_options,
)
from workbench.engines.spark.streams import app_id
from workbench.engines.spark.worker_errors import workbench_errors

if TYPE_CHECKING:
    from pyspark.sql import DataFrame
    from pyspark.sql.streaming import DataStreamReader, DataStreamWriter, StreamingQuery

    from workbench.core.catalog.catalogs import Catalog

CHECKPOINT_CONF = "spark.sql.streaming.checkpointLocation"


def install_streams() -> None:
    """Wrap PySpark's ``DataStreamReader.load``, ``DataStreamWriter.start`` and the waits of
    ``StreamingQuery`` (once per process)."""
    from pyspark.sql.streaming import DataStreamReader, DataStreamWriter, StreamingQuery

    if getattr(DataStreamWriter.start, "_workbench", False):
        return
    start = DataStreamWriter.start

    @functools.wraps(start)
    def checked_start(
        self: DataStreamWriter,
        path: str | None = None,
        format: str | None = None,
        outputMode: str | None = None,
        partitionBy: str | list[str] | None = None,
        queryName: str | None = None,
        **options: Any,
    ) -> StreamingQuery:
        if format is not None:
            self.format(format)
        if outputMode is not None:
            self.outputMode(outputMode)
        if partitionBy is not None:
            self.partitionBy(partitionBy)
        if queryName is not None:
            self.queryName(queryName)
        self.options(**options)
        if str(self._jwrite.source()).lower() != NAME:
            return start(self, path)
        with workbench_errors():
            return _start(self, path, functools.partial(start, self))

    checked_start._workbench = True  # type: ignore[attr-defined]
    DataStreamReader.load = checked_load(DataStreamReader.load, _checked_source)  # type: ignore[method-assign]
    DataStreamWriter.start = checked_start  # type: ignore[method-assign]
    for name in ("awaitTermination", "processAllAvailable"):
        setattr(StreamingQuery, name, _raising_workbench_errors(getattr(StreamingQuery, name)))


def _raising_workbench_errors(wait: Any) -> Any:
    @functools.wraps(wait)
    def waiting(self: StreamingQuery, *args: Any, **kwargs: Any) -> Any:
        with workbench_errors():
            return wait(self, *args, **kwargs)

    return waiting


def _checked_source(reader: DataStreamReader, path: str | None) -> str:
    """Open the table a stream read asks for, raising workbench's error for any mistake; the
    branch it reads."""
    opened, branch = readable(stream_read_options(held_options(reader._jreader), path))
    if opened.schemaless:
        raise InvalidArgumentError(
            f"Table {opened.loc.qualified!r} is schemaless (it records files, not rows), so it "
            "has no stream of rows; read it with spark.read.format('workbench')."
        )
    return branch


def _start(writer: DataStreamWriter, path: str | None, spark_start: Any) -> StreamingQuery:
    """Start a stream into a workbench table: merge by ``foreachBatch`` on the driver, append
    by the data source's stream writer, both keyed by the app fixed here."""
    request = stream_write_options(held_options(writer._jwrite), path)
    trunk = trunk_for(request)
    line = line_for(request, trunk)  # a missing branch is an error now, before the query
    request = replace(request, checkpoint=_checkpoint(writer, request), branch=line.branch)
    if str(writer._jwrite.outputMode()) == "Update" and request.write_mode is None:
        raise InvalidArgumentError(
            "outputMode('update') sends the rows of a batch that changed, to take the place of "
            "the table's rows with the same key: add .option('writeMode', 'merge') to upsert "
            "them by the table's merge keys, or use outputMode('complete') to replace the "
            "table's rows each batch."
        )
    app = app_id(request)
    frame = writer._df
    if request.write_mode is not None:
        if not _exists(line, request):
            raise TableNotFoundError(
                f"Table {request.table!r} does not exist, and writeMode 'merge' upserts by the "
                "table's merge keys: create it first, with dc.create_table(..., schema=...) "
                "naming its merge keys."
            )

        def merge_batch(batch: DataFrame, batch_id: int) -> None:
            write_on_driver(batch, request, trunk, line, "merge", idempotency=(app, batch_id))

        with restored(writer._jwrite, "source", "foreachBatchWriter"):
            writer.foreachBatch(merge_batch)
            return writer._sq(writer._jwrite.start())
    if not _exists(line, request):
        _create(frame, request, line)
    with restored(writer._jwrite, "extraOptions"):
        writer.option("idempotencyApp", app).option("branch", line.branch)
        return spark_start(path)


def _checkpoint(writer: DataStreamWriter, request: SourceOptions) -> str | None:
    """The query's checkpoint location: the option, else the session's default folder with the
    query's name in it (None when neither is set: Spark then refuses to start)."""
    if request.checkpoint is not None:
        return request.checkpoint
    default = writer._spark.conf.get(CHECKPOINT_CONF, None)
    name = {k.lower(): v for k, v in held_options(writer._jwrite).items()}.get("queryname")
    return f"{default.rstrip('/')}/{name}" if default and name else None


def _exists(line: Catalog, request: SourceOptions) -> bool:
    return table_exists_at(locate_in(line, request.table, request.namespace))


def _create(frame: DataFrame, request: SourceOptions, line: Catalog) -> None:
    """Create the sink's missing table in the stream's columns."""
    from workbench.core.ops.tables import create_table
    from workbench.engines.spark.files import arrow_schema

    catalog = registered_name(trunk_for(request), request)
    with branch_scope(line.branch, catalog):
        create_table(
            request.table,
            request.namespace,
            catalog,
            schema=arrow_schema(frame.schema),
            auto_create_namespace=True,
            fail_if_exists=False,
        )
