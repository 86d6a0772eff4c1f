"""Catalog transactions: many table and namespace changes made visible together, or not at all.

A transaction pins the catalog state when it starts. Its writes go to the Delta tables at once,
each Delta commit tagged with the transaction id, but readers through the catalog only see table
versions that the catalog log records, so nothing is visible before the log commit. At commit,
under the catalog's commit lock, the transaction checks that no table it read or wrote changed
since it started and that the table versions after its pinned ones are all its own, then appends
its rows to the log. A transaction that fails or is killed leaves tagged versions behind; the
next writer of such a table restores it to the recorded version before writing.
"""

from __future__ import annotations

import os
import secrets
import shutil
import time
from contextlib import suppress
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from workbench.core.engine import DEFAULT_ENGINE
from workbench.core.errors import TransactionConflictError, TransactionError
from workbench.core.handles import forget
from workbench.core.layout import (
    committed_incarnation,
    dropped_path,
    folder_creator,
    live_path,
)
from workbench.core.lock import (
    claim_table,
    commit_lock,
    is_active,
    register_active,
    release_tables,
    unregister_active,
)
from workbench.core.recovery import owners, repair_versions
from workbench.core.txlog import (
    NAMESPACE_CREATED,
    NAMESPACE_DROPPED,
    CatalogState,
    TableEntry,
    log_of,
)

if TYPE_CHECKING:
    from workbench.core.catalog import Catalog


def new_transaction_id() -> str:
    """A unique, fixed-length id that sorts by creation time (transactions, incarnations)."""
    return f"{time.time_ns():016x}{secrets.token_hex(6)}"


@dataclass
class TableChange:
    """What a transaction did to one table."""

    namespace: str
    name: str
    incarnation: str
    pinned: TableEntry | None  # the committed entry when the transaction first touched it
    version: int | None  # latest Delta version of this table as the transaction sees it
    base: int | None = None  # Delta head when claimed; later versions must all be ours
    operations: list[str] = field(default_factory=list)
    engines: list[str] = field(default_factory=list)
    rows_added: int = 0
    rows_removed: int = 0
    dropped: bool = False

    @property
    def entry(self) -> TableEntry | None:
        """The table as this transaction sees it (None when absent or dropped)."""
        if self.dropped or self.version is None:
            return None
        return TableEntry(self.version, self.incarnation)


