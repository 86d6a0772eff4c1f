"""The run log as a Delta table: common columns plus one nullable struct column per payload,
queried with Arrow.

An append is one Delta commit written as the catalog log writes its own: a Parquet part, then
the commit file with a put-if-absent (a lost race moves on to the next version), carrying its
events inline in the commit info. So an append costs the same however long the log is, and a
reader follows other writers' appends by reading their commit files (JSON) only. Now and then a
tiered compaction step folds small parts and a checkpoint is written (``delta.log_compaction``,
shared with the catalog log); a step commits past other writers' appends but gives way to
another step committed since it read (delta-rs' optimize let two overlapping ones both commit,
keeping those events twice). Queries keep
the events of the newest version in Arrow. The schema version sits in the table property
``workbench.eventSchemaVersion``; an older table gains the newer struct fields when opened.
"""

from __future__ import annotations

import io
import os
from collections.abc import Sequence
from functools import cached_property

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from deltalake import DeltaTable, write_deltalake
from deltalake.exceptions import DeltaError

from workbench.core.base.json_text import float_of
from workbench.core.delta.commits import (
    add_action,
    append_commit,
    commit_contents,
    commit_key,
    commit_lines,
    metadata_action,
    now_ms,
    protocol_action,
)
from workbench.core.delta.data_files import WrittenFile, footer_stats
from workbench.core.delta.log_compaction import maintain_log
from workbench.core.events.log import RunRecord, location_taken
from workbench.core.events.model import (
    COMMON_FIELDS,
    PAYLOAD_FIELDS,
    SCHEMA_VERSION,
    Event,
    EventType,
    check_schema_version,
    new_id,
)
from workbench.core.events.records import (
    END_TYPES,
    OUTCOME_FIELDS,
    RUN_COLUMNS,
    RUN_FIELDS,
    by_name,
    run_records,
)
from workbench.core.schema.table_schema import Schema
from workbench.core.storage.store import Storage

VERSION_PROPERTY = "workbench.eventSchemaVersion"
EVENTS_KEY = "workbench.events"  # commit-info key holding the commit's events as rows
_ARROW_TYPES = {
    "string": pa.string(),
    "int64": pa.int64(),
    "float64": pa.float64(),
    "list<string>": pa.list_(pa.string()),
}
_NEWEST_FIRST = [("timestamp", "descending"), ("event_id", "descending")]


def event_schema(version: int = SCHEMA_VERSION) -> pa.Schema:
    """The Arrow schema of the events table at a schema version."""
    return pa.schema(
        [(name, _ARROW_TYPES[kind]) for name, kind in COMMON_FIELDS]
        + [
            (payload, pa.struct([(f, _ARROW_TYPES[kind]) for f, kind in fields]))
            for payload, fields in PAYLOAD_FIELDS[version].items()
        ]
    )


