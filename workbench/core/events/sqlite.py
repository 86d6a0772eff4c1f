"""The run log in one SQLite file: an ``events`` table queried in SQL.

Each payload field is a column ``<payload>__<field>`` (a list of strings as JSON text), so
every query is plain SQL over indexed columns. The file runs in WAL mode and appends take the
write lock up front (``BEGIN IMMEDIATE``) under a busy timeout, so several processes can
append at once. The schema version sits in ``PRAGMA user_version``; an older file gains the
newer columns when opened.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from workbench.core.base.identifiers import quote_identifier
from workbench.core.base.json_text import finite_or_text, float_of
from workbench.core.events.log import RunRecord, location_taken
from workbench.core.events.model import (
    COMMON_FIELDS,
    PAYLOAD_FIELDS,
    PAYLOAD_OF,
    SCHEMA_VERSION,
    Event,
    EventType,
    check_schema_version,
)
from workbench.core.events.records import (
    END_TYPES,
    OUTCOME_FIELDS,
    RUN_FIELDS,
    by_name,
    run_records,
)


def _sql(identifier: str) -> str:
    """A column name quoted for SQLite."""
    return quote_identifier(identifier, '"')


BUSY_TIMEOUT_SECONDS = 60.0  # how long an append waits for another process's write lock
_SQL_TYPES = {"string": "TEXT", "int64": "INTEGER", "float64": "REAL", "list<string>": "TEXT"}
_STARTED = EventType.RUN_STARTED.value
_COMMITTED = EventType.TRANSACTION_COMMITTED.value


def _columns(version: int) -> list[tuple[str, str]]:
    """The events table's columns (name, payload field type) at a schema version."""
    return [*COMMON_FIELDS] + [
        (f"{payload}__{name}", kind)
        for payload, fields in PAYLOAD_FIELDS[version].items()
        for name, kind in fields
    ]


_COLUMNS = _columns(SCHEMA_VERSION)
_LISTS = {name for name, kind in _COLUMNS if kind == "list<string>"}
_FLOATS = {name for name, kind in _COLUMNS if kind == "float64"}  # NaN would be stored as NULL
_INSERT = (
    f"INSERT INTO events ({', '.join(_sql(c) for c, _ in _COLUMNS)}) "
    f"VALUES ({', '.join('?' for _ in _COLUMNS)})"
)
_INDEXES = {
    "events_run": ("run_id", "timestamp"),
    "events_type_name": ("event_type", "run__name"),
    "events_time": ("timestamp",),
}
# One row per RUN_STARTED with records.RUN_COLUMNS; `e` is the run's newest ending, if any.
_SELECT_RUNS = f"""
SELECT s.run_id, s.timestamp AS started, s.catalog,
       {", ".join(f"s.{_sql('run__' + f)} AS {_sql(f)}" for f in RUN_FIELDS)},
       e.event_type AS end_type, e.timestamp AS ended,
       {", ".join(f"e.{_sql('outcome__' + f)} AS {_sql(f)}" for f in OUTCOME_FIELDS)}
FROM events AS s
LEFT JOIN events AS e ON e.rowid = (
    SELECT rowid FROM events
    WHERE run_id = s.run_id AND event_type IN ({", ".join("?" for _ in END_TYPES)})
    ORDER BY timestamp DESC, event_id DESC LIMIT 1)
WHERE s.event_type = '{_STARTED}'"""
_SELECT_COMMITS = f"""
SELECT run_id, transaction__transaction_id FROM events
WHERE event_type = '{_COMMITTED}' AND run_id IN (SELECT s.run_id FROM events AS s
                                              WHERE s.event_type = '{_STARTED}' {{where}})
ORDER BY timestamp, event_id"""
_NEWEST_PER_NAME = f"""s.rowid IN (
    SELECT rowid FROM (
        SELECT rowid, ROW_NUMBER() OVER (
            PARTITION BY run__name ORDER BY timestamp DESC, run_id DESC) AS n
        FROM events WHERE event_type = '{_STARTED}')
    WHERE n = 1)"""
