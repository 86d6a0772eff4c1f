"""Applying committed catalog transactions to the tables' own Delta logs.

A transaction is committed once its catalog log entry is published; its tables' Delta commits
are written afterwards from the actions the entry records: one commit per table, at the version
the entry recorded, published with a put-if-absent and tagged with the transaction, so applying
an entry twice (a retry, or two processes racing) is harmless. Drops move the table folder.

Every committer applies the previous entry before publishing its own, and any process that
sees an entry not yet applied applies it, so at most the newest entry can be unapplied, and
only until the catalog is next used. Until then, readers through the catalog read the entry's
actions from the log (see ``tables.committed_table``).
"""

from __future__ import annotations

import json
import logging
from typing import TYPE_CHECKING, Any

from workbench.core.base.caches import process_cache
from workbench.core.base.errors import CatalogReadOnlyError, TableChangedOutsideError
from workbench.core.catalog.folders import (
    INCARNATION_TAG,
    dropped_key,
    folder_identity,
    live_key,
    move_folder,
)
from workbench.core.delta.commits import (
    TXN_TAG,
    TableActions,
    commit_file,
    read_commit_info,
    write_commit,
)
from workbench.core.delta.upkeep import request_checkpoint
from workbench.core.transactions.catalog_log import log_of
from workbench.core.transactions.catalog_state import NAMESPACE_DROPPED
from workbench.core.transactions.idempotency import keys_of

if TYPE_CHECKING:
    from workbench.core.catalog.catalogs import Catalog

# Table versions between Delta checkpoints (written in the background): a new process opening a
# table replays the JSON commits since the newest one, each read twice by deltalake (a first
# read on S3 after 300 appends: 122 requests 40 commits past one, 41 from one at the head).
# Writing one loads the table twice over: every 10 versions (Delta's default) slowed small
# commits on moto's S3 by ~15%, every 20 by ~5%.
CHECKPOINT_EVERY = 20
MOVED_FROM = "moved_from"  # details key: the folder a published branch table moves in from
_applied: dict[str, int] = {}  # catalog identity -> newest log sequence known applied here
process_cache(
    "transactions.rollforward", _applied.clear, forget=lambda identity: _applied.pop(identity, None)
)

log = logging.getLogger(__name__)


def apply_entry(catalog: Catalog, rows: list[dict[str, Any]]) -> None:
    """Write the table commits and drops of one committed log entry (idempotent)."""
    clashes: list[TableChangedOutsideError] = []
    for row in rows:
        if row["table_name"] is None:
            continue
        if row["table_version"] is None:
            _apply_drop(catalog, row)
        elif row["actions"] is not None:
            try:
                _apply_commit(catalog, row)
            except TableChangedOutsideError as e:  # the entry's other tables still get theirs
                clashes.append(e)
    for row in rows:
        if row["table_name"] is None and row["operation"] == NAMESPACE_DROPPED:
            _remove_empty_namespace(catalog, row["namespace"])
    if rows:
        _applied[catalog.identity] = max(_applied.get(catalog.identity, -1), rows[0]["sequence"])
    if clashes:
        raise clashes[0]


def _apply_commit(catalog: Catalog, row: dict[str, Any]) -> None:
    key = live_key(row["namespace"], row["table_name"])
    version, transaction = row["table_version"], row["transaction_id"]
    moved_from = json.loads(row["details"] or "{}").get(MOVED_FROM)
    if moved_from is not None:
        _move_in(catalog, key, row["incarnation"], moved_from)
    content = commit_file(
        TableActions.from_json(row["actions"]),
        transaction,
        row["sequence"],
        row["operation"],
        {INCARNATION_TAG: row["incarnation"]},
        keys_of(row["details"]),
        timestamp_ms=row["end_time"] // 1_000_000,
    )
    if not write_commit(catalog.storage, key, version, content):
        info = read_commit_info(catalog.storage, key, version) or {}
        if info.get(TXN_TAG) != transaction:
            raise TableChangedOutsideError(
                f"Version {version} of table {row['namespace']}.{row['table_name']} was written "
                f"outside workbench (by {info.get('engineInfo', 'another writer')}); the catalog "
                "recorded it for its own transaction. Restore the table folder from a backup."
            )
    if version and version % CHECKPOINT_EVERY == 0:
        _checkpoint(catalog, key)


def _move_in(catalog: Catalog, key: str, incarnation: str, source: str) -> None:
    """Make the folder of a table a branch created and published the table's live folder: the
    folder of the incarnation it replaces moves aside first (as a drop would move it)."""
    identity = folder_identity(catalog, key)
    if identity is not None and incarnation not in identity:
        move_folder(catalog, key, dropped_key(identity[1] or identity[0]))
    move_folder(catalog, source, key)


def _checkpoint(catalog: Catalog, key: str) -> None:
    """A Delta checkpoint, so readers replay at most ``CHECKPOINT_EVERY`` commits (written in
    the background: the commit stands without it)."""
    request_checkpoint(catalog.uri(*key.split("/")), catalog.storage.delta_options)


def _apply_drop(catalog: Catalog, row: dict[str, Any]) -> None:
    """Move a dropped table's live folder aside, if it still holds that incarnation."""
    key = live_key(row["namespace"], row["table_name"])
    identity = folder_identity(catalog, key)
    if identity is None:
        return  # never committed (created and dropped), or moved already
    transaction, incarnation = identity
    if row["incarnation"] in (incarnation, transaction) or _created_by(catalog, row, transaction):
        move_folder(catalog, key, dropped_key(row["incarnation"]))


def _created_by(catalog: Catalog, row: dict[str, Any], transaction: str) -> bool:
    """For folders made before incarnations were tagged: did ``transaction`` create the
    incarnation being dropped?"""
    return any(
        r["transaction_id"] == transaction and r["incarnation"] == row["incarnation"]
        for r in log_of(catalog).rows
    )


def _remove_empty_namespace(catalog: Catalog, namespace: str) -> None:
    import os

    if catalog.is_local:
        folder = catalog.storage.fs_path(namespace)
        if os.path.isdir(folder) and not os.listdir(folder):
            os.rmdir(folder)


def applied(catalog: Catalog, rows: list[dict[str, Any]]) -> bool:
    """True when every table commit and drop of an entry is in place."""
    for row in rows:
        unrecorded = row["actions"] is None and row["table_version"] is not None  # version 1 logs
        if row["table_name"] is None or unrecorded:
            continue
        key = live_key(row["namespace"], row["table_name"])
        if row["table_version"] is None:
            identity = folder_identity(catalog, key)
            if identity is not None and row["incarnation"] in identity:
                return False
        elif read_commit_info(catalog.storage, key, row["table_version"]) is None:
            return False
    return True


def roll_forward(catalog: Catalog) -> None:
    """Make sure the newest committed entry is applied to its tables (every earlier one is, by
    the committers). Read-only catalogs are left as they are: reads through the catalog do not
    need the tables' Delta commits. A branch's entries are never applied."""
    if catalog.record is not None:  # main too: where its tables' folders are now
        roll_forward(catalog.trunk)
        log_of(catalog).refresh()
        return
    entries = log_of(catalog)
    entries.refresh()
    rows = entries.last_entry
    if not rows or _applied.get(catalog.identity, -1) >= rows[0]["sequence"]:
        return
    if not applied(catalog, rows):
        try:
            with catalog.writing():
                apply_entry(catalog, rows)
        except CatalogReadOnlyError:
            return
        except TableChangedOutsideError as e:  # told once; the rest of the catalog works on
            log.warning("%s", e)
    _applied[catalog.identity] = rows[0]["sequence"]