class DeltaEventLog:
    """The run log in the Delta table at ``uri`` (a path or an object-store URI; created on
    first open)."""

    def __init__(self, uri: str, storage_options: dict[str, str] | None = None):
        self.location = uri if "://" in uri else os.path.abspath(uri)
        scheme, _, rest = self.location.rpartition("://")
        self.uri = f"delta+{scheme}://{rest}" if scheme else f"delta://{self.location}"
        self._storage = Storage(self.location, dict(storage_options or {}))
        with self._storage.access_errors():  # a store that is down: typed, and fast
            self._table = self._open()
        self._head = self._table.version()  # the newest version this process knows of
        self._snapshot: _Snapshot | None = None

    def _open(self) -> DeltaTable:
        """The table, created if missing and migrated if older than this schema version; a
        location holding anything else is refused, untouched."""
        options = self._storage.delta_options
        check_location(self.location, self.uri, options)
        if not DeltaTable.is_deltatable(self.location, options):
            self._create()
        table = DeltaTable(self.location, storage_options=options)
        # No property: a table made by an older workbench in two commits, the property set in
        # the second (a process may have died in between); migrating it again is harmless.
        found = int(table.metadata().configuration.get(VERSION_PROPERTY, "1"))
        check_schema_version(found, self.uri)
        if found < SCHEMA_VERSION:
            try:
                write_deltalake(
                    table, event_schema().empty_table(), mode="append", schema_mode="merge"
                )
                _set_version(table)
            except DeltaError:  # another process migrating it at the same time
                table = DeltaTable(self.location, storage_options=options)
                if table.metadata().configuration.get(VERSION_PROPERTY) != str(SCHEMA_VERSION):
                    raise
        return table

    def _create(self) -> None:
        """Create the table, its schema version property included, in one commit published
        with a put-if-absent: of processes (or threads) creating it at once, one wins and the
        others find it made."""
        schema = Schema.of(event_schema())
        info = {"commitInfo": {"timestamp": now_ms(), "operation": "CREATE TABLE"}}
        configuration = {VERSION_PROPERTY: str(SCHEMA_VERSION)}
        content = commit_lines(
            [info, protocol_action(schema), metadata_action(schema, configuration)]
        )
        self._storage.put_if_absent(commit_key("", 0), content)

    def append(self, events: Event | Sequence[Event]) -> None:
        """Store one event or a batch in one Delta commit: all or nothing."""
        batch = [events] if isinstance(events, Event) else list(events)
        rows = [e.row() for e in batch]
        data = pa.Table.from_pylist(rows, schema=event_schema())
        version = self._commit(data, rows)
        kept = self._snapshot
        if kept is not None and version == kept.version + 1:
            self._snapshot = kept.extended(version, data)
        maintain_log(self._storage, version)

    def _commit(self, data: pa.Table, rows: list[dict]) -> int:
        """Write ``data`` as a part and commit it at the next free version; that version."""
        content = append_commit([self._write_part(data)], {EVENTS_KEY: rows})
        version = self._head + 1
        while not self._storage.put_if_absent(commit_key("", version), content):
            version += 1  # another writer took it: its commit is an append too
        self._head = version
        return version

    def _write_part(self, data: pa.Table) -> dict:
        """Store ``data`` as a new Parquet part in the table folder; its ``add`` action."""
        buffer, collected = io.BytesIO(), []
        pq.write_table(data, buffer, metadata_collector=collected)
        name = f"part-{new_id()}.snappy.parquet"
        self._storage.put(name, buffer.getvalue())
        written = WrittenFile(
            self._storage.uri(name), len(buffer.getvalue()), footer_stats(collected[0])
        )
        return add_action(name, written, now_ms())

    def _current(self) -> _Snapshot:
        """The events at the newest version: the kept ones, extended by the events other
        writers' commits carry (read from their commit files); read in full when a commit
        carries none that this reader can use (one written by another tool)."""
        kept = self._snapshot
        while kept is not None:
            content = self._storage.get(commit_key("", kept.version + 1))
            if content is None:
                self._head = max(self._head, kept.version)
                self._snapshot = kept
                return kept
            contents = commit_contents(content)
            operation, rows = contents.operation, contents.info.get(EVENTS_KEY)
            if rows is not None:
                data = pa.Table.from_pylist(_restored(rows), schema=event_schema())
                kept = kept.extended(kept.version + 1, data)
            elif operation == "OPTIMIZE":  # the same events in fewer files
                kept = _Snapshot(kept.version + 1, kept.parts)
            else:
                kept = None
        with self._storage.access_errors():
            self._table.update_incremental()
            self._snapshot = _Snapshot(self._table.version(), [self._table.to_pyarrow_table()])
        self._head = max(self._head, self._snapshot.version)
        return self._snapshot

    def events(self, run_id: str) -> list[Event]:
        """The events of one run, oldest first by (timestamp, event_id)."""
        snapshot = self._current()
        rows = snapshot.table.take(snapshot.rows_of(run_id))
        rows = rows.sort_by([("timestamp", "ascending"), ("event_id", "ascending")])
        return [Event.from_row(row) for row in rows.to_pylist()]

    def runs(
        self,
        name: str | None = None,
        kind: str | None = None,
        status: str | None = None,
        since: int | None = None,
        until: int | None = None,
    ) -> list[RunRecord]:
        """Runs, newest first, filtered by name, kind, status and start time (ns, inclusive)."""
        snapshot = self._current()
        conditions = [
            pc.field("name") == name if name is not None else None,
            pc.field("kind") == kind if kind is not None else None,
            pc.field("started") >= since if since is not None else None,
            pc.field("started") <= until if until is not None else None,
        ]
        chosen = snapshot.runs
        for condition in conditions:
            if condition is not None:
                chosen = chosen.filter(condition)
        return _records(snapshot, chosen, status)

    def latest(self) -> list[RunRecord]:
        """The newest run of each run name, sorted by name."""
        snapshot = self._current()
        newest = snapshot.runs.sort_by([("started", "descending"), ("run_id", "descending")])
        return by_name(_records(snapshot, _first_per(newest, "name")))

    def touching(self, table: str) -> list[RunRecord]:
        """Runs that committed a transaction changing ``table``, newest first."""
        snapshot = self._current()
        commits = snapshot.commits
        tables = commits["tables"].combine_chunks()
        hits = pc.filter(pc.list_parent_indices(tables), pc.equal(pc.list_flatten(tables), table))
        run_ids = pc.unique(commits["run_id"].take(hits))
        chosen = snapshot.runs.filter(pc.is_in(snapshot.runs["run_id"], value_set=run_ids))
        return _records(snapshot, chosen)


