"""Writes of Spark DataFrames in every mode: Spark computes and writes Parquet, deltalake commits.

Spark writes its files natively into a fresh folder inside the table; the files are then
committed with statistics from their footers, inside the same catalog transaction as any other
write. MERGE and DELETE rewrite only the files that hold matching keys (Spark finds them through
``_metadata.file_path``) and commit remove actions for exactly those files.
"""

from __future__ import annotations

import os
import shutil
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlparse

from workbench.core.errors import MergeKeyError
from workbench.core.evolution import SchemaPlan
from workbench.core.files import add_actions, remove_actions
from workbench.core.handles import latest
from workbench.core.keyed_rewrite import TableFile, candidate_files, table_files
from workbench.core.models import WriteResult
from workbench.core.schema import Schema
from workbench.core.tables import Location, OpenTable, create_delta_table, describe, remove_created
from workbench.core.transaction import Transaction
from workbench.core.types import TableWriteMode
from workbench.core.writer import (
    commit_files,
    commit_properties,
    evolve,
    quote_identifier,
    reraise,
    restore_on_failure,
    schema_change_labels,
    touch,
)
from workbench.engines.spark.files import spark_schema, staging_folder, written_files

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

ENGINE = "spark"


def conform(frame: DataFrame, schema: Schema, fill_missing: bool) -> DataFrame:
    """Cast columns to the table's types, in schema order; add absent ones when asked."""
    from pyspark.sql import functions as F

    types = {f.name: f.dataType for f in spark_schema(schema.arrow).fields}
    current = {f.name: f.dataType for f in frame.schema.fields}
    columns = []
    for field in schema:
        if field.name in frame.columns:
            column = F.col(quote_identifier(field.name))
            if current[field.name] != types[field.name]:
                column = column.cast(types[field.name])
            columns.append(column.alias(field.name))
        elif fill_missing:
            value = F.lit(field.future_default)
            columns.append(value.cast(types[field.name]).alias(field.name))
    return frame.select(columns)


def reject_null_keys(frame: DataFrame, keys: list[str], table: str) -> None:
    """Raise ``MergeKeyError`` if any row has a null merge key."""
    null_key = " OR ".join(f"{quote_identifier(k)} IS NULL" for k in keys)
    if frame.filter(null_key).limit(1).count():
        raise MergeKeyError(
            f"Rows written to table {table!r} have a null merge key {keys}; drop those rows or "
            "fill the key before writing."
        )


