"""Catalog transactions, history, time travel, tags, dc:// URLs and maintenance on real tables."""

from __future__ import annotations

import os
import threading
import time
from datetime import datetime, timedelta
from decimal import Decimal
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from deltalake import DeltaTable, write_deltalake

import workbench as dc
from tests.conftest import tree_digest
from tests.delta_readers import delta_rows
from workbench.exceptions import (
    InvalidUrlError,
    NamespaceNotFoundError,
    TableAlreadyExistsError,
    TableNotFoundError,
    TableValidationError,
    TableVersionNotFoundError,
    TimeTravelError,
    TransactionConflictError,
)

KEYED = dc.Schema.of(
    [dc.Field.of(pa.field("id", pa.int64()), is_merge_key=True), pa.field("v", pa.int64())]
)


def ids(table: str, namespace: str = "default", **kwargs) -> list[int]:
    data = dc.read(table, namespace=namespace, read_as=dc.DatasetType.PYARROW, **kwargs)
    return sorted(data.column("id").to_pylist())


def in_thread(fn):
    """Run ``fn`` in another thread (its own context: no open transaction) and return its result."""
    out: dict = {}
    worker = threading.Thread(target=lambda: out.setdefault("value", fn()))
    worker.start()
    worker.join()
    return out["value"]


def test_orders_and_payments_commit_together_with_read_your_writes(catalog):
    dc.create_namespace("shop")
    dc.write(pd.DataFrame({"sku": [7, 8], "price": [2.5, 4.0]}), "prices", namespace="shop")
    with dc.transaction(commit_message="checkout") as txn:
        dc.create_namespace("ledger")
        dc.write(
            pd.DataFrame({"order": [1, 2], "sku": [7, 8], "qty": [2, 1]}),
            "orders",
            namespace="ledger",
        )
        orders = dc.read("orders", namespace="ledger", read_as=dc.DatasetType.PANDAS)
        prices = dc.read("prices", namespace="shop", read_as=dc.DatasetType.PANDAS)
        total = (orders.merge(prices, on="sku").eval("qty * price")).sum()
        dc.write(pd.DataFrame({"day": [1], "revenue": [total]}), "revenue", namespace="ledger")
        assert in_thread(lambda: dc.namespace_exists("ledger")) is False, "invisible until commit"
        assert dc.namespace_exists("ledger") and txn.commit_message == "checkout"
    assert dc.read("revenue", namespace="ledger", read_as=dc.DatasetType.PANDAS)["revenue"][0] == 9
    latest = dc.transactions(read_as=dc.DatasetType.PYARROW).to_pylist()[0]
    assert latest["commit_message"] == "checkout"
    assert sorted(latest["tables"]) == ["ledger", "ledger.orders", "ledger.revenue"]


def test_block_that_raises_leaves_no_trace(catalog):
    dc.write(pd.DataFrame({"id": [1, 2], "v": [1, 2]}), "kept", schema=KEYED)
    dc.write(pd.DataFrame({"id": [5]}), "doomed")
    before = dc.transactions(read_as=dc.DatasetType.PYARROW).num_rows
    with pytest.raises(RuntimeError), dc.transaction():
        dc.write(pd.DataFrame({"id": [2, 3], "v": [20, 30]}), "kept")
        dc.create_namespace("temp")
        dc.write(pd.DataFrame({"id": [9]}), "fresh", namespace="temp")
        dc.drop_table("doomed")
        raise RuntimeError("power cut")
    assert ids("kept") == [1, 2] and ids("doomed") == [5]
    assert not dc.namespace_exists("temp") and not dc.table_exists("fresh", namespace="temp")
    assert dc.transactions(read_as=dc.DatasetType.PYARROW).num_rows == before
    dc.write(pd.DataFrame({"id": [9]}), "fresh", namespace="temp", auto_create_namespace=True)
    assert ids("fresh", "temp") == [9], "the aborted create left nothing in the way"


def hold_table_in_a_thread(name: str) -> tuple[threading.Thread, threading.Event]:
    """A transaction in another thread that writes id 2 to ``name`` and stays open (holding the
    table's lease) until the returned event is set."""
    wrote, release = threading.Event(), threading.Event()

    def first():
        with dc.transaction():
            dc.write(pd.DataFrame({"id": [2], "v": [2]}), name)
            wrote.set()
            release.wait(10)

    worker = threading.Thread(target=first)
    worker.start()
    wrote.wait(10)
    return worker, release


