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

import hashlib
import os
import secrets
import shutil
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from workbench.core.arguments import seconds, text, whole_number
from workbench.core.errors import InvalidArgumentError, TransactionConflictError, TransactionError
from workbench.core.handles import forget, latest
from workbench.core.lock import (
    claim_table,
    commit_lock,
    is_active,
    register_active,
    release_tables,
    unregister_active,
)
from workbench.core.txlog import (
    NAMESPACE_CREATED,
    NAMESPACE_DROPPED,
    CatalogState,
    TableEntry,
    log_of,
)

if TYPE_CHECKING:
    from workbench.core.catalog import Catalog

TXN_TAG = "workbench.txn"
DROPPED_DIR = ("_workbench", "dropped")
MAX_BACKOFF_S = 0.5
MAX_ID_LENGTH = 32
T = TypeVar("T")

_current: ContextVar[Transaction | None] = ContextVar("workbench_transaction", default=None)


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
    rows_added: int = 0
    rows_removed: int = 0
    dropped: bool = False

    @property
    def entry(self) -> TableEntry | None:
        """The table as this transaction sees it (None when absent or dropped)."""
        if self.dropped or self.version is None:
            return None
        return TableEntry(self.version, self.incarnation)


def live_path(catalog: Catalog, namespace: str, name: str) -> str:
    """Local path of the table folder readers use while the table exists."""
    return os.path.join(catalog.root, namespace, name)


def dropped_path(catalog: Catalog, incarnation: str) -> str:
    """Where a dropped table's folder is kept for time travel until vacuum."""
    if len(incarnation) > MAX_ID_LENGTH:  # catalogs before fixed-length ids used longer ones
        incarnation = hashlib.sha256(incarnation.encode()).hexdigest()[:MAX_ID_LENGTH]
    return os.path.join(catalog.root, *DROPPED_DIR, incarnation)


def table_uri(catalog: Catalog, namespace: str, name: str, entry: TableEntry) -> str:
    """Folder of the table incarnation ``entry`` refers to (moved there if it was dropped)."""
    moved = dropped_path(catalog, entry.incarnation)
    return moved if os.path.isdir(moved) else live_path(catalog, namespace, name)


class Transaction:
    """One catalog transaction; use ``dc.transaction()`` rather than creating it directly."""

    def __init__(
        self,
        catalog: Catalog,
        catalog_name: str,
        commit_message: str | None = None,
        state: CatalogState | None = None,
        read_only: bool = False,
        engine: str = "local",
    ):
        self.catalog = catalog
        self.catalog_name = catalog_name
        self.id = new_transaction_id()
        self.start_time = time.time_ns()
        self.commit_message = commit_message
        self.state = state if state is not None else log_of(catalog).refresh()
        self.read_only = read_only
        self.engine = engine
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
        self, change: TableChange, operation: str, version: int, added: int = 0, removed: int = 0
    ) -> None:
        """Note a change to a table that produced Delta ``version``."""
        change.operations.append(operation)
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
            "engine": self.engine,
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


# ------------------------------------------------------------------- Delta-level helpers (tags)
def _history(
    path: str, incarnation: str, first: int, last: int, refresh: bool = True
) -> list[dict[str, Any]]:
    """Commit infos of Delta versions ``first..last`` of a table, newest first."""
    if last < first:
        return []
    return [
        h
        for h in latest(path, incarnation, refresh=refresh).history(limit=last - first + 1)
        if first <= h.get("version", -1) <= last
    ]


def owners(path: str, incarnation: str, first: int, last: int) -> set[str]:
    """Transaction ids tagged on Delta versions ``first..last`` of a claimed table ('' if
    untagged). The handle is not refreshed: the claimant's own writes advanced it to ``last``."""
    return {str(h.get(TXN_TAG, "")) for h in _history(path, incarnation, first, last, False)}


def folder_creator(path: str) -> str:
    """The transaction id tagged on a table folder's first Delta commit ('' if unknown)."""
    import json

    first = os.path.join(path, "_delta_log", f"{0:020d}.json")
    try:
        with open(first) as f:
            for line in f:
                info = json.loads(line).get("commitInfo")
                if info:
                    return str(info.get(TXN_TAG, ""))
    except (OSError, ValueError):
        pass
    return ""


def committed_incarnation(catalog: Catalog, creator: str, namespace: str, name: str) -> str | None:
    """The incarnation of table ``namespace.name`` that transaction ``creator`` created, if the
    log recorded it (so its folder holds history worth keeping), else None."""
    if not creator:
        return None
    for row in log_of(catalog).rows:
        if (
            row["transaction_id"] == creator
            and row["table_name"] == name
            and row["namespace"] == namespace
        ):
            return row["incarnation"]
    return None


