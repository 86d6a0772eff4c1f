"""The run log as datasets: ``dc.runs()``, ``dc.run_events()`` and ``dc.lineage()``, in any
``read_as`` dataset type (pyarrow by default)."""

from __future__ import annotations

from dataclasses import asdict, fields
from typing import TYPE_CHECKING, Any

from workbench.core.base.arguments import flag, optional_whole_number, text
from workbench.core.base.errors import InvalidArgumentError
from workbench.core.base.types import DatasetType
from workbench.core.catalog.registry import get_catalog
from workbench.core.data.datasets import from_pyarrow, parse_dataset_type
from workbench.core.events.config import event_log_for
from workbench.core.events.log import RunRecord, RunStatus
from workbench.core.transactions.catalog_log import CatalogState, log_of
from workbench.core.transactions.context import pinned_state
from workbench.core.transactions.history import history_table
from workbench.core.transactions.time_travel import instant_ns, resolve_sequence

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
    datetime or ns), keep those of the catalog as of ``as_of`` (a transaction id, tag or time:
    started before its next change, committing nothing after it), and keep the first
    ``limit``. ``latest=True`` gives the newest run of each name instead (sorted by
    name): the current status of every pipeline at a glance."""
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
    found = event_log_for(catalog).runs(
        name=text("name", name),
        kind=text("kind", kind),
        status=status,
        since=None if since is None else instant_ns(since, "since"),
        until=None if until is None else instant_ns(until, "until"),
    )
    pinned = pinned_state(get_catalog(catalog)) if as_of is None else None
    if as_of is not None or pinned is not None:
        found = _known_as_of(found, as_of, pinned, catalog)
    return _as(run_table(found[:limit] if limit is not None else found), read_as)


def _known_as_of(
    found: list[RunRecord], as_of: Any, pinned: CatalogState | None, catalog: str | None
) -> list[RunRecord]:
    """The runs of ``found`` that belong to the catalog as of ``as_of`` (or the ``pinned``
    state): started before the first later transaction began, and committing none of the
    later transactions."""
    import pyarrow.compute as pc

    cat = get_catalog(catalog)
    log = log_of(cat)
    log.refresh()
    history = history_table(log)  # every transaction, whatever this process is pinned to
    if not history.num_rows:
        return found
    last = pinned.sequence if pinned is not None else resolve_sequence(cat, as_of, "as_of")
    later = history.filter(pc.greater(history.column("sequence"), last))
    if not later.num_rows:
        return found
    next_change = pc.min(later.column("start_time")).as_py()
    changed_later = set(later.column("transaction_id").to_pylist())
    return [r for r in found if r.started < next_change and not changed_later & set(r.transactions)]


def lineage(
    table: str,
    namespace: str | None = None,
    catalog: str | None = None,
    read_as: DatasetType | str = DatasetType.PYARROW,
) -> Any:
    """The runs whose transactions changed a table, newest first."""
    from workbench.core.catalog.tables import locate

    loc = locate(table, namespace, catalog)
    found = event_log_for(catalog).touching(f"{loc.namespace}.{loc.table_name}")
    return _as(run_table(found), read_as)


def run_events(
    run_id: str, read_as: DatasetType | str = DatasetType.PYARROW, catalog: str | None = None
) -> Any:
    """The events of one run, oldest first, one column per common and payload field."""
    import pyarrow as pa

    if not isinstance(run_id, str) or not run_id:
        raise InvalidArgumentError(f"run_id={run_id!r} must be a run id from dc.runs().")
    from workbench.core.events.delta import event_schema

    events = event_log_for(catalog).events(run_id)
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
