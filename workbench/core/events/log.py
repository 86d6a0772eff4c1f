"""The run log's interface: what every backend (SQLite, Delta) stores and answers, and the
run records the answers are made of.

A backend stores events and answers queries about runs; it is chosen by URI
(``sqlite:///abs/path.db``, ``delta:///abs/path``, ``delta+s3://bucket/path``). Both backends
answer every query identically (the parity tests hold them to it).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from workbench.core.base.errors import EventLogLocationError
from workbench.core.events.model import Event


class RunStatus:
    """A run's status: running until it ends; abandoned when its process died first."""

    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    ABANDONED = "abandoned"


@dataclass(frozen=True)
class RunRecord:
    """One run as the log knows it: what it was, when, and how it ended."""

    run_id: str
    name: str
    kind: str
    status: str
    started: int  # ns since the epoch
    ended: int | None = None
    duration_ns: int | None = None
    parameters: str | None = None  # JSON object
    error_type: str | None = None
    error_message: str | None = None
    catalog: str | None = None
    host: str | None = None
    pid: int | None = None
    process_started: int | None = None
    notebook: str | None = None
    transactions: tuple[str, ...] = field(default_factory=tuple)  # ids committed inside it


class EventLog(Protocol):
    """A store of run events; every query answers from the events appended so far."""

    uri: str

    def append(self, events: Event | Sequence[Event]) -> None:
        """Store one event or a batch, all or nothing."""

    def events(self, run_id: str) -> list[Event]:
        """The events of one run, oldest first."""

    def runs(
        self,
        name: str | None = None,
        kind: str | None = None,
        status: str | None = None,
        since: int | None = None,
        until: int | None = None,
    ) -> list[RunRecord]:
        """Runs, newest first, filtered by name, kind, status and start time (ns, inclusive)."""

    def latest(self) -> list[RunRecord]:
        """The newest run of each run name, sorted by name."""

    def touching(self, table: str) -> list[RunRecord]:
        """Runs that committed a transaction changing ``table`` ("namespace.table"), newest
        first: the table's lineage."""


def settled(record: RunRecord) -> RunRecord:
    """A run without an ending is abandoned when its process is known to be gone: on this
    host, no process with its pid and start time is alive (elsewhere it stays running)."""
    import socket
    from dataclasses import replace

    if record.status != RunStatus.RUNNING or record.host != socket.gethostname():
        return record
    if _alive(record.pid, record.process_started):
        return record
    return replace(record, status=RunStatus.ABANDONED)


def _alive(pid: int | None, started: int | None) -> bool:
    import psutil

    if pid is None:
        return False
    try:
        process = psutil.Process(pid)
        return not started or abs(int(process.create_time() * 1e9) - started) < 10**9
    except psutil.Error:
        return False


URI_FORMS = ("sqlite:///abs/path.db", "delta:///abs/path", "delta+s3://bucket/path")


def location_taken(uri: str, what: str) -> EventLogLocationError:
    """The error for a run-log location that holds something else (``what`` says what)."""
    return EventLogLocationError(
        f"The run log cannot go to {uri!r}: that location {what}. A run log needs a location "
        "of its own and changes nothing it did not create; choose a new folder or file with "
        "dc.init(events='delta:///abs/new/folder' or 'sqlite:///abs/runs.db'), the "
        "WORKBENCH_EVENTS variable or [events] uri in workbench.toml."
    )


def parse_event_log_uri(uri: object, options: Mapping[str, Any] | None = None) -> tuple[str, str]:
    """The backend (``sqlite`` or ``delta``) and location a run-log URI names, checked without
    opening anything."""
    from workbench.core.base.errors import InvalidArgumentError

    scheme, separator, rest = uri.partition("://") if isinstance(uri, str) else ("", "", "")
    if separator and rest.startswith("/") and scheme == "sqlite" and not options:
        return "sqlite", rest
    if separator and rest.startswith("/") and scheme == "delta":
        return "delta", rest
    if separator and rest and scheme.startswith("delta+"):
        return "delta", f"{scheme[len('delta+') :]}://{rest}"
    extra = " (a SQLite log takes no options)" if scheme == "sqlite" and options else ""
    raise InvalidArgumentError(
        f"Cannot open a run log at {uri!r}{extra}; use one of: {', '.join(URI_FORMS)}."
    )
