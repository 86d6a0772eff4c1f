"""``write``: every write mode on Delta tables, with schema evolution and all-or-nothing failure."""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from workbench.core.base.arguments import choice, flag
from workbench.core.base.errors import (
    KeyedTableModeError,
    MergeKeyError,
    TableAlreadyExistsError,
    TableNotFoundError,
)
from workbench.core.base.types import (
    ContentType,
    LifecycleState,
    SchemaConsistencyType,
    TableProperty,
    TableWriteMode,
)
from workbench.core.catalog.content_types import (
    accepted_content_types,
    check_content_type,
    encode_content_types,
    parse_content_types,
)
from workbench.core.catalog.descriptions import WriteResult
from workbench.core.catalog.locations import Location, OpenTable, locate
from workbench.core.catalog.properties import (
    check_configuration,
    decode_reader_types,
    default_consistency,
)
from workbench.core.catalog.scope import branch_scope
from workbench.core.catalog.versions import version_arguments
from workbench.core.data.datasets import to_pyarrow
from workbench.core.data.engine import Engine, engine_for_data, require_vectors_applied
from workbench.core.data.exact_casts import restore_exact_types
from workbench.core.data.manifest import write_data_file
from workbench.core.data.numpy_columns import by_position, is_unnamed_array
from workbench.core.data.validation import (
    validate_content_type,
    validate_content_type_has_schema,
    validate_readable,
)
from workbench.core.delta.data_files import Rewrite, write_parts
from workbench.core.ops.namespaces import ensure_namespace
from workbench.core.schema.evolution import (
    SchemaPlan,
    column_for,
    plan_existing_table,
    plan_new_table,
    storage_schema,
    to_storage,
)
from workbench.core.schema.merge_keys import check_dedupe, ranking, require_key_columns
from workbench.core.schema.merge_order import Ranking
from workbench.core.schema.table_schema import Field, Schema, SchemaLike
from workbench.core.storage.formats import content_type_of
from workbench.core.transactions.catalog_log import log_of
from workbench.core.transactions.context import operation
from workbench.core.transactions.idempotency import IdempotencyKeys, parse_keys
from workbench.core.transactions.staging import (
    check_append_only,
    reraise,
    stage_new_schemaless_table,
    stage_new_table,
    stage_schema_and_properties,
    staged_or_undone,
)
from workbench.core.transactions.table_change import TableChange
from workbench.core.transactions.table_versions import for_write, new_configuration
from workbench.core.transactions.transaction import Transaction

if TYPE_CHECKING:
    import pyarrow as pa


class _Inferred:
    """The default of ``write(schema=...)``: take the schema from the data. (``schema=None``
    given explicitly creates a schemaless table, as in DeltaCAT.)"""

    def __repr__(self) -> str:
        return "<from the data>"


INFERRED: Any = _Inferred()
CREATING_MODES = (TableWriteMode.AUTO, TableWriteMode.CREATE)
# modes that add rows as they are: a table with merge keys could end up holding a key twice
ROW_ADDING_MODES = (TableWriteMode.ADD, TableWriteMode.APPEND, TableWriteMode.CHRONO)


