"""``spark.read.format("workbench")`` and ``df.write.format("workbench")``.

Options: the table as the load/save path (``namespace.table``), ``catalog`` (a catalog name),
``root`` (a catalog folder, overriding the catalogs), and for reads ``tableVersion`` (a
DeltaCAT table version; the current one by default) and ``asOf`` (time, transaction id or tag)
or ``version`` (a Delta version). Planning runs in Spark's Python workers, which do not
share the driver's ``dc.init``: the source is registered with the driver's catalogs, and again
after every ``dc.init``. Reads go file by file (deletion vectors applied); writes stage Parquet
per task and commit it through ``dc.write`` (append or replace) in one catalog transaction.
"""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, ClassVar

from pyspark.sql.datasource import (
    DataSource,
    DataSourceArrowWriter,
    DataSourceReader,
    DataSourceWriter,
    InputPartition,
    WriterCommitMessage,
)

NAME = "workbench"
Catalogs = dict[str, tuple[str, dict[str, str]]]  # name -> (root, storage options)


def _use_catalogs(catalogs: Catalogs, default: str | None, options: dict[str, str]) -> None:
    """Register in this (worker) process the catalogs the driver had, or the ``root`` option."""
    from workbench.core.catalog.registry import Catalog, CatalogProperties, init_local
    from workbench.core.session import init

    if "root" in options:
        init_local(options["root"])
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
    return open_table(
        locate(table, namespace or None, options.get("catalog")),
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
class _Staged(WriterCommitMessage):
    path: str | None


class _Writer(DataSourceArrowWriter):
    def __init__(
        self,
        options: dict[str, str],
        schema: Any,
        overwrite: bool,
        catalogs: Catalogs,
        default: str | None,
    ):
        from workbench.core.catalog.registry import get_catalog

        self.options = options
        self.overwrite = overwrite
        self.catalogs, self.default = catalogs, default
        root = get_catalog(options.get("catalog")).root
        self.staging = os.path.join(root, "_workbench", "staging", uuid.uuid4().hex)

    def write(self, batches: Iterator[Any]) -> WriterCommitMessage:
        import pyarrow as pa
        import pyarrow.parquet as pq

        batches = [b for b in batches if b.num_rows]
        if not batches:
            return _Staged(None)
        table = pa.Table.from_batches(batches)
        os.makedirs(self.staging, exist_ok=True)
        path = os.path.join(self.staging, f"{uuid.uuid4().hex}.parquet")
        pq.write_table(table, path)
        return _Staged(path)

    def commit(self, messages: list[WriterCommitMessage]) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        from workbench.core.io.writer import write
        from workbench.core.ops.tables import table_exists

        try:
            _use_catalogs(self.catalogs, self.default, self.options)
            paths = [m.path for m in messages if m is not None and m.path]
            data = pa.concat_tables([pq.read_table(p) for p in paths], promote_options="default")
            namespace, _, table = self.options["path"].rpartition(".")
            catalog = self.options.get("catalog")
            mode = "replace" if self.overwrite else "append"
            if not table_exists(table, namespace or None, catalog):
                mode = "create"
            write(data, table, namespace or None, catalog, mode=mode, auto_create_namespace=True)
        finally:
            shutil.rmtree(self.staging, ignore_errors=True)

    def abort(self, messages: list[WriterCommitMessage]) -> None:
        shutil.rmtree(self.staging, ignore_errors=True)
