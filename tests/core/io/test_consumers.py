"""Named consumers of the change feed: a pipeline table -> table processes each change exactly
once across failures, reruns, racing runs and kill -9, on real tables."""

from __future__ import annotations

import random
import subprocess
import sys
import threading
import time

import pandas as pd
import pyarrow as pa
import pytest

import workbench as dc
from tests.conftest import tree_digest
from workbench.exceptions import IdempotencyConflictError, InvalidArgumentError

KEYED = dc.Schema.of(
    [dc.Field.of(pa.field("id", pa.int64()), is_merge_key=True), pa.field("v", pa.int64())]
)
OUT = dc.Schema.of(
    [pa.field("id", pa.int64()), pa.field("v", pa.int64()), pa.field("kind", pa.string())]
)


def consume_once(name: str = "copy") -> int:
    """One batch of the pipeline src -> out: every pending change appended to ``out``."""
    with dc.transaction():
        feed = dc.changes("src", consumer=name, read_as="pyarrow")
        rows = feed.select(["id", "v", "_change_type"]).rename_columns(["id", "v", "kind"])
        if rows.num_rows:
            dc.write(rows, "out", mode="append")
    return rows.num_rows


def out_rows() -> list[tuple]:
    data = dc.read("out", read_as="pyarrow").to_pylist()
    return sorted((r["id"], r["v"], r["kind"]) for r in data)


@pytest.fixture
def pipeline(catalog):
    dc.create_table("src", schema=KEYED)
    dc.create_table("out", schema=OUT)
    return catalog


def test_a_consumer_reads_each_change_once_and_a_rerun_reads_nothing(pipeline):
    dc.write(pd.DataFrame({"id": [1, 2], "v": [10, 20]}), "src", mode="merge")
    assert consume_once() == 2
    assert consume_once() == 0  # nothing new: nothing written, the cursor stays
    dc.write(pd.DataFrame({"id": [2, 3], "v": [21, 30]}), "src", mode="merge")
    assert consume_once() == 3
    assert out_rows() == [
        (1, 10, "insert"),
        (2, 20, "insert"),
        (2, 20, "update_preimage"),
        (2, 21, "update_postimage"),
        (3, 30, "insert"),
    ]
    assert len(dc.read("src", read_as="pyarrow")) == 3


def test_a_failed_batch_leaves_the_cursor_and_the_rerun_processes_it(pipeline):
    dc.write(pd.DataFrame({"id": [1], "v": [1]}), "src", mode="merge")
    before = tree_digest(pipeline.root)
    with pytest.raises(RuntimeError), dc.transaction():
        dc.changes("src", consumer="copy", read_as="pyarrow")
        dc.write(pd.DataFrame({"id": [1], "v": [1], "kind": ["insert"]}), "out", mode="append")
        raise RuntimeError("the job died before its commit")
    assert tree_digest(pipeline.root) == before
    assert consume_once() == 1 and out_rows() == [(1, 1, "insert")]


def test_looking_outside_a_transaction_advances_nothing(pipeline):
    dc.write(pd.DataFrame({"id": [1, 2], "v": [1, 2]}), "src", mode="merge")
    assert len(dc.changes("src", consumer="copy", read_as="pyarrow")) == 2
    assert len(dc.changes("src", consumer="copy", read_as="pandas")) == 2
    assert consume_once() == 2
    assert len(dc.changes("src", consumer="copy", read_as="pyarrow")) == 0
    assert consume_once("another") == 2  # each consumer has its own cursor


def test_two_runs_of_one_consumer_never_both_commit_a_batch(pipeline):
    dc.write(pd.DataFrame({"id": range(5), "v": range(5)}), "src", mode="merge")
    results: list[object] = []

    def run() -> None:
        try:
            results.append(dc.run_transaction(lambda: consume_once(), retries=5))
        except IdempotencyConflictError as e:
            results.append(e)

    threads = [threading.Thread(target=run) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert sorted(r for r in results if isinstance(r, int))[-1] == 5
    assert out_rows() == [(i, i, "insert") for i in range(5)]


def test_consumer_arguments_are_checked(pipeline):
    with pytest.raises(InvalidArgumentError, match="leave start and end out"):
        dc.changes("src", 0, consumer="copy")
    for bad in ("", "a/b", 3):
        with pytest.raises(InvalidArgumentError):
            dc.changes("src", consumer=bad)


def test_a_table_created_again_starts_its_consumers_anew(pipeline):
    dc.write(pd.DataFrame({"id": [1], "v": [1]}), "src", mode="merge")
    assert consume_once() == 1
    dc.drop_table("src")
    dc.create_table("src", schema=KEYED)
    dc.write(pd.DataFrame({"id": [7], "v": [7]}), "src", mode="merge")
    assert consume_once() == 1
    assert out_rows() == [(1, 1, "insert"), (7, 7, "insert")]


CONSUMER = """
import sys, time, workbench as dc
dc.init_local(sys.argv[1])
dc.changes("src", 0, read_as="pyarrow")  # the feed's imports, before the test's clock starts
print("ready", flush=True)
while True:
    with dc.transaction():
        feed = dc.changes("src", consumer="copy", read_as="pyarrow")
        rows = feed.select(["id", "v", "_change_type"]).rename_columns(["id", "v", "kind"])
        if rows.num_rows:
            dc.write(rows, "out", mode="append")
    print("passed", flush=True)  # a transaction committed (with the changes there were)
    time.sleep(0.02)
"""


@pytest.mark.slow
def test_a_consumer_killed_at_random_points_processes_every_change_once(pipeline):
    rng = random.Random(45)
    stop = threading.Event()

    def produce(batches: range) -> None:
        for batch in batches:
            ids = range(batch * 5, batch * 5 + 5)
            dc.write(pd.DataFrame({"id": ids, "v": ids}), "src", mode="merge")
            time.sleep(0.05)

    def produce_the_rest() -> None:
        produce(range(1, 40))
        stop.set()

    produce(range(1))  # a change there before any consumer starts
    producer = threading.Thread(target=produce_the_rest)
    producer.start()
    kills = 0
    while not stop.is_set() or kills < 3:
        proc = subprocess.Popen(
            [sys.executable, "-c", CONSUMER, str(pipeline.root)], stdout=subprocess.PIPE
        )
        proc.stdout.readline()  # "ready": imported, however long a loaded machine takes
        if kills == 1:  # one of them is killed after a pass, so some changes landed
            proc.stdout.readline()
        time.sleep(rng.uniform(0.3, 1.5))  # a few batches, then a random instant
        proc.kill()
        proc.wait()
        kills += 1
    producer.join()
    assert out_rows(), "the killed consumers never committed a batch: the test proves nothing"
    while consume_once():  # a last, clean run drains what the killed ones left
        pass
    assert out_rows() == [(i, i, "insert") for i in range(200)]
