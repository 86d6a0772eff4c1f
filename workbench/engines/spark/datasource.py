"""``spark.read.format("workbench")`` and ``df.write.format("workbench")``.

Options (``source_options``): the table as the load/save path (``namespace.table`` or
``catalog.namespace.table``), ``catalog`` (a catalog name) or ``root`` (a catalog folder,
instead of the catalogs), ``branch``, and for reads ``tableVersion`` (a DeltaCAT table version;
the current one by default) and ``asOf`` (time, transaction id or tag) or ``version`` (a Delta
version). Planning runs in Spark's Python workers, which do not share the driver's ``dc.init``:
the source is registered with the driver's catalogs, and again after every ``dc.init``. Reads
go file by file (deletion vectors applied); writes run a task per partition that writes its
rows as a part of the table, and commit the parts' files (append or replace) through
``dc.write`` in one catalog transaction: no rows pass through one process. The driver's
``load`` and ``save`` (``load.py``, ``save.py``) check a read or save before Spark plans it and
apply the ``writeMode`` option (``merge`` or ``delete``, by the table's merge keys) themselves;
this writer only appends or overwrites.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from pyspark.sql.datasource import (
    DataSource,
    DataSourceArrowWriter,
    DataSourceReader,
    DataSourceStreamReader,
    DataSourceStreamWriter,
    DataSourceWriter,
    InputPartition,
    WriterCommitMessage,
)

from workbench.core.base.errors import InvalidArgumentError
from workbench.core.catalog.folders import STAGING_KEY
from workbench.core.catalog.scope import branch_scope
from workbench.engines.spark.scan_files import SCAN_COLUMN, admit
from workbench.engines.spark.source_options import (
    NAME,
    SourceOptions,
    any_read_options,
    stream_read_options,
    stream_write_options,
    write_options,
)

if TYPE_CHECKING:
    import pyarrow as pa

    from workbench.core.catalog.catalogs import Catalog
    from workbench.core.catalog.descriptions import WriteResult
    from workbench.core.catalog.locations import OpenTable
    from workbench.core.schema.table_schema import Schema
    from workbench.core.storage.store import Storage

ROWS_PER_TASK_PART = 1_000_000  # rows a Spark task buffers before writing them as one part
Catalogs = dict[str, tuple[str, dict[str, str]]]  # name -> (root, storage options)


def _use_catalogs(catalogs: Catalogs, default: str | None, request: SourceOptions) -> None:
    """Register in this (worker) process the catalogs the driver had, or the ``root`` option
    (with the storage options of the driver's catalog at that root, if it has one: an object
    store's endpoint and credentials)."""
    from workbench.core.catalog.catalogs import Catalog, CatalogProperties
    from workbench.core.catalog.registry import DEFAULT_CATALOG
    from workbench.core.session import init

    if request.root is not None:
        root = CatalogProperties(request.root).root
        storage_options = dict(dict(catalogs.values()).get(root, {}))
        init({DEFAULT_CATALOG: Catalog(CatalogProperties(root, storage_options))}, DEFAULT_CATALOG)
    elif catalogs:
        init(
            {n: Catalog(CatalogProperties(r, dict(o))) for n, (r, o) in catalogs.items()},
            default,
        )


def trunk_for(request: SourceOptions) -> Catalog:
    """The catalog a request names: a registered one by name (the default one when it names
    none), the registered one at its ``root``, or for a root no catalog has, that folder as an
    unregistered catalog (as a worker opens it)."""
    from workbench.core.catalog.catalogs import Catalog, CatalogProperties
    from workbench.core.catalog.registry import list_catalogs
    from workbench.core.catalog.scope import main_catalog

    if request.root is None:
        return main_catalog(request.catalog)
    unregistered = Catalog(CatalogProperties(request.root))
    found = [c for c in list_catalogs().values() if c.root == unregistered.root]
    return found[0] if found else unregistered


def line_for(request: SourceOptions, trunk: Catalog) -> Catalog:
    """The line of ``trunk`` a request reads or writes: its ``branch`` option, else the branch
    this process uses on that catalog; raises ``BranchNotFoundError`` for a missing branch."""
    from workbench.core.catalog.scope import current_branch

    return trunk.on_branch(request.branch or current_branch(trunk))


def open_requested(request: SourceOptions, line: Catalog | None = None) -> OpenTable:
    """The table a read asks for, in ``line`` (by default the one it names), at the requested
    point: on the driver, to fail before Spark plans; in the workers, to read."""
    from workbench.core.catalog.locations import locate_in
    from workbench.core.transactions.table_versions import open_table

    line = line or line_for(request, trunk_for(request))
    return open_table(
        locate_in(line, request.table, request.namespace),
        version=request.version,
        as_of=request.as_of,
        table_version=request.table_version,
    )


def source_for_driver() -> type[DataSource]:
    """The data source class carrying this process's catalogs to Spark's Python workers."""
    from workbench.core.catalog.registry import default_catalog_name, list_catalogs

    catalogs = {
        name: (c.root, dict(c.properties.storage_options)) for name, c in list_catalogs().items()
    }
    attributes = {"catalogs": catalogs, "default_catalog": default_catalog_name()}
    return type("WorkbenchDataSource", (WorkbenchDataSource,), attributes)


class WorkbenchDataSource(DataSource):
    """The catalog's tables as a Spark data source."""

    catalogs: ClassVar[Catalogs] = {}
    default_catalog: ClassVar[str | None] = None

    @classmethod
    def name(cls) -> str:
        return NAME

    def _read(self) -> OpenTable:
        request = any_read_options(self.options)  # case-insensitive, as Spark passes them
        _use_catalogs(self.catalogs, self.default_catalog, request)
        return open_requested(request)

    def schema(self) -> Any:
        """The table's columns (a schemaless table's: its manifest's), and a change-feed
        stream's change columns."""
        import pyarrow as pa

        from workbench.core.data.manifest import manifest_view
        from workbench.engines.spark.files import spark_schema
        from workbench.engines.spark.streams import change_columns

        opened = self._read()
        arrow = manifest_view(opened).schema if opened.schemaless else opened.schema.arrow
        request = any_read_options(self.options)
        if request.change_feed:
            arrow = pa.schema([*arrow, *change_columns()])
        if request.scan is not None:
            arrow = arrow.append(pa.field(SCAN_COLUMN, pa.int8(), nullable=False))
        return spark_schema(arrow)

    def reader(self, schema: Any) -> DataSourceReader:
        return _Reader(self._read(), any_read_options(self.options).scan)

    def writer(self, schema: Any, overwrite: bool) -> DataSourceWriter:
        request = write_options(self.options)
        _use_catalogs(self.catalogs, self.default_catalog, request)
        return _Writer(request, schema, overwrite, self.catalogs, self.default_catalog)

    def streamWriter(self, schema: Any, overwrite: bool) -> DataSourceStreamWriter:
        from workbench.engines.spark.streams import StreamWriter

        request = stream_write_options(self.options)
        return StreamWriter(request, schema, overwrite, self.catalogs, self.default_catalog)

    def streamReader(self, schema: Any) -> DataSourceStreamReader:
        from workbench.engines.spark.streams import StreamReader

        request = stream_read_options(self.options)
        return StreamReader(request, self.catalogs, self.default_catalog)


@dataclass
class _File(InputPartition):
    file: Any  # a DataFile of the table version


class _Reader(DataSourceReader):
    """A task per data file its scan's filters could match, by the log's statistics (Spark
    still applies every filter to the rows); a schemaless table's rows are its manifest, as
    ``dc.read`` gives it (read when the reader is planned: one small table, one task).

    Files are skipped only for a frame of workbench's ``load`` (``scan``: its id), whose every
    scan pushes a filter: each reads the files any scan of that frame admitted (see
    ``scan_files``), so a union of a frame with a filtered copy of itself keeps every row."""

    def __init__(self, opened: OpenTable, scan: str | None):
        from workbench.core.data.manifest import manifest_view

        self.files = opened.files
        self.table_uri = opened.uri
        self.schema = opened.schema
        self.storage = opened.loc.catalog.storage
        self.manifest = manifest_view(opened) if opened.schemaless else None
        self.scan = scan

    def pushFilters(self, filters: list[Any]) -> Iterator[Any]:
        """Skip the files the filters rule out; every filter but those on the scan column
        (zeros, never null: this reader holds them) is given back for Spark to apply."""
        theirs = [f for f in filters if getattr(f, "attribute", None) != (SCAN_COLUMN,)]
        if self.scan is not None:
            kept = self._admitted(theirs) if self.manifest is None else self.files
            admitted = admit(self.scan, [f.path for f in kept])
            self.files = [f for f in self.files if f.path in admitted]
        yield from theirs if self.scan is not None else filters

    def _admitted(self, filters: list[Any]) -> list[Any]:
        from workbench.core.base.errors import InvalidFilterError
        from workbench.core.delta.reading import plain_schema
        from workbench.core.delta.skipping import skip_files
        from workbench.core.filters.binding import bind
        from workbench.engines.spark.filters import from_pushed

        predicate = from_pushed(filters)
        if predicate is None:
            return self.files
        schema = plain_schema(self)
        try:
            predicate = bind(predicate, schema, "", lenient=True)
        except InvalidFilterError:
            return self.files
        return skip_files(self.files, predicate, schema).kept

    def partitions(self) -> list[InputPartition]:
        if self.manifest is not None:
            return [InputPartition(0)]
        return [_File(f) for f in self.files]

    def read(self, partition: InputPartition) -> Iterator[Any]:
        from workbench.core.delta.reading import live_file_rows

        if self.manifest is not None:
            batches = self.manifest.to_batches()
        elif not isinstance(partition, _File):  # Spark reads a version without files as one
            return  # partition of its own making: no rows
        else:
            arrow = self.schema.arrow.remove_metadata()
            rows = live_file_rows(partition.file, self.table_uri, arrow, self.storage)
            batches = rows.to_batches()
        for batch in batches:
            yield _with_scan_column(batch) if self.scan is not None else batch


def _with_scan_column(batch: pa.RecordBatch) -> pa.RecordBatch:
    import pyarrow as pa

    zeros = pa.array([0] * batch.num_rows, pa.int8())
    schema = batch.schema.append(pa.field(SCAN_COLUMN, pa.int8(), nullable=False))
    return pa.RecordBatch.from_arrays([*batch.columns, zeros], schema=schema)


@dataclass
class _Written(WriterCommitMessage):
    files: list[Any]  # the WrittenFiles one task wrote


@dataclass(frozen=True)
class _Plan:
    """Where and in which schema the tasks write: planned on the driver before the job, and
    checked again when the write commits."""

    schema: Any  # the table Schema the parts are written in
    folder: str  # where the tasks write: the table folder, or a staging folder for a new table
    table: str  # the table folder
    storage: Any  # the catalog's Storage (root and options travel to the executors)

    @property
    def creates(self) -> bool:
        """Whether the write creates its table (its parts are staged until it commits)."""
        return self.folder != self.table


def _plan(request: SourceOptions, incoming: pa.Schema, overwrite: bool, batch: str) -> _Plan:
    """The schema and folder a write of ``incoming`` columns goes to (the table's current
    version; schema evolution planned as ``dc.write`` plans it; a ``writeMode`` is refused).
    A table that does not exist yet gets its parts in a staging folder: the transaction
    creating it moves them in (a free table name's folder is cleared as a dead writer's
    leftovers)."""
    from workbench.core.base.types import TableWriteMode
    from workbench.core.catalog.locations import locate
    from workbench.core.catalog.versions import FIRST_VERSION
    from workbench.core.io.writer import plan_existing, plan_new
    from workbench.core.ops.tables import table_exists
    from workbench.core.transactions.table_versions import open_table

    if request.write_mode is not None:  # save() on the driver runs it, where workbench started
        raise InvalidArgumentError(
            f"writeMode {request.write_mode!r} runs from DataFrameWriter.save on the driver of "
            "a session workbench started (workbench.engines.spark.session.spark_session, or any "
            "dc call on Spark); this writer only appends or overwrites, so nothing was written."
        )
    name, namespace, catalog = request.table, request.namespace, request.catalog
    with branch_scope(request.branch, catalog):
        loc = locate(name, namespace, catalog)
        exists = table_exists(name, namespace, catalog)
    storage = loc.catalog.storage
    if exists:
        opened = open_table(loc)
        mode = TableWriteMode.REPLACE if overwrite else TableWriteMode.APPEND
        _, plan = plan_existing(opened, incoming, None, mode, {})
        return _Plan(plan.schema, opened.uri, opened.uri, storage)
    plan = plan_new(loc, incoming, None, TableWriteMode.CREATE, {})
    staging = storage.uri(f"{STAGING_KEY}/{batch}")
    return _Plan(plan.schema, staging, loc.versioned(FIRST_VERSION).uri, storage)


def write_task_parts(batches: Iterator[Any], plan: _Plan, batch: str) -> list[Any]:
    """Write a Spark task's rows as parts of at most ``ROWS_PER_TASK_PART`` rows, so a task
    holds one part's rows at a time, never its whole partition; the WrittenFiles."""
    import pyarrow as pa
    from pyspark import TaskContext

    from workbench.core.delta.data_files import write_part

    index = TaskContext.get().partitionId()
    written, pending, rows = [], [], 0

    def flush() -> None:
        part = pa.Table.from_batches(pending)
        written.append(write_part(part, plan.schema, plan.folder, index, batch, plan.storage))

    for arrow_batch in batches:
        if arrow_batch.num_rows:
            pending.append(arrow_batch)
            rows += arrow_batch.num_rows
        if rows >= ROWS_PER_TASK_PART:
            flush()
            pending, rows = [], 0
    if pending:
        flush()
    return written


def commit_parts(
    files: list[Any],
    incoming: pa.Schema,
    written_as: Schema,
    folder: str | None,
    request: SourceOptions,
    storage: Storage,
    mode: str,
    **write_args: Any,
) -> WriteResult:
    """Add the parts Spark's tasks wrote (``files``, in ``written_as``) to the requested table
    in one catalog transaction, as ``dc.write`` in ``mode`` (with ``write_args``); delete them
    when that fails."""
    from workbench.core.delta.data_files import discard
    from workbench.core.io.writer import write
    from workbench.engines.spark.written_parts import WrittenParts

    try:
        parts = WrittenParts(files, incoming, written_as, folder, storage)
        return write(
            parts,
            request.table,
            request.namespace,
            request.catalog,
            mode=mode,
            branch=request.branch,
            **write_args,
        )
    except BaseException:
        discard(files, storage)
        raise


class _Writer(DataSourceArrowWriter):
    """Each task writes its rows as a part of the table (in the planned schema, into the
    table folder); the commit adds the parts' files in one catalog transaction."""

    def __init__(
        self,
        request: SourceOptions,
        schema: Any,
        overwrite: bool,
        catalogs: Catalogs,
        default: str | None,
    ):
        from workbench.core.delta.data_files import new_batch
        from workbench.engines.spark.files import arrow_schema

        self.request = request
        self.overwrite = overwrite
        self.catalogs, self.default = catalogs, default
        self.incoming = arrow_schema(schema)
        self.batch = new_batch()
        self.plan = _plan(request, self.incoming, overwrite, self.batch)

    def write(self, batches: Iterator[Any]) -> WriterCommitMessage:
        return _Written(write_task_parts(batches, self.plan, self.batch))

    def commit(self, messages: list[WriterCommitMessage]) -> None:
        files = [f for m in messages if isinstance(m, _Written) for f in m.files]
        try:
            _use_catalogs(self.catalogs, self.default, self.request)
            plan = self.plan
            mode = "create" if plan.creates else "replace" if self.overwrite else "append"
            folder = None if plan.creates else plan.table
            commit_parts(
                files,
                self.incoming,
                plan.schema,
                folder,
                self.request,
                plan.storage,
                mode,
                auto_create_namespace=True,
            )
        finally:
            self._remove_staging()

    def _remove_staging(self) -> None:
        """Remove the staging folder of a write that created its table (moved in, or failed)."""
        from workbench.core.catalog.folders import remove_folder
        from workbench.core.catalog.scope import get_catalog

        if self.plan.creates:
            remove_folder(get_catalog(self.request.catalog), f"{STAGING_KEY}/{self.batch}")

    def abort(self, messages: list[WriterCommitMessage]) -> None:
        from workbench.core.delta.data_files import discard, discard_batch

        _use_catalogs(self.catalogs, self.default, self.request)
        written = [f for m in messages if isinstance(m, _Written) for f in m.files]
        discard(written, self.plan.storage)
        discard_batch(self.plan.folder, self.batch, self.plan.storage)
        self._remove_staging()
