"""Processes for the reliability tests: writers move value between two tables, readers check sums.

Tables ``bank.a`` and ``bank.b`` hold ``ACCOUNTS`` rows each with merge key ``k``; every transfer
moves an amount from a row of ``a`` to a row of ``b`` (or back) in one catalog transaction, so
``sum(a.v) + sum(b.v)`` must equal ``TOTAL`` in every state the catalog ever shows.
"""

from __future__ import annotations

import os
import random
import sys
import time

import pyarrow as pa

import workbench as dc

ACCOUNTS = 8
START = 100
TOTAL = 2 * ACCOUNTS * START


def setup(root: str) -> None:
    """Create the two tables with their starting balances."""
    dc.init_local(root)
    schema = dc.Schema.of(
        [dc.Field.of(pa.field("k", pa.int64()), is_merge_key=True), pa.field("v", pa.int64())]
    )
    rows = pa.table({"k": list(range(ACCOUNTS)), "v": [START] * ACCOUNTS})
    with dc.transaction(commit_message="open accounts"):
        dc.create_namespace("bank")
        dc.write(rows, "a", namespace="bank", schema=schema)
        dc.write(rows, "b", namespace="bank", schema=schema)


def snapshot_total(as_of: int | None = None) -> int:
    """Sum of both tables read in one snapshot (latest, or as of a past point)."""
    kwargs = {"as_of": as_of} if as_of is not None else {}
    with dc.transaction(**kwargs):
        a = dc.read("a", namespace="bank", read_as=dc.DatasetType.PYARROW)
        b = dc.read("b", namespace="bank", read_as=dc.DatasetType.PYARROW)
    return sum(a.column("v").to_pylist()) + sum(b.column("v").to_pylist())


def transfer(rng: random.Random) -> str:
    """Move a random amount between the tables in one transaction; return its id."""
    src, dst = ("a", "b") if rng.random() < 0.5 else ("b", "a")
    i, j, amount = rng.randrange(ACCOUNTS), rng.randrange(ACCOUNTS), rng.randint(1, 5)

    def move() -> str:
        txn = dc.current_transaction()
        left = dc.read(src, namespace="bank", read_as=dc.DatasetType.PYARROW).to_pylist()
        right = dc.read(dst, namespace="bank", read_as=dc.DatasetType.PYARROW).to_pylist()
        take = next(r["v"] for r in left if r["k"] == i)
        give = next(r["v"] for r in right if r["k"] == j)
        dc.write(pa.table({"k": [i], "v": [take - amount]}), src, namespace="bank")
        dc.write(pa.table({"k": [j], "v": [give + amount]}), dst, namespace="bank")
        return txn.id

    return dc.run_transaction(move, retries=50, commit_message="transfer", backoff_s=0.005)


def writer(root: str, count: int, seed: int, report: str) -> None:
    """Run ``count`` transfers (forever if 0), appending each committed id to ``report``."""
    dc.init_local(root)
    rng = random.Random(seed)
    done = 0
    with open(report, "a") as out:
        while count == 0 or done < count:
            txn_id = transfer(rng)
            out.write(txn_id + "\n")
            out.flush()
            os.fsync(out.fileno())
            done += 1


def reader(root: str, seconds: float, report: str) -> None:
    """Check the total at the latest state and at random past transactions for ``seconds``."""
    dc.init_local(root)
    rng = random.Random(os.getpid())
    checks = violations = 0
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        violations += snapshot_total() != TOTAL
        history = dc.transactions(read_as=dc.DatasetType.PYARROW)
        ends = history.column("end_time").to_pylist()
        violations += snapshot_total(as_of=rng.choice(ends)) != TOTAL
        checks += 2
    with open(report, "w") as out:
        out.write(f"{checks} {violations}\n")


def crash_prone_writer(root: str, seed: int, report: str, pause_before_log: str) -> None:
    """A writer that, when ``pause_before_log`` is set, announces and then sleeps right after
    its table commits and before its catalog log commit, so the test can kill it there."""
    if pause_before_log:
        from workbench.core import txlog

        original = txlog.TransactionLog.append

        def slow_append(self, rows):  # fault injection: widen the window between commits
            with open(pause_before_log, "w") as flag:
                flag.write("paused")
            time.sleep(30)
            return original(self, rows)

        txlog.TransactionLog.append = slow_append
    writer(root, 0, seed, report)


if __name__ == "__main__":
    role, *args = sys.argv[1:]
    if role == "writer":
        writer(args[0], int(args[1]), int(args[2]), args[3])
    elif role == "reader":
        reader(args[0], float(args[1]), args[2])
    elif role == "crash":
        crash_prone_writer(args[0], int(args[1]), args[2], args[3] if len(args) > 3 else "")
    # Reports are fsynced: skip interpreter teardown, where a native thread pool aborted
    # ("terminate called without an active exception") once under heavy load.
    os._exit(0)