def repair_versions(
    path: str,
    incarnation: str,
    recorded: int,
    restorer: str | None,
    catalog: Catalog,
    allowed_owner: str | None = None,
) -> int:
    """Restore a table to its recorded version if later versions belong to dead transactions;
    return the Delta head afterwards (its content is the recorded version's).

    Versions owned by a running transaction (other than ``allowed_owner``) are a conflict.
    """
    from deltalake import CommitProperties
    from deltalake.exceptions import CommitFailedError

    table = latest(path, incarnation)
    head = table.version()
    if head <= recorded:
        return head
    history = _history(path, incarnation, recorded + 1, head)
    foreign = {str(h.get(TXN_TAG, "")) for h in history} - {allowed_owner, ""}
    live = [t for t in foreign if t != restorer and is_active(catalog, t)]
    if live:
        raise TransactionConflictError(
            f"Table {path!r} is being written by running transaction(s) {live}; wait for them or "
            "retry (dc.run_transaction retries automatically)."
        )
    newest = history[0] if history else {}
    if newest.get("operation") == "RESTORE" and newest.get("operationParameters", {}).get(
        "version"
    ) == str(recorded):
        return head  # already restored to the recorded version by an earlier rollback or repair
    tag = {TXN_TAG: restorer or allowed_owner or "", "workbench.operation": "REPAIR"}
    try:
        table.restore(recorded, commit_properties=CommitProperties(custom_metadata=tag))
        return latest(path, incarnation).version()
    except CommitFailedError as e:
        raise TransactionConflictError(
            f"Table {path!r} changed while it was being repaired ({e}); retry the transaction."
        ) from e


# ------------------------------------------------------------------------------- public entry
def current_transaction() -> Transaction | None:
    """The transaction open in this context, if any."""
    return _current.get()


@contextmanager
def _open(txn: Transaction) -> Iterator[Transaction]:
    """Make ``txn`` current for the block; commit it if the block succeeds, else abort it."""
    token = _current.set(txn)
    try:
        yield txn
    except BaseException:
        txn.abort()
        raise
    else:
        txn.commit()
    finally:
        _current.reset(token)


@contextmanager
def transaction(
    commit_message: str | None = None,
    catalog: str | None = None,
    as_of: Any = None,
) -> Iterator[Transaction]:
    """Run the block as one catalog transaction; with ``as_of`` it reads the past, read-only."""
    from workbench.core.catalog import catalog_name, get_catalog
    from workbench.core.timetravel import state_as_of

    text("commit_message", commit_message)
    if _current.get() is not None:
        raise TransactionError(
            "A transaction is already open in this context; nested transactions are not "
            "supported. Do the work inside the open transaction."
        )
    cat = get_catalog(catalog)
    state = state_as_of(cat, as_of) if as_of is not None else None
    txn = Transaction(
        cat, catalog_name(cat), commit_message, state=state, read_only=as_of is not None
    )
    with _open(txn):
        yield txn


@contextmanager
def operation(catalog: Catalog, message: str | None = None) -> Iterator[Transaction]:
    """The open transaction of ``catalog``, or a fresh one committed when the block ends."""
    from workbench.core.catalog import catalog_name

    open_txn = _current.get()
    if open_txn is not None:
        if open_txn.catalog.root != catalog.root:
            raise TransactionError(
                f"The open transaction is on catalog {open_txn.catalog_name!r}; changes to "
                f"catalog {catalog_name(catalog)!r} must happen outside it."
            )
        yield open_txn
        return
    with _open(Transaction(catalog, catalog_name(catalog), message)) as txn:
        yield txn


def view(catalog: Catalog, as_of: Any = None) -> Transaction:
    """What reads of ``catalog`` see: the open transaction, a past state, or the latest state."""
    from workbench.core.catalog import catalog_name
    from workbench.core.timetravel import state_as_of

    open_txn = _current.get()
    if as_of is None and open_txn is not None and open_txn.catalog.root == catalog.root:
        return open_txn
    state = state_as_of(catalog, as_of) if as_of is not None else log_of(catalog).refresh()
    return Transaction(catalog, catalog_name(catalog), state=state, read_only=True)


def run_transaction(
    fn: Callable[[], T],
    retries: int = 3,
    commit_message: str | None = None,
    catalog: str | None = None,
    backoff_s: float = 0.05,
) -> T:
    """Run ``fn`` in a transaction, retrying it on ``TransactionConflictError``."""
    if not callable(fn):
        raise InvalidArgumentError(
            f"run_transaction takes a function to run, not {type(fn).__name__}; e.g. "
            "dc.run_transaction(lambda: dc.write(df, 't'))."
        )
    retries = whole_number("retries", retries)
    backoff_s = seconds("backoff_s", backoff_s)
    for attempt in range(retries + 1):
        try:
            with transaction(commit_message=commit_message, catalog=catalog):
                return fn()
        except TransactionConflictError:
            if attempt == retries:
                raise
            delay = min(backoff_s * 2**attempt, MAX_BACKOFF_S)
            time.sleep(delay * (1 + secrets.randbelow(100) / 100))
    raise AssertionError("unreachable")