def test_a_second_writer_of_a_table_queues_behind_the_first(catalog):
    dc.write(pd.DataFrame({"id": [1], "v": [1]}), "t", schema=KEYED)
    worker, release = hold_table_in_a_thread("t")
    threading.Timer(0.5, release.set).start()
    with dc.transaction():  # waits for the first writer's lease, then builds on its commit
        dc.write(pd.DataFrame({"id": [3], "v": [3]}), "t")
    worker.join()
    assert ids("t") == [1, 2, 3]


def test_a_writer_gives_up_after_queueing_for_its_bounded_time(catalog, monkeypatch):
    dc.write(pd.DataFrame({"id": [1], "v": [1]}), "t", schema=KEYED)
    monkeypatch.setenv("WORKBENCH_LEASE_WAIT_SECONDS", "0.3")
    worker, release = hold_table_in_a_thread("t")
    before = tree_digest(Path(catalog.root, "default", "t"))
    with pytest.raises(TransactionConflictError, match="is being written by"), dc.transaction():
        dc.write(pd.DataFrame({"id": [3], "v": [3]}), "t")
    assert tree_digest(Path(catalog.root, "default", "t")) == before  # nothing staged of it
    release.set()
    worker.join()
    assert ids("t") == [1, 2]


def test_changed_read_set_conflicts_at_commit_and_retry_succeeds(catalog):
    dc.write(pd.DataFrame({"id": [1], "v": [10]}), "source", schema=KEYED)
    dc.write(pd.DataFrame({"id": [1], "v": [0]}), "target", schema=KEYED)
    with (
        pytest.raises(TransactionConflictError, match="changed after it was read"),
        dc.transaction(),
    ):
        value = dc.read("source", read_as=dc.DatasetType.PANDAS)["v"][0]
        in_thread(lambda: dc.write(pd.DataFrame({"id": [1], "v": [11]}), "source"))
        dc.write(pd.DataFrame({"id": [1], "v": [value]}), "target")
    assert dc.read("target", read_as=dc.DatasetType.PANDAS)["v"].tolist() == [0]
    attempts = []

    def copy_value():
        attempts.append(1)
        value = int(dc.read("source", read_as=dc.DatasetType.PANDAS)["v"][0])
        if len(attempts) == 1:
            in_thread(lambda: dc.write(pd.DataFrame({"id": [1], "v": [12]}), "source"))
        dc.write(pd.DataFrame({"id": [1], "v": [value]}), "target")
        return value

    assert dc.run_transaction(copy_value, retries=2) == 12 and len(attempts) == 2
    assert dc.read("target", read_as=dc.DatasetType.PANDAS)["v"].tolist() == [12]


def test_a_new_catalog_has_an_empty_history(catalog):
    assert dc.transactions().num_rows == 0  # no log table yet: nothing to read, no error
    assert len(dc.transactions(read_as="pandas", since="2026-01-01", as_of="2026-01-01")) == 0
    dc.write(pd.DataFrame({"id": [1]}), "a")
    assert dc.transactions().num_rows == 1


def test_history_follows_commits_made_after_it_was_read(catalog):
    import subprocess
    import sys

    dc.write(pd.DataFrame({"id": [1]}), "a")
    assert dc.transactions().num_rows == 1  # read (and kept) once
    dc.write(pd.DataFrame({"id": [2]}), "b")
    script = (
        f"import workbench as dc; dc.init_local({str(catalog.root)!r}); "
        "dc.write({'id': [3]}, 'a', mode='append')"
    )
    subprocess.run([sys.executable, "-c", script], check=True)  # another process commits
    history = dc.transactions(read_as="pandas")
    assert list(history["sequence"]) == sorted(history["sequence"], reverse=True)
    assert [t[0] for t in history["tables"]] == ["default.a", "default.b", "default.a"]
    assert len(dc.transactions(table="a")) == 2 and len(dc.transactions(table="b")) == 1


