"""Where a catalog keeps table folders: live tables by name, dropped ones by incarnation.

A table lives at ``<root>/<namespace>/<table>/``. Dropping it moves its folder to
``_workbench/dropped/<incarnation>`` so time travel to before the drop keeps working until
vacuum. The first Delta commit of a folder is tagged with the transaction that created it.
"""

from __future__ import annotations

import hashlib
import json
import os
from typing import TYPE_CHECKING

from workbench.core.txlog import TableEntry, log_of

if TYPE_CHECKING:
    from workbench.core.catalog import Catalog

TXN_TAG = "workbench.txn"  # commit-info key of the transaction that made a Delta commit
DROPPED_DIR = ("_workbench", "dropped")
MAX_ID_LENGTH = 32


def live_path(catalog: Catalog, namespace: str, name: str) -> str:
    """Local path of the table folder readers use while the table exists."""
    return os.path.join(catalog.root, namespace, name)


def dropped_path(catalog: Catalog, incarnation: str) -> str:
    """Where a dropped table's folder is kept for time travel until vacuum."""
    if len(incarnation) > MAX_ID_LENGTH:  # catalogs before fixed-length ids used longer ones
        incarnation = hashlib.sha256(incarnation.encode()).hexdigest()[:MAX_ID_LENGTH]
    return os.path.join(catalog.root, *DROPPED_DIR, incarnation)


def table_uri(catalog: Catalog, namespace: str, name: str, entry: TableEntry) -> str:
    """Folder of the table incarnation ``entry`` refers to (moved there if it was dropped)."""
    moved = dropped_path(catalog, entry.incarnation)
    return moved if os.path.isdir(moved) else live_path(catalog, namespace, name)


def folder_creator(path: str) -> str:
    """The transaction id tagged on a table folder's first Delta commit ('' if unknown)."""

    first = os.path.join(path, "_delta_log", f"{0:020d}.json")
    try:
        with open(first) as f:
            for line in f:
                info = json.loads(line).get("commitInfo")
                if info:
                    return str(info.get(TXN_TAG, ""))
    except (OSError, ValueError):
        pass
    return ""


def committed_incarnation(catalog: Catalog, creator: str, namespace: str, name: str) -> str | None:
    """The incarnation of table ``namespace.name`` that transaction ``creator`` created, if the
    log recorded it (so its folder holds history worth keeping), else None."""
    if not creator:
        return None
    for row in log_of(catalog).rows:
        if (
            row["transaction_id"] == creator
            and row["table_name"] == name
            and row["namespace"] == namespace
        ):
            return row["incarnation"]
    return None
