"""Maintenance: compact a table's files, and vacuum what no retained time-travel point needs."""

from __future__ import annotations

import os
import shutil
import time
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from workbench.core.arguments import flag, seconds
from workbench.core.catalog import get_catalog
from workbench.core.commit import commit_properties
from workbench.core.context import operation
from workbench.core.handles import forget, latest
from workbench.core.layout import (
    DROPPED_DIR,
    committed_incarnation,
    dropped_path,
    folder_creator,
    live_path,
)
from workbench.core.lock import is_active, metadata_dir
from workbench.core.tables import locate, open_table
from workbench.core.transaction import Transaction
from workbench.core.txlog import log_of


def optimize(
    table: str, namespace: str | None = None, catalog: str | None = None
) -> dict[str, Any]:
    """Compact a table's small files into larger ones (one catalog transaction)."""
    loc = locate(table, namespace, catalog)
    with operation(loc.catalog, f"optimize {loc.qualified}") as txn:
        change = txn.touch_table(loc.namespace, loc.name)
        opened = open_table(loc)
        metrics = opened.delta.optimize.compact(
            commit_properties=commit_properties(txn.id, "OPTIMIZE")
        )
        txn.record(change, "OPTIMIZE", opened.delta.version())
    return metrics


@dataclass
class VacuumResult:
    """What ``vacuum`` removed (or would remove, with ``dry_run``)."""

    files: list[str] = field(default_factory=list)
    dropped_tables: list[str] = field(default_factory=list)
    orphan_tables: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        return (
            f"{len(self.files)} data file(s), {len(self.dropped_tables)} dropped table(s), "
            f"{len(self.orphan_tables)} orphaned table folder(s) removed"
        )


def _retention_ns(retain: timedelta | float | int) -> int:
    return int(seconds("retain", retain) * 1_000_000_000)


def vacuum(
    catalog: str | None = None,
    retain: timedelta | float | int = timedelta(days=7),
    dry_run: bool = False,
) -> VacuumResult:
    """Delete files that no time-travel point within ``retain`` (or the latest state) needs,
    dropped tables older than that, and folders of creates that never committed."""
    flag("dry_run", dry_run)
    cutoff = time.time_ns() - _retention_ns(retain)
    cat = get_catalog(catalog)
    log = log_of(cat)
    current = log.refresh()
    at_cutoff = [r for r in log.rows if r["end_time"] <= cutoff]
    oldest = log.state_at(at_cutoff[-1]["sequence"]) if at_cutoff else None
    keep: dict[tuple[str, str, str], set[int]] = {}  # (ns, table, incarnation) -> versions
    for state in (current, oldest):
        for (ns, name), entry in state.tables.items() if state else ():
            keep.setdefault((ns, name, entry.incarnation), set()).add(entry.version)
    for row in log.rows:
        if row["end_time"] > cutoff and row["table_version"] is not None:
            key = (row["namespace"], row["table_name"], row["incarnation"])
            keep.setdefault(key, set()).add(row["table_version"])
    result = VacuumResult()
    with operation(cat, "vacuum") as txn:
        for (ns, name), entry in current.tables.items():
            change = txn.touch_table(ns, name)
            versions = keep[(ns, name, entry.incarnation)] | {change.version}
            path = live_path(cat, ns, name)
            result.files += _vacuum_table(latest(path, entry.incarnation), versions, dry_run, txn)
            if not dry_run:
                txn.record(change, "VACUUM", latest(path, entry.incarnation).version())
        for (_, _, incarnation), versions in keep.items():
            moved = dropped_path(cat, incarnation)
            if os.path.isdir(moved):
                result.files += _vacuum_table(latest(moved, incarnation), versions, dry_run, txn)
    _remove_unneeded_folders(cat, {k[2] for k in keep}, current.tables, dry_run, result)
    return result


def _vacuum_table(table: Any, versions: set[int], dry_run: bool, txn: Transaction) -> list[str]:
    if isinstance(table, str):
        from deltalake import DeltaTable

        table = DeltaTable(table)
    return table.vacuum(
        retention_hours=0,
        dry_run=dry_run,
        enforce_retention_duration=False,
        keep_versions=sorted(versions),
        full=True,
        commit_properties=commit_properties(txn.id, "VACUUM"),
    )


def _remove_unneeded_folders(
    cat: Any,
    needed: set[str],
    live: dict[tuple[str, str], Any],
    dry_run: bool,
    result: VacuumResult,
) -> None:
    """Dropped tables no retained point needs; table folders of creates that never committed."""
    dropped_root = os.path.join(cat.root, *DROPPED_DIR)
    for incarnation in sorted(os.listdir(dropped_root)) if os.path.isdir(dropped_root) else []:
        if incarnation not in needed:
            result.dropped_tables.append(incarnation)
            if not dry_run:
                shutil.rmtree(os.path.join(dropped_root, incarnation))
                forget(os.path.join(dropped_root, incarnation))
    for ns in sorted(os.listdir(cat.root)):
        folder = os.path.join(cat.root, ns)
        if ns.startswith(("_", ".")) or not os.path.isdir(folder):
            continue
        for name in sorted(os.listdir(folder)):
            path = os.path.join(folder, name)
            if (ns, name) in live or not os.path.isdir(os.path.join(path, "_delta_log")):
                continue
            owner = folder_creator(path)
            if owner and is_active(cat, owner):
                continue
            incarnation = committed_incarnation(cat, owner, ns, name)
            if incarnation in needed:  # a drop whose folder move was interrupted: finish it
                if not dry_run:
                    os.makedirs(dropped_root, exist_ok=True)
                    os.replace(path, dropped_path(cat, incarnation))
                    forget(path)
                continue
            result.orphan_tables.append(f"{ns}.{name}")
            if not dry_run:
                shutil.rmtree(path)
                forget(path)
    active = os.path.join(metadata_dir(cat), "active")
    for marker in os.listdir(active) if os.path.isdir(active) and not dry_run else []:
        if not is_active(cat, marker):
            os.remove(os.path.join(active, marker))