def write(
    data: Any,
    table: str,
    namespace: str | None = None,
    catalog: str | None = None,
    mode: TableWriteMode | str = TableWriteMode.AUTO,
    schema: SchemaLike | None = INFERRED,
    content_type: ContentType | str | None = None,
    table_properties: Mapping[Any, Any] | None = None,
    auto_create_namespace: bool = False,
    dedupe: str | None = None,
    *,
    table_version: str | None = None,
    table_version_properties: Mapping[Any, Any] | None = None,
    lifecycle_state: LifecycleState | str | None = None,
    content_types: Iterable[ContentType | str] | None = None,
    branch: str | None = None,
    auto_compact: bool = True,
    idempotency: IdempotencyKeys | None = None,
) -> WriteResult:
    """Write a dataset to a table (its current version, or ``table_version``) in ``mode``; on
    any failure the table is left as it was.

    Modes AUTO and CREATE create a missing table or version (schemaless when ``schema=None``
    is given, accepting only ``content_types`` when given; a new version inherits the table's
    properties); the others need it to exist. ``branch`` writes on that branch (default: the
    current branch, see ``dc.branch``). ``auto_compact=False`` skips the compaction the commit
    would be followed by (the table's ``delta.autoOptimize.autoCompact`` turns it off for
    good). ``idempotency=(app_id, version)`` writes at most once per key: a write whose key
    (or, inside a transaction, every key of the transaction) was committed before writes
    nothing and returns ``skipped=True``."""
    mode = choice(TableWriteMode, mode, "mode")
    keys = parse_keys(idempotency)
    check_dedupe(dedupe)
    flag("auto_create_namespace", auto_create_namespace)
    flag("auto_compact", auto_compact)
    properties, own, lifecycle = version_arguments(
        table_properties, table_version_properties, lifecycle_state
    )
    with branch_scope(branch, catalog):
        loc = locate(table, namespace, catalog)
    schemaless = schema is None
    declared = Schema.of(schema) if schema is not None and schema is not INFERRED else None
    fmt = content_type_of(content_type) if content_type is not None else None
    accepted = parse_content_types(content_types)
    engine = engine_for_data(data)
    source = engine.source(data)
    incoming = engine.schema(source)
    asked = _Asked(data, mode, declared, fmt, accepted, properties, own, dedupe)
    with operation(loc.catalog) as txn:
        txn.require_writable()
        txn.auto_compact = txn.auto_compact and auto_compact
        if keys:
            txn.add_idempotency(keys)
        result = (
            None
            if txn.is_repeat()
            else _write_in(
                txn,
                loc,
                asked,
                table_version,
                lifecycle,
                engine,
                source,
                incoming,
                schemaless,
                auto_create_namespace,
            )
        )
    if result is None or txn.skipped:  # a repeat, seen before writing or at the commit
        entry = log_of(loc.catalog).refresh().tables.get((loc.namespace, loc.name))
        version = -1 if entry is None else entry.version
        return WriteResult(loc.ref, mode.value, version, rows_added=0, skipped=True)
    return result


def _write_in(
    txn: Transaction,
    loc: Location,
    asked: _Asked,
    table_version: str | None,
    lifecycle: LifecycleState | None,
    engine: Engine,
    source: Any,
    incoming: Any,
    schemaless: bool,
    auto_create_namespace: bool,
) -> WriteResult:
    """The write itself, in transaction ``txn``: into the table, or creating it."""
    mode, properties, fmt = asked.mode, asked.properties, asked.fmt
    target = for_write(txn, loc, table_version, mode, mode in CREATING_MODES)
    loc = target.loc
    change = txn.lease_table(loc.namespace, loc.name)  # queue behind another writer
    if change.entry is not None:
        return _into_existing(txn, change, asked, engine, source, incoming)
    if mode not in CREATING_MODES:
        raise TableNotFoundError(
            f"Cannot {mode.name} table {loc.qualified!r}: it does not exist in catalog "
            f"{loc.catalog_name!r}. Create it with mode=dc.TableWriteMode.CREATE (or AUTO)."
        )
    properties = new_configuration(txn, target, properties, asked.own, lifecycle)
    check_content_type(fmt or ContentType.PARQUET, asked.accepted, loc.qualified)
    properties.update(encode_content_types(asked.accepted))
    if not schemaless:
        _check_schema_table_format(fmt, loc)
    ensure_namespace(txn, loc, auto_create_namespace)
    if schemaless:  # a failed first write takes the table's creation back with it
        with staged_or_undone(txn, change, "the table was not created"):
            stage_new_schemaless_table(txn, change, properties)
            return _write_schemaless(txn, change, to_pyarrow(asked.data), TableWriteMode.ADD, fmt)
    plan = plan_new(loc, incoming, asked.declared, mode, properties)
    check_configuration(plan.schema, properties)
    return _write_new_table(txn, change, engine, source, plan, properties)


@dataclass(frozen=True)
class _Asked:
    """What a ``write`` call asked for, checked."""

    data: Any
    mode: TableWriteMode
    declared: Schema | None
    fmt: ContentType | None
    accepted: tuple[ContentType, ...] | None
    properties: dict[str, str]
    own: dict[str, str]
    dedupe: str | None


