"""Merge-on-read MERGE and DELETE on Spark: Spark finds the matched rows of each touched file
by key (reading only key columns, with each row's position in its file), Spark tasks build each
file's deletion vector, and Spark writes the source rows as new files. Only one vector per
touched file reaches the driver, which commits them (a file past its purge share is rewritten
there, see ``core.delta.marking``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from workbench.core.base.errors import WriteFailedError
from workbench.core.base.identifiers import quote_identifier
from workbench.core.delta.data_files import DataFile, Rewrite
from workbench.core.delta.deletion_vectors import deserialize, serialize
from workbench.core.delta.marking import discarded_on_failure, mark_more_deleted
from workbench.core.schema.table_schema import Field, Schema
from workbench.core.storage.store import is_local
from workbench.engines.spark.file_writes import write_files
from workbench.engines.spark.files import key_candidates, path_key, spark_schema
from workbench.engines.spark.remote import read_by_tasks
from workbench.engines.spark.session import spark_session

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import DataFrame

    from workbench.core.catalog.locations import OpenTable

FILE, FILE_ID, ROW, MATCHED = "__wb_file", "__wb_file_id", "__wb_row", "__wb_matched"
VECTORS = f"{FILE_ID} long, deleted binary"


def merge(table: OpenTable, source: DataFrame, schema: Schema, keys: list[str]) -> Rewrite:
    """Upsert by key: matched rows are deleted where they are, and the source is written as
    new files (updated and new rows). Columns the source lacks come from the matched rows
    (read with the keys, by the same job), or their defaults for new rows."""
    missing = [f for f in schema if f.name not in source.columns]
    rewrite = Rewrite()
    with discarded_on_failure(rewrite):
        matched, rewrite.updated = _mark_matches(
            table, source, keys, rewrite, [f.name for f in missing]
        )
        try:
            if missing:
                source = _completed(source, matched, keys, missing, schema)
            rewrite.written += write_files(source, schema, table.uri)
        finally:
            if matched is not None:
                matched.unpersist()
    return rewrite


def delete(table: OpenTable, source: DataFrame, keys: list[str]) -> Rewrite:
    """Delete the rows holding the source's keys by marking them in their files' vectors."""
    rewrite = Rewrite()
    with discarded_on_failure(rewrite):
        matched, _ = _mark_matches(table, source, keys, rewrite)
    if matched is not None:
        matched.unpersist()
    return rewrite


def _mark_matches(
    table: OpenTable, source: DataFrame, keys: list[str], rewrite: Rewrite, more: list[str] = ()
) -> tuple[DataFrame | None, int]:
    """Mark in ``rewrite`` every live table row whose key is in ``source``: those rows (keys,
    ``more`` columns, file and position; cached, None when no file can hold them) and how
    many there are."""
    from pyspark.sql import functions as F

    candidates = key_candidates(table, source, keys)
    if not candidates:
        return None, 0
    by_path = {path_key(f.absolute): f for f in candidates}
    matched = (
        _positions(table, candidates, [*keys, *more])
        .join(source.select(*[quote_identifier(k) for k in keys]), keys, "left_semi")
        .persist()
    )
    file_id = F.xxhash64(FILE).alias(FILE_ID)  # a group carries 8 bytes per row, not a path
    named = matched.select(FILE, file_id).distinct().collect()
    paths = {r[FILE_ID]: r[FILE] for r in named}
    if len(paths) != len(named):
        raise WriteFailedError("Two files of the table hash alike; the table was not changed.")
    vectors = matched.select(file_id, ROW).groupBy(FILE_ID).applyInArrow(_vector_of_file, VECTORS)
    marked = 0
    for row in vectors.collect():
        f = by_path[path_key(paths[row[FILE_ID]])]
        deleted = deserialize(bytes(row["deleted"]))
        marked += len(deleted)
        mark_more_deleted(table, f, deleted, rewrite)
    return matched, marked


def _completed(
    source: DataFrame,
    matched: DataFrame | None,
    keys: list[str],
    missing: list[Field],
    schema: Schema,
) -> DataFrame:
    """The source with the columns it lacks: the matched row's values for updated keys, the
    column's default for new ones."""
    from pyspark.sql import functions as F

    types = {f.name: f.dataType for f in spark_schema(schema.arrow).fields}
    if matched is None:
        defaults = [F.lit(f.future_default).cast(types[f.name]).alias(f.name) for f in missing]
        return source.select("*", *defaults)
    old = matched.select(*keys, *[f.name for f in missing], F.lit(True).alias(MATCHED))
    joined = source.join(old, keys, "left")
    filled = [
        F.when(F.col(MATCHED).isNull(), F.lit(f.future_default))
        .otherwise(F.col(quote_identifier(f.name)))
        .cast(types[f.name])
        .alias(f.name)
        for f in missing
    ]
    return joined.select(*[quote_identifier(c) for c in source.columns], *filled)


def _positions(table: OpenTable, files: list[DataFile], columns: list[str]) -> DataFrame:
    """``columns`` of the live rows of ``files``, each row with its file and position:
    plain local files by Spark's own reader, the rest by tasks that apply their vectors."""
    from pyspark.sql import functions as F

    storage = table.loc.catalog.storage
    read = Schema(f for f in table.schema if f.name in columns)
    native = is_local(storage.root)
    plain = [f.absolute for f in files if native and f.deletion_vector is None]
    others = [f for f in files if not native or f.deletion_vector is not None]
    frames = []
    if plain:
        frame = spark_session().read.schema(spark_schema(read.arrow)).parquet(*plain)
        frames.append(
            frame.select(
                *[quote_identifier(c) for c in columns],
                F.col("_metadata.row_index").alias(ROW),
                F.col("_metadata.file_path").alias(FILE),
            )
        )
    if others:
        frames.append(read_by_tasks(spark_session(), others, table.uri, read, storage, FILE, ROW))
    return frames[0] if len(frames) == 1 else frames[0].unionByName(frames[1])


def _vector_of_file(rows: pa.Table) -> pa.Table:
    """The positions matched in one file as a serialized roaring bitmap (runs in a task)."""
    import pyarrow as pa
    from pyroaring import BitMap64

    positions = BitMap64(rows.column(ROW).to_numpy())
    return pa.table(
        {FILE_ID: [rows.column(FILE_ID)[0].as_py()], "deleted": [serialize(positions)]},
        schema=pa.schema([(FILE_ID, pa.int64()), ("deleted", pa.binary())]),
    )
