"""The catalog transaction log: a Delta table of committed changes, and the state it implies.

One row per table (or namespace) a transaction changed, with the Delta actions the table change
consists of. A transaction commits by publishing the log's next Delta version with a
put-if-absent: that single write is the commit point of the whole catalog transaction. The log
is the source of truth for what the catalog shows; the tables' own Delta commits are written
from the recorded actions afterwards (see ``rollforward``).

Reading the latest state costs one existence check of the next log commit. New commits are
read incrementally, from the copy of their rows each commit carries in its commit info (JSON),
so following the log needs no Parquet reader. Every ``STATE_EVERY`` commits the state is saved,
so a fresh process reads that and the few commits after it; the full history (time travel,
``dc.transactions``) is read only when asked for. The log is compacted a tiered step at a time
and checkpointed now and then (``delta.log_compaction``).
"""

from __future__ import annotations

import io
import threading
import uuid
from typing import TYPE_CHECKING, Any

from workbench.core.base.arrow_rows import arrow_rows
from workbench.core.base.caches import drop_where, process_cache
from workbench.core.base.errors import (
    BranchNotFoundError,
    CommitOutcomeUnknownError,
)
from workbench.core.catalog.branch_records import base_key, line_key, require_record
from workbench.core.delta.commits import (
    TXN_TAG,
    add_action,
    append_commit,
    commit_contents,
    commit_key,
    metadata_action,
    now_ms,
    protocol_action,
)
from workbench.core.delta.log_compaction import maintain_log
from workbench.core.storage.identity import made_from
from workbench.core.storage.store import is_local
from workbench.core.transactions.catalog_state import (
    LOG_SCHEMA_VERSION,
    CatalogState,
    check_log_version,
)

if TYPE_CHECKING:
    from collections.abc import Iterator

    import pyarrow as pa

    from workbench.core.catalog.catalogs import Catalog

LOG_KEY = "_workbench/transactions"
STATE_KEY = "_workbench/state"
SCHEMA_VERSION_PROPERTY = "workbench.logSchemaVersion"
STATE_EVERY = 25
COMMITS_AHEAD = 8  # commits a reader on an object store asks for at once
ROWS_KEY = "workbench.rows"  # commit-info key holding the commit's rows as JSON


def log_schema() -> pa.Schema:
    """Columns of the catalog log (schema version 2: version 1 plus ``actions``)."""
    import pyarrow as pa

    return pa.schema(
        [
            ("transaction_id", pa.string()),  # time-ordered, unique
            ("sequence", pa.int64()),  # Delta version of the log commit that recorded it
            ("start_time", pa.int64()),  # ns since epoch
            ("end_time", pa.int64()),  # ns since epoch, strictly increasing per catalog
            ("commit_message", pa.string()),
            ("status", pa.string()),  # COMMITTED
            ("operation", pa.string()),  # e.g. CREATE_TABLE+WRITE_MERGE, DROP_TABLE
            ("namespace", pa.string()),
            ("table_name", pa.string()),  # null for namespace rows
            ("table_version", pa.int64()),  # Delta version after the change; null = dropped
            ("incarnation", pa.string()),  # unique id of the table's creation
            ("rows_added", pa.int64()),
            ("rows_removed", pa.int64()),
            ("engine", pa.string()),
            ("details", pa.string()),  # JSON, e.g. model name and parameters
            ("actions", pa.string()),  # JSON: the Delta actions of the table change (v2)
        ]
    )


