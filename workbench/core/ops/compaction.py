"""Automatic compaction: after a commit, fold a table's small files (and files whose deletion
vectors delete much of them) into right-sized ones, in a commit of its own that changes no row.

A step is planned on the committed state (``delta.compaction_plan``), its files are written by
the engine that made the commit (Spark and Ray on their workers) while no lease is held, and
only then does it take the table's lease, without queueing: if a writer holds it, or any file
the step read changed meanwhile, the step is dropped (its files deleted) and the next commit
tries again. So a compaction never fails a write nor makes one wait for its work; a writer
arriving during its commit queues for that commit only, as behind any other writer. The commit
is recorded as ``AUTO_COMPACT`` with ``dataChange: false`` actions, each output taking its
inputs' place in write order; time travel reads the versions before it, and vacuum keeps their
files while they are retained.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from workbench.core.base.errors import TransactionConflictError
from workbench.core.base.types import DEFAULT_ENGINE
from workbench.core.catalog.locations import Location, OpenTable
from workbench.core.data.engine import get_engine
from workbench.core.delta.compaction_plan import CompactionSettings, plan_step
from workbench.core.delta.data_files import Rewrite, discard
from workbench.core.transactions.catalog_log import log_of
from workbench.core.transactions.context import independent
from workbench.core.transactions.history import COMPACTION
from workbench.core.transactions.opening import committed_table
from workbench.core.transactions.transaction import Transaction, on_commit

if TYPE_CHECKING:
    from workbench.core.delta.data_files import DataFile

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class CompactionStep:
    """What one compaction step folded: files in and out, their bytes."""

    table: str
    files_removed: int
    files_added: int
    bytes_removed: int
    bytes_added: int


def compact_after_commit(txn: Transaction, rows: list[dict[str, Any]]) -> None:
    """A step on each table a commit changed (not for compactions, nor when the transaction
    turned it off). Never raises: a failed step is logged and changes nothing."""
    if not txn.auto_compact:
        return
    for row in rows:
        if row["table_name"] is None or row["table_version"] is None:
            continue
        if COMPACTION in str(row["operation"]).split("+"):
            continue
        loc = Location(txn.catalog, txn.catalog_name, row["namespace"], row["table_name"])
        try:
            compact_step(loc, (row["engine"] or DEFAULT_ENGINE).split("+")[0])
        except Exception as e:  # a compaction never fails the write it follows
            log.warning("Automatic compaction of %s skipped: %s", loc.qualified, e)


def compact_step(loc: Location, engine: str = DEFAULT_ENGINE) -> CompactionStep | None:
    """Run one compaction step on a table, if its files call for one: None when none was
    needed or it yielded to a writer."""
    entry = log_of(loc.catalog).state.tables.get((loc.namespace, loc.name))
    if entry is None:
        return None
    table = committed_table(loc, entry)
    if table.schemaless:
        return None
    chosen = plan_step(table.files, CompactionSettings.of(table.properties), _eligible(loc))
    if not chosen:
        return None
    written = get_engine(engine).compact(table, chosen)
    try:
        committed = _commit(loc, table, Rewrite(written, chosen), engine)
    except BaseException:
        discard(written, table.storage)
        raise
    if not committed:
        discard(written, table.storage)
        return None
    return CompactionStep(
        loc.qualified,
        len(chosen),
        len(written),
        sum(f.size for f in chosen),
        sum(f.size for f in written),
    )


def _eligible(loc: Location) -> Callable[[DataFile], bool]:
    """Which files a step may fold: on a branch only the files the branch wrote since it last
    matched main (main's files, and those the branch published, stay as main has them, so
    publishing again does not remove them), on main all."""
    line = loc.catalog
    if line.record is None:
        return lambda f: True
    from workbench.core.ops.publish import last_matched  # branches' machinery: on a branch only

    matched = last_matched(line, (loc.namespace, loc.name))
    if matched is None:
        return lambda f: True
    inherited = {f.path for f in committed_table(replace(loc, catalog=line.trunk), matched).files}
    return lambda f: f.path not in inherited


def _commit(loc: Location, planned: OpenTable, rewrite: Rewrite, engine: str) -> bool:
    """Commit the step unless a writer holds the table or changed a file it read; False when
    it yielded."""
    with independent(loc.catalog, loc.catalog_name, f"compact {loc.qualified}") as txn:
        txn.auto_compact = False
        try:
            change = txn.lease_table(loc.namespace, loc.name, queue=False)
        except TransactionConflictError:
            txn.abort()
            return False
        current = {f.identity for f in change.table.files}
        changed = change.entry is None or any(f.identity not in current for f in rewrite.removed)
        if changed or not _still_there(loc, rewrite):
            txn.abort()
            return False
        txn.stage(change, rewrite, in_place_of=rewrite.removed[0].modified)
        txn.record(change, COMPACTION, engine=engine)
    return True


on_commit(compact_after_commit)


def _still_there(loc: Location, rewrite: Rewrite) -> bool:
    """Whether every file the step wrote is still in the folder: a vacuum that held the table
    before the step took it deletes files no version names, which the step's were until now."""
    storage = loc.catalog.storage
    return all(storage.exists(storage.key_of(w.uri)) for w in rewrite.written)
