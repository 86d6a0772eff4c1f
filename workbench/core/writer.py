"""``write``: every write mode on Delta tables, with schema evolution and all-or-nothing failure."""

from __future__ import annotations

import warnings
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from workbench.core import keyed_rewrite
from workbench.core.arguments import flag
from workbench.core.conform import conform
from workbench.core.context import operation
from workbench.core.datasets import to_pyarrow
from workbench.core.errors import (
    InvalidArgumentError,
    MergeKeyError,
    TableAlreadyExistsError,
    TableNotFoundError,
    TableValidationError,
    TransactionConflictError,
    WorkbenchError,
    WriteFailedError,
)
from workbench.core.evolution import (
    SchemaPlan,
    check_castable,
    plan_existing_table,
    plan_new_table,
    storage_schema,
    to_storage,
)
from workbench.core.files import add_actions, remove_actions
from workbench.core.formats import content_type_of
from workbench.core.keys import check_dedupe, require_key_columns, unique_keys
from workbench.core.layout import TXN_TAG
from workbench.core.manifest import write_data_file
from workbench.core.models import WriteResult
from workbench.core.namespaces import ensure_namespace
from workbench.core.schema import Schema, SchemaLike
from workbench.core.tables import (
    Location,
    OpenTable,
    create_delta_table,
    decode_reader_types,
    describe,
    encode_properties,
    locate,
    open_table,
    remove_created,
)
from workbench.core.transaction import TableChange, Transaction
from workbench.core.types import ContentType, TableWriteMode
from workbench.core.validation import validate_content_type, validate_readable

if TYPE_CHECKING:
    import pyarrow as pa


def write(
    data: Any,
    table: str,
    namespace: str | None = None,
    catalog: str | None = None,
    mode: TableWriteMode | str = TableWriteMode.AUTO,
    schema: SchemaLike | None = None,
    content_type: ContentType | str | None = None,
    table_properties: Mapping[Any, Any] | None = None,
    auto_create_namespace: bool = False,
    dedupe: str | None = None,
) -> WriteResult:
    """Write a dataset to a table in ``mode``; on any failure the table is left as it was."""
    mode = _parse_mode(mode)
    check_dedupe(dedupe)
    flag("auto_create_namespace", auto_create_namespace)
    loc = locate(table, namespace, catalog)
    declared = Schema.of(schema) if schema is not None else None
    fmt = content_type_of(content_type) if content_type is not None else None
    on_spark = type(data).__module__.startswith("pyspark")
    incoming = None if on_spark else to_pyarrow(data)
    incoming_schema = spark_arrow_schema(data) if on_spark else incoming.schema
    properties = encode_properties(table_properties)
    with operation(loc.catalog) as txn:
        txn.require_writable()
        if txn.entry(loc.namespace, loc.name) is None:
            if mode is TableWriteMode.DELETE:
                raise TableNotFoundError(
                    f"Cannot delete from table {loc.qualified!r}: it does not exist in catalog "
                    f"{loc.catalog_name!r}."
                )
            plan = plan_new(loc, incoming_schema, declared, mode, properties)
            ensure_namespace(txn, loc, auto_create_namespace)
            if on_spark:
                from workbench.engines.spark.write import write_new_table

                return write_new_table(txn, loc, data, plan, properties)
            return _write_new_table(txn, loc, incoming, plan, properties)
        if mode is TableWriteMode.CREATE:
            raise TableAlreadyExistsError(
                f"Table {loc.qualified!r} already exists, so mode CREATE cannot write to it; use "
                "mode=dc.TableWriteMode.REPLACE to overwrite it, or ADD/MERGE to add to it."
            )
        opened = open_table(loc)
        if fmt not in (None, ContentType.PARQUET) and not opened.schemaless:
            warnings.warn(
                f"Table {loc.qualified!r} has a schema, so its rows are stored as Parquet (a Delta "
                f"table holds Parquet files); content_type={fmt.name} applies to schemaless "
                "tables (dc.create_table without a schema).",
                stacklevel=2,
            )
        if opened.schemaless:
            incoming = incoming if incoming is not None else to_pyarrow(data)
            return _write_schemaless(txn, opened, incoming, mode, fmt or ContentType.PARQUET)
        mode, plan = plan_existing(opened, incoming_schema, declared, mode, properties)
        if on_spark:
            from workbench.engines.spark.write import write_existing_table

            return write_existing_table(txn, opened, data, mode, plan, properties, dedupe)
        return _write_existing(txn, opened, incoming, mode, plan, properties, dedupe)


