"""Catalog branches: try changes on the whole catalog in isolation, then publish them to ``main``
in one catalog transaction, or drop them.

Creating a branch saves the ``main`` state it starts from and copies no data file. Work on the
branch commits to the branch's own log (see ``BranchLog``); its new data files are written
beside ``main``'s in the table folders (or, for tables it creates, in a folder of its own) and
no table's Delta log ever names them, so readers of ``main`` and of the table folders do not see
them. Publishing replays what the branch changed, table by table, onto ``main``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any

from workbench.core.base.arguments import flag, text
from workbench.core.base.errors import (
    BranchAlreadyExistsError,
    BranchConflictError,
    InvalidArgumentError,
    TransactionError,
)
from workbench.core.base.names import MAIN, validate_branch_name
from workbench.core.catalog.branches import (
    BRANCHES_KEY,
    BranchRecord,
    base_key,
    branch_key,
    created_table_key,
    leased_name,
    line_key,
    new_record,
    read_record,
    record_key,
    records,
)
from workbench.core.catalog.catalogs import Catalog
from workbench.core.catalog.descriptions import html_table
from workbench.core.catalog.folders import remove_folder
from workbench.core.catalog.registry import catalog_name
from workbench.core.catalog.scope import (
    branch_scope,
    current_branch,
    leave_branch,
    main_catalog,
    set_default_branch,
)
from workbench.core.catalog.tables import Location, OpenTable, locate_key
from workbench.core.delta.commits import TableActions
from workbench.core.delta.vector_descriptor import Descriptor
from workbench.core.storage import leases
from workbench.core.transactions.catalog_log import CatalogState, TableEntry, log_of
from workbench.core.transactions.context import current_transaction, operation
from workbench.core.transactions.net_actions import actions_between
from workbench.core.transactions.opening import committed_table, table_uri
from workbench.core.transactions.rollforward import settle
from workbench.core.transactions.time_travel import state_as_of
from workbench.core.transactions.transaction import TableChange, Transaction, new_transaction_id

PUBLISH = "MERGE_BRANCH"
TableVersions = dict[tuple[str, str, str], set[int]]  # (namespace, table, incarnation) -> versions
BRANCH_LEASE = "_branches"  # lease namespace: publishing and dropping a branch queue on it


@dataclass(frozen=True)
class Branch:
    """A line of the catalog: ``main``, or a branch with the point it started from."""

    name: str
    catalog: str
    base_transaction: str | None = None  # main's transaction the branch started after
    created_ns: int | None = None
    source: str = ""
    transactions: int = 0  # commits on the branch
    tables_changed: list[str] = field(default_factory=list)
    current: bool = False

    def _summary(self) -> dict[str, Any]:
        return {
            "branch": self.name + (" (current)" if self.current else ""),
            "catalog": self.catalog,
            "from": self.source or "-",
            "transactions": self.transactions,
            "tables changed": ", ".join(self.tables_changed) or "-",
        }

    def __str__(self) -> str:
        return "\n".join(f"{k}: {v}" for k, v in self._summary().items())

    def _repr_html_(self) -> str:
        return html_table(self._summary(), "wb-branch")


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


# ------------------------------------------------------------------------------ create / list
def create_branch(name: str, from_: Any = None, catalog: str | None = None) -> Branch:
    """Create branch ``name`` of a catalog from ``main``'s latest state, or from a past one
    (``from_``: a tag, transaction id, time or ns, as ``as_of`` takes). No data is copied."""
    trunk = _trunk(catalog)
    name = validate_branch_name(name, trunk.max_name_length)
    if name.lower() == MAIN:
        raise BranchAlreadyExistsError(
            f"{name!r}: 'main' is the catalog's own line and always exists, and a branch named "
            "like it in another case would be mistaken for it; name the branch otherwise."
        )
    _refuse_case_twin(trunk, name)
    in_use = current_branch(trunk)
    if in_use != MAIN:
        raise InvalidArgumentError(
            f"Branches start from a state of main, and calls here use branch {in_use!r} (a "
            f"dc.branch block or dc.use_branch); create branch {name!r} outside the block, or "
            "after dc.use_branch('main'), with from_= a tag, transaction id or time of main."
        )
    if from_ is None:
        settle(trunk)
        state = log_of(trunk).state
    else:
        state = state_as_of(trunk, from_)
    record = new_record(
        name,
        new_transaction_id(),
        state.sequence,
        state.end_time,
        MAIN if from_ is None else f"{MAIN} as of {from_}",
    )
    with trunk.writing():
        trunk.storage.put(base_key(record), state.encode(state.sequence))
        if not trunk.storage.put_if_absent(record_key(name), record.encode()):
            remove_folder(trunk, line_key(record))
            raise BranchAlreadyExistsError(
                f"Branch {name!r} already exists in catalog {trunk.root!r}; use it with "
                f"dc.branch({name!r}), or drop it first with dc.drop_branch({name!r})."
            )
    return _describe(trunk, record)


def _refuse_case_twin(trunk: Catalog, name: str) -> None:
    """Refuse a name that differs from an existing branch's only in case: their folders would
    be one folder on a case-insensitive disk."""
    for record in records(trunk.storage):
        if record.name != name and record.name.lower() == name.lower():
            raise BranchAlreadyExistsError(
                f"Branch {record.name!r} exists, and {name!r} differs from it only in case, "
                "which case-insensitive disks cannot tell apart; name the branch otherwise."
            )


def branches(catalog: str | None = None) -> list[Branch]:
    """``main`` and every branch of a catalog, oldest first, with what each changed."""
    trunk = _trunk(catalog)
    found = [Branch(MAIN, catalog_name(trunk), current=current_branch(trunk) == MAIN)]
    for record in records(trunk.storage):
        found.append(_describe(trunk, record))
    return found


def changed_tables(bound: Catalog) -> list[tuple[str, str]]:
    """The (namespace, table) pairs a branch (its catalog line) changed since it started."""
    log = log_of(bound)
    head, base = log.refresh(), log.base
    return sorted(
        k for k in set(head.tables) | set(base.tables) if head.tables.get(k) != base.tables.get(k)
    )


def _describe(trunk: Catalog, record: BranchRecord) -> Branch:
    bound = trunk.on_record(record)
    changed = [f"{ns}.{t}" for ns, t in changed_tables(bound)]
    return Branch(
        record.name,
        catalog_name(trunk),
        _transaction_at(trunk, record.base_sequence),
        record.created_ns,
        record.source,
        log_of(bound).version + 1,
        changed,
        current_branch(trunk) == record.name,
    )


def _transaction_at(trunk: Catalog, sequence: int) -> str | None:
    """The id of ``main``'s transaction with ``sequence`` (the newest one needs no history)."""
    if sequence < 0:
        return None
    main = log_of(trunk)
    rows = main.last_entry if main.state.sequence == sequence else main.rows
    return next((r["transaction_id"] for r in rows if r["sequence"] == sequence), None)


