"""Spark DataFrames as table changes: keys checked, rows written as files (``file_writes``),
core commits them. MERGE and DELETE touch only the files that hold matching keys (Spark finds
them through ``_metadata.file_path``): merge-on-read tables get deletion vectors (``vectors``),
the others a rewrite of those files."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from workbench.core.base.errors import MergeKeyError
from workbench.core.base.identifiers import quote_identifier
from workbench.core.delta.commits import vectors_enabled
from workbench.core.delta.data_files import DataFile, Rewrite
from workbench.core.schema.merge_order import Ranking, refuse_ordered_duplicates
from workbench.core.schema.table_schema import Schema
from workbench.engines.spark import vectors
from workbench.engines.spark.file_writes import conform, write_files
from workbench.engines.spark.files import (
    key_candidates,
    path_key,
    spark_schema,
)
from workbench.engines.spark.read import read_files
from workbench.engines.spark.remote import FILE_COLUMN

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import DataFrame

    from workbench.core.catalog.locations import OpenTable


def cast_exact(frame: DataFrame, targets: Mapping[str, pa.DataType]) -> tuple[DataFrame, list[str]]:
    """The frame with each float column of ``targets`` cast to its integer type when every
    value is a whole number in the type's range, and each binary column whose every value has
    its target's fixed width kept (Spark has no fixed-size binary; Delta stores binary), all
    checked by one Spark job, and the names of those columns."""
    import pyarrow as pa
    from pyspark.sql import functions as F

    flags = []
    for name, target in targets.items():
        value = F.col(quote_identifier(name))
        if pa.types.is_fixed_size_binary(target):
            inexact = value.isNotNull() & (F.length(value) != target.byte_width)
        else:
            bound = float(2 ** (target.bit_width - 1))  # exact in a double
            inexact = value.isNotNull() & (
                F.isnan(value) | (value != F.floor(value)) | (value < -bound) | (value >= bound)
            )
        flags.append(F.max(F.when(inexact, 1).otherwise(0)).alias(name))
    found = frame.agg(*flags).first()
    exact = [name for name in targets if not found[name]]
    integers = {n: targets[n] for n in exact if pa.types.is_integer(targets[n])}
    if not integers:
        return frame, exact
    types = {f.name: f.dataType for f in spark_schema(pa.schema(integers.items())).fields}
    casts = {name: F.col(quote_identifier(name)).cast(types[name]) for name in integers}
    return frame.withColumns(casts), exact


def reject_null_keys(frame: DataFrame, keys: list[str], table: str) -> None:
    """Raise ``MergeKeyError`` if any row has a null merge key."""
    null_key = " OR ".join(f"{quote_identifier(k)} IS NULL" for k in keys)
    if frame.filter(null_key).limit(1).count():
        raise _null_keys(keys, table)


def _null_keys(keys: list[str], table: str) -> MergeKeyError:
    return MergeKeyError(
        f"Rows written to table {table!r} have a null merge key {keys}; drop those rows or "
        "fill the key before writing."
    )


def checked_keys(
    frame: DataFrame, keys: list[str], table: str, dedupe: str | None, order: Ranking = ()
) -> DataFrame:
    """The frame with non-null, unique merge keys (de-duplicated when asked): one Spark job
    counts each key's rows and finds null keys."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    null_key = F.lit(False)
    for k in keys:
        null_key = null_key | F.col(quote_identifier(k)).isNull()
    found = (
        frame.groupBy(*[quote_identifier(k) for k in keys])
        .count()
        .agg(F.max("count").alias("most"), F.max(null_key.cast("int")).alias("nulls"))
        .first()
    )
    if found["nulls"]:
        raise _null_keys(keys, table)
    if not found["most"] or found["most"] == 1:
        return frame
    refuse_ordered_duplicates(order, "spark", table)
    if dedupe is None:
        raise MergeKeyError(
            f"Rows written to table {table!r} repeat a merge key {keys}; remove the duplicates "
            "or pass dedupe='last' (or 'first') to keep one row per key."
        )
    order = F.monotonically_increasing_id()
    window = Window.partitionBy(*keys).orderBy(order.desc() if dedupe == "last" else order)
    numbered = frame.withColumn("__workbench_rank", F.row_number().over(window))
    return numbered.filter("__workbench_rank = 1").drop("__workbench_rank")