class TransactionLog:
    """Reads and commits a catalog's log, caching the latest state and the rows read.

    A branch has a log of its own (``BranchLog``): the same format under the branch's folder,
    starting from the branch's base state instead of the empty catalog."""

    key = LOG_KEY
    state_key = STATE_KEY

    def __init__(self, catalog: Catalog):
        self.catalog = catalog
        self.storage = catalog.storage
        self.version = -1  # Delta version of the log read so far
        self.state = self.initial_state()
        self.last_entry: list[dict[str, Any]] = []  # rows of the newest transaction
        self._history: list[dict[str, Any]] | None = None  # every row, once loaded
        self._states: dict[int, CatalogState] = {}
        self._by_version: dict[tuple[str, int], dict[str, Any]] = {}  # rows read, by table version
        self._schema_version = LOG_SCHEMA_VERSION
        # Threads share a catalog's log reader: one advances it at a time (two reading the same
        # new commit would both count it, and the next commit would leave a gap in the log).
        self._lock = threading.RLock()

    @property
    def uri(self) -> str:
        """Where the log's Delta table lives."""
        return self.catalog.uri(*self.key.split("/"))

    def initial_state(self) -> CatalogState:
        """The state before this log's first commit: the empty catalog on ``main``."""
        return CatalogState()

    def delta_limit(self, incarnation: str) -> int | None:
        """The newest version of a table incarnation its own Delta log may be read at for this
        line (None: any; -1: none, every version comes from this log's actions)."""
        return None

    def check_live(self) -> None:
        """Raise unless this line may still be committed to (a branch may have been dropped)."""

    # -------------------------------------------------------------------------------- reading
    def refresh(self) -> CatalogState:
        """Bring the cache up to the newest log commit and return the latest state (one request
        when nothing is new: the fetch of the next commit)."""
        with self._lock:
            if self.version < 0:
                if not self.storage.exists(commit_key(self.key, 0)):
                    return self.state
                self._load_saved_state()
            self._load_new()
            return self.state

    def _load_saved_state(self) -> None:
        pointer = self.storage.get(f"{self.state_key}/_latest")
        saved = self.storage.get(f"{self.state_key}/{int(pointer):020d}.json") if pointer else None
        if saved is None:
            self._load_history()
            return
        self.state, self.version = CatalogState.decode(saved)
        self._history = None  # the rows before the saved state are not read

    def _load_history(self) -> None:
        """Read every row up to the newest commit (the full history): the log's files fetched
        together and read as Parquet (no dataset scan: its imports made the first listing of a
        new kernel slow)."""
        from deltalake import DeltaTable

        table = DeltaTable(self.uri, storage_options=self._options())
        contents = self.storage.get_many(table.file_uris(), immutable=True)
        rows = [row for content in contents if content for row in _parquet_rows(content)]
        for row in rows:
            row.setdefault("actions", None)  # a log of schema version 1
        rows.sort(key=lambda row: row["sequence"])
        self.version = table.version()
        found = int(table.metadata().configuration.get(SCHEMA_VERSION_PROPERTY, "1"))
        check_log_version(found, f"the catalog log at {self.uri!r}")
        self._schema_version = found
        self._history = []
        self.state = self.initial_state()
        self._extend(rows)

    def _load_new(self) -> None:
        new_rows: list[dict[str, Any]] = []
        for data in self._commits_after(self.version):
            self.version += 1
            contents = commit_contents(data)
            if contents.operation == "OPTIMIZE":
                continue  # compaction rewrites rows already read
            inline = contents.info.get(ROWS_KEY)
            if inline is not None:
                new_rows.extend(inline)
                continue
            for path in contents.added:  # commits of older workbench versions
                new_rows.extend(_parquet_rows(self.storage.get(f"{self.key}/{path}")))
        self._extend(sorted(new_rows, key=lambda r: r["sequence"]))

    def _commits_after(self, version: int) -> Iterator[bytes]:
        """The log's commits after ``version``, in order, to the first missing one: the next
        fetched alone (a refresh with nothing new costs one request), then, on an object
        store, ``COMMITS_AHEAD`` at a time, all under way together (a new process reading up
        to ``STATE_EVERY`` commits after the saved state waits for a few round trips, not one
        per commit)."""
        ahead = 1 if is_local(self.storage.root) else COMMITS_AHEAD
        following, count = version + 1, 1
        while True:
            keys = [commit_key(self.key, v) for v in range(following, following + count)]
            for data in self.storage.get_keys(keys):
                if data is None:
                    return
                yield data
            following, count = following + count, ahead

    def _extend(self, rows: list[dict[str, Any]]) -> None:
        if not rows:
            return
        state = self.state.copy()
        for row in rows:
            row.setdefault("actions", None)
            state.apply(row)
            if row["table_version"] is not None:
                self._by_version[(row["incarnation"], row["table_version"])] = row
        if rows:
            last = rows[-1]["sequence"]
            self.last_entry = [r for r in rows if r["sequence"] == last]
        if self._history is not None:
            self._history.extend(rows)
        self.state = state

    @property
    def rows(self) -> list[dict[str, Any]]:
        """Every row of the log up to the last refresh, oldest first (read when first asked)."""
        return self._full_history()

    def _full_history(self) -> list[dict[str, Any]]:
        with self._lock:
            if self._history is None and self.version < 0:
                self.refresh()  # never read: the log may well hold commits
            if self._history is None and self.version < 0:
                self._history = []  # nothing committed yet: no log table to read
            if self._history is None:
                version = self.version
                self._load_history()
                if self.version < version:  # compaction raced the read: read what is missing
                    self._load_new()
            return self._history

    def recorded_versions(self, incarnation: str) -> list[int]:
        """The Delta versions of a table incarnation that committed transactions recorded: the
        only versions the catalog ever showed (others belong to failed or unfinished ones)."""
        return [
            r["table_version"]
            for r in self.rows
            if r["incarnation"] == incarnation and r["table_version"] is not None
        ]

    def actions_for(
        self, incarnation: str, version: int, known_only: bool = False
    ) -> tuple[dict[str, Any], str] | None:
        """The row that recorded a table version, and its actions (None if not in the log;
        ``known_only``: if not among the rows read so far)."""
        row = self._by_version.get((incarnation, version))
        if row is None and not known_only and self._history is None:
            self._full_history()  # indexes every row
            row = self._by_version.get((incarnation, version))
        return None if row is None else (row, row["actions"])

    def state_at(self, sequence: int) -> CatalogState:
        """The state right after the transaction with ``sequence`` committed."""
        self.refresh()
        if sequence not in self._states:
            state = self.initial_state()
            for row in self.rows:
                if row["sequence"] > sequence:
                    break
                state.apply(row)
            self._states[sequence] = state
        return self._states[sequence]

    def next_sequence(self) -> int:
        """The sequence the next commit will get: the log's next Delta version."""
        self.refresh()
        return self.version + 1

    # ------------------------------------------------------------------------------ committing
    def commit(self, rows: list[dict[str, Any]]) -> bool:
        """Publish ``rows`` as the log's next version (their ``sequence``) with a
        put-if-absent: the commit point of a catalog transaction. False if another commit took
        that version (the caller validates again and retries)."""
        import pyarrow.parquet as pq

        sequence = rows[0]["sequence"]
        buffer = io.BytesIO()
        collected: list[Any] = []
        pq.write_table(arrow_rows(rows, log_schema()), buffer, metadata_collector=collected)
        data_name = f"part-{sequence:020d}-{uuid.uuid4().hex[:12]}.snappy.parquet"
        self.storage.put(f"{self.key}/{data_name}", buffer.getvalue())
        content = self._commit_bytes(rows, data_name, collected[0], buffer)
        try:
            published = self.storage.put_if_absent(commit_key(self.key, sequence), content)
        except OSError:
            # The put may have landed before the connection failed: the stored commit decides.
            stored = self._stored_commit(rows)
            if stored is None:  # it did not: the put failed and nothing was committed
                self.storage.delete(f"{self.key}/{data_name}")
                raise
            published = stored == content
        if not published:
            self.storage.delete(f"{self.key}/{data_name}")
            return False
        with self._lock:
            if sequence == self.version + 1:  # else another thread read it (or more) already
                self.version = sequence
                self._schema_version = LOG_SCHEMA_VERSION
                if sequence == 0:
                    self._history = []  # this process made the log: it knows all its history
                self._extend(rows)
            else:
                self._load_new()
        self._maintain(sequence)
        return True

    def _stored_commit(self, rows: list[dict[str, Any]]) -> bytes | None:
        """After a failed put: what the log version the rows were meant for holds."""
        try:
            return self.storage.get(commit_key(self.key, rows[0]["sequence"]))
        except OSError as e:
            raise CommitOutcomeUnknownError(
                f"The catalog storage failed while transaction {rows[0]['transaction_id']} "
                f"was being committed ({e}), and whether it committed cannot be told now. Its "
                "files are kept; check dc.transactions() once the storage answers again."
            ) from e

    def _commit_bytes(self, rows: list[dict], data_name: str, meta: Any, buffer: Any) -> bytes:
        from workbench.core.delta.data_files import WrittenFile, footer_stats
        from workbench.core.schema.table_schema import Schema

        actions: list[dict[str, Any]] = []
        if rows[0]["sequence"] == 0:
            actions.append(protocol_action(Schema.of(log_schema())))
        if rows[0]["sequence"] == 0 or self._schema_version < LOG_SCHEMA_VERSION:
            configuration = {SCHEMA_VERSION_PROPERTY: str(LOG_SCHEMA_VERSION)}
            actions.append(metadata_action(Schema.of(log_schema()), configuration))
        written = WrittenFile(
            self.storage.uri(f"{self.key}/{data_name}"), len(buffer.getvalue()), footer_stats(meta)
        )
        actions.append(add_action(data_name, written, now_ms()))
        # the rows again in commit info, so reading new commits needs no Parquet
        extra = {TXN_TAG: rows[0]["transaction_id"], ROWS_KEY: rows}
        return append_commit(actions, extra)

    def _maintain(self, sequence: int) -> None:
        """Save the state now and then; compact and checkpoint the log less often."""
        if sequence and sequence % STATE_EVERY == 0:  # state 0 is the empty one
            self.storage.put(
                f"{self.state_key}/{sequence:020d}.json", self.state.encode(self.version)
            )
            self.storage.put(f"{self.state_key}/_latest", str(sequence).encode())
        maintain_log(self.storage, sequence, self.key)

    def _options(self) -> dict[str, str] | None:
        return self.catalog.storage.delta_options


