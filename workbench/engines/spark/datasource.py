"""``spark.read.format("workbench")`` and ``df.write.format("workbench")``.

Options: the table as the load/save path (``namespace.table``), ``catalog`` (a catalog name),
``root`` (a catalog folder, overriding the catalogs), and for reads ``tableVersion`` (a
DeltaCAT table version; the current one by default) and ``asOf`` (time, transaction id or tag)
or ``version`` (a Delta version). Planning runs in Spark's Python workers, which do not
share the driver's ``dc.init``: the source is registered with the driver's catalogs, and again
after every ``dc.init``. Reads go file by file (deletion vectors applied); writes run a task per
partition that writes its rows as a part of the table, and commit the parts' files (append or
replace) through ``dc.write`` in one catalog transaction: no rows pass through one process.
The ``writeMode`` option (``merge`` or ``delete``, by the table's merge keys) is applied on the
driver by ``save`` before Spark's writer starts; this writer only appends or overwrites.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from pyspark.sql.datasource import (
    DataSource,
    DataSourceArrowWriter,
    DataSourceReader,
    DataSourceWriter,
    InputPartition,
    WriterCommitMessage,
)

from workbench.core.base.errors import InvalidArgumentError
from workbench.core.catalog.folders import STAGING_KEY
from workbench.core.catalog.registry import branch_scope

if TYPE_CHECKING:
    import pyarrow as pa

NAME = "workbench"
ROWS_PER_TASK_PART = 1_000_000  # rows a Spark task buffers before writing them as one part
Catalogs = dict[str, tuple[str, dict[str, str]]]  # name -> (root, storage options)


def _use_catalogs(catalogs: Catalogs, default: str | None, options: dict[str, str]) -> None:
    """Register in this (worker) process the catalogs the driver had, or the ``root`` option
    (with the storage options of the driver's catalog at that root, if it has one: an object
    store's endpoint and credentials)."""
    from workbench.core.catalog.registry import DEFAULT_CATALOG, Catalog, CatalogProperties
    from workbench.core.session import init

    if "root" in options:
        root = CatalogProperties(options["root"]).root
        storage_options = dict(dict(catalogs.values()).get(root, {}))
        init({DEFAULT_CATALOG: Catalog(CatalogProperties(root, storage_options))}, DEFAULT_CATALOG)
    elif catalogs:
        init(
            {n: Catalog(CatalogProperties(r, dict(o))) for n, (r, o) in catalogs.items()},
            default,
        )


def _open(options: dict[str, str]) -> Any:
    """The table the options name, at the requested point."""
    from workbench.core.catalog.tables import locate
    from workbench.core.transactions.table_versions import open_table

    namespace, _, table = options["path"].rpartition(".")
    as_of = options.get("asOf")
    version = int(options["version"]) if "version" in options else None
    point = int(as_of) if as_of and as_of.isdigit() else as_of
    with branch_scope(options.get("branch"), options.get("catalog")):
        loc = locate(table, namespace or None, options.get("catalog"))
    return open_table(
        loc,
        version=version,
        as_of=point,
        table_version=options.get("tableVersion"),
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

    def _prepare(self) -> dict[str, str]:
        _use_catalogs(self.catalogs, self.default_catalog, self.options)
        return self.options  # case-insensitive, as Spark passes them

    def schema(self) -> Any:
        from workbench.engines.spark.files import spark_schema

        return spark_schema(_open(self._prepare()).schema.arrow)

    def reader(self, schema: Any) -> DataSourceReader:
        return _Reader(self._prepare())

    def writer(self, schema: Any, overwrite: bool) -> DataSourceWriter:
        return _Writer(self._prepare(), schema, overwrite, self.catalogs, self.default_catalog)


@dataclass
class _File(InputPartition):
    file: Any  # a DataFile of the table version


class _Reader(DataSourceReader):
    def __init__(self, options: dict[str, str]):
        opened = _open(options)
        self.files = opened.files
        self.table_uri = opened.uri
        self.schema = opened.schema
        self.storage = opened.loc.catalog.storage

    def partitions(self) -> list[InputPartition]:
        return [_File(f) for f in self.files]

    def read(self, partition: InputPartition) -> Iterator[Any]:
        from workbench.core.delta.snapshot import live_file_rows

        arrow = self.schema.arrow.remove_metadata()
        yield from live_file_rows(partition.file, self.table_uri, arrow, self.storage).to_batches()


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


def _plan(options: dict[str, str], incoming: pa.Schema, overwrite: bool, batch: str) -> _Plan:
    """The schema and folder a write of ``incoming`` columns goes to (the table's current
    version; schema evolution planned as ``dc.write`` plans it; a ``writeMode`` is refused).
    A table that does not exist yet gets its parts in a staging folder: the transaction
    creating it moves them in (a free table name's folder is cleared as a dead writer's
    leftovers)."""
    from workbench.core.base.types import TableWriteMode
    from workbench.core.catalog.tables import locate
    from workbench.core.catalog.versions import FIRST_VERSION
    from workbench.core.io.writer import plan_existing, plan_new
    from workbench.core.ops.tables import table_exists
    from workbench.core.transactions.table_versions import open_table
    from workbench.engines.spark.save import requested_write_mode

    by_key = requested_write_mode(options)
    if by_key is not None:  # save() on the driver runs it, where workbench's session started
        raise InvalidArgumentError(
            f"writeMode {by_key!r} runs from DataFrameWriter.save on the driver of a session "
            "workbench started (workbench.engines.spark.session.spark_session, or any dc call "
            "on Spark); this writer only appends or overwrites, so nothing was written."
        )
    namespace, _, name = options["path"].rpartition(".")
    with branch_scope(options.get("branch"), options.get("catalog")):
        loc = locate(name, namespace or None, options.get("catalog"))
        exists = table_exists(name, namespace or None, options.get("catalog"))
    storage = loc.catalog.storage
    if exists:
        opened = open_table(loc)
        mode = TableWriteMode.REPLACE if overwrite else TableWriteMode.APPEND
        _, plan = plan_existing(opened, incoming, None, mode, {})
        return _Plan(plan.schema, opened.uri, opened.uri, storage)
    plan = plan_new(loc, incoming, None, TableWriteMode.CREATE, {})
    staging = storage.uri(f"{STAGING_KEY}/{batch}")
    return _Plan(plan.schema, staging, loc.versioned(FIRST_VERSION).uri, storage)


class _Writer(DataSourceArrowWriter):
    """Each task writes its rows as a part of the table (in the planned schema, into the
    table folder); the commit adds the parts' files in one catalog transaction."""

    def __init__(
        self,
        options: dict[str, str],
        schema: Any,
        overwrite: bool,
        catalogs: Catalogs,
        default: str | None,
    ):
        from workbench.core.delta.data_files import new_batch
        from workbench.engines.spark.files import arrow_schema

        self.options = options
        self.overwrite = overwrite
        self.catalogs, self.default = catalogs, default
        self.incoming = arrow_schema(schema)
        self.batch = new_batch()
        self.plan = _plan(options, self.incoming, overwrite, self.batch)

    def write(self, batches: Iterator[Any]) -> WriterCommitMessage:
        """Write a task's rows as parts of at most ``ROWS_PER_TASK_PART`` rows, so a task holds
        one part's rows at a time, never its whole partition."""
        from pyspark import TaskContext

        index = TaskContext.get().partitionId()
        written, pending, rows = [], [], 0
        for batch in batches:
            if batch.num_rows:
                pending.append(batch)
                rows += batch.num_rows
            if rows >= ROWS_PER_TASK_PART:
                written.append(self._write_part(pending, index))
                pending, rows = [], 0
        if pending:
            written.append(self._write_part(pending, index))
        return _Written(written)

    def _write_part(self, batches: list[Any], index: int) -> Any:
        import pyarrow as pa

        from workbench.core.delta.data_files import write_part

        plan = self.plan
        rows = pa.Table.from_batches(batches)
        return write_part(rows, plan.schema, plan.folder, index, self.batch, plan.storage)

    def commit(self, messages: list[WriterCommitMessage]) -> None:
        from workbench.core.delta.data_files import discard
        from workbench.core.io.writer import write
        from workbench.engines.spark.written_parts import WrittenParts

        files = [f for m in messages if isinstance(m, _Written) for f in m.files]
        try:
            _use_catalogs(self.catalogs, self.default, self.options)
            namespace, _, table = self.options["path"].rpartition(".")
            catalog = self.options.get("catalog")
            plan = self.plan
            mode = "create" if plan.creates else "replace" if self.overwrite else "append"
            folder = None if plan.creates else plan.table
            parts = WrittenParts(files, self.incoming, plan.schema, folder, plan.storage)
            branch = self.options.get("branch")
            write(
                parts,
                table,
                namespace or None,
                catalog,
                mode=mode,
                auto_create_namespace=True,
                branch=branch,
            )
        except BaseException:
            discard(files, self.plan.storage)
            raise
        finally:
            self._remove_staging()

    def _remove_staging(self) -> None:
        """Remove the staging folder of a write that created its table (moved in, or failed)."""
        from workbench.core.catalog.folders import remove_folder
        from workbench.core.catalog.registry import get_catalog

        if self.plan.creates:
            remove_folder(get_catalog(self.options.get("catalog")), f"{STAGING_KEY}/{self.batch}")

    def abort(self, messages: list[WriterCommitMessage]) -> None:
        from workbench.core.delta.data_files import discard, discard_batch

        _use_catalogs(self.catalogs, self.default, self.options)
        written = [f for m in messages if isinstance(m, _Written) for f in m.files]
        discard(written, self.plan.storage)
        discard_batch(self.plan.folder, self.batch, self.plan.storage)
        self._remove_staging()