def test_history_filters_and_single_transaction(catalog):
    dc.write(pd.DataFrame({"id": [1]}), "a")
    dc.write(pd.DataFrame({"id": [1]}), "b")
    dc.write(pd.DataFrame({"id": [2]}), "a", mode="append")
    history = dc.transactions(read_as=dc.DatasetType.PANDAS)
    assert len(history) == 3 and history["sequence"].is_monotonic_decreasing
    assert list(history.columns[:4]) == ["transaction_id", "sequence", "start_time", "end_time"]
    assert len(dc.transactions(table="default.a")) == 2 and len(dc.transactions(table="b")) == 1
    assert len(dc.transactions(limit=1)) == 1
    since = dc.transactions(since=history["transaction_id"].iloc[1], read_as="pandas")
    assert len(since) == 2
    middle = history["transaction_id"].iloc[1]
    then = dc.transactions(as_of=middle, read_as="pandas")  # the history as it was then
    assert list(then["transaction_id"]) == list(history["transaction_id"].iloc[1:])
    dc.tag("then", middle)
    assert len(dc.transactions(as_of="then", table="default.a")) == 1
    assert len(dc.transactions(as_of=middle, since=middle)) == 1
    record = dc.read_transaction(history["transaction_id"].iloc[0])
    assert record.changes[0]["operation"] == "WRITE_APPEND"
    assert "default.a" in str(record) and "<table>" in record._repr_html_()


def test_history_and_runs_leave_out_compaction_steps_unless_asked(catalog):
    eager = {"workbench.autoCompact.minNumFiles": "2"}  # a step every second small commit
    with dc.run("ingest"):
        dc.write(pd.DataFrame({"id": [1]}), "t", table_properties=eager)
        dc.write(pd.DataFrame({"id": [2]}), "t", mode="append")
    everything = dc.transactions(read_as="pandas", compactions=True)
    assert [ops[0] for ops in everything["operations"]][:2] == ["AUTO_COMPACT", "WRITE_APPEND"]
    history = dc.transactions(read_as="pandas")  # what a user made, newest first
    assert list(history["transaction_id"]) == list(everything["transaction_id"].iloc[1:])
    write = history["transaction_id"].iloc[0]
    assert dc.transactions(table="t", limit=1).column("transaction_id")[0].as_py() == write
    assert dc.table("t").history(compactions=True)["operations"].iloc[0] == ["AUTO_COMPACT"]
    run = dc.runs().to_pylist()[0]
    assert run["transactions"] == list(history["transaction_id"].iloc[::-1])  # its two writes
    # pinned at its last write, the run committed nothing after and ended while it held
    then = dc.runs(as_of=write).to_pylist()
    assert [(r["name"], r["status"]) for r in then] == [("ingest", "succeeded")]
    with pytest.raises(dc.InvalidArgumentError, match="compactions="):
        dc.transactions(compactions="no")


def test_time_travel_by_time_datetime_id_and_tag(catalog):
    dc.write(pd.DataFrame({"id": [1]}), "t")
    first = dc.transactions(read_as=dc.DatasetType.PYARROW).to_pylist()[0]
    dc.tag("launch")
    time.sleep(0.01)
    dc.write(pd.DataFrame({"id": [2]}), "t", mode="append")
    dc.write(pd.DataFrame({"id": [3]}), "u")
    moment = datetime.fromtimestamp(first["end_time"] / 1e9 + 0.001)
    for point in (first["end_time"], moment, first["transaction_id"], "launch"):
        assert ids("t", as_of=point) == [1]
        assert not dc.table_exists("u", as_of=point)
        with dc.transaction(as_of=point):
            assert ids("t") == [1] and [t.name for t in dc.list_tables()] == ["t"]
    assert ids("t") == [1, 2] and dc.tags() == {"launch": first["transaction_id"]}
    assert ids("t", version=0) == [1], "table-level versions too"


def test_drop_keeps_history_until_vacuum(catalog):
    dc.write(pd.DataFrame({"id": [1]}), "t")
    dc.write(pd.DataFrame({"id": [2]}), "t", mode="append")
    dc.tag("before_drop")
    dc.drop_table("t")
    assert not dc.table_exists("t")
    assert ids("t", as_of="before_drop") == [1, 2]
    dc.write(pd.DataFrame({"id": [7]}), "t")
    assert ids("t") == [7] and ids("t", as_of="before_drop") == [1, 2]
    kept = dc.vacuum(retain=timedelta(hours=1))
    assert ids("t", as_of="before_drop") == [1, 2] and kept.dropped_tables == []
    removed = dc.vacuum(retain=0)
    assert len(removed.dropped_tables) == 1
    with pytest.raises(TableVersionNotFoundError, match="vacuum"):
        dc.read("t", as_of="before_drop")
    assert ids("t") == [7]


