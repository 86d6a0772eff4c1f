"""The run log as datasets: ``dc.runs()``, ``dc.run_events()`` and ``dc.lineage()``, in any
``read_as`` dataset type (pyarrow by default)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields, replace
from typing import TYPE_CHECKING, Any

from workbench.core.base.arguments import flag, optional_whole_number, text
from workbench.core.base.errors import InvalidArgumentError
from workbench.core.base.types import DatasetType
from workbench.core.catalog.scope import get_catalog
from workbench.core.data.datasets import from_pyarrow, parse_dataset_type
from workbench.core.events.config import event_log_for
from workbench.core.events.log import RunRecord, RunStatus
from workbench.core.events.model import Event
from workbench.core.transactions.catalog_log import log_of
from workbench.core.transactions.context import pinned_moment, pinned_state
from workbench.core.transactions.history import history_table, without_compactions
from workbench.core.transactions.time_travel import as_of_instant, instant_ns, resolve_sequence

if TYPE_CHECKING:
    import pyarrow as pa

_TIMES_AND_COUNTS = {"started", "ended", "duration_ns", "pid", "process_started"}
STATUSES = (RunStatus.RUNNING, RunStatus.SUCCEEDED, RunStatus.FAILED, RunStatus.ABANDONED)


def runs(
    name: str | None = None,
    kind: str | None = None,
    status: str | None = None,
    since: Any = None,
    until: Any = None,
    limit: int | None = None,
    read_as: DatasetType | str = DatasetType.PYARROW,
    catalog: str | None = None,
    latest: bool = False,
    as_of: Any = None,
) -> Any:
    """Runs recorded in a catalog's run log, newest first: filter by name, kind, status
    (running, succeeded, failed, abandoned) and start time (``since``/``until``: a time, a
    datetime or ns), keep those of the catalog as of ``as_of`` (a time: started by then, each
    as it stood then; a transaction id or tag: started by the time it committed, each as it
    stood until the next transaction began; in a report's kernel, its pin) that committed
    nothing after, and keep the first ``limit``. ``latest=True`` gives the newest run of each
    name instead (sorted by name): the current status of every pipeline at a glance."""
    if status is not None and status not in STATUSES:
        raise InvalidArgumentError(f"status={status!r} is not a run status; use one of {STATUSES}.")
    limit = optional_whole_number("limit", limit)
    if flag("latest", latest):
        if (name, kind, status, since, until, as_of) != (None,) * 6:
            raise InvalidArgumentError(
                "runs(latest=True) gives the newest run of every name; filter the result instead "
                "of passing name, kind, status, since, until or as_of with it."
            )
        found = event_log_for(catalog).latest()
        return _as(run_table(found[:limit] if limit is not None else found), read_as)
    point = _point_of(as_of, catalog)
    found = event_log_for(catalog).runs(
        name=text("name", name),
        kind=text("kind", kind),
        status=status if point is None else None,  # a status as of the point, below
        since=None if since is None else instant_ns(since, "since"),
        until=None if until is None else instant_ns(until, "until"),
    )
    if point is not None:
        found = [point.as_then(r) for r in found if point.knows(r)]
        found = [r for r in found if status is None or r.status == status]
    return _as(run_table(found[:limit] if limit is not None else found), read_as)


@dataclass(frozen=True)
class _Point:
    """The run log as it was at a point of the catalog's history: runs started by
    ``started_by`` (ns, inclusive; None: any time), events up to ``until`` (likewise), and none
    of the ``later`` transactions (those after the point's catalog state)."""

    until: int | None
    later: frozenset[str]
    started_by: int | None

    def knows(self, record: RunRecord) -> bool:
        """True for a run started by then that committed nothing after the point's state."""
        started = self.started_by is None or record.started <= self.started_by
        return started and not self.later & set(record.transactions)

    def as_then(self, record: RunRecord) -> RunRecord:
        """``record`` as it stood then: still running if it ended later."""
        if record.ended is None or self.until is None or record.ended <= self.until:
            return record
        return replace(
            record,
            status=RunStatus.RUNNING,
            ended=None,
            duration_ns=None,
            error_type=None,
            error_message=None,
        )

    def sees(self, event: Event) -> bool:
        """True for an event that had happened by then."""
        if self.until is not None and event.timestamp > self.until:
            return False
        return event.payload.get("transaction_id") not in self.later


def _point_of(as_of: Any, catalog: str | None) -> _Point | None:
    """The point ``as_of`` names (else the one this process is pinned to; None: neither): a
    time is that moment; a transaction id or tag, the runs started by the time it committed
    (whatever commits came later), as they stood while its state held, that is until the next
    transaction began."""
    import pyarrow.compute as pc

    cat = get_catalog(catalog)
    pinned = pinned_state(cat) if as_of is None else None
    if as_of is None and pinned is None:
        return None
    moment = pinned_moment(cat) if pinned is not None else as_of_instant(cat, as_of)
    log = log_of(cat)
    log.refresh()
    history = history_table(log)  # every transaction, whatever this process is pinned to
    if not history.num_rows:
        return _Point(moment, frozenset(), moment)
    last = pinned.sequence if pinned is not None else resolve_sequence(cat, as_of, "as_of")
    # compaction steps change no row: the state before one still holds, and a run one
    # followed committed nothing after the point
    changes = without_compactions(history)
    later = changes.filter(pc.greater(changes.column("sequence"), last))
    ids = frozenset(later.column("transaction_id").to_pylist())
    if moment is not None:
        return _Point(moment, ids, moment)
    held_until = pc.min(later.column("start_time")).as_py() - 1 if later.num_rows else None
    state = history.filter(pc.equal(history.column("sequence"), last))  # none: before the first
    committed = state.column("end_time")[0].as_py() if state.num_rows else held_until
    return _Point(held_until, ids, committed)


def lineage(
    table: str,
    namespace: str | None = None,
    catalog: str | None = None,
    read_as: DatasetType | str = DatasetType.PYARROW,
) -> Any:
    """The runs whose transactions changed a table, newest first."""
    from workbench.core.catalog.locations import locate

    loc = locate(table, namespace, catalog)
    found = event_log_for(catalog).touching(f"{loc.namespace}.{loc.table_name}")
    return _as(run_table(found), read_as)


def run_events(
    run_id: str,
    read_as: DatasetType | str = DatasetType.PYARROW,
    catalog: str | None = None,
    as_of: Any = None,
) -> Any:
    """The events of one run, oldest first, one column per common and payload field; with
    ``as_of`` (or in a report's pinned kernel) only those that had happened by then (see
    ``runs``)."""
    import pyarrow as pa

    if not isinstance(run_id, str) or not run_id:
        raise InvalidArgumentError(f"run_id={run_id!r} must be a run id from dc.runs().")
    from workbench.core.events.delta import event_schema

    events = event_log_for(catalog).events(run_id)
    point = _point_of(as_of, catalog)
    if point is not None:
        events = [e for e in events if point.sees(e)]
    table = pa.Table.from_pylist([e.row() for e in events], schema=event_schema())
    return _as(table, read_as)


def run_table(records: list[RunRecord]) -> pa.Table:
    """Run records as an Arrow table, one row per run."""
    import pyarrow as pa

    def arrow_type(name: str) -> pa.DataType:
        if name == "transactions":
            return pa.list_(pa.string())
        return pa.int64() if name in _TIMES_AND_COUNTS else pa.string()

    schema = pa.schema([(f.name, arrow_type(f.name)) for f in fields(RunRecord)])
    rows = [{**asdict(r), "transactions": list(r.transactions)} for r in records]
    return pa.Table.from_pylist(rows, schema=schema)


def _as(table: pa.Table, read_as: DatasetType | str) -> Any:
    return from_pyarrow(table, parse_dataset_type(read_as))
