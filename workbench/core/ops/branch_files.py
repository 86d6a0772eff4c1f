"""The files branches wrote in the table folders: what a dropped branch frees, and what vacuum
keeps for the live ones (the ``main`` versions they started from, the files they wrote)."""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

from workbench.core.catalog.branch_records import (
    BRANCHES_KEY,
    branch_key,
    leased_name,
    read_record,
    records,
)
from workbench.core.catalog.catalogs import Catalog
from workbench.core.catalog.folders import remove_folder
from workbench.core.delta.commits import TableActions
from workbench.core.delta.vector_descriptor import Descriptor
from workbench.core.storage import leases
from workbench.core.transactions.catalog_log import log_of
from workbench.core.transactions.catalog_state import TableEntry
from workbench.core.transactions.opening import table_uri

TableVersions = dict[tuple[str, str, str], set[int]]  # (namespace, table, incarnation) -> versions


def branch_files(bound: Catalog) -> dict[tuple[str, str, str], set[str]]:
    """Files (data and deletion vectors) the branch's transactions added, by (namespace,
    table, incarnation), relative to the table folder."""
    files: dict[tuple[str, str, str], set[str]] = {}
    log = log_of(bound)
    log.refresh()
    for row in log.rows:
        if row["actions"] is not None:
            key = (row["namespace"], row["table_name"], row["incarnation"])
            files.setdefault(key, set()).update(added_files(row["actions"]))
    return files


def added_files(actions: str) -> set[str]:
    """The files a log row's actions add: data files and their deletion vectors' files."""
    found = set()
    for path, action in TableActions.from_json(actions).adds.items():
        found.add(path)
        vector = action["add"].get("deletionVector")
        if vector and not Descriptor.from_action(vector).inline:
            found.add(Descriptor.from_action(vector).file_name())
    return found


def branch_needs(trunk: Catalog) -> tuple[TableVersions, dict[str, set[str]]]:
    """What the live branches need of the table folders, so vacuum keeps it: the ``main``
    versions each branch started from, by (namespace, table, incarnation), and the files each
    branch wrote, by incarnation."""
    versions: TableVersions = {}
    files: dict[str, set[str]] = {}
    for record in records(trunk.storage):
        bound = trunk.on_record(record)
        for (_, _, incarnation), paths in branch_files(bound).items():  # the log refreshed
            files.setdefault(incarnation, set()).update(paths)
        log = log_of(bound)
        for (ns, table), entry in log.base.tables.items():
            versions.setdefault((ns, table, entry.incarnation), set()).add(entry.version)
        for (ns, table), entry in log.state.tables.items():  # e.g. a table it created: its
            versions.setdefault((ns, table, entry.incarnation), set())  # folder is needed
    return versions, files


@contextmanager
def branch_writers_held(
    trunk: Catalog, tables: Iterable[tuple[str, str]], holder: str
) -> Iterator[set[tuple[str, str]]]:
    """Take every live branch's lease on ``tables`` without waiting, so no branch writer
    stages files in their folders meanwhile; yield the tables a branch writer holds now
    (vacuum leaves their folders alone this time). The leases taken go back at the end."""
    taken: list[tuple[str, str]] = []
    busy: set[tuple[str, str]] = set()
    since = time.time_ns()
    try:
        for record in records(trunk.storage):
            for namespace, table in sorted(tables):
                name = leased_name(table, record)
                if leases.try_acquire(trunk.storage, namespace, name, holder, since):
                    taken.append((namespace, name))
                else:
                    busy.add((namespace, table))
        yield busy
    finally:
        for namespace, name in taken:
            leases.release(trunk.storage, namespace, name, holder)


def remove_dropped_branch_folders(trunk: Catalog, dry_run: bool) -> list[str]:
    """Folders of branches whose drop was cut short (no record names them any more)."""
    removed = []
    for name in trunk.storage.folders(BRANCHES_KEY):
        record = read_record(trunk.storage, name)
        for branch_id in trunk.storage.folders(branch_key(name)):
            if record is None or branch_id != record.id:
                removed.append(f"{name}/{branch_id}")
                if not dry_run:
                    remove_folder(trunk, f"{branch_key(name)}/{branch_id}")
    return removed


def free_branch_files(trunk: Catalog, written: dict[tuple[str, str, str], set[str]]) -> None:
    """Delete a dropped branch's files in tables ``main`` holds, unless ``main`` uses them."""
    main_log = log_of(trunk)
    main_log.refresh()
    for (ns, table, incarnation), paths in written.items():
        rows = [r for r in main_log.rows if r["incarnation"] == incarnation]
        if not rows or any(r["actions"] is None and r["table_version"] is not None for r in rows):
            continue  # a table only the branch had (its folder goes), or an old log: vacuum
        used = {path for r in rows if r["actions"] for path in added_files(r["actions"])}
        folder = table_uri(trunk, ns, table, TableEntry(0, incarnation))
        base = trunk.root.rstrip("/") + "/"
        for path in paths - used:
            if "://" not in path and not path.startswith("/"):
                trunk.storage.delete(f"{folder.removeprefix(base)}/{path}")