def check_location(location: str, uri: str, options: dict[str, str] | None = None) -> None:
    """Refuse a location (``uri`` names it in errors) that holds something other than a run
    log: a Delta table of other columns, or files outside a Delta log. Nothing is changed."""
    if "://" not in location and os.path.isfile(location):
        raise location_taken(uri, "is a file")
    if DeltaTable.is_deltatable(location, options):
        table = DeltaTable(location, storage_options=options)
        names = [f.name for f in table.schema().fields]
        if VERSION_PROPERTY in table.metadata().configuration or names in _EVENT_COLUMNS:
            return
        shown = ", ".join(names[:6]) + (", ..." if len(names) > 6 else "")
        raise location_taken(uri, f"holds a Delta table of other data (columns {shown})")
    found = [m["path"] for m in Storage(location, dict(options or {})).list("")]
    others = [path for path in found if not path.startswith("_delta_log/")]
    if others:
        shown = ", ".join(others[:3]) + (", ..." if len(others) > 3 else "")
        raise location_taken(uri, f"holds {len(others)} files that are not a run log ({shown})")


_EVENT_COLUMNS = [event_schema(version).names for version in PAYLOAD_FIELDS]


class _Snapshot:
    """The events at one Delta version, with the tables queries use built on first use."""

    def __init__(self, version: int, parts: list[pa.Table]):
        self.version = version
        self.parts = parts

    def extended(self, version: int, data: pa.Table) -> _Snapshot:
        """This snapshot plus rows appended in the commit that made ``version``."""
        return _Snapshot(version, [*self.parts, data.cast(self.parts[0].schema)])

    @cached_property
    def table(self) -> pa.Table:
        """Every event, payload structs kept."""
        return pa.concat_tables(self.parts).combine_chunks()

    def rows_of(self, run_id: str) -> pa.Array:
        """The positions of one run's events in ``table`` (none for an unknown run)."""
        groups, position = self._rows_by_run
        where = position.get(run_id)
        return pa.array([], pa.int64()) if where is None else groups[where].values

    @cached_property
    def _rows_by_run(self) -> tuple[pa.ChunkedArray, dict[str, int]]:
        """Each run's event positions in ``table`` (one hash grouping per version, so asking
        for a run's events takes its rows instead of scanning every event) and where each run
        sits in that list."""
        numbered = pa.table(
            {"run_id": self.table["run_id"], "_row": pa.array(np.arange(self.table.num_rows))}
        )
        groups = numbered.group_by("run_id").aggregate([("_row", "list")])
        position = {run_id: i for i, run_id in enumerate(groups["run_id"].to_pylist())}
        return groups["_row_list"], position

    @cached_property
    def runs(self) -> pa.Table:
        """One row per RUN_STARTED with ``RUN_COLUMNS`` (its newest ending joined, if any)."""
        flat = self.table.flatten()
        starts = flat.filter(pc.field("event_type") == EventType.RUN_STARTED.value)
        ends = flat.filter(pc.field("event_type").isin(END_TYPES)).sort_by(_NEWEST_FIRST)
        starts = pa.table(
            {
                "run_id": starts["run_id"],
                "started": starts["timestamp"],
                "catalog": starts["catalog"],
                **{f: starts[f"run.{f}"] for f in RUN_FIELDS},
            }
        )
        ends = pa.table(
            {
                "run_id": ends["run_id"],
                "end_type": ends["event_type"],
                "ended": ends["timestamp"],
                **{f: ends[f"outcome.{f}"] for f in OUTCOME_FIELDS},
            }
        )
        joined = starts.join(_first_per(ends, "run_id"), "run_id", join_type="left outer")
        return joined.select(list(RUN_COLUMNS)).combine_chunks()

    @cached_property
    def commits(self) -> pa.Table:
        """Run id, transaction id and tables of every TRANSACTION_COMMITTED, in time order."""
        flat = self.table.flatten()
        commits = flat.filter(pc.field("event_type") == EventType.TRANSACTION_COMMITTED.value)
        commits = commits.sort_by([("timestamp", "ascending"), ("event_id", "ascending")])
        return pa.table(
            {
                "run_id": commits["run_id"],
                "transaction_id": commits["transaction.transaction_id"],
                "tables": commits["transaction.tables"],
            }
        ).combine_chunks()