def _files_with_keys(table: OpenTable, source: DataFrame, keys: list[str]) -> list[DataFile]:
    """The table files holding any of ``source``'s keys: candidates by the keys' min/max
    statistics, then an exact semi-join over the candidates only."""
    candidates = {path_key(f.absolute): f for f in key_candidates(table, source, keys)}
    if not candidates:
        return []
    storage = table.loc.catalog.storage
    current = read_files(
        list(candidates.values()), table.uri, table.schema, storage, FILE_COLUMN
    ).select(*[quote_identifier(k) for k in keys], FILE_COLUMN)
    hits = current.join(source.select(*keys).distinct(), keys, "left_semi")
    return [candidates[path_key(r[0])] for r in hits.select(FILE_COLUMN).distinct().collect()]


def merge(table: OpenTable, source: DataFrame, schema: Schema, keys: list[str]) -> Rewrite:
    """Upsert by key. Merge-on-read tables mark the matched rows deleted and take the source
    as new files; others rewrite the files holding the source's keys with a full outer join
    (source wins)."""
    from pyspark.sql import functions as F

    source = conform(
        source, Schema(f for f in schema if f.name in source.columns), fill_missing=False
    )
    if vectors_enabled(table.properties):
        return vectors.merge(table, source, schema, keys)
    touched = _files_with_keys(table, source, keys)
    old = read_files(touched, table.uri, schema, table.loc.catalog.storage)
    joined = old.alias("o").join(
        source.alias("s"),
        [F.col(f"o.{quote_identifier(k)}") == F.col(f"s.{quote_identifier(k)}") for k in keys],
        "full_outer",
    )
    in_source = F.col(f"s.{quote_identifier(keys[0])}").isNotNull()
    in_table = F.col(f"o.{quote_identifier(keys[0])}").isNotNull()
    types = {f.name: f.dataType for f in spark_schema(schema.arrow).fields}
    columns = []
    for field in schema:
        theirs = F.col(f"s.{quote_identifier(field.name)}")
        ours = F.col(f"o.{quote_identifier(field.name)}")
        if field.name in keys:
            value = F.coalesce(theirs, ours)
        elif field.name in source.columns:
            value = F.when(in_source, theirs).otherwise(ours)
        else:
            value = F.when(in_table, ours).otherwise(F.lit(field.future_default))
        columns.append(value.cast(types[field.name]).alias(field.name))
    written = write_files(joined.select(columns), schema, table.uri)
    # The output holds every row of the rewritten files plus the inserted ones.
    inserted = sum(f.rows for f in written) - sum(f.rows for f in touched)
    return Rewrite(written, touched, updated=source.count() - inserted)


def delete(table: OpenTable, source: DataFrame, keys: list[str]) -> Rewrite:
    """Delete the rows holding the source's keys: marked in deletion vectors on merge-on-read
    tables, else by rewriting the files holding them without those rows."""
    name = table.loc.qualified
    source = conform(
        source.select(*[quote_identifier(k) for k in keys]),
        Schema(f for f in table.schema if f.name in keys),
        fill_missing=False,
    ).dropDuplicates(keys)
    reject_null_keys(source, keys, name)
    if vectors_enabled(table.properties):
        return vectors.delete(table, source, keys)
    touched = _files_with_keys(table, source, keys)
    if not touched:
        return Rewrite()
    kept = read_files(touched, table.uri, table.schema, table.loc.catalog.storage)
    kept = kept.join(source, keys, "left_anti")
    return Rewrite(write_files(kept, table.schema, table.uri), touched)
