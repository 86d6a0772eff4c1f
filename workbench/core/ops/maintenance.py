"""Maintenance: compact a table's files, and vacuum what no retained time-travel point needs."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from workbench.core.base.arguments import flag, seconds
from workbench.core.base.errors import ClusteringError
from workbench.core.base.types import DEFAULT_ENGINE
from workbench.core.catalog.catalogs import Catalog
from workbench.core.catalog.folders import (
    DROPPED_KEY,
    dropped_key,
    folder_identity,
    live_key,
    move_folder,
    remove_folder,
)
from workbench.core.catalog.locations import locate
from workbench.core.catalog.scope import main_catalog
from workbench.core.data.engine import get_engine
from workbench.core.delta.change_data import CHANGE_DATA_FOLDER, change_files_of
from workbench.core.delta.clustering import (
    CLUSTER_BY_PROPERTY,
    check_clustering,
    clustered_files,
    clustering_argument,
    clustering_of,
    encode_clustering,
)
from workbench.core.delta.commits import commit_key
from workbench.core.delta.compaction_plan import CompactionSettings
from workbench.core.delta.data_files import Rewrite, write_parts, written_row_bytes
from workbench.core.delta.deletion_vectors import vector_files_of
from workbench.core.delta.reading import live_table
from workbench.core.ops.branch_files import (
    branch_needs,
    branch_writers_held,
    remove_dropped_branch_folders,
)
from workbench.core.schema.evolution import SchemaPlan
from workbench.core.storage import leases
from workbench.core.transactions.catalog_log import TransactionLog, log_of
from workbench.core.transactions.context import operation
from workbench.core.transactions.staging import stage_schema_and_properties, staged_or_undone

if TYPE_CHECKING:
    from workbench.core.transactions.table_change import TableChange
    from workbench.core.transactions.transaction import Transaction


def optimize(
    table: str,
    namespace: str | None = None,
    catalog: str | None = None,
    *,
    cluster_by: Sequence[str] | None = None,
) -> dict[str, Any]:
    """Compact a table's small files into larger ones, and fold deletion vectors into the files
    they delete rows of (rewritten without those rows), keeping the rows' order. A clustered
    table (``cluster_by`` sets its ``TableProperty.CLUSTER_BY``) has every live row rewritten in
    clustering order instead, as files of its target size. One catalog transaction; time travel
    still reads the versions before."""
    columns = None if cluster_by is None else clustering_argument(cluster_by, "cluster_by")
    loc = locate(table, namespace, catalog)
    with operation(loc.catalog, f"optimize {loc.qualified}") as txn:
        change = txn.lease_existing(loc.namespace, loc.name, f"optimize {loc.qualified!r}")
        clustering = columns or clustering_of(change.table.properties)
        if clustering:
            return _cluster(txn, change, clustering)
        files = change.table.files
        target = CompactionSettings.of(change.table.properties).target_size
        small = [f for f in files if f.size < target or f.deletion_vector]
        if len(small) < 2 and not any(f.deletion_vector for f in small):
            return {"numFilesAdded": 0, "numFilesRemoved": 0}
        with staged_or_undone(txn, change, "the table was not changed") as made:
            written = get_engine(DEFAULT_ENGINE).compact(change.table, small)
            made.append(Rewrite(written, small))
            txn.stage(change, made[0], in_place_of=small[0].modified)
        txn.record(change, "OPTIMIZE", engine=DEFAULT_ENGINE)
    return _metrics(made[0])


def _cluster(txn: Transaction, change: TableChange, columns: list[str]) -> dict[str, Any]:
    """Rewrite every live row of a table in the clustering order of ``columns`` (recorded as
    the table's clustering when it was another), as files of the table's target size."""
    opened = change.table
    if opened.schemaless:
        raise ClusteringError(
            f"Table {opened.loc.qualified!r} is schemaless: it has no columns to cluster by."
        )
    check_clustering(opened.schema, columns)
    rewrite = Rewrite()
    with staged_or_undone(txn, change, "the table was not changed") as made:
        if columns != clustering_of(opened.properties):
            setting = {CLUSTER_BY_PROPERTY: encode_clustering(columns)}
            stage_schema_and_properties(txn, change, SchemaPlan(opened.schema), setting)
        files = change.table.files
        if files:
            target = CompactionSettings.of(change.table.properties).target_size
            live = live_table(change.table, keep=False)
            rows, starts = clustered_files(live, columns, target, written_row_bytes)
            storage = change.table.storage
            written = write_parts(rows, change.table.schema, change.table.uri, storage, starts)
            rewrite = Rewrite(written, files)
            made.append(rewrite)
            txn.stage(change, rewrite, in_place_of=min(f.modified for f in files))
    txn.describe(change, {"cluster_by": columns})
    txn.record(change, "OPTIMIZE", engine=DEFAULT_ENGINE)
    return {**_metrics(rewrite), "clusterBy": columns}


def _metrics(rewrite: Rewrite) -> dict[str, Any]:
    """What an optimize did, in the names of Delta's optimize metrics."""
    return {
        "numFilesAdded": len(rewrite.written),
        "numFilesRemoved": len(rewrite.removed),
        "filesAdded": {"totalSize": sum(f.size for f in rewrite.written)},
        "filesRemoved": {"totalSize": sum(f.size for f in rewrite.removed)},
    }


@dataclass
class VacuumResult:
    """What ``vacuum`` removed (or would remove, with ``dry_run``)."""

    files: list[str] = field(default_factory=list)
    dropped_tables: list[str] = field(default_factory=list)
    orphan_tables: list[str] = field(default_factory=list)
    dropped_branches: list[str] = field(default_factory=list)  # left by interrupted drops
    busy_tables: list[str] = field(default_factory=list)  # a branch writer held: not vacuumed

    def __str__(self) -> str:
        busy = ""
        if self.busy_tables:
            busy = f"; {len(self.busy_tables)} table(s) a branch is writing left for later"
        return (
            f"{len(self.files)} data file(s), {len(self.dropped_tables)} dropped table(s), "
            f"{len(self.orphan_tables)} orphaned table folder(s) removed{busy}"
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
    cat = main_catalog(catalog)
    branch_versions, branch_files = branch_needs(cat)
    log = log_of(cat)
    current = log.refresh()
    keep = _retained(log, cutoff, branch_versions)
    start = log.version  # commits after it (while vacuum runs) are all kept
    result = VacuumResult()
    tables = {(ns, name) for ns, name, _ in keep}
    with operation(cat, "vacuum") as txn, branch_writers_held(cat, tables, txn.id) as busy:
        for ns, name in current.tables:
            # its lease keeps writers from staging files meanwhile; the table as it is now,
            # after any write vacuum waited for
            latest = txn.lease_table(ns, name).entry
            if (ns, name) in busy:
                result.busy_tables.append(f"{ns}.{name}")
                continue
            if latest is None:
                continue  # dropped while vacuum waited: its folder moved with it
            key = (ns, name, latest.incarnation)
            versions = keep.get(key, set()) | _versions_since(log, start, key) | {latest.version}
            branches = branch_files.get(latest.incarnation, set())
            result.files += _vacuum_table(cat, live_key(ns, name), versions, branches, dry_run)
        for (ns, name, incarnation), versions in keep.items():
            if (ns, name) in busy:
                continue
            if cat.storage.exists(commit_key(dropped_key(incarnation), 0)):
                branches = branch_files.get(incarnation, set())
                key = dropped_key(incarnation)
                result.files += _vacuum_table(cat, key, versions, branches, dry_run)
        needed = {k[2] for k in keep} | {r["incarnation"] for r in _rows_since(log, start)}
        _remove_unneeded_folders(cat, txn, needed, dry_run, result)
    result.dropped_branches = remove_dropped_branch_folders(cat, dry_run)
    return result


def _retained(
    log: TransactionLog, cutoff: int, branch_versions: dict[tuple[str, str, str], set[int]]
) -> dict[tuple[str, str, str], set[int]]:
    """The versions of each table incarnation (namespace, table, incarnation) that a retained
    point reads: the latest state's, the state's at ``cutoff``, every version committed after
    it, and the ``main`` versions live branches started from."""
    at_cutoff = [r for r in log.rows if r["end_time"] <= cutoff]
    oldest = log.state_at(at_cutoff[-1]["sequence"]) if at_cutoff else None
    keep: dict[tuple[str, str, str], set[int]] = {}
    for state in (log.state, oldest):
        for (ns, name), entry in state.tables.items() if state else ():
            keep.setdefault((ns, name, entry.incarnation), set()).add(entry.version)
    for row in log.rows:
        if row["end_time"] > cutoff and row["table_version"] is not None:
            key = (row["namespace"], row["table_name"], row["incarnation"])
            keep.setdefault(key, set()).add(row["table_version"])
    for key, versions in branch_versions.items():
        keep.setdefault(key, set()).update(versions)
    return keep


def _rows_since(log: TransactionLog, version: int) -> list[dict[str, Any]]:
    """The log's rows committed after its ``version`` (as far as it was last refreshed)."""
    rows = log.rows
    first = len(rows)
    while first and rows[first - 1]["sequence"] > version:
        first -= 1
    return rows[first:]


def _versions_since(log: TransactionLog, version: int, key: tuple[str, str, str]) -> set[int]:
    """The versions of table incarnation ``key`` committed after log ``version``."""
    return {
        r["table_version"]
        for r in _rows_since(log, version)
        if (r["namespace"], r["table_name"], r["incarnation"]) == key
        and r["table_version"] is not None
    }


def _vacuum_table(
    catalog: Catalog, key: str, versions: set[int], branch_files: set[str], dry_run: bool
) -> list[str]:
    """Files of a table folder that none of ``versions`` reads and no live branch wrote
    (deleted unless ``dry_run``)."""
    from deltalake import DeltaTable

    uri = catalog.uri(*key.split("/"))
    table = DeltaTable(uri, storage_options=catalog.storage.delta_options)
    unused = table.vacuum(
        retention_hours=0,
        dry_run=True,  # only lists; workbench deletes, so no vacuum commit lands in the table
        enforce_retention_duration=False,
        keep_versions=sorted(versions),
        full=True,
    )
    if "deletionVectors" in (table.protocol().reader_features or ()):  # delta-rs lists them all
        needed = vector_files_of(uri, versions, catalog.storage)
        unused = [path for path in unused if path not in needed]
    unused = [path for path in unused if path not in branch_files]
    if any(path.startswith(f"{CHANGE_DATA_FOLDER}/") for path in unused):
        needed = change_files_of(catalog.storage, key, versions)
        unused = [path for path in unused if path not in needed]
    if not dry_run:
        for path in unused:
            catalog.storage.delete(f"{key}/{path}")
    return [catalog.uri(*key.split("/"), path) for path in unused]


def _remove_unneeded_folders(
    cat: Catalog, txn: Transaction, needed: set[str], dry_run: bool, result: VacuumResult
) -> None:
    """Dropped tables no retained point needs; table folders of creates that never committed
    (each decided holding the table's lease, against the log as it is then, so a table created
    while vacuum ran is never taken for one)."""
    storage = cat.storage
    for incarnation in storage.folders(DROPPED_KEY):
        if incarnation not in needed:
            result.dropped_tables.append(incarnation)
            if not dry_run:
                remove_folder(cat, f"{DROPPED_KEY}/{incarnation}")
    for ns in storage.folders(""):
        if ns.startswith(("_", ".")):
            continue
        for name in storage.folders(ns):
            live = (ns, name) in log_of(cat).state.tables
            if live or folder_identity(cat, live_key(ns, name)) is None:
                continue  # live, or no Delta log: a create may be staging files here right now
            if not leases.try_acquire(storage, ns, name, txn.id, txn.since_ns):
                continue  # a writer is at work in it
            try:
                _remove_unneeded_folder(cat, ns, name, needed, dry_run, result)
            finally:
                leases.release(storage, ns, name, txn.id)


def _remove_unneeded_folder(
    cat: Catalog, ns: str, name: str, needed: set[str], dry_run: bool, result: VacuumResult
) -> None:
    """A table folder the log as it is now does not name as live (its lease held): a drop whose
    folder move was cut short is finished, anything else is removed."""
    log = log_of(cat)
    if (ns, name) in log.refresh().tables:
        return  # created while vacuum ran
    identity = folder_identity(cat, live_key(ns, name)) or ()
    committed = [
        r["incarnation"]
        for r in log.rows
        if (r["namespace"], r["table_name"]) == (ns, name) and r["incarnation"] in identity
    ]
    if committed and committed[0] in needed:  # a drop whose folder move was interrupted
        if not dry_run:
            move_folder(cat, live_key(ns, name), dropped_key(committed[0]))
        return
    result.orphan_tables.append(f"{ns}.{name}")
    if not dry_run:
        remove_folder(cat, live_key(ns, name))
