"""Repair of table versions left by transactions that died before their catalog commit.

Every Delta commit a transaction makes is tagged with its id. A later writer finds versions
after the recorded one, checks that their transactions are no longer running, and restores the
table to the recorded version.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from workbench.core.errors import TransactionConflictError
from workbench.core.handles import latest
from workbench.core.layout import TXN_TAG
from workbench.core.lock import is_active

if TYPE_CHECKING:
    from workbench.core.catalog import Catalog


def _history(
    path: str, incarnation: str, first: int, last: int, refresh: bool = True
) -> list[dict[str, Any]]:
    """Commit infos of Delta versions ``first..last`` of a table, newest first."""
    if last < first:
        return []
    return [
        h
        for h in latest(path, incarnation, refresh=refresh).history(limit=last - first + 1)
        if first <= h.get("version", -1) <= last
    ]


def owners(path: str, incarnation: str, first: int, last: int) -> set[str]:
    """Transaction ids tagged on Delta versions ``first..last`` of a claimed table ('' if
    untagged). The handle is not refreshed: the claimant's own writes advanced it to ``last``."""
    return {str(h.get(TXN_TAG, "")) for h in _history(path, incarnation, first, last, False)}


def repair_versions(
    path: str,
    incarnation: str,
    recorded: int,
    restorer: str | None,
    catalog: Catalog,
    allowed_owner: str | None = None,
) -> int:
    """Restore a table to its recorded version if later versions belong to dead transactions;
    return the Delta head afterwards (its content is the recorded version's).

    Versions owned by a running transaction (other than ``allowed_owner``) are a conflict.
    """
    from deltalake import CommitProperties
    from deltalake.exceptions import CommitFailedError

    table = latest(path, incarnation)
    head = table.version()
    if head <= recorded:
        return head
    history = _history(path, incarnation, recorded + 1, head)
    foreign = {str(h.get(TXN_TAG, "")) for h in history} - {allowed_owner, ""}
    live = [t for t in foreign if t != restorer and is_active(catalog, t)]
    if live:
        raise TransactionConflictError(
            f"Table {path!r} is being written by running transaction(s) {live}; wait for them or "
            "retry (dc.run_transaction retries automatically)."
        )
    newest = history[0] if history else {}
    if newest.get("operation") == "RESTORE" and newest.get("operationParameters", {}).get(
        "version"
    ) == str(recorded):
        return head  # already restored to the recorded version by an earlier rollback or repair
    tag = {TXN_TAG: restorer or allowed_owner or "", "workbench.operation": "REPAIR"}
    try:
        table.restore(recorded, commit_properties=CommitProperties(custom_metadata=tag))
        return latest(path, incarnation).version()
    except CommitFailedError as e:
        raise TransactionConflictError(
            f"Table {path!r} changed while it was being repaired ({e}); retry the transaction."
        ) from e