def _trunk(catalog: str | None) -> Catalog:
    """The ``main`` line of a catalog (branch operations are outside transactions)."""
    if current_transaction() is not None:
        raise TransactionError(
            "Branches are created, dropped and published outside transactions; leave the "
            "`with dc.transaction()` block first."
        )
    return main_catalog(catalog)


# ----------------------------------------------------------------------------------- working on
@contextmanager
def branch(name: str, catalog: str | None = None) -> Iterator[Branch]:
    """A block whose reads, writes and transactions use branch ``name`` (``main`` included):
    ``with dc.branch("exp"): dc.write(df, "t")``."""
    trunk = main_catalog(catalog)
    bound = trunk.on_branch(name)
    with branch_scope(name, trunk):
        if bound.record is None:
            yield Branch(name, catalog_name(trunk), current=True)
        else:
            yield _describe(trunk, bound.record)


def use_branch(name: str, catalog: str | None = None) -> None:
    """Make ``name`` the branch every later call on a catalog (the default one) uses when it
    names none, for the rest of the session (``main`` to go back); ``dc.branch`` is the same
    for a block."""
    set_default_branch(name, catalog)


# ------------------------------------------------------------------------------------ dropping
def drop_branch(name: str, catalog: str | None = None) -> None:
    """Drop a branch: its log, tags and the data files it wrote that ``main`` does not use
    (what it published stays). Work in progress on it elsewhere fails to commit."""
    trunk = _trunk(catalog)
    if name == MAIN:
        raise InvalidArgumentError("'main' is the catalog's own line; it cannot be dropped.")
    bound = trunk.on_branch(name)
    record = bound.record
    assert record is not None
    with _branch_lease(trunk, record), trunk.writing():
        written = _branch_files(bound)
        trunk.storage.delete(record_key(name))  # the branch is gone from here on
        trunk.forget_branch(name)
        leave_branch(trunk, name)
        _free(trunk, written)
        remove_folder(trunk, line_key(record))
        if not trunk.storage.list(branch_key(name)):
            remove_folder(trunk, branch_key(name))


def _branch_files(bound: Catalog) -> dict[tuple[str, str, str], set[str]]:
    """Files (data and deletion vectors) the branch's transactions added, by (namespace,
    table, incarnation), relative to the table folder."""
    files: dict[tuple[str, str, str], set[str]] = {}
    log = log_of(bound)
    log.refresh()
    for row in log.rows:
        if row["actions"] is not None:
            key = (row["namespace"], row["table_name"], row["incarnation"])
            files.setdefault(key, set()).update(_added_files(row["actions"]))
    return files


def _added_files(actions: str) -> set[str]:
    """The files a log row's actions add: data files and their deletion vectors' files."""
    found = set()
    for path, action in TableActions.from_json(actions).adds.items():
        found.add(path)
        vector = action["add"].get("deletionVector")
        if vector and not Descriptor.from_action(vector).inline:
            found.add(Descriptor.from_action(vector).file_name())
    return found