def test_vacuum_keeps_retained_versions_and_removes_the_rest(catalog):
    dc.write(pd.DataFrame({"id": [1], "v": [1]}), "t", schema=KEYED)
    for v in range(2, 5):
        dc.write(pd.DataFrame({"id": [1], "v": [v]}), "t")
    dc.vacuum(retain=timedelta(hours=1))
    assert dc.read("t", version=1, read_as="pandas")["v"].tolist() == [2]
    result = dc.vacuum(retain=0)
    assert len(result.files) >= 3
    assert dc.read("t", read_as="pandas")["v"].tolist() == [4]
    with pytest.raises(TableVersionNotFoundError):
        dc.read("t", version=1, read_as="pandas").to_numpy()


def test_abandoned_versions_are_invisible_and_repaired_by_the_next_writer(catalog):
    dc.write(pd.DataFrame({"id": [1], "v": [1]}), "t", schema=KEYED)
    path = os.path.join(catalog.root, "default", "t")
    # A writer that died after its table commit but before the catalog log commit.
    write_deltalake(path, pa.table({"id": [66], "v": [66]}), mode="append")
    assert DeltaTable(path).version() == 1 and ids("t") == [1]
    dc.write(pd.DataFrame({"id": [2], "v": [2]}), "t")
    assert ids("t") == [1, 2]
    # The next commit undoes the outside write and applies the merge, in one Delta version.
    assert sorted(delta_rows(DeltaTable(path)).column("id").to_pylist()) == [1, 2]
    assert DeltaTable(path).version() == 2 == dc.get_table("t").version


def test_optimize_compacts_and_keeps_rows(catalog):
    for i in range(6):
        dc.write(pd.DataFrame({"id": [i]}), "t", mode="append" if i else "create")
    assert dc.get_table("t").file_count == 6
    dc.optimize("t")
    info = dc.get_table("t")
    assert info.file_count == 1 and info.row_count == 6
    assert dc.transactions(read_as="pandas")["operations"].iloc[0] == ["OPTIMIZE"]
    with pytest.raises(dc.TableNotFoundError, match=r"cannot optimize 'default\.nope'"):
        dc.optimize("nope")
    assert not dc.table_exists("nope") and dc.transactions().num_rows == 7


def test_log_is_compacted_and_read_incrementally(catalog, monkeypatch):
    from workbench.core.delta import log_compaction, upkeep
    from workbench.core.transactions import catalog_log as txlog

    monkeypatch.setattr(log_compaction, "STEP_EVERY", 4)
    monkeypatch.setattr(log_compaction, "CHECKPOINT_EVERY", 10)
    for i in range(25):
        mode = "append" if i >= 3 else "create"
        dc.write(pd.DataFrame({"id": [i]}), f"t{i % 3}", mode=mode, auto_compact=False)
    upkeep.flush()  # log compaction steps and checkpoints run in the background
    log_dir = os.path.join(catalog.root, "_workbench", "transactions", "_delta_log")
    assert any(f.endswith(".checkpoint.parquet") for f in os.listdir(log_dir))
    fresh = txlog.TransactionLog(catalog)  # a cold reader sees the same state
    assert fresh.refresh().tables == txlog.log_of(catalog).refresh().tables
    assert len(fresh.rows) == 25 and ids("t1") == list(range(1, 25, 3))
    from deltalake import DeltaTable

    parts = DeltaTable(os.path.join(catalog.root, "_workbench", "transactions")).file_uris()
    assert len(parts) < 25 // 2, "a step every fourth commit folds the log's small parts"