def _into_existing(
    txn: Transaction, change: TableChange, asked: _Asked, engine: Engine, source: Any, incoming: Any
) -> WriteResult:
    """Write into a table that exists (a CREATE is refused): its content types, the data's
    columns by position for an unnamed array, whole-number floats back to integers, then the
    mode's plan."""
    loc, opened = change.table.loc, change.table
    if asked.mode is TableWriteMode.CREATE:
        raise TableAlreadyExistsError(
            f"Table {loc.qualified!r} already exists, so mode CREATE cannot write to it; use "
            "mode=dc.TableWriteMode.REPLACE to overwrite it, or ADD/MERGE to add to it."
        )
    stored = accepted_content_types(opened.properties)
    check_content_type(asked.fmt or ContentType.PARQUET, stored, loc.qualified)
    if asked.accepted not in (None, stored):
        warnings.warn(
            f"content_types= applies when a write creates a table; table {loc.qualified!r} "
            f"keeps the content types it was created with ({stored or 'any'}).",
            stacklevel=3,
        )
    if opened.schemaless:
        return _write_schemaless(txn, change, to_pyarrow(asked.data), asked.mode, asked.fmt)
    _check_schema_table_format(asked.fmt, loc)
    if is_unnamed_array(asked.data):  # its columns are the table's first columns, in order
        source = engine.source(by_position(asked.data, opened.schema, loc.qualified))
        incoming = engine.schema(source)
    source, incoming = restore_exact_types(engine, source, incoming, opened.schema)
    properties = {**asked.properties, **asked.own}
    mode, plan = plan_existing(opened, incoming, asked.declared, asked.mode, properties)
    return _write_existing(txn, change, engine, source, mode, plan, properties, asked.dedupe)


def _check_schema_table_format(fmt: ContentType | None, loc: Location) -> None:
    """A table with a schema takes content types that carry a schema, and stores them as
    Parquet (a Delta table holds Parquet files): say so when another one was asked for."""
    if fmt is None or fmt is ContentType.PARQUET:
        return
    validate_content_type_has_schema(fmt, loc.qualified)
    warnings.warn(
        f"Table {loc.qualified!r} has a schema, so its rows are stored as Parquet (a Delta "
        f"table holds Parquet files); content_type={fmt.name} applies to schemaless "
        "tables (dc.create_table without a schema).",
        stacklevel=3,
    )


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
    plan = plan_new_table(storage_schema(incoming), declared, default_consistency(properties))
    keys = plan.schema.merge_keys
    if mode is TableWriteMode.MERGE and not keys:
        raise MergeKeyError(_no_keys_message(loc, mode))
    require_key_columns(incoming.names, keys, loc.qualified, "Creating")
    return plan


def _write_new_table(
    txn: Transaction,
    change: TableChange,
    engine: Engine,
    source: Any,
    plan: SchemaPlan,
    properties: dict[str, str],
) -> WriteResult:
    loc = change.table.loc
    keys = plan.schema.merge_keys
    if keys:
        order = ranking(plan.schema)
        source = _keyed(engine, source, keys, loc, None, "it was not created", order)
    with staged_or_undone(txn, change, "it was not created") as made:
        folder = change.table.uri
        if loc.catalog.is_local:
            loc.catalog.filesystem.create_dir(loc.catalog.storage.fs_path(folder))
        made.append(Rewrite(written=engine.write_files(source, plan.schema, folder)))
        stage_new_table(txn, change, plan.schema, properties, made[0])
    rows = sum(f.rows for f in made[0].written)
    txn.record(change, "CREATE_TABLE", added=rows, engine=engine.name)
    return WriteResult(loc.ref, "create", change.version, rows_added=rows)


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
    if mode in ROW_ADDING_MODES and keys:
        raise KeyedTableModeError(
            f"{mode.name} mode cannot be used with tables that have merge keys: table {name!r} "
            f"has merge keys {keys}, and {mode.name} could store a key twice. Use "
            "mode=dc.TableWriteMode.MERGE (or AUTO) to insert and update by key."
        )
    readers = decode_reader_types({**opened.properties, **properties})
    validate_readable(incoming, readers, name)
    if mode in (TableWriteMode.MERGE, TableWriteMode.DELETE, TableWriteMode.REPLACE):
        require_key_columns(incoming.names, keys, name, mode.name)
    if mode is TableWriteMode.DELETE:
        stored = storage_schema(incoming)
        validate = SchemaConsistencyType.VALIDATE  # a delete changes no column: keys must fit
        for key in keys:
            column_for(
                opened.schema.field(key), Field.from_arrow(stored.field(key)), validate, name
            )
        return mode, SchemaPlan(opened.schema)
    if declared is not None:
        validate_readable(declared.arrow, readers, name)
        declared = to_storage(declared)
    plan = plan_existing_table(
        opened.schema,
        storage_schema(incoming),
        declared,
        opened.evolution_mode,
        name,
        default_consistency({**opened.properties, **properties}),
    )
    return mode, plan