def branch_needs(trunk: Catalog) -> tuple[TableVersions, dict[str, set[str]]]:
    """What the live branches need of the table folders, so vacuum keeps it: the ``main``
    versions each branch started from, by (namespace, table, incarnation), and the files each
    branch wrote, by incarnation."""
    versions: TableVersions = {}
    files: dict[str, set[str]] = {}
    for record in records(trunk.storage):
        bound = trunk.on_record(record)
        log = log_of(bound)
        log.refresh()
        for (ns, table), entry in log.base.tables.items():
            versions.setdefault((ns, table, entry.incarnation), set()).add(entry.version)
        for (ns, table), entry in log.state.tables.items():  # e.g. a table it created: its
            versions.setdefault((ns, table, entry.incarnation), set())  # folder is needed
        for (_, _, incarnation), paths in _branch_files(bound).items():
            files.setdefault(incarnation, set()).update(paths)
    return versions, files


@contextmanager
def branch_writers_held(
    trunk: Catalog, tables: Iterable[tuple[str, str]], holder: str
) -> Iterator[set[tuple[str, str]]]:
    """Take every live branch's lease on ``tables`` without waiting, so no branch writer
    stages files in their folders meanwhile; yield the tables a branch writer holds now
    (vacuum leaves their folders alone this time). The leases taken go back at the end."""
    taken: list[tuple[str, str]] = []
    busy: set[tuple[str, str]] = set()
    since = time.time_ns()
    try:
        for record in records(trunk.storage):
            for namespace, table in sorted(tables):
                name = leased_name(table, record)
                if leases.try_acquire(trunk.storage, namespace, name, holder, since):
                    taken.append((namespace, name))
                else:
                    busy.add((namespace, table))
        yield busy
    finally:
        for namespace, name in taken:
            leases.release(trunk.storage, namespace, name, holder)


def remove_dropped_branch_folders(trunk: Catalog, dry_run: bool) -> list[str]:
    """Folders of branches whose drop was cut short (no record names them any more)."""
    removed = []
    for name in trunk.storage.folders(BRANCHES_KEY):
        record = read_record(trunk.storage, name)
        for branch_id in trunk.storage.folders(branch_key(name)):
            if record is None or branch_id != record.id:
                removed.append(f"{name}/{branch_id}")
                if not dry_run:
                    remove_folder(trunk, f"{branch_key(name)}/{branch_id}")
    return removed


def _free(trunk: Catalog, written: dict[tuple[str, str, str], set[str]]) -> None:
    """Delete a dropped branch's files in tables ``main`` holds, unless ``main`` uses them."""
    main_log = log_of(trunk)
    main_log.refresh()
    for (ns, table, incarnation), paths in written.items():
        rows = [r for r in main_log.rows if r["incarnation"] == incarnation]
        if not rows or any(r["actions"] is None and r["table_version"] is not None for r in rows):
            continue  # a table only the branch had (its folder goes), or an old log: vacuum
        used = {path for r in rows if r["actions"] for path in _added_files(r["actions"])}
        folder = table_uri(trunk, ns, table, TableEntry(0, incarnation))
        base = trunk.root.rstrip("/") + "/"
        for path in paths - used:
            if "://" not in path and not path.startswith("/"):
                trunk.storage.delete(f"{folder.removeprefix(base)}/{path}")


@contextmanager
def _branch_lease(trunk: Catalog, record: BranchRecord) -> Iterator[None]:
    """Hold the branch's lease, so a publish and a drop of one branch never overlap."""
    holder = new_transaction_id()
    with trunk.writing():
        leases.acquire(trunk.storage, BRANCH_LEASE, record.name, holder, time.time_ns())
    try:
        yield
    finally:
        leases.release(trunk.storage, BRANCH_LEASE, record.name, holder)


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
    trunk = _trunk(catalog)
    if name == MAIN:
        raise InvalidArgumentError("'main' cannot be published into itself; name a branch.")
    bound = trunk.on_branch(name)
    assert bound.record is not None
    message = commit_message or f"Publish branch {name!r}"
    with _branch_lease(trunk, bound.record), operation(trunk, message) as txn:
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
    changes = {key: txn.touch_table(*key) for key in changed}  # main's writers queue behind
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
    return (
        not branch_head.schema.merge_keys
        and not ours.removes
        and ours.protocol is None
        and not theirs.removes
        and theirs.metadata is None
        and theirs.protocol is None
    )


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
        txn.adopt(change, branch_table, created_table_key(bound.record, head.incarnation))
    else:  # the branch's own change since it last matched main, on top of main's table
        assert sync.branch is not None
        since = _open_on(txn, bound, key, sync.branch)
        txn.stage_actions(change, actions_between(since, branch_table))
    txn.record(change, PUBLISH, added, removed)
    txn.describe(change, {"branch_version": head.version})


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