def test_several_catalogs_with_reader_validation(tmp_path):
    dc.init(
        catalogs={
            "staging": dc.Catalog(dc.CatalogProperties(str(tmp_path / "staging"))),
            "prod": dc.Catalog(dc.CatalogProperties(str(tmp_path / "prod"))),
        }
    )
    prices = pa.table(
        {"item": [1, 2], "price": pa.array([Decimal("9.99"), Decimal("1.25")], pa.decimal256(6, 2))}
    )
    with pytest.raises(TableValidationError, match="decimal256"):
        dc.write(prices, "fin", catalog="staging")
    prices = prices.set_column(1, "price", pc.cast(prices["price"], pa.decimal128(6, 2)))
    dc.write(prices, "fin", catalog="staging")
    staged = dc.read("fin", catalog="staging", read_as=dc.DatasetType.PANDAS)
    assert staged["price"].tolist() == [Decimal("9.99"), Decimal("1.25")]
    dc.write(prices, "fin", catalog="prod")
    assert dc.list("dc://prod/default")[0].name == "fin"
    assert len(dc.transactions(catalog="staging")) == 1


def test_copy_tables_namespaces_and_catalogs(tmp_path):
    dc.init(
        catalogs={
            "original": dc.Catalog(dc.CatalogProperties(str(tmp_path / "a"))),
            "copy": dc.Catalog(dc.CatalogProperties(str(tmp_path / "b"))),
        }
    )
    dc.write(pd.DataFrame({"id": [1, 2], "v": [1, 2]}), "users", catalog="original", schema=KEYED)
    dc.write(pd.DataFrame({"id": [3]}), "pets", catalog="original")
    readers = {dc.TableProperty.SUPPORTED_READER_TYPES: [dc.DatasetType.PANDAS]}
    dc.create_table("files", catalog="original", table_properties=readers)
    dc.write(pd.DataFrame({"id": [4]}), "files", catalog="original", content_type="csv")
    dc.copy("dc://original/default", "dc://copy/default/myspace")
    assert dc.list("dc://copy/myspace") == []
    dc.copy("dc://original/default/users", "dc://copy/default/local_users")
    assert dc.get("dc://copy/default/local_users", read_as="pandas")["id"].tolist() == [1, 2]
    assert dc.get_table("local_users", catalog="copy").merge_keys == ["id"]
    dc.copy("dc://original/default/**", "dc://copy/default/myspace")
    assert [t.name for t in dc.list("dc://copy/myspace")] == ["files", "pets", "users"]
    manifest = dc.read("files", "myspace", "copy", read_as="pyarrow")
    with pytest.raises(dc.TableVersionNotFoundError, match="Pass catalog="):
        dc.from_manifest_table(manifest)  # its paths are under the root of catalog "copy"
    copied = dc.from_manifest_table(manifest, catalog="copy")
    assert dc.to_pyarrow(copied).column("id").to_pylist() == [4]
    dc.copy("dc://original/*", "dc://copy")
    assert [n.name for n in dc.list("dc://copy")] == ["default", "myspace"]
    dc.put("dc://copy/inbox/notes", pd.DataFrame({"id": [5]}))
    assert dc.get("dc://copy/inbox/notes", read_as="pandas")["id"].tolist() == [5]


