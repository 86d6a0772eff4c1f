"""The folders a transaction's table changes write to: a new table's live folder on ``main``
(cleared of what a writer that died left there) or a folder of the branch's own; the Delta
version a commit writes; undoing versions written outside the catalog; and removing the folder of
a table a transaction made but did not commit."""

from __future__ import annotations

import json
import os
from contextlib import suppress
from typing import TYPE_CHECKING

from workbench.core.catalog.branch_records import BRANCH_TABLE_MARKER, created_table_key
from workbench.core.catalog.folders import (
    dropped_key,
    folder_identity,
    live_key,
    live_path,
    move_folder,
    remove_folder,
)
from workbench.core.delta.commits import commit_key
from workbench.core.delta.table_cache import head_version
from workbench.core.transactions.catalog_log import log_of
from workbench.core.transactions.net_actions import actions_between

if TYPE_CHECKING:
    from workbench.core.catalog.catalogs import Catalog
    from workbench.core.catalog.locations import OpenTable
    from workbench.core.transactions.table_change import TableChange


def new_table_folder(catalog: Catalog, namespace: str, name: str, incarnation: str) -> str:
    """The folder a table created by a transaction is written to: its live folder on
    ``main`` (cleared of leftovers), a folder of the branch's own on a branch."""
    if catalog.record is None:
        clear_free_name(catalog, namespace, name)
        return live_path(catalog, namespace, name)
    key = created_table_key(catalog.record, incarnation)
    with catalog.writing():
        marker = json.dumps({"namespace": namespace, "table": name}).encode()
        catalog.storage.put(f"{key}/{BRANCH_TABLE_MARKER}", marker)
    return catalog.uri(*key.split("/"))


def next_version(catalog: Catalog, table: OpenTable, recorded: int) -> int:
    """The Delta version this transaction's commit of a live table will write: the one
    after the recorded version, or after versions someone wrote outside the catalog."""
    folder = live_key(table.loc.namespace, table.loc.name)
    if catalog.record is not None:  # a branch's versions are only in its log
        return recorded + 1
    if not catalog.storage.exists(commit_key(folder, recorded + 1)):
        return recorded + 1  # one existence check instead of listing the Delta log
    return max(head_version(table.uri, table.incarnation, table.storage_options), recorded) + 1


def repair(change: TableChange, head: int) -> None:
    """Stage undoing the versions someone wrote into the table's Delta log outside the
    catalog (after the recorded one), so the change's commit builds on what the
    catalog recorded."""
    from workbench.core.catalog.locations import from_delta
    from workbench.core.delta.table_cache import at_version

    recorded = change.table
    found = from_delta(
        recorded.loc,
        recorded.uri,
        change.incarnation,
        at_version(recorded.uri, change.incarnation, head, recorded.storage_options),
    )
    change.actions = actions_between(found, recorded)


def clear_free_name(catalog: Catalog, namespace: str, name: str) -> None:
    """Clear a folder left at a free table name (the lease is held): files staged by a
    writer that died, or a dropped table whose folder was never moved."""
    key = live_key(namespace, name)
    if not catalog.storage.list(key):
        return
    identity = folder_identity(catalog, key)
    committed = identity and {
        r["incarnation"]
        for r in log_of(catalog).rows
        if r["namespace"] == namespace
        and r["table_name"] == name
        and (r["incarnation"] == identity[1] or r["transaction_id"] == identity[0])
    }
    if committed:
        move_folder(catalog, key, dropped_key(committed.pop()))
    else:
        remove_folder(catalog, key)


def remove_new_folder(catalog: Catalog, change: TableChange) -> None:
    """Remove the folder of a table a transaction made and did not commit: a branch's
    whole folder for it; on ``main``, the live folder if nothing else is in it."""
    if catalog.record is not None:
        remove_folder(catalog, created_table_key(catalog.record, change.incarnation))
    elif catalog.is_local:
        folder = live_key(change.namespace, change.name)
        _remove_if_empty(catalog.storage.fs_path(folder))


def _remove_if_empty(folder: str) -> None:
    """Remove a folder a transaction made for a table it then did not create, with its empty
    subfolders (a Spark or Daft write's own folder); folders holding files stay."""
    for parent, _, _ in os.walk(folder, topdown=False):
        with suppress(OSError):
            os.rmdir(parent)
