"""Run records from the rows a backend selects: the one place that turns a run's start, its
ending and its transactions into a ``RunRecord``, settles it and orders the answer, so both
backends answer alike.

A backend selects one row per RUN_STARTED with ``RUN_COLUMNS`` (the run payload, and the
outcome of the run's newest RUN_SUCCEEDED or RUN_FAILED, null while it has none), and the
(run id, transaction id) pairs of the selected runs' commits in time order.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from workbench.core.events.log import RunRecord, RunStatus, settled
from workbench.core.events.model import PAYLOAD_FIELDS, SCHEMA_VERSION, EventType

RUN_FIELDS = tuple(f for f, _ in PAYLOAD_FIELDS[SCHEMA_VERSION]["run"])
OUTCOME_FIELDS = ("duration_ns", "error_type", "error_message")
RUN_COLUMNS = ("run_id", "started", "catalog", *RUN_FIELDS, "end_type", "ended", *OUTCOME_FIELDS)
END_TYPES = (EventType.RUN_SUCCEEDED.value, EventType.RUN_FAILED.value)
_STATUS_OF_END = {
    EventType.RUN_SUCCEEDED.value: RunStatus.SUCCEEDED,
    EventType.RUN_FAILED.value: RunStatus.FAILED,
}


def run_records(
    rows: Iterable[Mapping[str, Any]],
    commits: Iterable[tuple[str, str]],
    status: str | None = None,
) -> list[RunRecord]:
    """Settled records of the selected runs with ``status`` (any when None), newest first by
    (started, run_id)."""
    transactions: dict[str, list[str]] = {}
    for run_id, transaction_id in commits:
        transactions.setdefault(run_id, []).append(transaction_id)
    records = [settled(_record(row, transactions.get(row["run_id"], ()))) for row in rows]
    if status is not None:
        records = [r for r in records if r.status == status]
    return sorted(records, key=lambda r: (r.started, r.run_id), reverse=True)


def by_name(records: list[RunRecord]) -> list[RunRecord]:
    """Records sorted by run name, as ``latest()`` answers."""
    return sorted(records, key=lambda r: r.name or "")


def _record(row: Mapping[str, Any], transactions: Iterable[str]) -> RunRecord:
    return RunRecord(
        **{c: row[c] for c in RUN_COLUMNS if c != "end_type"},
        status=_STATUS_OF_END.get(row["end_type"], RunStatus.RUNNING),
        transactions=tuple(transactions),
    )