_TOUCHING = f"""s.run_id IN (
    SELECT t.run_id FROM events AS t, json_each(t.transaction__tables) AS j
    WHERE t.event_type = '{_COMMITTED}' AND j.value = ?)"""


def _use_wal(db: sqlite3.Connection) -> None:
    """Put the file in WAL mode (once; after that a no-op). The switch needs the file to itself,
    and SQLite answers a switch that meets another connection's lock with "database is
    locked" at once, without the busy wait: retried here within the busy timeout (threads
    opening a new run log together)."""
    deadline = time.monotonic() + BUSY_TIMEOUT_SECONDS
    while True:
        try:
            db.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as e:
            if "locked" not in str(e) or time.monotonic() > deadline:
                raise
            time.sleep(0.01)


class SqliteEventLog:
    """The run log in a SQLite file at ``path`` (created on first open)."""

    def __init__(self, path: str | os.PathLike[str]):
        self.path = os.path.abspath(path)
        self.uri = f"sqlite://{self.path}"
        check_location(self.path, self.uri)
        # one connection for every thread of this process, one transaction at a time
        self._lock = threading.RLock()
        self._db = sqlite3.connect(
            self.path, timeout=BUSY_TIMEOUT_SECONDS, isolation_level=None, check_same_thread=False
        )
        self._db.row_factory = sqlite3.Row
        try:
            _use_wal(self._db)
            self._prepare()
        except BaseException:
            self._db.close()
            raise

    def close(self) -> None:
        """Release the file."""
        self._db.close()

    @contextmanager
    def _transaction(self, mode: str = "") -> Iterator[sqlite3.Connection]:
        """One transaction: ``IMMEDIATE`` takes the write lock first (waiting under the busy
        timeout) so a writer never fails half-way; a plain one reads one consistent state. The
        threads of this process take turns."""
        with self._lock:
            self._db.execute(f"BEGIN {mode}")
            try:
                yield self._db
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def _prepare(self) -> None:
        """Create the table, or migrate an older one: add the columns newer versions define."""
        with self._transaction("IMMEDIATE") as db:
            found = db.execute("PRAGMA user_version").fetchone()[0]
            check_schema_version(found, self.uri)
            if found == SCHEMA_VERSION:
                return
            existing = {row["name"] for row in db.execute("PRAGMA table_info(events)")}
            if existing:
                for name, kind in _COLUMNS:
                    if name not in existing:
                        db.execute(f"ALTER TABLE events ADD COLUMN {_sql(name)} {_SQL_TYPES[kind]}")
            else:
                columns = ", ".join(f"{_sql(c)} {_SQL_TYPES[k]}" for c, k in _COLUMNS)
                db.execute(f"CREATE TABLE events ({columns})")
            for index, on in _INDEXES.items():
                db.execute(
                    f"CREATE INDEX IF NOT EXISTS {_sql(index)} "
                    f"ON events ({', '.join(_sql(c) for c in on)})"
                )
            db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")

    def append(self, events: Event | Sequence[Event]) -> None:
        """Store one event or a batch in one transaction: all or nothing."""
        batch = [events] if isinstance(events, Event) else list(events)
        with self._transaction("IMMEDIATE") as db:
            db.executemany(_INSERT, [_flat(e) for e in batch])

    def events(self, run_id: str) -> list[Event]:
        """The events of one run, oldest first by (timestamp, event_id)."""
        with self._transaction() as db:
            rows = db.execute(
                "SELECT * FROM events WHERE run_id = ? ORDER BY timestamp, event_id", (run_id,)
            ).fetchall()
        return [_event(row) for row in rows]

    def runs(
        self,
        name: str | None = None,
        kind: str | None = None,
        status: str | None = None,
        since: int | None = None,
        until: int | None = None,
    ) -> list[RunRecord]:
        """Runs, newest first, filtered by name, kind, status and start time (ns, inclusive)."""
        conditions = [
            (f"s.{_sql('run__name')} = ?", name),
            (f"s.{_sql('run__kind')} = ?", kind),
            ("s.timestamp >= ?", since),
            ("s.timestamp <= ?", until),
        ]
        chosen = [(sql, value) for sql, value in conditions if value is not None]
        return self._select(" AND ".join(sql for sql, _ in chosen), [v for _, v in chosen], status)

    def latest(self) -> list[RunRecord]:
        """The newest run of each run name, sorted by name."""
        return by_name(self._select(_NEWEST_PER_NAME, []))

    def touching(self, table: str) -> list[RunRecord]:
        """Runs that committed a transaction changing ``table``, newest first."""
        return self._select(_TOUCHING, [table])

    def _select(self, where: str, params: list[Any], status: str | None = None) -> list[RunRecord]:
        """Records of the started runs matching ``where`` (SQL over ``s``, the RUN_STARTED)."""
        where = f"AND {where}" if where else ""
        with self._transaction() as db:
            rows = db.execute(f"{_SELECT_RUNS} {where}", [*END_TYPES, *params]).fetchall()
            commits = db.execute(_SELECT_COMMITS.format(where=where), params).fetchall()
        return run_records(rows, [tuple(c) for c in commits], status)


