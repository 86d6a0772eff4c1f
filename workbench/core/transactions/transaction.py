"""Catalog transactions: many table and namespace changes made visible together, or not at all.

A transaction pins the catalog state when it starts. Writes stage their data files in the
table folders and their Delta actions in the transaction; nothing reaches a table's Delta log
before commit, so no reader of a table folder ever sees an uncommitted row, while reads inside
the transaction see its own changes. Before changing a table the transaction takes the table's
lease, queueing behind another writer of it.

Commit is optimistic: the transaction checks that every table it read or wrote is still at the
version it saw in the newest log state, then publishes the log's next version with a
put-if-absent (the commit point). If another transaction took that version, it checks again
against the new entries and retries. Afterwards the tables' Delta commits are written from the
actions recorded in the entry (``rollforward``); a crash there loses nothing, since the next
user of the catalog finishes the job.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from workbench.core.base.errors import (
    CommitOutcomeUnknownError,
    HistoricTransactionError,
    TableNotFoundError,
    TransactionConflictError,
    TransactionError,
    WorkbenchError,
    WriteFailedError,
)
from workbench.core.base.wiring import wire
from workbench.core.catalog.branch_records import (
    leased_name,
)
from workbench.core.catalog.locations import empty_table, locate_key
from workbench.core.delta.commits import (
    TableActions,
    add_action,
    kept_add_action,
    now_ms,
    remove_action,
)
from workbench.core.delta.data_files import discard
from workbench.core.storage import leases
from workbench.core.transactions.catalog_log import log_of
from workbench.core.transactions.catalog_state import (
    NAMESPACE_CREATED,
    NAMESPACE_DROPPED,
    CatalogState,
    TableEntry,
)
from workbench.core.transactions.idempotency import DETAILS_KEY, parse_keys, repeated
from workbench.core.transactions.log_rows import log_rows
from workbench.core.transactions.opening import committed_table
from workbench.core.transactions.rollforward import apply_entry, roll_forward
from workbench.core.transactions.staging import stage_change_data
from workbench.core.transactions.table_change import TableChange
from workbench.core.transactions.table_folders import (
    new_table_folder,
    next_version,
    remove_new_folder,
    repair,
)

if TYPE_CHECKING:
    from workbench.core.catalog.catalogs import Catalog
    from workbench.core.catalog.locations import OpenTable
    from workbench.core.delta.data_files import Rewrite

MAX_COMMIT_ATTEMPTS = 100  # log versions taken by others before giving up


def new_transaction_id() -> str:
    """A unique, fixed-length id that sorts by creation time (transactions, incarnations)."""
    return f"{time.time_ns():016x}{secrets.token_hex(6)}"


_commit_listeners: list[Callable[[Transaction, list[dict[str, Any]]], None]] = []


def on_commit(listener: Callable[[Transaction, list[dict[str, Any]]], None]) -> None:
    """Call ``listener(transaction, log_rows)`` after every commit that changed something (the
    run log links runs to their transactions this way, without the log knowing runs)."""
    if listener not in _commit_listeners:
        _commit_listeners.append(listener)


_change_listeners: list[Callable[[Transaction], None]] = []


def on_change(listener: Callable[[Transaction], None]) -> None:
    """Call ``listener(transaction)`` each time a write records a table change in it (the run
    log notes which run did a transaction's work this way, whenever the transaction commits)."""
    if listener not in _change_listeners:
        _change_listeners.append(listener)


class Transaction:
    """One catalog transaction; use ``dc.transaction()`` rather than creating it directly."""

    def __init__(
        self,
        catalog: Catalog,
        catalog_name: str,
        commit_message: str | None = None,
        state: CatalogState | None = None,
        read_only: bool = False,
        since_ns: int | None = None,
        enclosing: Transaction | None = None,
        read_only_reason: str | None = None,
    ):
        self.catalog = catalog
        self.enclosing = enclosing  # the transaction open around this one (independent of it)
        self.catalog_name = catalog_name
        self.id = new_transaction_id()
        self.start_time = time.time_ns()
        self.since_ns = since_ns or self.start_time  # first attempt's start, across retries
        self.commit_message = commit_message
        if state is None:
            roll_forward(catalog)
            state = log_of(catalog).state
        self.state = state
        self.read_only = read_only
        self.read_only_reason = read_only_reason  # why writes are refused, when not as_of
        self.reads: dict[tuple[str, str], TableEntry | None] = {}
        self.changes: dict[tuple[str, str], TableChange] = {}
        self.wanted: set[tuple[str, str]] = set()  # tables it set out to write
        self.namespace_changes: dict[str, str] = {}
        self.details: dict[str, Any] = {}  # facts about the whole transaction, in every row
        self.keys: dict[str, int] = {}  # idempotency keys: app id -> version
        self.follows: dict[str, int | None] = {}  # app id -> the version its key must follow
        self.skipped = False  # its keys were committed before: it committed nothing
        self.closed = False
        self.auto_compact = True  # compact the tables it changed once it commits
        self._last_ms = 0

    # ----------------------------------------------------------------------------- what it sees
    def entry(self, namespace: str, name: str, record: bool = True) -> TableEntry | None:
        """The table as this transaction sees it; remembers the read for conflict checks
        unless ``record`` is False."""
        key = (namespace, name)
        if key in self.changes:
            return self.changes[key].entry
        found = self.state.tables.get(key)
        if record:
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
        if self.read_only and self.read_only_reason:
            raise HistoricTransactionError(self.read_only_reason)
        if self.read_only:
            raise HistoricTransactionError(
                f"Cannot perform a write operation in a read-only historic transaction: "
                f"transaction {self.id} reads the catalog as of a past point. Leave the "
                "`with dc.transaction(as_of=...)` block to write."
            )

    def lease_table(self, namespace: str, name: str, queue: bool = True) -> TableChange:
        """Prepare to change a table: take its lease (queueing behind another writer; without
        ``queue``, ``TransactionConflictError`` at once when another holds it), then base the
        change on the table's newest committed version."""
        self.require_writable()
        key = (namespace, name)
        if key in self.changes:
            change = self.changes[key]
            if change.dropped:
                raise TransactionError(
                    f"Table {namespace}.{name} was dropped in this transaction; commit first, "
                    "then create it again in a new transaction."
                )
            with self.catalog.writing():
                leases.renew(self.catalog.storage, namespace, self._leased(name), self.id)
            return change
        self._refuse_tables_of_enclosing(key)
        self.wanted.add(key)
        with self.catalog.writing():
            if not queue:
                if not leases.try_acquire(
                    self.catalog.storage, namespace, self._leased(name), self.id, self.since_ns
                ):
                    raise self._conflict(f"table {namespace}.{name} is being written")
            else:
                leases.acquire(
                    self.catalog.storage,
                    namespace,
                    self._leased(name),
                    self.id,
                    self.since_ns,
                    holding=bool(self.changes),
                )
        try:
            self._catch_up()
            latest = log_of(self.catalog).state.tables.get(key)
            if key in self.reads and self.reads[key] != latest:
                raise self._conflict(f"table {namespace}.{name} changed after it was read")
            # on this transaction's line, whichever branch calls around it use (compaction)
            loc = replace(locate_key(name, namespace, self.catalog_name), catalog=self.catalog)
            if latest is None:
                incarnation = new_transaction_id()
                folder = new_table_folder(self.catalog, namespace, name, incarnation)
                table = empty_table(loc, folder, incarnation)
                version = 0
            else:
                incarnation = latest.incarnation
                table = committed_table(loc, latest)
                version = next_version(self.catalog, table, latest.version)
        except BaseException:
            leases.release(self.catalog.storage, namespace, self._leased(name), self.id)
            raise
        change = TableChange(namespace, name, incarnation, latest, table, version)
        self.changes[key] = change
        if latest is not None and version > latest.version + 1:
            repair(change, version - 1)
        return change

    def lease_existing(self, namespace: str, name: str, doing: str) -> TableChange:
        """``lease_table`` for a change that needs the table to exist (``doing`` names the
        change for the error, e.g. "optimize 'default.users'")."""
        change = self.lease_table(namespace, name)
        if change.entry is None:
            raise TableNotFoundError(
                f"Table does not exist: cannot {doing} in catalog {self.catalog_name!r}; "
                "create it first with dc.create_table(...) or dc.write(...)."
            )
        return change

    def renew_leases(self) -> None:
        """Extend the leases this transaction holds (a heartbeat does while a call runs)."""
        for namespace, name in list(self.changes):
            if self.closed:
                return
            leases.renew(self.catalog.storage, namespace, self._leased(name), self.id)

    def _leased(self, name: str) -> str:
        """The name this transaction takes a table's lease under (see ``leased_name``)."""
        return leased_name(name, self.catalog.record)

    def _refuse_tables_of_enclosing(self, key: tuple[str, str]) -> None:
        """A nested transaction cannot write a table an enclosing one is writing: it would
        wait for a lease that is only released after it ends."""
        outer = self.enclosing
        while outer is not None:
            if outer.catalog.line_key == self.catalog.line_key and key in outer.changes:
                raise TransactionConflictError(
                    f"Table {key[0]}.{key[1]} is being written by the enclosing transaction "
                    f"{outer.id}; a nested transaction is independent of it and cannot write "
                    "the same table. Write it in the enclosing transaction instead."
                )
            outer = outer.enclosing

    def _catch_up(self) -> None:
        """Read the newest commits of this transaction's line (on ``main``, applying the newest
        entry; a branch refreshed ``main`` when the transaction started)."""
        if self.catalog.record is None:
            roll_forward(self.catalog)
        else:
            log_of(self.catalog).refresh()

    def claim(self, tables: Iterable[tuple[str, str]]) -> None:
        """Take the leases of tables this transaction is going to write before it reads them
        (a retry claims what its failed attempt wrote), so other writers queue behind it
        instead of changing what it reads."""
        for namespace, name in sorted(tables):
            self.lease_table(namespace, name)

    def contended(self) -> set[tuple[str, str]]:
        """Tables this transaction set out to write or read that others changed meanwhile:
        what a retry should claim first."""
        latest = log_of(self.catalog).refresh()
        changed = {key for key, seen in self.reads.items() if latest.tables.get(key) != seen}
        return self.wanted | changed

    def savepoint(self, change: TableChange) -> Callable[[], None]:
        """A function that puts a table change back as it is now (for a write that fails
        half-way inside a transaction that goes on)."""
        saved = (
            TableActions(
                change.actions.protocol,
                change.actions.metadata,
                dict(change.actions.adds),
                dict(change.actions.removes),
            ),
            change.table,
            list(change.written),
            list(change.superseded),
        )

        def restore() -> None:
            change.actions, change.table = saved[0], saved[1]
            change.written, change.superseded = list(saved[2]), list(saved[3])

        return restore

    def stage(
        self,
        change: TableChange,
        rewrite: Rewrite | None = None,
        metadata: dict[str, Any] | None = None,
        protocol: dict[str, Any] | None = None,
        *,
        in_place_of: int | None = None,
    ) -> None:
        """Add a write's files (and removals, metadata, protocol) to a table change; reads in
        this transaction see them from now on. ``in_place_of``: the rewrite moves rows without
        changing any (Delta's ``dataChange: false``), and its files take the place in write
        order of files written at that time (ms)."""
        actions = TableActions(protocol, metadata)
        data_change = in_place_of is None
        if rewrite is not None:
            replaced = set()
            for old in rewrite.removed:
                staged = change.actions.adds.pop(old.path, None)
                if staged is None:
                    actions.removes[old.path] = remove_action(old, data_change)
                else:  # a file this transaction added and now replaces: it was never visible
                    change.superseded += [w for w in change.written if w.uri == old.absolute]
                    replaced.add(old.path)
            if replaced:  # gone from what this transaction reads next, too
                change.table = change.table.with_files(
                    [f for f in change.table.files if f.path not in replaced]
                )
            for kept in rewrite.vectored:  # the file stays; its vector replaces the old one
                if kept.file.path not in change.actions.adds:
                    actions.removes[kept.file.path] = remove_action(kept.file)
                actions.adds[kept.file.path] = kept_add_action(kept.file, kept.vector)
            modified = self.next_write_ms(change.table) if data_change else in_place_of
            base = change.table.uri.rstrip("/") + "/"
            for written in rewrite.written:
                relative = written.uri[len(base) :] if written.uri.startswith(base) else written.uri
                actions.adds[relative] = add_action(relative, written, modified, data_change)
            change.written += rewrite.made()
        self.stage_actions(change, actions)

    def stage_actions(self, change: TableChange, actions: TableActions) -> None:
        """Add Delta actions to a table change as they are (``stage`` makes them from files)."""
        change.actions.protocol = actions.protocol or change.actions.protocol
        change.actions.metadata = actions.metadata or change.actions.metadata
        change.actions.removes.update(actions.removes)
        change.actions.adds.update(actions.adds)
        change.table = change.table.with_actions(actions, change.version)

    def next_write_ms(self, table: OpenTable) -> int:
        """A time for files this transaction adds to ``table``: after its newest file (whatever
        the clocks of the hosts that wrote it) and strictly increasing, so files keep write
        order."""
        newest = table.files[-1].modified if table.files else 0  # files are in write order
        self._last_ms = max(now_ms(), self._last_ms + 1, newest + 1)
        return self._last_ms

    def record(
        self,
        change: TableChange,
        operation: str,
        added: int = 0,
        removed: int = 0,
        engine: str | None = None,
    ) -> None:
        """Note what a write did to a table, for the log: the one way engines and helpers
        report their work. ``engine`` says who wrote."""
        change.operations.append(operation)
        if engine is not None and engine not in change.engines:
            change.engines.append(engine)
        change.rows_added += added
        change.rows_removed += removed
        wire()
        for listener in _change_listeners:
            listener(self)

    def describe(self, change: TableChange, details: dict[str, Any]) -> None:
        """Add facts about a table change (e.g. the model that made its columns) to its log
        row's ``details``."""
        change.details.update(details)

    def drop(self, change: TableChange) -> None:
        """Drop a table at commit."""
        change.operations.append("DROP_TABLE")
        change.dropped = True

    def add_idempotency(self, keys: Any, *, after: dict[str, int | None] | None = None) -> None:
        """Tag the transaction with idempotency keys (``(app_id, version)`` pairs): it commits
        only if none was committed before, and is skipped whole if all were. ``after``: the
        version each app named must still be at when it commits (a consumer's cursor)."""
        self.require_writable()
        # one list of pairs, so parse_keys refuses an app given two versions across calls
        self.keys = parse_keys([*self.keys.items(), *parse_keys(keys).items()])
        self.follows.update(after or {})
        self.details[DETAILS_KEY] = dict(self.keys)

    def is_repeat(self) -> bool:
        """True when the newest catalog state holds every key of this transaction already: its
        writes can be left out (the commit would skip them anyway)."""
        if not self.keys:
            return False
        return repeated(self.keys, self.follows, log_of(self.catalog).refresh().apps)

    def change_namespace(self, namespace: str, created: bool) -> None:
        """Create or drop a namespace at commit."""
        self.require_writable()
        self.namespace_changes[namespace] = NAMESPACE_CREATED if created else NAMESPACE_DROPPED

    # ----------------------------------------------------------------------------- commit / abort
    def commit(self) -> None:
        """Make every change visible at once, or raise ``TransactionConflictError``."""
        if self.closed:
            return
        rows: list[dict[str, Any]] | None = []
        try:
            for change in self.changes.values():
                stage_change_data(change)
            if self.changes or self.namespace_changes:
                rows = self._publish()
            elif self.is_repeat():  # its writes saw the repeat and left themselves out
                rows = None
        except CommitOutcomeUnknownError:
            self.closed = True  # its staged files stay: the commit may reference them
            self._release()
            raise
        except WorkbenchError:
            self.abort()
            raise
        except OSError as e:
            self.abort()
            raise WriteFailedError(
                f"Committing transaction {self.id} failed ({e}); nothing of it was committed."
            ) from e
        except BaseException:
            self.abort()
            raise
        if rows is None:  # a repeat of a committed transaction: nothing of it is kept
            self.abort()
            self.skipped = True
            return
        self.closed = True
        try:
            if rows and self.catalog.record is None:  # a branch's commits stay in its log
                with self.catalog.writing():
                    apply_entry(self.catalog, rows)
            for change in self.changes.values():
                discard(change.superseded, self.catalog.storage)
        finally:
            self._release()
        if rows:
            wire()
            for listener in _commit_listeners:
                listener(self, rows)

    def _publish(self) -> list[dict[str, Any]] | None:
        """Publish the log entry: check against the newest state, then put-if-absent the next
        log version; check again when another commit took it. None: the transaction repeats
        one committed before (its idempotency keys say so) and is skipped."""
        log = log_of(self.catalog)
        for _ in range(MAX_COMMIT_ATTEMPTS):
            self._catch_up()  # on main, the previous entry is applied before ours is published
            latest = log.state
            if repeated(self.keys, self.follows, latest.apps):
                return None
            self._check(latest)
            rows = log_rows(self, log.version + 1, max(time.time_ns(), latest.end_time + 1))
            if not rows:
                return []
            log.check_live()
            with self.catalog.writing():
                if log.commit(rows):
                    return rows
        raise self._conflict(f"{MAX_COMMIT_ATTEMPTS} other commits came first")

    def _check(self, latest: CatalogState) -> None:
        for key, seen in self.reads.items():
            if key not in self.changes and latest.tables.get(key) != seen:
                raise self._conflict(f"table {key[0]}.{key[1]} changed after it was read")
        for key, change in self.changes.items():
            if latest.tables.get(key) != change.pinned:
                raise self._conflict(f"table {key[0]}.{key[1]} changed after it was first written")
        for ns, kind in self.namespace_changes.items():
            if kind == NAMESPACE_DROPPED:
                others = [n for (s, n) in latest.tables if s == ns and (s, n) not in self.changes]
                if others:
                    raise self._conflict(f"namespace {ns} gained tables {others}")

    def abort(self) -> None:
        """Forget every change; the files it staged are deleted. Nothing of it was visible."""
        if self.closed:
            return
        self.closed = True
        try:
            for change in self.changes.values():
                discard(change.written, self.catalog.storage)
                if change.pinned is None:
                    remove_new_folder(self.catalog, change)
        finally:
            self._release()

    def _release(self) -> None:
        for namespace, name in self.changes:
            leases.release(self.catalog.storage, namespace, self._leased(name), self.id)

    def _conflict(self, reason: str) -> TransactionConflictError:
        return TransactionConflictError(
            f"Transaction {self.id} conflicts: {reason}. Nothing of it was committed; run it "
            "again (dc.run_transaction(fn, retries=...) retries automatically)."
        )

    def __repr__(self) -> str:
        mode = "read-only" if self.read_only else "read-write"
        return f"Transaction({self.id}, {mode}, catalog={self.catalog_name!r})"
