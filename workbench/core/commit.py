"""Delta commits of a transaction's table changes, the same for every engine: tagged commit
properties, files committed as add/remove actions, schema evolution and widening rewrites,
table properties, and rolling a table back when a write fails."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from workbench.core.conform import conform
from workbench.core.engine import Rewrite
from workbench.core.errors import (
    TableValidationError,
    TransactionConflictError,
    WorkbenchError,
    WriteFailedError,
)
from workbench.core.evolution import SchemaPlan
from workbench.core.files import add_actions, discard, remove_actions
from workbench.core.handles import latest
from workbench.core.layout import TXN_TAG

if TYPE_CHECKING:
    from workbench.core.schema import Schema
    from workbench.core.tables import Location, OpenTable
    from workbench.core.transaction import TableChange, Transaction


def commit_properties(transaction_id: str, operation: str) -> Any:
    """Commit properties tagging a Delta commit with its transaction and operation."""
    from deltalake import CommitProperties

    return CommitProperties(
        custom_metadata={TXN_TAG: transaction_id, "workbench.operation": operation}
    )


def quote_identifier(column: str, mark: str = "`") -> str:
    """A column name quoted for SQL: backticks for Spark and deltalake, '"' for DuckDB."""
    return mark + column.replace(mark, mark * 2) + mark


def commit_new_table(
    txn: Transaction,
    loc: Location,
    schema: Schema,
    configuration: dict[str, str],
    rewrite: Rewrite | None = None,
) -> int:
    """Create a Delta table holding the rewrite's files; return its version (two commits when
    it has properties: deltalake only creates tables with custom properties empty)."""
    from deltalake import DeltaTable
    from deltalake import Schema as DeltaSchema
    from deltalake.transaction import create_table_with_add_actions

    adds = add_actions(loc.uri, rewrite.written) if rewrite else []
    tag = commit_properties(txn.id, "CREATE_TABLE")
    options = loc.catalog.properties.storage_options or None
    if not configuration:
        create_table_with_add_actions(
            loc.uri,
            DeltaSchema.from_arrow(schema.arrow),
            adds,
            mode="error",
            storage_options=options,
            commit_properties=tag,
        )
        return 0
    table = DeltaTable.create(
        loc.uri,
        schema.arrow,
        configuration=configuration,
        storage_options=options,
        commit_properties=tag,
        raise_if_key_not_exists=False,
    )
    if not adds:
        return 0
    table.create_write_transaction(adds, "append", table.schema(), commit_properties=tag)
    return 1


def commit_rewrite(txn: Transaction, opened: OpenTable, rewrite: Rewrite, operation: str) -> int:
    """Commit an engine's files (adds, and removes of the files they replace) in one Delta
    commit; return the table version. Written files are deleted if the commit fails."""
    actions = remove_actions(rewrite.removed) + add_actions(opened.uri, rewrite.written)
    if not actions:
        return opened.version
    try:
        handle = latest(opened.uri, opened.incarnation, opened.storage_options)
        handle.create_write_transaction(
            actions,
            "append",
            handle.schema(),
            commit_properties=commit_properties(txn.id, operation),
        )
        return _head(opened)
    except BaseException:
        discard(rewrite.written)
        raise


def set_properties(
    txn: Transaction, change: TableChange, opened: OpenTable, properties: dict[str, str]
) -> bool:
    """Set the table properties that differ from the table's; True if it committed."""
    changed = {k: v for k, v in properties.items() if opened.properties.get(k) != v}
    if not changed:
        return False
    handle = latest(opened.uri, opened.incarnation, opened.storage_options)
    handle.alter.set_table_properties(
        changed,
        raise_if_not_exists=False,
        commit_properties=commit_properties(txn.id, "SET_PROPERTIES"),
    )
    txn.record(change, None, _head(opened))
    return True


def evolve(txn: Transaction, change: TableChange, opened: OpenTable, plan: SchemaPlan) -> bool:
    """Widen column types (a rewrite of every row) and add columns, before the write's files
    are committed; True if it committed."""
    import pyarrow as pa
    from deltalake import Schema as DeltaSchema

    if plan.widened:
        txn.record(change, None, _rewrite_widened(txn, opened, plan.schema))
    added = [f.to_arrow() for f in plan.schema if f.name in plan.added]
    if added:
        handle = latest(opened.uri, opened.incarnation, opened.storage_options)
        handle.alter.add_columns(
            DeltaSchema.from_arrow(pa.schema(added)).fields,
            commit_properties=commit_properties(txn.id, "ADD_COLUMNS"),
        )
        txn.record(change, None, _head(opened))
    return plan.changed


def _rewrite_widened(txn: Transaction, opened: OpenTable, schema: Schema) -> int:
    """Rewrite every row in the widened schema: files and schema replaced in one commit."""
    from deltalake import write_deltalake

    from workbench.core.snapshot import ordered_dataset

    rows = conform(ordered_dataset(opened).to_table(), schema, True, opened.loc.qualified)
    handle = latest(opened.uri, opened.incarnation, opened.storage_options)
    write_deltalake(
        handle,
        rows,
        mode="overwrite",
        schema_mode="overwrite",
        commit_properties=commit_properties(txn.id, "WIDEN"),
    )
    return _head(opened)


def _head(opened: OpenTable) -> int:
    """The table's newest Delta version, after this process committed to it."""
    return latest(opened.uri, opened.incarnation, opened.storage_options).version()


@contextmanager
def restore_on_failure(txn: Transaction, opened: OpenTable) -> Iterator[None]:
    """Run a write; if it fails, roll the table back to the version it started from and raise a
    typed error. Nothing is committed unless the write fails."""
    before = opened.version
    try:
        yield
    except BaseException as e:
        current = latest(opened.uri, opened.incarnation, opened.storage_options)
        if current.version() > before:
            current.restore(before, commit_properties=commit_properties(txn.id, "ROLLBACK"))
        reraise(e, opened.loc, f"it was restored to version {before}")


def reraise(error: BaseException, loc: Location, outcome: str) -> None:
    """Raise ``error`` as a workbench error that says what happened to the table."""
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