def _parquet_rows(content: bytes) -> list[dict[str, Any]]:
    import pyarrow.parquet as pq

    return pq.ParquetFile(io.BytesIO(content)).read().to_pylist()


class BranchLog(TransactionLog):
    """The log of a branch: its own commits on top of the ``main`` state it started from.
    Table versions up to the base come from ``main`` (its Delta logs and log actions); later
    ones exist only as this log's actions, so no reader of a table folder sees them."""

    def __init__(self, catalog: Catalog, main: TransactionLog):
        assert catalog.record is not None
        self.record = catalog.record
        self.main = main
        self.key = f"{line_key(self.record)}/transactions"
        self.state_key = f"{line_key(self.record)}/state"
        saved = catalog.storage.get(base_key(self.record))
        if saved is None:
            raise BranchNotFoundError(
                f"Branch {self.record.name!r} has lost the state it started from "
                f"({base_key(self.record)}); drop it with dc.drop_branch and create it again."
            )
        self.base = CatalogState.decode(saved)[0]
        self._base_versions = self.base.incarnation_versions()
        super().__init__(catalog)

    def initial_state(self) -> CatalogState:
        state = self.base.copy()
        state.sequence = -1
        return state

    def delta_limit(self, incarnation: str) -> int | None:
        return self._base_versions.get(incarnation, -1)

    def check_live(self) -> None:
        found = require_record(self.storage, self.record.name, self.catalog.root)
        if found.id != self.record.id:
            raise BranchNotFoundError(
                f"Branch {self.record.name!r} was dropped and created again since this process "
                "opened it; run the work again on the new branch."
            )

    def recorded_versions(self, incarnation: str) -> list[int]:
        limit = self._base_versions.get(incarnation, -1)
        inherited = [v for v in self.main.recorded_versions(incarnation) if v <= limit]
        return inherited + super().recorded_versions(incarnation)

    def actions_for(
        self, incarnation: str, version: int, known_only: bool = False
    ) -> tuple[dict[str, Any], str] | None:
        if version <= self._base_versions.get(incarnation, -1):
            return self.main.actions_for(incarnation, version, known_only)
        return super().actions_for(incarnation, version, known_only)


_logs: dict[str, TransactionLog] = {}  # line key (the catalog's identity, a branch's id) -> log


def _forget(identity: str) -> None:
    drop_where(_logs, lambda key: made_from(key, identity))


process_cache("transactions.catalog_log", _logs.clear, forget=_forget)


def log_of(catalog: Catalog) -> TransactionLog:
    """The cached log reader of a catalog's line (one per catalog identity and branch in this
    process: another catalog on the same root with other options reads for itself)."""
    log = _logs.get(catalog.line_key)
    if log is None:
        catalog.check_root()
        if catalog.record is None:
            log = TransactionLog(catalog)
        else:
            log = BranchLog(catalog, log_of(catalog.trunk))
        _logs[catalog.line_key] = log
    return log