def spark_arrow_schema(frame: Any) -> pa.Schema:
    """The Arrow schema of a Spark DataFrame, without importing pyspark elsewhere."""
    from workbench.engines.spark.files import arrow_schema

    return arrow_schema(frame.schema)


def _parse_mode(mode: TableWriteMode | str) -> TableWriteMode:
    if isinstance(mode, TableWriteMode):
        return mode
    try:
        return TableWriteMode(str(mode).lower())
    except ValueError:
        raise InvalidArgumentError(
            f"Unknown write mode {mode!r}; use one of {[m.name for m in TableWriteMode]}."
        ) from None


def plan_new(
    loc: Location,
    incoming: pa.Schema,
    declared: Schema | None,
    mode: TableWriteMode,
    properties: dict[str, str],
) -> SchemaPlan:
    """Validate a write that creates a table and work out its schema."""
    validate_readable(incoming, decode_reader_types(properties), loc.qualified)
    if declared is not None:
        validate_readable(declared.arrow, decode_reader_types(properties), loc.qualified)
        declared = to_storage(declared)
    plan = plan_new_table(storage_schema(incoming), declared)
    keys = plan.schema.merge_keys
    if mode is TableWriteMode.MERGE and not keys:
        raise MergeKeyError(_no_keys_message(loc, mode))
    require_key_columns(incoming.names, keys, loc.qualified, "Creating")
    return plan


def _write_new_table(
    txn: Transaction,
    loc: Location,
    incoming: pa.Table,
    plan: SchemaPlan,
    properties: dict[str, str],
) -> WriteResult:
    from deltalake import write_deltalake

    keys = plan.schema.merge_keys
    data = conform(incoming, plan.schema, fill_missing=True, table=loc.qualified)
    if keys:
        data = unique_keys(data, keys, loc.qualified, dedupe=None)
    change = txn.touch_table(loc.namespace, loc.name)
    options = loc.catalog.properties.storage_options or None
    commit = commit_properties(txn, "CREATE_TABLE")
    try:
        if properties:
            create_delta_table(loc, plan.schema, properties, txn.id)
            write_deltalake(
                loc.uri, data, mode="append", storage_options=options, commit_properties=commit
            )
        else:
            write_deltalake(
                loc.uri, data, mode="error", storage_options=options, commit_properties=commit
            )
    except BaseException as e:
        remove_created(loc)
        reraise(e, loc, "it was not created")
    version = 1 if properties else 0
    txn.record(change, "CREATE_TABLE", version, added=data.num_rows)
    return WriteResult(loc.ref, "create", version, rows_added=data.num_rows)


