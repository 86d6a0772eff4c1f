"""Processes for the reliability tests: writers move value between two tables, readers check.

Tables ``bank.a`` and ``bank.b`` hold ``ACCOUNTS`` rows each with merge key ``k``; every transfer
moves an amount from a row of ``a`` to a row of ``b`` (or back) in one catalog transaction, so
``sum(a.v) + sum(b.v)`` equals ``TOTAL`` in every state the catalog shows. Each row carries the
id of the transaction that last wrote it (``txn``), so a reader of the table folders can tell
whether it saw a row of a transaction that never committed.

A catalog is named by a JSON spec ``{"root": ..., "options": {...}}`` so workers reach local
and S3 catalogs alike; ``WORKBENCH_HOST_ID`` makes a worker a separate host.
"""

from __future__ import annotations

import json
import os
import random
import sys
import time

import pyarrow as pa
import pyarrow.compute as pc

import workbench as dc
from tests.delta_readers import delta_rows

ACCOUNTS = 8
START = 100
TOTAL = 2 * ACCOUNTS * START
TABLES = ("a", "b")
POLL_SECONDS = 0.1  # readers' pause between checks, so writers get their share of 2 cores


def connect(spec: str) -> dc.Catalog:
    """Make the catalog of ``spec`` this process's default catalog."""
    described = json.loads(spec)
    catalog = dc.Catalog(dc.CatalogProperties(described["root"], described.get("options")))
    dc.init({"default": catalog})
    return catalog


def setup(spec: str) -> None:
    """Create the two tables with their starting balances (merge-on-read when the spec says
    ``"vectors": true``)."""
    connect(spec)
    vectors = {"delta.enableDeletionVectors": "true"} if json.loads(spec).get("vectors") else None
    schema = dc.Schema.of(
        [
            dc.Field.of(pa.field("k", pa.int64()), is_merge_key=True),
            pa.field("v", pa.int64()),
            pa.field("txn", pa.string()),
        ]
    )
    with dc.transaction(commit_message="open accounts"):
        txn = dc.current_transaction().id
        rows = pa.table({"k": range(ACCOUNTS), "v": [START] * ACCOUNTS, "txn": [txn] * ACCOUNTS})
        dc.create_namespace("bank")
        for table in TABLES:
            dc.create_table(table, "bank", schema=schema, table_properties=vectors)
            dc.write(rows, table, namespace="bank")


def read_both() -> dict[str, pa.Table]:
    """Both tables in the current transaction's snapshot."""
    return {t: dc.read(t, namespace="bank", read_as=dc.DatasetType.PYARROW) for t in TABLES}


def snapshot_total(as_of: object = None) -> int:
    """Sum of both tables read in one snapshot (latest, or as of a past point)."""
    with dc.transaction(as_of=as_of) if as_of is not None else dc.transaction():
        tables = read_both()
    return sum(sum(t.column("v").to_pylist()) for t in tables.values())


def transfer(rng: random.Random, retries: int) -> tuple[str | None, int]:
    """Move a random amount between the tables in one transaction, retrying conflicts up to
    ``retries`` times; the committed id (None if it gave up) and the attempts made."""
    src, dst = ("a", "b") if rng.random() < 0.5 else ("b", "a")
    i, j, amount = rng.randrange(ACCOUNTS), rng.randrange(ACCOUNTS), rng.randint(1, 5)
    attempts = 0

    def move() -> str:
        nonlocal attempts
        attempts += 1
        txn = dc.current_transaction().id
        tables = read_both()
        take = tables[src].filter(pc.equal(tables[src]["k"], i))["v"][0].as_py()
        give = tables[dst].filter(pc.equal(tables[dst]["k"], j))["v"][0].as_py()
        dc.write(pa.table({"k": [i], "v": [take - amount], "txn": [txn]}), src, namespace="bank")
        dc.write(pa.table({"k": [j], "v": [give + amount], "txn": [txn]}), dst, namespace="bank")
        return txn

    try:
        txn_id = dc.run_transaction(move, retries=retries, commit_message="transfer")
    except dc.TransactionConflictError:
        return None, attempts
    return txn_id, attempts