def _write_existing(
    txn: Transaction,
    change: TableChange,
    engine: Engine,
    source: Any,
    mode: TableWriteMode,
    plan: SchemaPlan,
    properties: dict[str, str],
    dedupe: str | None,
) -> WriteResult:
    loc = change.table.loc
    keys = change.table.schema.merge_keys
    check_append_only(change.table, mode in (TableWriteMode.REPLACE, TableWriteMode.DELETE))
    if mode is TableWriteMode.REPLACE:  # the new rows are the table: a repeated key's last wins
        dedupe = dedupe or "last"
    if keys and mode is not TableWriteMode.DELETE:
        order = ranking(plan.schema)
        source = _keyed(engine, source, keys, loc, dedupe, "the table was not changed", order)
    with staged_or_undone(txn, change, "the table was not changed") as made:
        stage_schema_and_properties(txn, change, plan, properties)
        opened = change.table
        if mode in (TableWriteMode.DELETE, TableWriteMode.MERGE):
            require_vectors_applied(engine, opened, mode.name)
        if mode is TableWriteMode.DELETE:
            made.append(engine.delete(opened, source, keys))
        elif mode is TableWriteMode.MERGE:
            made.append(engine.merge(opened, source, plan.schema, keys))
        else:
            replaced = opened.files if mode is TableWriteMode.REPLACE else []
            written = engine.write_files(source, plan.schema, opened.uri)
            made.append(Rewrite(written=written, removed=replaced))
        check_append_only(opened, bool(made[-1].removed) and mode is not TableWriteMode.MERGE)
        txn.stage(change, made[-1])
    rewrite = made[-1]
    written = sum(f.rows for f in rewrite.written)
    replaced = rewrite.rows_replaced()
    if mode is TableWriteMode.MERGE:
        added, removed = written - replaced, 0
    elif mode is TableWriteMode.DELETE:
        added, removed = 0, replaced - written
    else:
        added, removed = written, replaced
    txn.record(change, f"WRITE_{mode.name}", added, removed, engine=engine.name)
    return WriteResult(
        loc.ref,
        mode.value,
        change.version,
        rows_added=added,
        rows_removed=removed,
        rows_updated=rewrite.updated,
        schema_changes=schema_change_labels(plan),
    )


def _keyed(
    engine: Engine,
    source: Any,
    keys: list[str],
    loc: Location,
    dedupe: str | None,
    outcome: str,
    order: Ranking,
) -> Any:
    """The source with checked merge keys (repeated keys resolved by the merge ``order``); a
    failure of the engine's job is a typed error."""
    try:
        return engine.keyed(source, keys, loc.qualified, dedupe, order)
    except BaseException as e:
        reraise(e, loc, outcome)


def _no_keys_message(loc: Location, mode: TableWriteMode) -> str:
    return (
        f"Mode {mode.name} on table {loc.qualified!r} needs merge keys, and it has none. Create "
        "the table with a schema marking them, e.g. dc.Schema.of([dc.Field.of(pa.field('id', "
        "pa.int64()), is_merge_key=True), ...])."
    )


def schema_change_labels(plan: SchemaPlan) -> tuple[str, ...]:
    """Schema changes of a write for its result: +added and ~widened columns."""
    return tuple([f"+{c}" for c in plan.added] + [f"~{c}" for c in plan.widened + plan.renoted])


def _write_schemaless(
    txn: Transaction,
    change: TableChange,
    incoming: pa.Table,
    mode: TableWriteMode,
    fmt: ContentType | None,
) -> WriteResult:
    fmt = fmt or ContentType.PARQUET
    opened = change.table
    name = opened.loc.qualified
    if mode in (TableWriteMode.MERGE, TableWriteMode.DELETE):
        raise MergeKeyError(
            f"{mode.name} mode requires tables to have at least one merge key, and table {name!r} "
            "is schemaless (it records files, so it has no keys to match). Use mode APPEND, ADD "
            "or REPLACE, or write to a table whose schema marks merge keys."
        )
    if TableProperty.SUPPORTED_READER_TYPES.value in opened.properties:  # only when asked for
        validate_content_type(fmt, opened.reader_types, name)
    replaced = opened.files if mode is TableWriteMode.REPLACE else []
    removed = sum(f.live_rows for f in replaced)
    with staged_or_undone(txn, change, "the table was not changed") as made:
        entry = write_data_file(opened, incoming, fmt, change.version)
        written = write_parts(entry, opened.schema, opened.uri, opened.storage)
        made.append(Rewrite(written, replaced))
        txn.stage(change, made[0])
    txn.record(change, f"WRITE_{mode.name}", incoming.num_rows, removed)
    return WriteResult(opened.loc.ref, mode.value, change.version, rows_added=incoming.num_rows)
