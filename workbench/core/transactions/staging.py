"""How a write becomes staged Delta actions of a transaction, the same for every engine: the
new table's protocol and metadata, schema evolution (added columns, and widened types by a
rewrite of every row), table properties, and the engine's files. A write that fails leaves its
transaction as it was and deletes the files it wrote."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from workbench.core.base.errors import (
    ClusteringError,
    TableValidationError,
    TransactionConflictError,
    WorkbenchError,
    WriteFailedError,
)
from workbench.core.base.json_text import standard_json
from workbench.core.base.types import TableProperty
from workbench.core.catalog.properties import SCHEMALESS_PROPERTY
from workbench.core.data.manifest import manifest_schema
from workbench.core.delta.change_data import ChangedTable, change_file_action, commit_changes
from workbench.core.delta.clustering import clustering_of
from workbench.core.delta.commits import (
    change_data_enabled,
    metadata_action,
    new_table_configuration,
    protocol_action,
    vectors_enabled,
)
from workbench.core.delta.data_files import Rewrite, WrittenFile, discard, write_parts
from workbench.core.delta.reading import plain_schema
from workbench.core.schema.conform import conform
from workbench.core.schema.evolution import SchemaPlan
from workbench.core.schema.table_schema import Schema

if TYPE_CHECKING:
    from workbench.core.catalog.locations import Location, OpenTable
    from workbench.core.transactions.table_change import TableChange
    from workbench.core.transactions.transaction import Transaction


def stage_new_table(
    txn: Transaction,
    change: TableChange,
    schema: Schema,
    configuration: dict[str, str],
    rewrite: Rewrite | None = None,
) -> None:
    """Stage the first version of a table: protocol, metadata and the rewrite's files."""
    configuration = new_table_configuration(schema, configuration)
    metadata = metadata_action(schema, configuration)
    txn.stage(change, rewrite, metadata, protocol_action(schema, configuration))


def stage_new_schemaless_table(
    txn: Transaction, change: TableChange, configuration: dict[str, str]
) -> None:
    """Stage the first version of a schemaless table: a manifest of the files written to it."""
    if clustering_of(configuration):
        raise ClusteringError(
            "A schemaless table has no columns to cluster by; leave "
            f"{TableProperty.CLUSTER_BY.name} out, or give the table a schema."
        )
    schema = Schema.of(manifest_schema())
    stage_new_table(txn, change, schema, {**configuration, SCHEMALESS_PROPERTY: "true"})


def _folded_vectors(table: OpenTable) -> Rewrite | None:
    """The files with a deletion vector rewritten without the rows it deletes: a table whose
    vectors are turned off keeps none, as readers that trust the property would return the
    deleted rows (the files stay in their write order, each rewritten on its own)."""
    from workbench.core.delta.reading import live_table

    vectored = [f for f in table.files if f.deletion_vector is not None]
    if not vectored:
        return None
    written = []
    for f in vectored:
        rows = live_table(table, [f], keep=False)  # a file replaced
        written += write_parts(rows, table.schema, table.uri, table.storage)
    return Rewrite(written=written, removed=vectored)


def stage_schema_and_properties(
    txn: Transaction, change: TableChange, plan: SchemaPlan, properties: dict[str, str]
) -> None:
    """Stage what a write changes of the table itself: widened types, removed columns and
    past defaults of added ones (every row rewritten), added columns, and table properties
    that differ."""
    table = change.table
    configuration = {**table.properties, **properties}
    if plan.schema.id == table.schema.id and configuration == table.properties:
        return
    rewrite = None
    if plan.rewrites and table.files:
        from workbench.core.delta.reading import live_table

        rows = live_table(table)
        rows = conform(rows, plan.schema, True, table.loc.qualified, past=True)
        written = write_parts(rows, plan.schema, table.uri, table.storage)
        rewrite = Rewrite(written=written, removed=table.files)
    elif not vectors_enabled(configuration):
        rewrite = _folded_vectors(table)
    metadata = metadata_action(plan.schema, configuration, table.table_id or None)
    protocol = protocol_action(plan.schema, configuration)
    needed = protocol["protocol"]
    upgrade = (
        needed["minReaderVersion"] > table.reader_version
        or not set(needed.get("readerFeatures", ())) <= set(table.reader_features)
        or (change_data_enabled(configuration) and not change_data_enabled(table.properties))
    )
    txn.stage(change, rewrite, metadata, protocol if upgrade else None)


def stage_change_data(change: TableChange) -> None:
    """Before a commit of a table whose ``delta.enableChangeDataFeed`` is on: when the change
    removes or rewrites rows, write the rows it changes as a change data file and stage its
    ``cdc`` action, as Delta's change data feed asks (its readers then read that file, not the
    commit's adds and removes). A change that only adds files needs none."""
    table, actions = change.table, change.actions
    removes = any(r["remove"].get("dataChange", True) for r in actions.removes.values())
    if change.dropped or actions.cdc or not removes or not change_data_enabled(table.properties):
        return
    plain = plain_schema(table)
    changed = ChangedTable(table.uri, table.storage, plain, tuple(table.schema.merge_keys))
    rows = commit_changes(changed, actions, change_files=False)
    action, uri, size = change_file_action(changed, rows)
    actions.cdc.append(action)
    change.written.append(WrittenFile(uri, size, standard_json({"numRecords": rows.num_rows})))


@contextmanager
def staged_or_undone(
    txn: Transaction, change: TableChange, outcome: str
) -> Iterator[list[Rewrite]]:
    """Run the steps of one write; if any fails, put the table change back as it was, delete
    the files the write made (staged or not: the block lists its rewrites in the list it is
    given), and raise a typed error saying the table did not change."""
    restore = txn.savepoint(change)
    before = len(change.written)
    made: list[Rewrite] = []
    try:
        yield made
    except BaseException as e:
        staged = {w.uri for w in change.written[:before]}
        made_now = change.written[before:] + [w for r in made for w in r.made()]
        made_here = {w.uri: w for w in made_now if w.uri not in staged}
        discard(list(made_here.values()), change.table.storage)
        restore()
        reraise(e, change.table.loc, outcome)


def reraise(error: BaseException, loc: Location, outcome: str) -> None:
    """Raise ``error`` as a workbench error that says what happened to the table."""
    from deltalake.exceptions import CommitFailedError

    if isinstance(error, (WorkbenchError, KeyboardInterrupt, SystemExit)):
        raise error
    if isinstance(error, CommitFailedError):
        raise TransactionConflictError(
            f"A concurrent writer committed to table {loc.qualified!r} first ({error}); "
            f"{outcome}. Retry the write (dc.run_transaction retries automatically)."
        ) from error
    raise WriteFailedError(
        f"Writing to table {loc.qualified!r} failed ({error}); {outcome}."
    ) from error


def check_append_only(opened: OpenTable, removes: bool) -> None:
    """Refuse removing rows of a table whose ``delta.appendOnly`` property is set."""
    if removes and opened.properties.get("delta.appendOnly", "false").lower() == "true":
        raise TableValidationError(
            f"Table {opened.loc.qualified!r} is append-only (delta.appendOnly=true), so rows "
            "cannot be replaced or deleted; use mode ADD/APPEND, or set the property to false."
        )
