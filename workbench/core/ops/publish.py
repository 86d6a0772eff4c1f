"""Publishing a branch: replay what it changed since it last matched ``main`` onto ``main`` in
one catalog transaction, after checking ``main`` did not change the same tables (or, with
``rebase``, that both sides only appended rows to them)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import Any

from workbench.core.base.arguments import flag, text
from workbench.core.base.errors import (
    BranchConflictError,
    InvalidArgumentError,
)
from workbench.core.base.names import MAIN
from workbench.core.catalog.branch_records import (
    BranchRecord,
    created_table_key,
)
from workbench.core.catalog.catalogs import Catalog
from workbench.core.catalog.descriptions import html_table
from workbench.core.catalog.folders import live_path
from workbench.core.catalog.locations import Location, OpenTable, empty_table, locate_key
from workbench.core.delta.commits import TableActions
from workbench.core.ops.branches import PUBLISH, branch_lease, trunk_of
from workbench.core.transactions.catalog_log import log_of
from workbench.core.transactions.catalog_state import CatalogState, TableEntry
from workbench.core.transactions.context import operation
from workbench.core.transactions.idempotency import DETAILS_KEY
from workbench.core.transactions.net_actions import actions_between, creation_actions
from workbench.core.transactions.opening import committed_table
from workbench.core.transactions.rollforward import MOVED_FROM
from workbench.core.transactions.table_change import TableChange
from workbench.core.transactions.transaction import Transaction


@dataclass(frozen=True)
class MergeResult:
    """What publishing a branch did: the ``main`` transaction and the tables it changed."""

    branch: str
    transaction_id: str | None
    tables: list[str]
    rebased: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        if not self.tables:
            return f"Branch {self.branch!r} has nothing to publish."
        rebased = f" (rebased: {', '.join(self.rebased)})" if self.rebased else ""
        return (
            f"Published branch {self.branch!r} to main in transaction {self.transaction_id}: "
            f"{', '.join(self.tables)}{rebased}"
        )

    def _repr_html_(self) -> str:
        return html_table(
            {
                "branch": self.branch,
                "transaction": self.transaction_id or "-",
                "tables": ", ".join(self.tables) or "-",
                "rebased": ", ".join(self.rebased) or "-",
            },
            "wb-merge",
        )


def _carry_app_versions(txn: Transaction, branch: CatalogState, main: CatalogState) -> None:
    """Give ``main`` the idempotency versions the branch moved past ``main``'s, recorded as
    they are (no repeat check: a publish is not a batch of those apps), so a job that ran on
    the branch resumes on ``main`` where it left off."""
    moved = {app: v for app, v in branch.apps.items() if v > main.apps.get(app, -1)}
    if moved:
        txn.details[DETAILS_KEY] = {**moved, **txn.keys}


# ---------------------------------------------------------------------------------- publishing
@dataclass
class _Sync:
    """Where a table stood when the branch last matched ``main``: at the branch point, or
    at its last publish."""

    main: TableEntry | None
    branch: TableEntry | None


def merge_branch(
    name: str,
    into: str = MAIN,
    *,
    rebase: bool = False,
    commit_message: str | None = None,
    catalog: str | None = None,
) -> MergeResult:
    """Publish every table branch ``name`` changed since it started (or since its last
    publish) to ``main`` in one catalog transaction. If ``main`` changed one of those tables
    meanwhile, raise ``BranchConflictError`` naming them and publish nothing, unless
    ``rebase=True`` and both sides only appended rows to it (tables without merge keys):
    then the branch's new files go on top of ``main``'s. The branch stays; later work on it can
    be published again."""
    flag("rebase", rebase)
    text("commit_message", commit_message)
    if into != MAIN:
        raise InvalidArgumentError(
            f"into={into!r}: branches are published into 'main' (a branch starts from main and "
            "publishes back to it)."
        )
    trunk = trunk_of(catalog)
    if name == MAIN:
        raise InvalidArgumentError("'main' cannot be published into itself; name a branch.")
    bound = trunk.on_branch(name)
    assert bound.record is not None
    message = commit_message or f"Publish branch {name!r}"
    with branch_lease(trunk, bound.record), operation(trunk, message) as txn:
        return _publish(txn, bound, rebase)


def _publish(txn: Transaction, bound: Catalog, rebase: bool) -> MergeResult:
    record = bound.record
    assert record is not None
    branch_log = log_of(bound)
    head = branch_log.refresh()
    main_log = log_of(txn.catalog)
    synced, synced_namespaces = _sync_points(main_log.rows, record, branch_log.base)
    changed = sorted(
        key
        for key in set(synced) | set(head.tables)
        if head.tables.get(key) != synced.get(key, _Sync(None, None)).branch
    )
    txn.details.update({"branch": record.name, "branch_id": record.id})
    _carry_app_versions(txn, head, main_log.refresh())
    changes = {key: txn.lease_table(*key) for key in changed}  # main's writers queue behind
    conflicts, rebased = [], []
    for key in changed:
        sync, pinned = synced.get(key, _Sync(None, None)), changes[key].pinned
        if pinned == sync.main:
            continue
        if rebase and _commutes(txn, bound, key, sync, head.tables.get(key), pinned):
            rebased.append(key)
        else:
            conflicts.append(f"{key[0]}.{key[1]}")
    for ns in sorted(synced_namespaces - head.namespaces):  # dropped on the branch
        kept = [t for (n, t) in txn.state.tables if n == ns and (n, t) not in changes]
        if kept:
            conflicts.append(f"namespace {ns} (main added {', '.join(sorted(kept))})")
    if conflicts:
        raise BranchConflictError(
            f"Cannot publish branch {record.name!r}: main changed {conflicts} since the branch "
            "last matched it, and so did the branch. Nothing was published. Read both sides "
            f"with dc.diff(table, 'main', {record.name!r}); then re-apply the branch's change on "
            "main, drop the branch, or pass rebase=True where both sides only appended rows.",
            conflicts,
        )
    wanted = head.namespaces - synced_namespaces  # made on the branch, or holding its tables
    wanted |= {ns for (ns, name) in changed if head.tables.get((ns, name)) is not None}
    for ns in sorted(wanted):
        if not txn.has_namespace(ns):
            txn.change_namespace(ns, created=True)
    for key in changed:
        sync = synced.get(key, _Sync(None, None))
        _publish_table(txn, changes[key], bound, head.tables.get(key), sync)
    for ns in sorted(synced_namespaces - head.namespaces):
        if txn.has_namespace(ns):
            txn.change_namespace(ns, created=False)
    published = sorted(f"{ns}.{t}" for ns, t in changed)
    return MergeResult(record.name, txn.id, published, [f"{ns}.{t}" for ns, t in rebased])


def _sync_points(
    main_rows: list[dict[str, Any]], record: BranchRecord, base: CatalogState
) -> tuple[dict[tuple[str, str], _Sync], set[str]]:
    """Each table's entries on ``main`` and on the branch when they last matched: the base,
    then every earlier publish of this branch (its rows on ``main`` say so)."""
    synced = {key: _Sync(entry, entry) for key, entry in base.tables.items()}
    namespaces = set(base.namespaces)
    for row in main_rows:
        if row["sequence"] <= record.base_sequence or not row["details"]:
            continue
        details = json.loads(row["details"])
        if details.get("branch_id") != record.id:
            continue
        if row["table_name"] is None:
            (namespaces.discard if row["operation"] == "DROP_NAMESPACE" else namespaces.add)(
                row["namespace"]
            )
            continue
        key = (row["namespace"], row["table_name"])
        if row["table_version"] is None:
            synced[key] = _Sync(None, None)
        else:
            main = TableEntry(row["table_version"], row["incarnation"])
            synced[key] = _Sync(main, TableEntry(details["branch_version"], row["incarnation"]))
    return synced, namespaces


def last_matched(branch: Catalog, key: tuple[str, str]) -> TableEntry | None:
    """A table's entry on ``main`` when ``branch`` last matched it: at the branch point, or at
    the branch's last publish (None when ``main`` had no such table then)."""
    assert branch.record is not None
    synced, _ = _sync_points(log_of(branch.trunk).rows, branch.record, log_of(branch).base)
    return synced.get(key, _Sync(None, None)).main


