"""Spark frames written as a table's Parquet files: conformed to the table's schema, then
written by Spark's own writer into a fresh folder inside the table on a local disk, or by
pyarrow in each task on object stores; core commits the files."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from workbench.core.base.identifiers import quote_identifier
from workbench.core.delta.data_files import ROW_GROUP_BYTES, WrittenFile, describe_file
from workbench.core.schema.conform import column_plan
from workbench.core.schema.table_schema import Schema
from workbench.core.storage.known import storage_for
from workbench.core.storage.store import is_local
from workbench.engines.spark.files import spark_schema, staging_folder, written_files
from workbench.engines.spark.remote import write_remote

if TYPE_CHECKING:
    from pyspark.sql import DataFrame


def conform(frame: DataFrame, schema: Schema, fill_missing: bool) -> DataFrame:
    """The frame conformed to the table's schema (``column_plan``), with Spark expressions."""
    from pyspark.sql import functions as F

    types = {f.name: f.dataType for f in spark_schema(schema.arrow).fields}
    current = {f.name: f.dataType for f in frame.schema.fields}
    columns = []
    for c in column_plan(schema, frame.columns, fill_missing):
        name = c.field.name
        if c.present and current[name] == types[name]:
            columns.append(F.col(quote_identifier(name)))
            continue
        value = F.col(quote_identifier(name)) if c.present else F.lit(c.field.future_default)
        columns.append(value.cast(types[name]).alias(name))
    return frame.select(columns)


@contextmanager
def _staged(table_path: str) -> Iterator[str]:
    """A fresh folder inside the table for one Spark write, removed if the write fails."""
    folder = staging_folder(table_path)
    try:
        yield folder
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise


def write_files(frame: DataFrame, schema: Schema, table_path: str) -> list[WrittenFile]:
    """Let Spark write the frame (in the table's types) as Parquet into the table folder: by
    Spark's own writer on a local disk, by pyarrow in each task on object stores."""
    storage = storage_for(table_path)
    data = conform(frame, schema, fill_missing=True)
    if not is_local(storage.root):
        return write_remote(data, schema, table_path, storage)
    with _staged(table_path) as folder:
        # row groups of about the size workbench's own writer makes (parquet-mr writes a
        # page index), not 128 MiB: readers looking rows up read one of them
        data.write.mode("error").option("parquet.block.size", ROW_GROUP_BYTES).parquet(folder)
        parts = written_files(folder)
        for name in set(os.listdir(folder)) - {os.path.basename(p) for p in parts}:
            os.remove(os.path.join(folder, name))  # Spark's _SUCCESS and .crc files: no data
        return [describe_file(path) for path in parts]