_FLOAT_FIELDS = [
    (payload, name)
    for payload, fields in PAYLOAD_FIELDS[SCHEMA_VERSION].items()
    for name, kind in fields
    if kind == "float64"
]


def _restored(rows: list[dict]) -> list[dict]:
    """Event rows read from a commit file, their non-finite floats (written as text, since
    standard JSON has no such numbers) back as floats."""
    for row in rows:
        for payload, name in _FLOAT_FIELDS:
            if row.get(payload):
                row[payload][name] = float_of(row[payload].get(name))
    return rows


def _records(snapshot: _Snapshot, chosen: pa.Table, status: str | None = None) -> list[RunRecord]:
    """Records of the chosen rows of ``snapshot.runs``, with their transactions."""
    commits = snapshot.commits
    mine = commits.filter(pc.is_in(commits["run_id"], value_set=chosen["run_id"].combine_chunks()))
    pairs = zip(mine["run_id"].to_pylist(), mine["transaction_id"].to_pylist(), strict=True)
    return run_records(chosen.to_pylist(), pairs, status)


def _first_per(table: pa.Table, key: str) -> pa.Table:
    """The first row of each ``key`` value, in ``table``'s order."""
    numbered = table.append_column("_row", pa.array(np.arange(table.num_rows)))
    return table.take(numbered.group_by(key).aggregate([("_row", "min")])["_row_min"])


def _set_version(table: DeltaTable) -> None:
    """Record this schema version in the table's properties."""
    # raise_if_not_exists=False: delta-rs refuses property names outside its own otherwise.
    table.alter.set_table_properties(
        {VERSION_PROPERTY: str(SCHEMA_VERSION)}, raise_if_not_exists=False
    )