def plan_existing(
    opened: OpenTable,
    incoming: pa.Schema,
    declared: Schema | None,
    mode: TableWriteMode,
    properties: dict[str, str],
) -> tuple[TableWriteMode, SchemaPlan]:
    """Resolve AUTO, check the mode against the table's keys, validate and plan the schema."""
    name = opened.loc.qualified
    keys = opened.schema.merge_keys
    if mode is TableWriteMode.AUTO:
        mode = TableWriteMode.MERGE if keys else TableWriteMode.ADD
    if mode in (TableWriteMode.MERGE, TableWriteMode.DELETE) and not keys:
        raise MergeKeyError(_no_keys_message(opened.loc, mode))
    if mode in (TableWriteMode.ADD, TableWriteMode.APPEND) and keys:
        raise TableValidationError(
            f"Table {name!r} has merge keys {keys}; mode {mode.name} could store a key twice. "
            "Use mode=dc.TableWriteMode.MERGE (or AUTO) to insert and update by key."
        )
    readers = decode_reader_types({**opened.properties, **properties})
    validate_readable(incoming, readers, name)
    if mode in (TableWriteMode.MERGE, TableWriteMode.DELETE, TableWriteMode.REPLACE):
        require_key_columns(incoming.names, keys, name, mode.name)
    if mode is TableWriteMode.DELETE:
        stored = storage_schema(incoming)
        for key in keys:
            check_castable(opened.schema.field(key), stored.field(key), name)
        return mode, SchemaPlan(opened.schema)
    if declared is not None:
        validate_readable(declared.arrow, readers, name)
        declared = to_storage(declared)
    plan = plan_existing_table(
        opened.schema, storage_schema(incoming), declared, opened.evolution_mode, name
    )
    return mode, plan


def _write_existing(
    txn: Transaction,
    opened: OpenTable,
    incoming: pa.Table,
    mode: TableWriteMode,
    plan: SchemaPlan,
    properties: dict[str, str],
    dedupe: str | None,
) -> WriteResult:
    name = opened.loc.qualified
    keys = opened.schema.merge_keys
    if mode is TableWriteMode.DELETE:
        incoming = conform(incoming.select(keys), opened.schema, fill_missing=False, table=name)
        incoming = unique_keys(incoming, keys, name, dedupe="first")
    elif keys:
        incoming = unique_keys(incoming, keys, name, dedupe)
    change, opened = touch(txn, opened)
    with restore_on_failure(txn, opened, properties):
        if mode is TableWriteMode.DELETE:
            result = _delete(txn, opened, incoming, keys)
        elif mode is TableWriteMode.MERGE:
            result = _merge(txn, opened, incoming, plan, keys)
        else:
            data = conform(incoming, plan.schema, fill_missing=True, table=name)
            if mode is TableWriteMode.REPLACE:
                result = _replace(txn, opened, data, plan)
            else:
                result = _add(txn, opened, data, plan, mode)
    txn.record(change, f"WRITE_{mode.name}", result.version, result.rows_added, result.rows_removed)
    return result


def touch(txn: Transaction, opened: OpenTable) -> tuple[TableChange, OpenTable]:
    """Claim the table for this transaction, reopening it if abandoned versions were repaired."""
    change = txn.touch_table(opened.loc.namespace, opened.loc.name)
    if change.version != opened.version:
        opened = open_table(opened.loc)
    return change, opened


def _no_keys_message(loc: Location, mode: TableWriteMode) -> str:
    return (
        f"Mode {mode.name} on table {loc.qualified!r} needs merge keys, and it has none. Create "
        "the table with a schema marking them, e.g. dc.Schema.of([dc.Field.of(pa.field('id', "
        "pa.int64()), is_merge_key=True), ...])."
    )


@contextmanager
def restore_on_failure(
    txn: Transaction, opened: OpenTable, properties: dict[str, str]
) -> Iterator[None]:
    """Run a write; if it fails, roll the table back to the version it started from."""
    from workbench.core.handles import latest

    before = opened.version
    try:
        changed = {k: v for k, v in properties.items() if opened.properties.get(k) != v}
        if changed:
            opened.delta.alter.set_table_properties(
                changed,
                raise_if_not_exists=False,
                commit_properties=commit_properties(txn, "SET_PROPERTIES"),
            )
        yield
    except BaseException as e:
        current = latest(opened.uri, opened.incarnation, _options(opened.loc))
        if current.version() > before:
            current.restore(before, commit_properties=commit_properties(txn, "ROLLBACK"))
        reraise(e, opened.loc, f"it was restored to version {before}")


