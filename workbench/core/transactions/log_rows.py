"""The catalog log's rows of a committing transaction: one per table it changed (with the Delta
actions its commit applies) and one per namespace it created or dropped."""

from __future__ import annotations

from typing import Any, Protocol

from workbench.core.base.json_text import standard_json
from workbench.core.base.types import DEFAULT_ENGINE
from workbench.core.transactions.catalog_state import NAMESPACE_CREATED, NAMESPACE_DROPPED
from workbench.core.transactions.table_change import TableChange


class Committing(Protocol):
    """What the rows say of a committing transaction."""

    id: str
    start_time: int
    commit_message: str | None
    details: dict[str, Any]
    changes: dict[tuple[str, str], TableChange]
    namespace_changes: dict[str, str]


def log_rows(txn: Committing, sequence: int, end_time: int) -> list[dict[str, Any]]:
    """The rows recording ``txn`` as the log's ``sequence``, committed at ``end_time``."""
    common = {
        "transaction_id": txn.id,
        "sequence": sequence,
        "start_time": txn.start_time,
        "end_time": end_time,
        "commit_message": txn.commit_message,
        "status": "COMMITTED",
    }

    def namespace_rows(kind: str) -> list[dict[str, Any]]:
        empty = dict.fromkeys(("table_name", "table_version", "incarnation"))
        return [
            {
                **common,
                **empty,
                "operation": kind,
                "namespace": ns,
                "details": _details_json(txn.details),
                "rows_added": 0,
                "rows_removed": 0,
                "engine": None,
                "actions": None,
            }
            for ns, change in txn.namespace_changes.items()
            if change == kind
        ]

    rows = namespace_rows(NAMESPACE_CREATED)  # first, so tables' namespaces exist
    for change in txn.changes.values():
        if change.pinned is None and change.entry is None:
            continue  # created and dropped (or never written) inside this transaction
        if not change.operations or (change.actions.empty and not change.dropped):
            continue
        rows.append(
            {
                **common,
                "operation": "+".join(dict.fromkeys(change.operations)),
                "namespace": change.namespace,
                "table_name": change.name,
                "table_version": None if change.dropped else change.version,
                "incarnation": change.incarnation,
                "rows_added": change.rows_added,
                "rows_removed": change.rows_removed,
                "engine": "+".join(change.engines) or DEFAULT_ENGINE,
                "details": _details_json({**txn.details, **change.details}),
                "actions": None if change.dropped else change.actions.to_json(),
            }
        )
    rows += namespace_rows(NAMESPACE_DROPPED)
    return rows


def _details_json(details: dict[str, Any]) -> str | None:
    """A table change's details as the log's JSON (None when there are none)."""
    return standard_json(details, sort_keys=True, default=str) if details else None