BAD = {
    "as_of before the first transaction": (lambda: dc.read("t", as_of=1), TableNotFoundError),
    "unknown tag or id": (lambda: dc.read("t", as_of="no-such-tag"), TimeTravelError),
    "as_of of the wrong type": (lambda: dc.read("t", as_of=1.5), TimeTravelError),
    "tag twice": (lambda: (dc.tag("v1"), dc.tag("v1")), TimeTravelError),
    "copy onto an existing table": (
        lambda: dc.copy("dc://default/default/t", "dc://default/default/t"),
        TableAlreadyExistsError,
    ),
    "malformed url": (lambda: dc.list("s3://bucket/x"), InvalidUrlError),
    "url with too many parts": (lambda: dc.list("dc://default/a/b/c"), InvalidUrlError),
    "wildcard in the middle": (lambda: dc.list("dc://default/*/t"), InvalidUrlError),
    "get of a wildcard url": (lambda: dc.get("dc://default/*"), InvalidUrlError),
    "get of a missing namespace": (lambda: dc.get("dc://default/nope"), NamespaceNotFoundError),
    "unknown transaction": (lambda: dc.read_transaction("nope"), TimeTravelError),
    "table missing as of": (lambda: dc.read("later", as_of="start"), TableNotFoundError),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_time_travel_and_url_input(catalog, case):
    dc.write(pd.DataFrame({"id": [1]}), "t")
    dc.tag("start")
    dc.write(pd.DataFrame({"id": [1]}), "later")
    call, error = BAD[case]
    with pytest.raises(error) as raised:
        call()
    assert len(str(raised.value)) > 30
    assert ids("t") == [1]


def test_misused_transactions_raise_and_change_nothing(tmp_path):
    dc.init(
        catalogs={
            "main": dc.Catalog(dc.CatalogProperties(str(tmp_path / "main"))),
            "other": dc.Catalog(dc.CatalogProperties(str(tmp_path / "other"))),
        }
    )
    dc.write(pd.DataFrame({"id": [1]}), "t")
    stamp = dc.transactions(read_as="pyarrow").column("end_time")[0].as_py()
    with (
        pytest.raises(RuntimeError, match="read-only historic transaction"),
        dc.transaction(as_of=stamp),
    ):
        dc.write(pd.DataFrame({"id": [2]}), "t", mode="append")
    with pytest.raises(TransactionConflictError, match="enclosing"), dc.transaction():
        dc.write(pd.DataFrame({"id": [2]}), "t", mode="append")
        with dc.transaction():  # independent of the enclosing one, which holds the table
            dc.write(pd.DataFrame({"id": [3]}), "t", mode="append")
    with pytest.raises(ValueError, match="mutually exclusive"), dc.transaction():
        dc.write(pd.DataFrame({"id": [3]}), "t", catalog="other")
    assert ids("t") == [1] and not dc.table_exists("t", catalog="other")
    assert len(dc.transactions()) == 1


def test_a_copied_catalog_folder_is_self_contained(tmp_path):
    import shutil

    dc.init_local(tmp_path / "original")
    dc.write(pd.DataFrame({"id": [1]}), "t", namespace="ns", auto_create_namespace=True)
    dc.tag("v1")
    dc.write(pd.DataFrame({"id": [2]}), "t", namespace="ns", mode="append")
    dc.drop_table("t", namespace="ns")
    shutil.copytree(tmp_path / "original", tmp_path / "shared")
    dc.init(
        catalogs={
            "original": dc.Catalog(dc.CatalogProperties(str(tmp_path / "original"))),
            "copy": dc.Catalog(dc.CatalogProperties(str(tmp_path / "shared"))),
        }
    )
    assert [n.name for n in dc.list("dc://copy")] == ["default", "ns"]
    assert ids("t", "ns", catalog="copy", as_of="v1") == [1]
    assert len(dc.transactions(catalog="copy")) == len(dc.transactions(catalog="original"))


def test_tables_created_together_can_be_dropped_together(catalog):
    with dc.transaction():
        dc.write(pd.DataFrame({"id": [1]}), "x")
        dc.write(pd.DataFrame({"id": [2]}), "y")
    dc.tag("both")
    dc.drop_namespace("default", purge=True)
    assert not dc.namespace_exists("default")
    assert ids("x", as_of="both") == [1] and ids("y", as_of="both") == [2]


def test_threads_sharing_a_catalog_leave_no_gap_in_its_log(catalog):
    """Threads reading and writing one catalog share its log reader: a commit read by two of
    them at once used to be counted twice, and the next commit left a gap that made the log
    unreadable to a fresh process."""
    import threading

    from deltalake import DeltaTable

    dc.write(pd.DataFrame({"id": [0]}), "t", auto_compact=False)
    stop = time.monotonic() + 3

    def write(k: int) -> None:
        for i in range(10_000):
            if time.monotonic() > stop:
                return
            dc.write(pd.DataFrame({"id": [k * 100_000 + i]}), "t", auto_compact=False)

    def read() -> None:
        while time.monotonic() < stop:
            dc.read("t", read_as="pyarrow")

    threads = [threading.Thread(target=write, args=(1,))]
    threads += [threading.Thread(target=read) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    from workbench.core.delta import upkeep

    upkeep.flush()  # a log compaction step may still be committing in the background
    folder = os.path.join(catalog.root, "_workbench", "transactions", "_delta_log")
    versions = sorted(int(n.split(".")[0]) for n in os.listdir(folder) if n.endswith(".json"))
    assert versions == list(range(len(versions))), "the log's versions are contiguous"
    log = DeltaTable(os.path.join(catalog.root, "_workbench", "transactions"))
    assert log.version() == versions[-1]