def _open_on(txn: Transaction, line: Catalog, key: tuple[str, str], entry: TableEntry) -> OpenTable:
    """A table version of ``line`` (``main`` or the branch), located by the transaction."""
    loc: Location = locate_key(key[1], key[0], txn.catalog_name)
    return committed_table(replace(loc, catalog=line), entry)


def _commutes(
    txn: Transaction,
    bound: Catalog,
    key: tuple[str, str],
    sync: _Sync,
    head: TableEntry | None,
    latest: TableEntry | None,
) -> bool:
    """True when the branch's change and ``main``'s change to a table since they last matched
    both only add files to the same incarnation of a table without merge keys."""
    if head is None or latest is None or sync.main is None or sync.branch is None:
        return False
    if len({head.incarnation, latest.incarnation, sync.main.incarnation}) != 1:
        return False
    branch_head = _open_on(txn, bound, key, head)
    ours = actions_between(_open_on(txn, bound, key, sync.branch), branch_head)
    main = txn.catalog
    theirs = actions_between(_open_on(txn, main, key, sync.main), _open_on(txn, main, key, latest))
    folded = _folded_files(main, latest.incarnation, sync.main.version, latest.version)
    return (
        not branch_head.schema.merge_keys
        and not ours.removes
        and ours.protocol is None
        and set(theirs.removes) <= folded
        and theirs.metadata is None
        and theirs.protocol is None
    )