def writer(spec: str, count: int, seed: int, report: str, retries: int = 10) -> None:
    """Run ``count`` transfers (forever if 0); each outcome is appended to ``report`` as
    ``<transaction id or -> <attempts>`` once known, so a killed writer loses no record."""
    connect(spec)
    rng = random.Random(seed)
    done = 0
    with open(report, "a") as out:
        print("ready", file=out, flush=True)
        while count == 0 or done < count:
            txn_id, attempts = transfer(rng, retries)
            out.write(f"{txn_id or '-'} {attempts}\n")
            out.flush()
            os.fsync(out.fileno())
            done += 1


def reader(spec: str, stop: str, report: str) -> None:
    """Check the total through the catalog, at the latest state and at random past
    transactions, until the file ``stop`` appears; report checks and violations."""
    connect(spec)
    rng = random.Random(os.getpid())
    checks = violations = 0
    while not os.path.exists(stop):
        violations += snapshot_total() != TOTAL
        history = dc.transactions(read_as=dc.DatasetType.PYARROW)
        ends = history.column("end_time").to_pylist()
        violations += snapshot_total(as_of=rng.choice(ends)) != TOTAL
        checks += 2
        time.sleep(POLL_SECONDS)
    with open(report, "w") as out:
        json.dump({"checks": checks, "violations": violations}, out)


def folder_reader(spec: str, stop: str, report: str) -> None:
    """Poll the tables' folders with deltalake, as a tool outside workbench would, until the
    file ``stop`` appears; report the transaction ids of every row seen and any table that did
    not hold exactly one row per account."""
    from deltalake import DeltaTable

    described = json.loads(spec)
    options = described.get("options")
    root = described["root"].rstrip("/")
    tables = [DeltaTable(f"{root}/bank/{t}", storage_options=options) for t in TABLES]
    seen: set[str] = set()
    polls = violations = 0
    while not os.path.exists(stop):
        for table in tables:
            table.update_incremental()  # follows the Delta log as a long-running reader does
            rows = delta_rows(table).select(["k", "txn"])
            violations += sorted(rows.column("k").to_pylist()) != list(range(ACCOUNTS))
            seen.update(rows.column("txn").to_pylist())
            polls += 1
        time.sleep(POLL_SECONDS)
    with open(report, "w") as out:
        json.dump({"polls": polls, "violations": violations, "seen": sorted(seen)}, out)


CRASH_POINTS = ("before_log_commit", "after_log_commit", "between_table_commits")


def pause_at(point: str, flag: str) -> None:
    """Fault injection: at ``point`` of the next commit, announce it in ``flag`` and stall, so
    the test can kill the process exactly there."""
    from workbench.core.transactions import catalog_log as txlog
    from workbench.core.transactions import rollforward

    def stall() -> None:
        with open(flag, "w") as out:
            out.write(point)
        time.sleep(60)

    if point in ("before_log_commit", "after_log_commit"):
        original_commit = txlog.TransactionLog.commit

        def commit(self, rows):
            if point == "before_log_commit":
                stall()
            published = original_commit(self, rows)
            if published:
                stall()
            return published

        txlog.TransactionLog.commit = commit
    else:
        original_apply = rollforward._apply_commit
        applied: list[object] = []

        def apply_commit(catalog, row):
            original_apply(catalog, row)
            applied.append(row)
            if len(applied) == 1:
                stall()

        rollforward._apply_commit = apply_commit


def crash_prone_writer(spec: str, seed: int, report: str, point: str, flag: str) -> None:
    """A writer that runs until killed; with a crash ``point`` it stalls there for the kill."""
    if point:
        pause_at(point, flag)
    writer(spec, 0, seed, report)


if __name__ == "__main__":
    role, *args = sys.argv[1:]
    if role == "writer":
        writer(args[0], int(args[1]), int(args[2]), args[3], int(args[4]))
    elif role == "reader":
        reader(args[0], args[1], args[2])
    elif role == "folder_reader":
        folder_reader(args[0], args[1], args[2])
    elif role == "crash":
        crash_prone_writer(args[0], int(args[1]), args[2], args[3], args[4])
    # Reports are written: skip interpreter teardown, where Arrow's native thread pools can
    # abort a process at exit (apache/arrow#39862).
    os._exit(0)