def check_location(path: str, uri: str) -> None:
    """Refuse a file (``uri`` names it in errors) holding something other than a run log:
    not a SQLite database, or one with other tables or another ``events`` table. It is read
    only: nothing in it changes."""
    if not os.path.isfile(path) or os.path.getsize(path) == 0:
        return  # a new log (or a folder, which SQLite itself refuses to open)
    try:
        with contextlib.closing(sqlite3.connect(f"{Path(path).as_uri()}?mode=ro", uri=True)) as db:
            db.execute("BEGIN")  # one snapshot: a log being created commits between reads
            version = db.execute("PRAGMA user_version").fetchone()[0]
            tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
            columns = [r[1] for r in db.execute("PRAGMA table_info(events)")]
    except sqlite3.DatabaseError as e:
        raise location_taken(uri, f"is a file but not a SQLite database ({e})") from e
    tables = [t for t in tables if not t.startswith("sqlite_")]  # SQLite's own
    if tables == ["events"] and (
        version > SCHEMA_VERSION  # a newer run log: opening it says to upgrade
        or (version and set(columns) == {c for c, _ in _columns(version)})
    ):
        return
    if not tables and not version:
        return  # an empty database
    if tables == ["events"]:
        raise location_taken(uri, "is a SQLite database whose 'events' table is not a run log")
    shown = ", ".join(sorted(tables)[:6]) + (", ..." if len(tables) > 6 else "")
    held = f"other tables ({shown})" if tables else f"user_version {version}"
    raise location_taken(uri, f"is another application's SQLite database ({held})")


def _flat(event: Event) -> list[Any]:
    """An event as the values of the events table's columns."""
    row = event.row()
    values = [row[c] for c, _ in COMMON_FIELDS]
    for payload, fields in PAYLOAD_FIELDS[SCHEMA_VERSION].items():
        values += [(row[payload] or {}).get(name) for name, _ in fields]
    return [_encoded(c, v) for (c, _), v in zip(_COLUMNS, values, strict=True)]


def _event(row: sqlite3.Row) -> Event:
    """An event from a row of the events table."""
    payload = PAYLOAD_OF[EventType(row["event_type"])]
    fields = {
        name: _decoded(f"{payload}__{name}", row[f"{payload}__{name}"])
        for name, _ in PAYLOAD_FIELDS[SCHEMA_VERSION][payload]
    }
    return Event.from_row({**{c: row[c] for c, _ in COMMON_FIELDS}, payload: fields})


def _encoded(column: str, value: Any) -> Any:
    """A field's value as its column stores it: lists as JSON text, non-finite floats as text
    (SQLite turns a NaN into NULL)."""
    if value is None:
        return None
    if column in _LISTS:
        return json.dumps(value)
    return finite_or_text(value) if column in _FLOATS else value


def _decoded(column: str, value: Any) -> Any:
    if value is None:
        return None
    if column in _LISTS:
        return json.loads(value)
    return float_of(value) if column in _FLOATS else value