def _folded_files(main: Catalog, incarnation: str, since: int, until: int) -> set[str]:
    """Files ``main``'s commits of a table after version ``since`` up to ``until`` removed
    without changing rows (compaction, optimize: ``dataChange: false``); removing them leaves
    the rows a rebase publishes on top as they were."""
    log = log_of(main)
    folded: set[str] = set()
    for version in range(since + 1, until + 1):
        found = log.actions_for(incarnation, version)
        if found is None or found[1] is None:
            continue
        actions = TableActions.from_json(found[1])
        folded |= {p for p, a in actions.removes.items() if not a["remove"].get("dataChange")}
    return folded


def _publish_table(
    txn: Transaction,
    change: TableChange,
    bound: Catalog,
    head: TableEntry | None,
    sync: _Sync,
) -> None:
    """Stage one table's change on ``main``: drop it, create it from the branch's folder, or
    replay the branch's file changes onto it."""
    assert bound.record is not None
    key = (change.namespace, change.name)
    added, removed = _row_counts(bound, key, sync.branch)
    if head is None:
        if change.entry is not None:
            txn.drop(change)
            txn.describe(change, {"branch_version": None})
        return
    branch_table = _open_on(txn, bound, key, head)
    if change.pinned is None or change.pinned.incarnation != head.incarnation:
        _adopt(txn, change, branch_table, created_table_key(bound.record, head.incarnation))
    else:  # the branch's own change since it last matched main, on top of main's table
        assert sync.branch is not None
        since = _open_on(txn, bound, key, sync.branch)
        actions = actions_between(since, branch_table)
        txn.stage_actions(change, _in_publish_order(txn, actions, since, change.table))
    txn.record(change, PUBLISH, added, removed)
    txn.describe(change, {"branch_version": head.version})


def _in_publish_order(
    txn: Transaction, actions: TableActions, since: OpenTable, main: OpenTable
) -> TableActions:
    """The branch's ``actions`` (changing ``since``) timed for ``main``'s write order: the
    branch's new rows follow every row ``main`` holds, in the order the branch wrote them, as
    if appended at the publish; a file ``main`` holds keeps its time there, and a file the
    branch folded in place of one (compaction, optimize) takes that file's place."""
    on_main = {f.path: f.modified for f in main.files}
    placed = {f.modified: on_main[f.path] for f in since.files if f.path in on_main}
    stamps: dict[int, int] = {}
    for path, action in sorted(
        actions.adds.items(), key=lambda item: (item[1]["add"]["modificationTime"], item[0])
    ):
        add = action["add"]
        written = add["modificationTime"]
        if path in on_main:
            add["modificationTime"] = on_main[path]
        elif written in placed:
            add["modificationTime"] = placed[written]
        else:
            if written not in stamps:
                stamps[written] = txn.next_write_ms(main)
            add["modificationTime"] = stamps[written]
    return actions


def _row_counts(bound: Catalog, key: tuple[str, str], since: TableEntry | None) -> tuple[int, int]:
    """Rows the branch's transactions added and removed in a table since ``since``."""
    added = removed = 0
    for row in log_of(bound).rows:
        if (row["namespace"], row["table_name"]) != key or row["table_version"] is None:
            continue
        newer = since is None or row["incarnation"] != since.incarnation
        if newer or row["table_version"] > since.version:
            added += row["rows_added"] or 0
            removed += row["rows_removed"] or 0
    return added, removed


def _adopt(txn: Transaction, change: TableChange, table: OpenTable, moved_from: str) -> None:
    """Make ``table``, which a branch created in the folder ``moved_from``, what ``change``
    commits: the same incarnation at version 0 of the live folder, which the folder moves to
    when the commit is applied (replacing another incarnation of the name)."""
    change.incarnation, change.version = table.incarnation, 0
    change.actions = TableActions()
    live = live_path(txn.catalog, change.namespace, change.name)
    change.table = empty_table(change.table.loc, live, table.incarnation)
    txn.stage_actions(change, creation_actions(replace(table, uri=live)))
    txn.describe(change, {MOVED_FROM: moved_from})
