"""``alter_table``: change a table version's schema, properties or description in one commit.

Schema changes come from ``schema.update()`` (a ``SchemaUpdate``) built on the version's
current schema and become its next schema version. Changes Delta Lake cannot express as
metadata alone (a changed type, a removed column, a column added with a past default for the
rows already written) rewrite the version's rows, inside the same commit.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from workbench.core.base.errors import (
    InvalidArgumentError,
    SchemaValidationError,
    TableValidationError,
)
from workbench.core.base.types import LifecycleState
from workbench.core.catalog.locations import locate
from workbench.core.catalog.properties import (
    DESCRIPTION_PROPERTY,
    check_configuration,
)
from workbench.core.catalog.versions import (
    LIFECYCLE_PROPERTY,
    TABLE_PROPERTIES_PROPERTY,
    table_configuration,
    version_arguments,
)
from workbench.core.schema.arrow_types import same_type
from workbench.core.schema.evolution import SchemaPlan, to_storage
from workbench.core.schema.updates import SchemaUpdate
from workbench.core.transactions.context import operation
from workbench.core.transactions.staging import stage_schema_and_properties, staged_or_undone
from workbench.core.transactions.table_versions import for_read, live_versions, versions_in

if TYPE_CHECKING:
    from workbench.core.catalog.locations import Location
    from workbench.core.schema.table_schema import Schema
    from workbench.core.transactions.transaction import Transaction


def alter_table(
    table: str,
    *,
    namespace: str | None = None,
    catalog: str | None = None,
    table_version: str | None = None,
    schema_updates: SchemaUpdate | None = None,
    table_properties: Mapping[Any, Any] | None = None,
    table_description: str | None = None,
    table_version_properties: Mapping[Any, Any] | None = None,
    lifecycle_state: LifecycleState | str | None = None,
) -> None:
    """Change a table's current version (or ``table_version``): apply ``schema_updates``
    (from ``schema.update()``), set its ``table_version_properties`` (which govern its reads
    and writes), ``lifecycle_state`` and ``table_description``; ``table_properties`` sets the
    table's own properties, which versions created later inherit. All of it or, on any
    failure, nothing."""
    if schema_updates is not None and not isinstance(schema_updates, SchemaUpdate):
        raise InvalidArgumentError(
            f"schema_updates= takes the update of a schema, e.g. "
            "schema.update().add_field(dc.Field.of(pa.field('email', pa.string()))); got "
            f"{type(schema_updates).__name__}."
        )
    if table_description is not None and not isinstance(table_description, str):
        raise InvalidArgumentError(
            f"table_description={table_description!r} must be a string (or None: unchanged)."
        )
    loc = locate(table, namespace, catalog)
    table_level, properties, lifecycle = version_arguments(
        table_properties, table_version_properties, lifecycle_state
    )
    if lifecycle is not None:
        properties[LIFECYCLE_PROPERTY] = lifecycle.value
    if table_description is not None:
        properties[DESCRIPTION_PROPERTY] = table_description
    with operation(loc.catalog) as txn:
        txn.require_writable()
        target = for_read(txn, loc, table_version)
        if lifecycle is LifecycleState.DELETED and live_versions(
            txn, loc, versions_in(txn, loc.namespace, loc.name)
        ) == [target.version_name]:
            raise InvalidArgumentError(
                f"Version {target.version_name} is the last version of table {loc.qualified!r}; "
                "a table keeps at least one, so drop the table with dc.drop_table(...) instead."
            )
        if table_level:
            _set_table_properties(txn, loc, table_level)
        change = txn.lease_existing(target.namespace, target.name, f"alter {loc.qualified!r}")
        opened = change.table
        plan = SchemaPlan(opened.schema)
        if schema_updates is not None:
            if opened.schemaless:
                raise TableValidationError(
                    f"Table {loc.qualified!r} is schemaless, so it has no schema to update."
                )
            plan = _plan(opened.schema, schema_updates, loc.qualified)
        check_configuration(plan.schema, {**opened.properties, **properties})
        with staged_or_undone(txn, change, "the table was not changed"):
            stage_schema_and_properties(txn, change, plan, properties)
        txn.record(change, "ALTER_TABLE")


def _set_table_properties(txn: Transaction, loc: Location, updates: dict[str, str]) -> None:
    """Record the table's properties, updated, with its newest version (where new versions
    take them from), leaving that version's own properties as they are."""
    newest = loc.versioned(versions_in(txn, loc.namespace, loc.name)[-1])
    change = txn.lease_table(newest.namespace, newest.name)
    if change.entry is None:
        return  # the table is missing: the caller reports it
    recorded = {**table_configuration(change.table.properties), **updates}
    check_configuration(change.table.schema, recorded)  # as each version made later will
    with staged_or_undone(txn, change, "the table was not changed"):
        stage_schema_and_properties(
            txn,
            change,
            SchemaPlan(change.table.schema),
            {TABLE_PROPERTIES_PROPERTY: json.dumps(recorded, sort_keys=True)},
        )
    txn.record(change, "ALTER_TABLE")


def _plan(current: Schema, update: SchemaUpdate, table: str) -> SchemaPlan:
    """The schema an update leaves the table with, and what changed to get there."""
    if update.base_schema.id != current.id:
        raise SchemaValidationError(
            f"The schema update was built on schema version {update.base_schema.id} of table "
            f"{table!r}, which is now at version {current.id}; build it again from "
            "dc.get_table(...).table_version.schema.update()."
        )
    schema = to_storage(update.apply())
    before = current.field_ids_to_fields
    after = schema.field_ids_to_fields
    return SchemaPlan(
        schema,
        added=[f.name for i, f in after.items() if i not in before],
        widened=[
            f.name
            for i, f in after.items()
            if i in before and not same_type(f.type, before[i].type)
        ],
        removed=[f.name for i, f in before.items() if i not in after],
    )