class Transaction:
    """One catalog transaction; use ``dc.transaction()`` rather than creating it directly."""

    def __init__(
        self,
        catalog: Catalog,
        catalog_name: str,
        commit_message: str | None = None,
        state: CatalogState | None = None,
        read_only: bool = False,
    ):
        self.catalog = catalog
        self.catalog_name = catalog_name
        self.id = new_transaction_id()
        self.start_time = time.time_ns()
        self.commit_message = commit_message
        self.state = state if state is not None else log_of(catalog).refresh()
        self.read_only = read_only
        self.reads: dict[tuple[str, str], TableEntry | None] = {}
        self.changes: dict[tuple[str, str], TableChange] = {}
        self.namespace_changes: dict[str, str] = {}
        self.closed = False
        self.claimed: list[tuple[str, str]] = []
        self._registered = False

    # ----------------------------------------------------------------------------- what it sees
    def entry(self, namespace: str, name: str) -> TableEntry | None:
        """The table as this transaction sees it; remembers the read for conflict checks."""
        key = (namespace, name)
        if key in self.changes:
            return self.changes[key].entry
        found = self.state.tables.get(key)
        self.reads.setdefault(key, found)
        return found

    def has_namespace(self, namespace: str) -> bool:
        """True when the namespace exists in this transaction's view."""
        change = self.namespace_changes.get(namespace)
        if change is not None:
            return change == NAMESPACE_CREATED
        return namespace in self.state.namespaces

    def namespaces(self) -> list[str]:
        """Namespaces in this transaction's view, sorted."""
        names = set(self.state.namespaces)
        for ns, change in self.namespace_changes.items():
            (names.add if change == NAMESPACE_CREATED else names.discard)(ns)
        return sorted(names)

    def table_names(self, namespace: str) -> list[str]:
        """Tables of a namespace in this transaction's view, sorted."""
        names = {n for (ns, n) in self.state.tables if ns == namespace}
        names |= {n for (ns, n) in self.changes if ns == namespace}
        return sorted(n for n in names if self.entry(namespace, n) is not None)

    # ------------------------------------------------------------------------------ making changes
    def require_writable(self) -> None:
        """Raise unless this transaction may change the catalog."""
        if self.closed:
            raise TransactionError(f"Transaction {self.id} is already closed; start a new one.")
        if self.read_only:
            raise TransactionError(
                "This transaction reads the catalog as of a past point and cannot write; leave "
                "the `with dc.transaction(as_of=...)` block to write."
            )
        if not self._registered:
            with self.catalog.writing():
                register_active(self.catalog, self.id)
            self._registered = True

    def touch_table(self, namespace: str, name: str) -> TableChange:
        """Prepare to change a table: check for conflicts and repair abandoned versions."""
        self.require_writable()
        key = (namespace, name)
        if key in self.changes:
            change = self.changes[key]
            if change.dropped:
                raise TransactionError(
                    f"Table {namespace}.{name} was dropped in this transaction; commit first, "
                    "then create it again in a new transaction."
                )
            return change
        with commit_lock(self.catalog, self.id):
            committed = log_of(self.catalog).refresh().tables.get(key)
            if committed != self.state.tables.get(key):
                raise self._conflict(f"table {namespace}.{name} was changed by another transaction")
            holder = claim_table(self.catalog, namespace, name, self.id)
            if holder is not None:
                raise self._conflict(f"transaction {holder} is writing table {namespace}.{name}")
            self.claimed.append(key)
            path = live_path(self.catalog, namespace, name)
            head = None
            if committed is None:
                self._clear_orphan(path, namespace, name)
            else:
                head = repair_versions(
                    path, committed.incarnation, committed.version, self.id, self.catalog
                )
        change = TableChange(
            namespace,
            name,
            incarnation=committed.incarnation if committed else new_transaction_id(),
            pinned=committed,
            version=head,
            base=head,
        )
        self.changes[key] = change
        return change

    def _clear_orphan(self, path: str, namespace: str, name: str) -> None:
        """Remove a folder left at a free table name by a create that never committed."""
        if not os.path.isdir(path):
            return
        owner = folder_creator(path)
        if owner and owner != self.id and is_active(self.catalog, owner):
            raise self._conflict(f"another transaction is creating table {namespace}.{name}")
        incarnation = committed_incarnation(self.catalog, owner, namespace, name)
        if incarnation:
            # a dropped table whose folder move was interrupted: finish the move
            os.makedirs(os.path.dirname(dropped_path(self.catalog, incarnation)), exist_ok=True)
            os.replace(path, dropped_path(self.catalog, incarnation))
        else:
            shutil.rmtree(path)
        forget(path)

    def record(
        self,
        change: TableChange,
        operation: str | None,
        version: int,
        added: int = 0,
        removed: int = 0,
        engine: str | None = None,
    ) -> None:
        """Note that a change to a table produced Delta ``version``: the one way engines and
        helpers record what they did. ``operation`` names it in the log (None for an
        intermediate step, e.g. adding columns before a write); ``engine`` says who wrote."""
        if operation is not None:
            change.operations.append(operation)
        if engine is not None and engine not in change.engines:
            change.engines.append(engine)
        change.version = version
        change.rows_added += added
        change.rows_removed += removed

    def drop(self, change: TableChange) -> None:
        """Drop a table at commit."""
        change.operations.append("DROP_TABLE")
        change.dropped = True

    def change_namespace(self, namespace: str, created: bool) -> None:
        """Create or drop a namespace at commit."""
        self.require_writable()
        if created:
            os.makedirs(os.path.join(self.catalog.root, namespace), exist_ok=True)
        self.namespace_changes[namespace] = NAMESPACE_CREATED if created else NAMESPACE_DROPPED

    # ----------------------------------------------------------------------------- commit / abort
    def commit(self) -> None:
        """Make every change visible at once, or raise ``TransactionConflictError``."""
        if self.closed:
            return
        rows = []
        try:
            if self.changes or self.namespace_changes:
                with commit_lock(self.catalog, self.id):
                    log = log_of(self.catalog)
                    latest = log.refresh()
                    self._check(latest)
                    rows = self._rows(log.next_sequence(), max(time.time_ns(), latest.end_time + 1))
                    if rows:
                        log.append(rows)
                    release_tables(self.catalog, self.claimed, self.id)
        except BaseException:
            self.abort()
            raise
        self.closed = True
        self._finish_drops()
        self._unregister()

    def _check(self, latest: CatalogState) -> None:
        for key, seen in self.reads.items():
            if latest.tables.get(key) != seen:
                raise self._conflict(f"table {key[0]}.{key[1]} changed after it was read")
        for key, change in self.changes.items():
            if latest.tables.get(key) != change.pinned:
                raise self._conflict(f"table {key[0]}.{key[1]} changed after it was first written")
            if change.version is not None:
                start = change.base + 1 if change.base is not None else 0
                path = live_path(self.catalog, *key)
                if owners(path, change.incarnation, start, change.version) - {self.id}:
                    raise self._conflict(f"another writer committed to table {key[0]}.{key[1]}")
        for ns, kind in self.namespace_changes.items():
            if kind == NAMESPACE_DROPPED:
                others = [n for (s, n) in latest.tables if s == ns and (s, n) not in self.changes]
                if others:
                    raise self._conflict(f"namespace {ns} gained tables {others}")

    def _rows(self, sequence: int, end_time: int) -> list[dict[str, Any]]:
        common = {
            "transaction_id": self.id,
            "sequence": sequence,
            "start_time": self.start_time,
            "end_time": end_time,
            "commit_message": self.commit_message,
            "status": "COMMITTED",
        }

        def namespace_rows(kind: str) -> list[dict[str, Any]]:
            empty = dict.fromkeys(("table_name", "table_version", "incarnation", "details"))
            return [
                {
                    **common,
                    **empty,
                    "operation": kind,
                    "namespace": ns,
                    "rows_added": 0,
                    "rows_removed": 0,
                    "engine": None,
                }
                for ns, change in self.namespace_changes.items()
                if change == kind
            ]

        rows = namespace_rows(NAMESPACE_CREATED)  # first, so tables' namespaces exist
        for change in self.changes.values():
            if change.pinned is None and change.entry is None:
                continue  # created and dropped (or never written) inside this transaction
            if not change.operations:
                continue
            rows.append(
                {
                    **common,
                    "operation": "+".join(dict.fromkeys(change.operations)),
                    "namespace": change.namespace,
                    "table_name": change.name,
                    "table_version": None if change.dropped else change.version,
                    "incarnation": change.incarnation,
                    "rows_added": change.rows_added,
                    "rows_removed": change.rows_removed,
                    "engine": "+".join(change.engines) or DEFAULT_ENGINE,
                    "details": None,
                }
            )
        rows += namespace_rows(NAMESPACE_DROPPED)
        return rows

    def _finish_drops(self) -> None:
        for change in self.changes.values():
            path = live_path(self.catalog, change.namespace, change.name)
            if change.dropped and os.path.isdir(path):
                if change.pinned is None:
                    shutil.rmtree(path)
                else:
                    target = dropped_path(self.catalog, change.incarnation)
                    os.makedirs(os.path.dirname(target), exist_ok=True)
                    os.replace(path, target)
                forget(path)
        for ns, kind in self.namespace_changes.items():
            folder = os.path.join(self.catalog.root, ns)
            if kind == NAMESPACE_DROPPED and os.path.isdir(folder) and not os.listdir(folder):
                os.rmdir(folder)

    def abort(self) -> None:
        """Undo every table change of this transaction; nothing of it ever became visible."""
        if self.closed:
            return
        self.closed = True
        try:
            touched = [key for key, change in self.changes.items() if change.operations]
            if touched or self.claimed:
                with commit_lock(self.catalog, self.id):
                    latest = log_of(self.catalog).refresh()
                    for key in touched:
                        self._undo(key, latest.tables.get(key))
                    release_tables(self.catalog, self.claimed, self.id)
        finally:
            self._unregister()

    def _undo(self, key: tuple[str, str], committed: TableEntry | None) -> None:
        path = live_path(self.catalog, *key)
        if not os.path.isdir(path):
            return
        if committed is None:
            if folder_creator(path) == self.id:
                shutil.rmtree(path)
                forget(path)
            return
        # A running transaction that wrote on top will conflict; the next writer repairs then.
        with suppress(TransactionConflictError):
            repair_versions(
                path,
                committed.incarnation,
                committed.version,
                None,
                self.catalog,
                allowed_owner=self.id,
            )

    def _unregister(self) -> None:
        if self._registered:
            unregister_active(self.catalog, self.id)
            self._registered = False

    def _conflict(self, reason: str) -> TransactionConflictError:
        return TransactionConflictError(
            f"Transaction {self.id} conflicts: {reason}. Nothing of it was committed; run it "
            "again (dc.run_transaction(fn, retries=...) retries automatically)."
        )

    def __repr__(self) -> str:
        mode = "read-only" if self.read_only else "read-write"
        return f"Transaction({self.id}, {mode}, catalog={self.catalog_name!r})"
