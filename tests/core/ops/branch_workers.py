"""Processes for the branch concurrency tests: writers appending to tables on ``main`` or on a
branch, each from a host of its own (``WORKBENCH_HOST_ID``), reporting every commit."""

from __future__ import annotations

import os
import sys

import pyarrow as pa

import workbench as dc
from tests.core.transactions.reliability_workers import connect


def appender(spec: str, branch: str, tables: str, count: int, tag: str, report: str) -> None:
    """Append ``count`` one-row batches to each of ``tables`` (comma-separated) on ``branch``,
    one transaction per batch over all tables, retrying conflicts; write each committed
    transaction's id to ``report``."""
    connect(spec)
    names = tables.split(",")
    with open(report, "w") as out:
        for i in range(count):
            row = pa.table({"id": [i], "who": [tag]})

            def batch(row: pa.Table = row) -> str:
                for name in names:
                    dc.write(row, name, mode="append")
                return dc.current_transaction().id

            with dc.branch(branch):
                out.write(dc.run_transaction(batch, retries=50) + "\n")
            out.flush()


if __name__ == "__main__":
    role, *args = sys.argv[1:]
    if role == "appender":
        appender(args[0], args[1], args[2], int(args[3]), args[4], args[5])
    os._exit(0)  # skip interpreter teardown (apache/arrow#39862), as the reliability workers do