def reraise(error: BaseException, loc: Location, outcome: str) -> None:
    from deltalake.exceptions import CommitFailedError

    if isinstance(error, (WorkbenchError, KeyboardInterrupt, SystemExit)):
        raise error
    if isinstance(error, CommitFailedError) and "append" in str(error).lower():
        raise TableValidationError(
            f"Table {loc.qualified!r} is append-only (delta.appendOnly=true), so rows cannot be "
            f"replaced or deleted; {outcome}. Use mode ADD/APPEND, or set the property to false."
        ) from error
    if isinstance(error, CommitFailedError):
        raise TransactionConflictError(
            f"A concurrent writer committed to table {loc.qualified!r} first ({error}); "
            f"{outcome}. Retry the write (dc.run_transaction retries automatically)."
        ) from error
    raise WriteFailedError(
        f"Writing to table {loc.qualified!r} failed ({error}); {outcome}."
    ) from error


def _options(loc: Location) -> dict[str, str] | None:
    return loc.catalog.properties.storage_options or None


def commit_properties(txn: Transaction, operation: str) -> Any:
    from deltalake import CommitProperties

    return CommitProperties(custom_metadata={TXN_TAG: txn.id, "workbench.operation": operation})


def _schema_mode(plan: SchemaPlan) -> str | None:
    if plan.widened:
        return "overwrite"
    return "merge" if plan.added else None


def schema_change_labels(plan: SchemaPlan) -> tuple[str, ...]:
    return tuple([f"+{c}" for c in plan.added] + [f"~{c}" for c in plan.widened])


def _add(
    txn: Transaction, opened: OpenTable, data: pa.Table, plan: SchemaPlan, mode: TableWriteMode
) -> WriteResult:
    from deltalake import write_deltalake

    if plan.widened:
        version = rewrite_widened(txn, opened, plan.schema, extra=data)
    else:
        write_deltalake(
            opened.delta,
            data,
            mode="append",
            schema_mode=_schema_mode(plan),
            commit_properties=commit_properties(txn, mode.name),
        )
        version = opened.version
    return WriteResult(
        opened.loc.ref,
        mode.value,
        version,
        data.num_rows,
        schema_changes=schema_change_labels(plan),
    )


def _replace(txn: Transaction, opened: OpenTable, data: pa.Table, plan: SchemaPlan) -> WriteResult:
    from deltalake import write_deltalake

    removed = describe(opened).row_count
    write_deltalake(
        opened.delta,
        data,
        mode="overwrite",
        schema_mode=_schema_mode(plan),
        commit_properties=commit_properties(txn, "REPLACE"),
    )
    return WriteResult(
        opened.loc.ref,
        "replace",
        opened.version,
        rows_added=data.num_rows,
        rows_removed=removed,
        schema_changes=schema_change_labels(plan),
    )


def rewrite_widened(
    txn: Transaction, opened: OpenTable, schema: Schema, extra: pa.Table | None
) -> int:
    """Rewrite every row with widened column types (plus ``extra`` rows) in one commit."""
    import pyarrow as pa
    from deltalake import write_deltalake

    from workbench.core.reader import ordered_dataset

    current = conform(ordered_dataset(opened).to_table(), schema, True, opened.loc.qualified)
    rows = current if extra is None else pa.concat_tables([current, extra]).combine_chunks()
    write_deltalake(
        opened.delta,
        rows,
        mode="overwrite",
        schema_mode="overwrite",
        commit_properties=commit_properties(txn, "WIDEN"),
    )
    return opened.version


def quote_identifier(column: str) -> str:
    """A column name quoted for SQL (deltalake predicates, Spark expressions)."""
    return "`" + column.replace("`", "``") + "`"


