"""The catalog transaction log: a Delta table of committed changes and the state it implies.

One row per table (or namespace) a transaction changed. The log is the source of truth for what
the catalog shows: a table is read at the version the latest committed transaction recorded.
Reading the latest state costs one existence check of the next Delta commit file; new commits are
read incrementally and the log is compacted and checkpointed every ``COMPACT_EVERY`` commits.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pyarrow as pa

    from workbench.core.catalog import Catalog

LOG_PATH = ("_workbench", "transactions")
LOG_SCHEMA_VERSION = "1"
COMPACT_EVERY = 100
NAMESPACE_CREATED = "CREATE_NAMESPACE"
NAMESPACE_DROPPED = "DROP_NAMESPACE"


def log_schema() -> pa.Schema:
    """Columns of the catalog log (schema version 1)."""
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
        ]
    )


@dataclass(frozen=True)
class TableEntry:
    """A table as a catalog state records it: Delta version and incarnation."""

    version: int
    incarnation: str


@dataclass
class CatalogState:
    """Namespaces and table versions after the transaction with ``sequence`` committed."""

    sequence: int = -1
    end_time: int = 0
    namespaces: set[str] = field(default_factory=set)
    tables: dict[tuple[str, str], TableEntry] = field(default_factory=dict)

    def copy(self) -> CatalogState:
        """An independent copy."""
        return CatalogState(self.sequence, self.end_time, set(self.namespaces), dict(self.tables))

    def apply(self, row: dict[str, Any]) -> None:
        """Apply one log row."""
        self.sequence, self.end_time = row["sequence"], row["end_time"]
        if row["table_name"] is None:
            if row["operation"] == NAMESPACE_DROPPED:
                self.namespaces.discard(row["namespace"])
            else:
                self.namespaces.add(row["namespace"])
            return
        key = (row["namespace"], row["table_name"])
        if row["table_version"] is None:
            self.tables.pop(key, None)
        else:
            self.namespaces.add(row["namespace"])
            self.tables[key] = TableEntry(row["table_version"], row["incarnation"])


class TransactionLog:
    """Reads and appends a catalog's log, caching rows and the latest state by log version."""

    def __init__(self, catalog: Catalog):
        self.catalog = catalog
        self.version = -1  # Delta version of the log read so far
        self.rows: list[dict[str, Any]] = []
        self.state = CatalogState()
        self._states: dict[int, CatalogState] = {}
        self._recorded: dict[str, list[int]] = {}  # incarnation -> Delta versions in the log

    @property
    def uri(self) -> str:
        """Where the log's Delta table lives."""
        return self.catalog.uri(*LOG_PATH)

    def _commit_file(self, version: int) -> str:
        return self.catalog.fs_path(*LOG_PATH, "_delta_log", f"{version:020d}.json")

    def _exists(self, path: str) -> bool:
        import pyarrow.fs as pafs

        return self.catalog.filesystem.get_file_info(path).type != pafs.FileType.NotFound

    def refresh(self) -> CatalogState:
        """Bring the cache up to the newest log commit and return the latest state."""
        if not self._exists(self._commit_file(self.version + 1)):
            return self.state
        if self.version < 0:
            self._load_all()
        else:
            self._load_new()
        return self.state

    def _load_all(self) -> None:
        from deltalake import DeltaTable

        table = DeltaTable(self.uri, storage_options=self._options())
        rows = table.to_pyarrow_table().sort_by("sequence").to_pylist()
        self.version = table.version()
        self._extend(rows)

    def _load_new(self) -> None:
        import pyarrow.parquet as pq

        fs = self.catalog.filesystem
        new_rows: list[dict[str, Any]] = []
        while self._exists(self._commit_file(self.version + 1)):
            self.version += 1
            actions = _read_commit(fs, self._commit_file(self.version))
            if actions["operation"] == "OPTIMIZE":
                continue  # compaction rewrites rows already read
            for path in actions["added"]:
                with fs.open_input_file(self.catalog.fs_path(*LOG_PATH, path)) as f:
                    new_rows.extend(pq.read_table(f).to_pylist())
        self._extend(sorted(new_rows, key=lambda r: r["sequence"]))

    def _extend(self, rows: list[dict[str, Any]]) -> None:
        state = self.state.copy()
        for row in rows:
            state.apply(row)
            if row["table_version"] is not None:
                self._recorded.setdefault(row["incarnation"], []).append(row["table_version"])
        self.rows.extend(rows)
        self.state = state

    def recorded_versions(self, incarnation: str) -> list[int]:
        """The Delta versions of a table incarnation that committed transactions recorded: the
        only versions the catalog ever showed (others belong to failed or unfinished ones)."""
        return self._recorded.get(incarnation, [])

    def state_at(self, sequence: int) -> CatalogState:
        """The state right after the transaction with ``sequence`` committed."""
        self.refresh()
        if sequence not in self._states:
            state = CatalogState()
            for row in self.rows:
                if row["sequence"] > sequence:
                    break
                state.apply(row)
            self._states[sequence] = state
        return self._states[sequence]

    def append(self, rows: list[dict[str, Any]]) -> None:
        """Commit rows to the log (callers hold the commit lock); compact now and then."""
        import pyarrow as pa
        from deltalake import DeltaTable, write_deltalake

        from workbench.core.handles import latest

        table = pa.Table.from_pylist(rows, schema=log_schema())
        if self.version < 0 and not self._exists(self._commit_file(0)):
            DeltaTable.create(
                self.uri,
                log_schema(),
                configuration={"workbench.logSchemaVersion": LOG_SCHEMA_VERSION},
                storage_options=self._options(),
                raise_if_key_not_exists=False,
            )
        self.refresh()
        write_deltalake(latest(self.uri, "log", self._options()), table, mode="append")
        # Callers hold the commit lock, so this commit is the log's next version: apply the
        # rows directly instead of reading the file back.
        self.version += 1
        self._extend(rows)
        if rows[0]["sequence"] % COMPACT_EVERY == 0:
            self._compact()

    def _compact(self) -> None:
        from workbench.core.handles import latest

        table = latest(self.uri, "log", self._options())
        table.optimize.compact()
        table.create_checkpoint()
        self.refresh()

    def next_sequence(self) -> int:
        """The sequence the next commit will get: the log's next Delta version."""
        self.refresh()
        return self.version + 1 if self.version >= 0 else 1

    def _options(self) -> dict[str, str] | None:
        return self.catalog.properties.storage_options or None


def _read_commit(fs: Any, path: str) -> dict[str, Any]:
    """The files a Delta commit added and its operation name."""
    added, operation = [], ""
    with fs.open_input_stream(path) as stream:
        for line in stream.read().decode().splitlines():
            action = json.loads(line)
            if "add" in action:
                added.append(action["add"]["path"])
            elif "commitInfo" in action:
                operation = action["commitInfo"].get("operation", "")
    return {"added": added, "operation": operation}


_logs: dict[str, TransactionLog] = {}


def log_of(catalog: Catalog) -> TransactionLog:
    """The cached log reader of a catalog (one per root in this process)."""
    log = _logs.get(catalog.root)
    if log is None:
        catalog.check_root()
        log = _logs[catalog.root] = TransactionLog(catalog)
    return log
