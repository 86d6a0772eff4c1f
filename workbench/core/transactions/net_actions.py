"""The Delta actions that turn one version of a table into another: what a repair undoes, and
what publishing a branch replays onto ``main``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from workbench.core.delta.commits import (
    TableActions,
    kept_add_action,
    metadata_action,
    protocol_action,
    remove_action,
)

if TYPE_CHECKING:
    from workbench.core.catalog.locations import OpenTable


def actions_between(old: OpenTable, new: OpenTable) -> TableActions:
    """Removes of the files only ``old`` has, adds of the files only ``new`` has (a file whose
    deletion vector changed is both), and ``new``'s metadata and protocol where they differ."""
    old_files = {f.identity for f in old.files}
    new_files = {f.identity for f in new.files}
    actions = TableActions(
        removes={f.path: remove_action(f) for f in old.files if f.identity not in new_files}
    )
    for f in new.files:
        if f.identity not in old_files:
            actions.adds[f.path] = kept_add_action(f, f.deletion_vector)
    if (old.schema, old.properties) != (new.schema, new.properties):
        actions.metadata = metadata_action(new.schema, new.properties, new.table_id or None)
    if (old.reader_version, old.reader_features) != (new.reader_version, new.reader_features):
        actions.protocol = protocol_action(new.schema, new.properties)
    return actions


def creation_actions(table: OpenTable) -> TableActions:
    """The actions that create ``table`` as a version 0 of its own: protocol, metadata and
    every file it holds."""
    actions = TableActions(
        protocol_action(table.schema, table.properties),
        metadata_action(table.schema, table.properties, table.table_id or None),
    )
    for f in table.files:
        actions.adds[f.path] = kept_add_action(f, f.deletion_vector)
    return actions