def evolve(txn: Transaction, opened: OpenTable, plan: SchemaPlan) -> OpenTable:
    """Widen types (a rewrite) and add columns before an engine's files are committed."""
    import pyarrow as pa
    from deltalake import Schema as DeltaSchema

    from workbench.core.handles import latest
    from workbench.core.tables import open_table

    if plan.widened:
        rewrite_widened(txn, opened, plan.schema, extra=None)
    added = [f.to_arrow() for f in plan.schema if f.name in plan.added]
    if added:
        fields = DeltaSchema.from_arrow(pa.schema(added)).fields
        latest(opened.uri, opened.incarnation).alter.add_columns(
            fields, commit_properties=commit_properties(txn, "ADD_COLUMNS")
        )
    if plan.changed:
        txn.changes[(opened.loc.namespace, opened.loc.name)].version = latest(
            opened.uri, opened.incarnation
        ).version()
        return open_table(opened.loc)
    return opened


def commit_files(
    txn: Transaction, opened: OpenTable, actions: list[Any], mode: str, operation: str
) -> int:
    """Commit add/remove actions of files already in the table folder; return the version."""
    from workbench.core.handles import latest

    if not actions and mode == "append":
        return opened.version
    handle = latest(opened.uri, opened.incarnation)
    handle.create_write_transaction(
        actions, mode, handle.schema(), commit_properties=commit_properties(txn, operation)
    )
    return latest(opened.uri, opened.incarnation).version()


def commit_rewrite(
    txn: Transaction, opened: OpenTable, rewrite: keyed_rewrite.Rewrite, operation: str
) -> int:
    """Commit a keyed rewrite: remove the replaced files, add the written ones."""
    removes = remove_actions([(f.path, f.size) for f in rewrite.removed])
    try:
        return commit_files(
            txn, opened, removes + add_actions(opened.uri, rewrite.written), "append", operation
        )
    except BaseException:
        rewrite.discard()
        raise


def _merge(
    txn: Transaction, opened: OpenTable, incoming: pa.Table, plan: SchemaPlan, keys: list[str]
) -> WriteResult:
    name = opened.loc.qualified
    opened = evolve(txn, opened, plan)
    source = conform(incoming, plan.schema, fill_missing=False, table=name)
    rewrite = keyed_rewrite.merge(opened, source, plan.schema, keys)
    version = commit_rewrite(txn, opened, rewrite, "MERGE")
    return WriteResult(
        opened.loc.ref,
        "merge",
        version,
        rows_added=source.num_rows - rewrite.matched,
        rows_updated=rewrite.matched,
        schema_changes=schema_change_labels(plan),
    )


def _delete(txn: Transaction, opened: OpenTable, source: pa.Table, keys: list[str]) -> WriteResult:
    rewrite = keyed_rewrite.delete(opened, source, opened.schema, keys)
    version = commit_rewrite(txn, opened, rewrite, "DELETE")
    return WriteResult(
        opened.loc.ref, "delete", version, rows_added=0, rows_removed=rewrite.matched
    )


def _write_schemaless(
    txn: Transaction, opened: OpenTable, incoming: pa.Table, mode: TableWriteMode, fmt: ContentType
) -> WriteResult:
    from deltalake import write_deltalake

    name = opened.loc.qualified
    if mode in (TableWriteMode.MERGE, TableWriteMode.DELETE):
        raise TableValidationError(
            f"Table {name!r} is schemaless (it records files), so mode {mode.name} has no keys to "
            "match; create a table with a schema and merge keys for MERGE and DELETE."
        )
    validate_content_type(fmt, opened.reader_types, name)
    replace = mode is TableWriteMode.REPLACE
    change, opened = touch(txn, opened)
    removed = describe(opened).row_count if replace else 0
    with restore_on_failure(txn, opened, {}):
        entry = write_data_file(opened, incoming, fmt)
        write_deltalake(
            opened.delta,
            entry,
            mode="overwrite" if replace else "append",
            commit_properties=commit_properties(txn, mode.name),
        )
    txn.record(change, f"WRITE_{mode.name}", opened.version, incoming.num_rows, removed)
    return WriteResult(opened.loc.ref, mode.value, opened.version, rows_added=incoming.num_rows)
