"""dc.vacuum while writers commit: it waits for each table's writer, and what that writer
committed meanwhile is as safe as what was there when vacuum started."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator

import pyarrow as pa
import pytest

import workbench as dc
from workbench.core.storage import leases

KEYED = dc.Schema.of(
    [
        dc.Field.of(pa.field("id", pa.int64()), is_merge_key=True),
        dc.Field.of(pa.field("n", pa.int64())),
    ]
)
WAIT_SECONDS = 30


def rows(ids: range | list[int], n: int = 0) -> pa.Table:
    ids = list(ids)
    return pa.table({"id": pa.array(ids, pa.int64()), "n": pa.array([n] * len(ids), pa.int64())})


@pytest.fixture
def vacuum_in_background(monkeypatch) -> Iterator[Callable[[], threading.Thread]]:
    """Starts ``dc.vacuum(retain=0)`` on a thread and returns once it queues for a table's
    lease (the table a transaction of the test holds): it has read the catalog by then. The
    hook only observes the lease queue; the queueing is real."""
    queued = threading.Event()
    real = leases.acquire

    def acquire(*args, **kwargs):
        if threading.current_thread().name == "vacuum":
            queued.set()
        return real(*args, **kwargs)

    monkeypatch.setattr(leases, "acquire", acquire)
    failures: list[BaseException] = []

    def run() -> None:
        try:
            dc.vacuum(retain=0)
        except BaseException as e:  # reported by the test when it ends
            failures.append(e)

    def start() -> threading.Thread:
        thread = threading.Thread(target=run, name="vacuum")
        thread.start()
        assert queued.wait(WAIT_SECONDS), "vacuum never queued for the table's lease"
        return thread

    yield start
    assert not failures, failures


def test_vacuum_keeps_the_files_of_a_version_committed_while_it_waited(
    catalog, vacuum_in_background
):
    dc.write(rows(range(400)), "t", schema=KEYED)
    with dc.transaction():
        dc.write(rows(range(0, 400, 4)), "t", mode="delete")  # a vector file for the big file
        dc.write(rows(range(400, 450), 7), "t", mode="merge")  # and a new data file
        vacuum = vacuum_in_background()
    vacuum.join(WAIT_SECONDS)
    assert not vacuum.is_alive()
    got = dc.read("t", read_as="pyarrow").to_pylist()
    want = {i: 0 for i in range(400) if i % 4} | {i: 7 for i in range(400, 450)}
    assert {r["id"]: r["n"] for r in got} == want and len(got) == len(want)
    dc.write(rows(range(1, 400, 4)), "t", mode="delete")  # and it still takes writes
    assert dc.read("t", read_as="pyarrow").num_rows == len(want) - 100


def test_vacuum_never_takes_a_table_created_while_it_ran_for_an_orphan(
    catalog, vacuum_in_background
):
    dc.write(rows(range(10)), "a", schema=KEYED)
    with dc.transaction():
        dc.write(rows(range(5), 1), "a", mode="merge")
        dc.write(rows(range(100), 2), "b", schema=KEYED)  # created in the same transaction
        vacuum = vacuum_in_background()
    vacuum.join(WAIT_SECONDS)
    assert not vacuum.is_alive()
    assert dc.read("b", read_as="pyarrow").num_rows == 100
    dc.write(rows(range(100, 120), 3), "b", mode="merge")
    assert dc.read("b", read_as="pyarrow").num_rows == 120
