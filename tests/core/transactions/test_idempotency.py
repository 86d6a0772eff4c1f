"""Idempotency keys: a write or transaction tagged (app_id, version) commits at most once, on
real tables, with racing threads and processes, read back by deltalake's transaction_version."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest
from deltalake import DeltaTable

import workbench as dc
from tests.conftest import tree_digest
from workbench.exceptions import IdempotencyConflictError, InvalidArgumentError

KEYED = dc.Schema.of(
    [dc.Field.of(pa.field("id", pa.int64()), is_merge_key=True), pa.field("v", pa.int64())]
)


def rows(table: str) -> list[int]:
    return sorted(dc.read(table, read_as="pyarrow").column("id").to_pylist())


def batch(first: int, count: int = 3) -> pd.DataFrame:
    return pd.DataFrame({"id": range(first, first + count), "v": [1] * count})


def test_a_repeated_key_writes_nothing_and_deltalake_reads_the_key(catalog):
    first = dc.write(batch(0), "events", idempotency=("ingest", 7))
    again = dc.write(batch(0), "events", idempotency=("ingest", 7))
    older = dc.write(batch(100), "events", mode="append", idempotency=("ingest", 3))
    assert not first.skipped and again.skipped and older.skipped
    assert again.version == first.version and again.rows_added == 0
    assert rows("events") == [0, 1, 2]
    assert dc.idempotency_version("ingest") == 7
    assert dc.idempotency_version("another") is None
    newer = dc.write(batch(3), "events", mode="append", idempotency=("ingest", 8))
    assert not newer.skipped and rows("events") == [0, 1, 2, 3, 4, 5]
    folder = Path(catalog.root) / "default" / "events"
    assert DeltaTable(str(folder)).transaction_version("ingest") == 8
    assert "skipped" in again._repr_html_() and "skipped" not in first._repr_html_()


def test_a_transaction_over_two_tables_is_exactly_once_as_a_whole(catalog):
    def run(offset: int) -> dc.Transaction:
        with dc.transaction(idempotency=[("orders", offset), ("payments", offset)]) as txn:
            dc.write(batch(offset), "orders", mode="auto")
            dc.write(batch(offset), "payments", mode="auto")
        return txn

    assert not run(0).skipped
    before = tree_digest(catalog.root)
    repeat = run(0)
    assert repeat.skipped and tree_digest(catalog.root) == before
    assert rows("orders") == rows("payments") == [0, 1, 2]
    log_entries = dc.transactions()
    assert len(log_entries) == 1  # the repeat left no trace in the catalog's history
    for table in ("orders", "payments"):
        folder = Path(catalog.root) / "default" / table
        assert DeltaTable(str(folder)).transaction_version("orders") == 0


def test_keys_partly_committed_are_a_conflict_that_changes_nothing(catalog):
    dc.write(batch(0), "t", idempotency=("a", 1))
    before = tree_digest(catalog.root)
    partial = [("a", 1), ("b", 1)]
    with (
        pytest.raises(IdempotencyConflictError, match=r"\['a'\] are committed already"),
        dc.transaction(idempotency=partial),
    ):
        dc.write(batch(10), "t", mode="append")
    assert tree_digest(catalog.root) == before and rows("t") == [0, 1, 2]


def test_one_transaction_cannot_give_an_app_two_versions(catalog):
    with dc.transaction() as txn:
        txn.add_idempotency(("app", 1))
        txn.add_idempotency(("app", 1))  # the same again is fine
        with pytest.raises(InvalidArgumentError, match="twice"):
            dc.write(batch(0), "t", idempotency=("app", 2))
    assert txn.keys == {"app": 1}


def test_a_key_that_must_follow_a_version_conflicts_when_another_run_moved_it(catalog):
    dc.write(batch(0), "t", idempotency=("cursor", 5))
    with dc.transaction() as txn:
        txn.add_idempotency(("cursor", 9), after={"cursor": 5})
        dc.write(batch(3), "t", mode="append", idempotency=("other", 1))
    assert dc.idempotency_version("cursor") == 9
    with (
        pytest.raises(IdempotencyConflictError, match="expected at version 5"),
        dc.transaction() as txn,
    ):
        txn.add_idempotency(("cursor", 12), after={"cursor": 5})
        dc.write(batch(6), "t", mode="append")
    assert rows("t") == [0, 1, 2, 3, 4, 5]


def test_keys_survive_saved_states_and_a_fresh_process(catalog):
    from workbench.core.base.caches import clear_process_caches
    from workbench.core.transactions.catalog_log import STATE_EVERY

    for version in range(STATE_EVERY + 2):
        dc.write(batch(version, 1), "t", mode="auto", idempotency=("app", version))
    clear_process_caches()  # a new reader starts from the saved state
    dc.init_local(catalog.root)
    assert dc.idempotency_version("app") == STATE_EVERY + 1
    assert dc.write(batch(0, 1), "t", mode="append", idempotency=("app", 4)).skipped


def test_keys_stay_on_the_branch_that_committed_them(catalog):
    dc.write(batch(0), "t", idempotency=("app", 1))
    dc.create_branch("trial")
    assert dc.write(batch(3), "t", mode="append", idempotency=("app", 2), branch="trial")
    assert dc.idempotency_version("app", branch="trial") == 2
    assert dc.idempotency_version("app") == 1
    assert dc.write(batch(3), "t", mode="append", idempotency=("app", 2), branch="trial").skipped
    dc.merge_branch("trial")
    assert dc.idempotency_version("app") == 2  # a job that ran on the branch resumes on main
    assert dc.write(batch(3), "t", mode="append", idempotency=("app", 2)).skipped
    assert rows("t") == [0, 1, 2, 3, 4, 5]


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ("ingest", "is not an idempotency key"),
        (("ingest", -1), "at least 0"),
        (("ingest", 1.5), "whole number"),
        (("ingest", True), "whole number"),
        (("", 1), "non-empty string"),
        (("x" * 257, 1), "at most 256"),
        (("workbench", 1), "workbench's own catalog commits"),
        ([("a", 1), ("a", 2)], "twice"),
        ([("a", 1), 3], "is not an idempotency key"),
    ],
)
def test_bad_keys_are_refused_before_anything_is_written(catalog, given, message):
    before = tree_digest(catalog.root)
    with pytest.raises(InvalidArgumentError, match=message):
        dc.write(batch(0), "t", idempotency=given)
    assert tree_digest(catalog.root) == before
    with pytest.raises(InvalidArgumentError, match=message):
        dc.transaction(idempotency=given)
    with pytest.raises(InvalidArgumentError):
        dc.idempotency_version(42)


@pytest.mark.parametrize("where", ["catalog", "s3_catalog"])
def test_racing_threads_with_one_key_commit_once(request, where):
    request.getfixturevalue(where)
    dc.create_table("t", schema=KEYED)
    results: list[dc.WriteResult] = []
    errors: list[BaseException] = []

    def writer(start: int) -> None:
        try:
            results.append(dc.write(batch(start), "t", mode="merge", idempotency=("race", 1)))
        except BaseException as e:
            errors.append(e)

    threads = [threading.Thread(target=writer, args=(i * 10,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors and sum(not r.skipped for r in results) == 1
    assert len(rows("t")) == 3


RACER = """
import sys, pandas as pd, workbench as dc
dc.init_local(sys.argv[1])
start = int(sys.argv[2])
with dc.transaction(idempotency=[("race", 1)]) as txn:
    for table in ("a", "b"):
        dc.write(pd.DataFrame({"id": [start, start + 1]}), table, mode="append")
print("skipped" if txn.skipped else "committed")
"""


@pytest.mark.slow
def test_racing_processes_with_one_key_commit_once(catalog):
    for table in ("a", "b"):
        dc.create_table(table, schema=dc.Schema.of([pa.field("id", pa.int64())]))
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", RACER, str(catalog.root), str(i * 10)],
            stdout=subprocess.PIPE,
            text=True,
        )
        for i in range(4)
    ]
    outcomes = [p.communicate(timeout=120)[0].strip() for p in procs]
    assert all(p.returncode == 0 for p in procs), outcomes
    assert sorted(outcomes) == ["committed"] + ["skipped"] * 3
    assert len(rows("a")) == len(rows("b")) == 2
    assert rows("a") == rows("b")