def checked_keys(frame: DataFrame, keys: list[str], table: str, dedupe: str | None) -> DataFrame:
    """The frame with non-null, unique merge keys (de-duplicated when asked)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    reject_null_keys(frame, keys, table)
    if not frame.groupBy(*keys).count().filter("count > 1").limit(1).count():
        return frame
    if dedupe is None:
        raise MergeKeyError(
            f"Rows written to table {table!r} repeat a merge key {keys}; remove the duplicates "
            "or pass dedupe='last' (or 'first') to keep one row per key."
        )
    order = F.monotonically_increasing_id()
    window = Window.partitionBy(*keys).orderBy(order.desc() if dedupe == "last" else order)
    numbered = frame.withColumn("__workbench_rank", F.row_number().over(window))
    return numbered.filter("__workbench_rank = 1").drop("__workbench_rank")


def _write_files(frame: DataFrame, table_path: str, txn: Transaction) -> tuple[list, int, str]:
    """Let Spark write Parquet into a staging folder; return add actions, rows and the folder."""
    import json

    folder = staging_folder(table_path, txn.id)
    frame.write.mode("error").parquet(folder)
    actions = add_actions(table_path, written_files(folder))
    rows = sum(json.loads(a.stats)["numRecords"] for a in actions)
    return actions, rows, folder


def _delta_schema(schema: Schema) -> Any:
    from deltalake import Schema as DeltaSchema

    return DeltaSchema.from_arrow(schema.arrow)


def write_new_table(
    txn: Transaction, loc: Location, frame: DataFrame, plan: SchemaPlan, properties: dict[str, str]
) -> WriteResult:
    """Create a table from a Spark DataFrame in one commit (two with table properties)."""
    from deltalake.transaction import create_table_with_add_actions

    keys = plan.schema.merge_keys
    data = conform(frame, plan.schema, fill_missing=True)
    if keys:
        data = checked_keys(data, keys, loc.qualified, None)
    change = txn.touch_table(loc.namespace, loc.name)
    txn.engine = ENGINE
    tag = commit_properties(txn, "CREATE_TABLE")
    try:
        os.makedirs(loc.uri, exist_ok=True)
        actions, rows, _ = _write_files(data, loc.uri, txn)
        if properties:
            create_delta_table(loc, plan.schema, properties, txn.id)
            latest(loc.uri, change.incarnation).create_write_transaction(
                actions, "append", _delta_schema(plan.schema), commit_properties=tag
            )
        else:
            create_table_with_add_actions(
                loc.uri, _delta_schema(plan.schema), actions, mode="error", commit_properties=tag
            )
    except BaseException as e:
        remove_created(loc)
        reraise(e, loc, "it was not created")
    version = 1 if properties else 0
    txn.record(change, "CREATE_TABLE", version, added=rows)
    return WriteResult(loc.ref, "create", version, rows_added=rows)


def write_existing_table(
    txn: Transaction,
    opened: OpenTable,
    frame: DataFrame,
    mode: TableWriteMode,
    plan: SchemaPlan,
    properties: dict[str, str],
    dedupe: str | None,
) -> WriteResult:
    """ADD, APPEND, REPLACE, MERGE or DELETE a Spark DataFrame into an existing table."""
    name = opened.loc.qualified
    keys = opened.schema.merge_keys
    if mode is TableWriteMode.DELETE:
        source = conform(
            frame.select(*[quote_identifier(k) for k in keys]),
            Schema(f for f in opened.schema if f.name in keys),
            fill_missing=False,
        ).dropDuplicates(keys)
        reject_null_keys(source, keys, name)
    else:
        source = checked_keys(frame, keys, name, dedupe) if keys else frame
    change, opened = touch(txn, opened)
    txn.engine = ENGINE
    folders: list[str] = []
    try:
        with restore_on_failure(txn, opened, properties):
            opened = evolve(txn, opened, plan)
            if mode is TableWriteMode.DELETE:
                result = _delete(txn, opened, source, keys, folders)
            elif mode is TableWriteMode.MERGE:
                result = _merge(txn, opened, source, plan, keys, folders)
            else:
                result = _add_or_replace(txn, opened, source, plan, mode, folders)
    except BaseException:
        for folder in folders:
            shutil.rmtree(folder, ignore_errors=True)
        raise
    txn.record(change, f"WRITE_{mode.name}", result.version, result.rows_added, result.rows_removed)
    return result


def _add_or_replace(
    txn: Transaction,
    opened: OpenTable,
    source: DataFrame,
    plan: SchemaPlan,
    mode: TableWriteMode,
    folders: list[str],
) -> WriteResult:
    data = conform(source, plan.schema, fill_missing=True)
    actions, rows, folder = _write_files(data, opened.uri, txn)
    folders.append(folder)
    replace = mode is TableWriteMode.REPLACE
    removed = describe(opened).row_count if replace else 0
    version = commit_files(txn, opened, actions, "overwrite" if replace else "append", mode.name)
    return WriteResult(
        opened.loc.ref,
        mode.value,
        version,
        rows,
        rows_removed=removed,
        schema_changes=schema_change_labels(plan),
    )


def _files_with_keys(
    files: list[TableFile], schema: Schema, source: DataFrame, keys: list[str]
) -> list[TableFile]:
    """The table files holding any of ``source``'s keys: candidates by the keys' min/max
    statistics, then an exact semi-join over the candidates only."""
    from pyspark.sql import functions as F

    from workbench.engines.spark.read import read_files

    bounds = source.agg(
        *[F.min(quote_identifier(k)).alias(f"lo{i}") for i, k in enumerate(keys)],
        *[F.max(quote_identifier(k)).alias(f"hi{i}") for i, k in enumerate(keys)],
    ).collect()[0]
    if bounds["lo0"] is None:
        return []
    low = {k: bounds[f"lo{i}"] for i, k in enumerate(keys)}
    high = {k: bounds[f"hi{i}"] for i, k in enumerate(keys)}
    candidates = {f.absolute: f for f in candidate_files(files, low, high)}
    if not candidates:
        return []
    current = read_files(list(candidates), schema).select(
        *[quote_identifier(k) for k in keys], "_metadata.file_path"
    )
    hits = current.join(source.select(*keys).distinct(), keys, "left_semi")
    return [
        candidates[os.path.normpath(unquote(urlparse(r[0]).path))]
        for r in hits.select("file_path").distinct().collect()
    ]


def _merge(
    txn: Transaction,
    opened: OpenTable,
    source: DataFrame,
    plan: SchemaPlan,
    keys: list[str],
    folders: list[str],
) -> WriteResult:
    from pyspark.sql import functions as F

    from workbench.engines.spark.read import read_files

    files = table_files(opened, keys)
    source = conform(
        source, Schema(f for f in plan.schema if f.name in source.columns), fill_missing=False
    )
    touched = _files_with_keys(files, opened.schema, source, keys)
    old = read_files([f.absolute for f in touched], plan.schema)
    joined = old.alias("o").join(
        source.alias("s"),
        [F.col(f"o.{quote_identifier(k)}") == F.col(f"s.{quote_identifier(k)}") for k in keys],
        "full_outer",
    )
    in_source = F.col(f"s.{quote_identifier(keys[0])}").isNotNull()
    in_table = F.col(f"o.{quote_identifier(keys[0])}").isNotNull()
    types = {f.name: f.dataType for f in spark_schema(plan.schema.arrow).fields}
    columns = []
    for field in plan.schema:
        theirs, ours = (
            F.col(f"s.{quote_identifier(field.name)}"),
            F.col(f"o.{quote_identifier(field.name)}"),
        )
        if field.name in keys:
            value = F.coalesce(theirs, ours)
        elif field.name in source.columns:
            value = F.when(in_source, theirs).otherwise(ours)
        else:
            value = F.when(in_table, ours).otherwise(F.lit(field.future_default))
        columns.append(value.cast(types[field.name]).alias(field.name))
    actions, written, folder = _write_files(joined.select(columns), opened.uri, txn)
    folders.append(folder)
    # The output holds every row of the rewritten files plus the inserted ones.
    inserted = written - sum(f.rows for f in touched)
    updated = source.count() - inserted
    removes = remove_actions([(f.path, f.size) for f in touched])
    version = commit_files(txn, opened, removes + actions, "append", "MERGE")
    return WriteResult(
        opened.loc.ref,
        "merge",
        version,
        rows_added=inserted,
        rows_updated=updated,
        schema_changes=schema_change_labels(plan),
    )


def _delete(
    txn: Transaction, opened: OpenTable, source: DataFrame, keys: list[str], folders: list[str]
) -> WriteResult:
    from workbench.engines.spark.read import read_files

    touched = _files_with_keys(table_files(opened, keys), opened.schema, source, keys)
    if not touched:
        return WriteResult(opened.loc.ref, "delete", opened.version, rows_added=0)
    kept = read_files([f.absolute for f in touched], opened.schema).join(source, keys, "left_anti")
    actions, written, folder = _write_files(kept, opened.uri, txn)
    folders.append(folder)
    removed = sum(f.rows for f in touched) - written
    removes = remove_actions([(f.path, f.size) for f in touched])
    version = commit_files(txn, opened, removes + actions, "append", "DELETE")
    return WriteResult(opened.loc.ref, "delete", version, rows_added=0, rows_removed=removed)
