"""``spark.read.format("workbench")`` and ``df.write.format("workbench")``.

Options: the table as the load/save path (``namespace.table``), ``root`` (catalog folder; the
default local catalog otherwise), and for reads ``asOf`` (time, transaction id or tag) or
``version``. Planning runs in Spark's Python workers, which do not share the driver's
``dc.init``, hence ``root``. Reads go file by file; writes stage Parquet per task and commit it
through ``dc.write`` (append or replace) in one catalog transaction.
"""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from pyspark.sql.datasource import (
    DataSource,
    DataSourceReader,
    DataSourceWriter,
    InputPartition,
    WriterCommitMessage,
)

NAME = "workbench"


def _open(options: dict[str, str]) -> Any:
    """The table the options name, at the requested point."""
    import workbench as dc
    from workbench.core.tables import locate, open_table

    if "root" in options:
        dc.init_local(options["root"])
    namespace, _, table = options["path"].rpartition(".")
    as_of = options.get("asOf")
    version = int(options["version"]) if "version" in options else None
    point = int(as_of) if as_of and as_of.isdigit() else as_of
    return open_table(locate(table, namespace or None), version=version, as_of=point)


class WorkbenchDataSource(DataSource):
    """The catalog's tables as a Spark data source."""

    @classmethod
    def name(cls) -> str:
        return NAME

    def schema(self) -> Any:
        from workbench.engines.spark.files import spark_schema

        return spark_schema(_open(self.options).schema.arrow)

    def reader(self, schema: Any) -> DataSourceReader:
        return _Reader(self.options)

    def writer(self, schema: Any, overwrite: bool) -> DataSourceWriter:
        return _Writer(self.options, schema, overwrite)


@dataclass
class _File(InputPartition):
    path: str


class _Reader(DataSourceReader):
    def __init__(self, options: dict[str, str]):
        opened = _open(options)
        self.files = opened.delta.file_uris()
        self.schema = opened.schema

    def partitions(self) -> list[InputPartition]:
        return [_File(path) for path in self.files]

    def read(self, partition: InputPartition) -> Iterator[Any]:
        import pyarrow.parquet as pq

        from workbench.core.conform import conform

        table = conform(pq.read_table(partition.path), self.schema, True, "workbench source")
        yield from table.to_batches()


@dataclass
class _Staged(WriterCommitMessage):
    path: str | None


class _Writer(DataSourceWriter):
    def __init__(self, options: dict[str, str], schema: Any, overwrite: bool):
        import workbench as dc
        from workbench.engines.spark.files import arrow_schema

        self.options = options
        self.arrow = arrow_schema(schema)
        self.overwrite = overwrite
        root = options.get("root") or dc.get_catalog().root
        self.staging = os.path.join(root, "_workbench", "staging", uuid.uuid4().hex)

    def write(self, rows: Iterator[Any]) -> WriterCommitMessage:
        import pyarrow as pa
        import pyarrow.parquet as pq

        records = [row.asDict(recursive=True) for row in rows]
        if not records:
            return _Staged(None)
        os.makedirs(self.staging, exist_ok=True)
        path = os.path.join(self.staging, f"{uuid.uuid4().hex}.parquet")
        pq.write_table(pa.Table.from_pylist(records, schema=self.arrow), path)
        return _Staged(path)

    def commit(self, messages: list[WriterCommitMessage]) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        import workbench as dc

        try:
            if "root" in self.options:
                dc.init_local(self.options["root"])
            paths = [m.path for m in messages if m is not None and m.path]
            data = pa.concat_tables([pq.read_table(p) for p in paths], promote_options="default")
            namespace, _, table = self.options["path"].rpartition(".")
            mode = "replace" if self.overwrite else "append"
            if not dc.table_exists(table, namespace or None):
                mode = "create"
            dc.write(data, table, namespace or None, mode=mode, auto_create_namespace=True)
        finally:
            shutil.rmtree(self.staging, ignore_errors=True)

    def abort(self, messages: list[WriterCommitMessage]) -> None:
        shutil.rmtree(self.staging, ignore_errors=True)
