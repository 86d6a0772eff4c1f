"""The run log's events: common fields plus one optional payload per event type, and the
schema versions the stores have been written with.

Every event has an id, a time (ns since the epoch), the run it belongs to, its type and the
catalog it concerns. What else it says depends on its type and sits in that type's payload
(a struct column in Delta, prefixed columns in SQLite); the payloads of other types are null.
A new schema version may add payload fields (never remove or retype them); stores written by
an older version are migrated when opened, and a store written by a newer one is refused.
"""

from __future__ import annotations

import os
import secrets
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from workbench.core.base.errors import EventLogVersionError


class EventType(str, Enum):
    """What happened."""

    RUN_STARTED = "RUN_STARTED"
    RUN_SUCCEEDED = "RUN_SUCCEEDED"
    RUN_FAILED = "RUN_FAILED"
    STEP_STARTED = "STEP_STARTED"
    STEP_FINISHED = "STEP_FINISHED"
    METRIC_LOGGED = "METRIC_LOGGED"
    TRANSACTION_COMMITTED = "TRANSACTION_COMMITTED"


# Payload name -> ordered fields (name, type); types are "string", "int64", "float64",
# "list<string>". Keyed by schema version: each version repeats and extends the one before.
_V1: dict[str, list[tuple[str, str]]] = {
    "run": [
        ("name", "string"),
        ("kind", "string"),
        ("parameters", "string"),  # JSON object
        ("host", "string"),
        ("pid", "int64"),
        ("process_started", "int64"),  # ns; with host and pid, tells a live run from a dead one
    ],
    "outcome": [
        ("status", "string"),
        ("error_type", "string"),
        ("error_message", "string"),
        ("duration_ns", "int64"),
    ],
    "step": [
        ("name", "string"),
        ("status", "string"),
        ("rows_in", "int64"),
        ("rows_out", "int64"),
        ("duration_ns", "int64"),
        ("error_message", "string"),
    ],
    "metric": [("name", "string"), ("value", "float64")],
    "transaction": [
        ("transaction_id", "string"),
        ("tables", "list<string>"),
        ("rows_added", "int64"),
        ("rows_removed", "int64"),
    ],
}
_V2 = {**_V1, "run": [*_V1["run"], ("notebook", "string")]}  # v2: the notebook a run came from
PAYLOAD_FIELDS: dict[int, dict[str, list[tuple[str, str]]]] = {1: _V1, 2: _V2}
SCHEMA_VERSION = max(PAYLOAD_FIELDS)
COMMON_FIELDS = [
    ("event_id", "string"),
    ("timestamp", "int64"),
    ("run_id", "string"),
    ("event_type", "string"),
    ("catalog", "string"),
]
PAYLOAD_OF: dict[EventType, str] = {
    EventType.RUN_STARTED: "run",
    EventType.RUN_SUCCEEDED: "outcome",
    EventType.RUN_FAILED: "outcome",
    EventType.STEP_STARTED: "step",
    EventType.STEP_FINISHED: "step",
    EventType.METRIC_LOGGED: "metric",
    EventType.TRANSACTION_COMMITTED: "transaction",
}


def check_schema_version(found: int, where: str) -> None:
    """Refuse a store written with a newer schema: its fields could not be read faithfully."""
    if found > SCHEMA_VERSION:
        raise EventLogVersionError(
            f"The run log at {where!r} was written with event schema version {found}; this "
            f"workbench reads up to version {SCHEMA_VERSION}. Upgrade workbench to open it."
        )


def new_id() -> str:
    """A unique id that sorts by creation time (ns clock, then random bits)."""
    return f"{time.time_ns():020d}{secrets.token_hex(6)}"


@dataclass(frozen=True)
class Event:
    """One event of the run log; ``payload`` holds the fields of its type's payload."""

    run_id: str
    event_type: EventType
    payload: Mapping[str, Any] = field(default_factory=dict)
    catalog: str | None = None
    timestamp: int = field(default_factory=time.time_ns)
    event_id: str = field(default_factory=new_id)

    @property
    def payload_name(self) -> str:
        """Which payload this event fills."""
        return PAYLOAD_OF[EventType(self.event_type)]

    def row(self, version: int = SCHEMA_VERSION) -> dict[str, Any]:
        """The event as one flat record: common fields, then every payload (null but its own)."""
        record: dict[str, Any] = {
            "event_id": self.event_id,
            "timestamp": self.timestamp,
            "run_id": self.run_id,
            "event_type": EventType(self.event_type).value,
            "catalog": self.catalog,
        }
        for name, fields in PAYLOAD_FIELDS[version].items():
            if name == self.payload_name:
                record[name] = {f: self.payload.get(f) for f, _ in fields}
            else:
                record[name] = None
        return record

    @classmethod
    def from_row(cls, record: Mapping[str, Any]) -> Event:
        """An event from a flat record (missing payload fields of older versions are None)."""
        kind = EventType(record["event_type"])
        payload = dict(record.get(PAYLOAD_OF[kind]) or {})
        for f, _ in PAYLOAD_FIELDS[SCHEMA_VERSION][PAYLOAD_OF[kind]]:
            payload.setdefault(f, None)
        return cls(
            run_id=record["run_id"],
            event_type=kind,
            payload=payload,
            catalog=record["catalog"],
            timestamp=record["timestamp"],
            event_id=record["event_id"],
        )


def this_process() -> dict[str, Any]:
    """Host, pid and process start time: what tells a live run from one killed mid-way."""
    import socket

    return {"host": socket.gethostname(), "pid": os.getpid(), "process_started": _started_ns()}


def _started_ns() -> int:
    """When this process started (ns), so a reused pid is not taken for this process."""
    try:
        import psutil

        return int(psutil.Process().create_time() * 1e9)
    except ImportError:
        return 0
