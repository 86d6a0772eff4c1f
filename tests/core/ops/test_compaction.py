"""Automatic compaction on real tables: it changes no row (model-based, with time travel and
vacuum), keeps write order, yields to writers, survives kill -9, stays on its branch, and
leaves tables every external reader reads exactly."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pyarrow as pa
import pytest
from deltalake import DeltaTable
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import workbench as dc
from tests.conftest import tree_digest
from tests.core.delta.test_deletion_vectors import duckdb_delta_scan
from tests.delta_readers import delta_rows
from workbench.core.catalog.locations import locate
from workbench.core.data.engine import get_engine
from workbench.core.ops import compaction
from workbench.core.storage import leases
from workbench.core.transactions.table_versions import open_table

ROOT = Path(__file__).resolve().parents[3]
EAGER = {"workbench.autoCompact.minNumFiles": "2"}  # a step every second small commit
KEYED = dc.Schema.of(
    [
        dc.Field.of(pa.field("id", pa.int64()), is_merge_key=True),
        dc.Field.of(pa.field("v", pa.int64())),
    ]
)


def rows(ids, v: int = 0) -> pa.Table:
    ids = list(ids)
    return pa.table({"id": pa.array(ids, pa.int64()), "v": pa.array([v] * len(ids), pa.int64())})


def table_rows(table: str = "t", **read) -> list[dict]:
    return sorted(dc.read(table, read_as="pyarrow", **read).to_pylist(), key=lambda r: r["id"])


def files_of(table: str = "t") -> list:
    return open_table(locate(table)).files


def operations(table: str = "t") -> list[str]:
    """The operation of each transaction that changed the table, newest first."""
    log = dc.transactions(table=f"default.{table}", read_as="pyarrow", compactions=True)
    return [op for ops in log.column("operations").to_pylist() for op in ops]


# ------------------------------------------------------------------------------- model-based
STEPS = st.lists(
    st.one_of(
        st.tuples(st.just("merge"), st.lists(st.integers(0, 40), min_size=1, max_size=5)),
        st.tuples(st.just("delete"), st.lists(st.integers(0, 40), min_size=1, max_size=4)),
        st.tuples(st.just("optimize"), st.just(None)),
        st.tuples(st.just("travel"), st.integers(0, 30)),
        st.tuples(st.just("vacuum"), st.just(None)),
    ),
    min_size=4,
    max_size=24,
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=STEPS)
def test_compaction_changes_no_row_against_a_model(steps):
    """Random merges, deletes, optimize, time travel and vacuum with a step after almost every
    commit: every read, now and at every earlier transaction still retained, is the model's."""
    with tempfile.TemporaryDirectory() as root:
        dc.init_local(root)
        dc.write(rows(range(10)), "t", schema=KEYED, table_properties=EAGER)
        model = {i: 0 for i in range(10)}
        history = [(last_transaction(), dict(model))]
        gone: list = []
        for n, (op, payload) in enumerate(steps, 1):
            if op == "merge":
                dc.write(rows(set(payload), n), "t", mode="merge")
                model.update(dict.fromkeys(payload, n))
            elif op == "delete":
                dc.write(rows(set(payload)).select(["id"]), "t", mode="delete")
                for key in payload:
                    model.pop(key, None)
            elif op == "optimize":
                dc.optimize("t")
            elif op == "vacuum":
                dc.vacuum(retain=0)
                gone += history  # only the newest state is retained
                history = [(last_transaction(), dict(model))]
            elif gone and payload % 2:  # a vacuumed point: exact rows or a typed refusal
                txn, then = gone[payload % len(gone)]
                with contextlib.suppress(dc.TableVersionNotFoundError):
                    assert table_rows(as_of=txn) == as_rows(then)
            else:
                txn, then = history[payload % len(history)]
                assert table_rows(as_of=txn) == as_rows(then)
            if op in ("merge", "delete", "optimize"):
                history.append((last_transaction(), dict(model)))
            assert table_rows() == as_rows(model)
        assert delta_rows(DeltaTable(dc.get_table("t").uri)).sort_by("id").to_pylist() == (
            as_rows(model)
        )


def as_rows(model: dict) -> list[dict]:
    return [{"id": k, "v": v} for k, v in sorted(model.items())]


def last_transaction() -> str:
    """The newest transaction, a compaction step included (the state the table is in)."""
    return dc.transactions(read_as="pyarrow", compactions=True).column("transaction_id")[0].as_py()


# --------------------------------------------------------------------------- what it leaves
def test_appends_are_folded_in_tiers_keeping_write_order_and_changing_no_data(catalog):
    for i in range(40):
        dc.write(rows(range(i * 10, i * 10 + 10), i), "events")
    info = dc.get_table("events")
    assert len(files_of("events")) <= 12, "40 small commits are folded into a few files"
    order = dc.read("events", read_as="pyarrow").column("id").to_pylist()
    assert order == list(range(400)), "appends read back in write order"
    assert operations("events").count("AUTO_COMPACT") >= 5
    steps = [actions for actions in _commits(info.uri) if _operation(actions) == "AUTO_COMPACT"]
    assert steps and all(
        action[kind]["dataChange"] is False
        for actions in steps
        for action in actions
        for kind in ("add", "remove")
        if kind in action
    ), "a step's actions say it changed no data"


def _commits(uri: str) -> list[list[dict]]:
    """The actions of every commit of a table's Delta log, in version order."""
    table = DeltaTable(uri)
    found = []
    for version in range(table.version() + 1):
        with open(f"{uri}/_delta_log/{version:020d}.json") as source:
            found.append([json.loads(line) for line in source.read().splitlines()])
    return found


def _operation(actions: list[dict]) -> str | None:
    return next((a["commitInfo"].get("operation") for a in actions if "commitInfo" in a), None)


def test_compacted_tables_read_exactly_by_every_external_reader(catalog):
    import polars as pl

    dc.write(rows(range(300)), "t", schema=KEYED, table_properties=EAGER)
    for i in range(12):
        dc.write(rows(range(i * 20, i * 20 + 30), i + 1), "t", mode="merge")
        dc.write(rows(range(i * 7, i * 7 + 3)).select(["id"]), "t", mode="delete")
    assert "AUTO_COMPACT" in operations()
    ours = table_rows()
    uri = dc.get_table("t").uri
    assert sorted(delta_rows(DeltaTable(uri)).to_pylist(), key=lambda r: r["id"]) == ours
    assert pl.read_delta(uri).sort("id").to_dicts() == ours
    assert duckdb_delta_scan(uri) == ours


def test_properties_turn_it_off_tune_it_and_bad_values_are_refused(catalog):
    off = {"delta.autoOptimize.autoCompact": "false"}
    for i in range(12):
        dc.write(rows([i]), "quiet", table_properties=off if i == 0 else None)
    assert "AUTO_COMPACT" not in operations("quiet") and len(files_of("quiet")) == 12
    for i in range(12):
        dc.write(rows([i]), "skipped", auto_compact=False)
    assert "AUTO_COMPACT" not in operations("skipped")
    with dc.transaction(auto_compact=False):
        for i in range(12):
            dc.write(rows([100 + i]), "skipped")
    assert "AUTO_COMPACT" not in operations("skipped")
    dc.write(rows([1]), "skipped")  # the next write compacts what piled up
    assert "AUTO_COMPACT" in operations("skipped")
    before = tree_digest(catalog.root)
    for bad in [{"delta.autoOptimize.autoCompact": "maybe"}, {"delta.targetFileSize": "big"}]:
        with pytest.raises(dc.InvalidArgumentError, match=r"autoCompact|targetFileSize"):
            dc.write(rows([1]), "tuned", table_properties=bad)
        with pytest.raises(dc.InvalidArgumentError):
            dc.alter_table("quiet", table_version_properties=bad)
    assert tree_digest(catalog.root) == before
    with pytest.raises(dc.InvalidArgumentError, match="auto_compact"):
        dc.write(rows([1]), "quiet", auto_compact="no")


@pytest.mark.parametrize(
    "bad",
    [
        {"delta.autoOptimize.autoCompact": "maybe"},
        {"delta.targetFileSize": -1},
        {"workbench.autoCompact.maxBytesPerStep": "-5"},
        {"workbench.autoCompact.minNumFiles": 1},
        {"workbench.autoCompact.deletedShare": float("nan")},
    ],
)
def test_alter_table_refuses_table_properties_a_later_version_could_not_use(catalog, bad):
    dc.write(rows([1]), "t")
    before = tree_digest(catalog.root)
    with pytest.raises(dc.InvalidArgumentError, match=next(iter(bad)).replace(".", r"\.")):
        dc.alter_table("t", table_properties=bad)
    assert tree_digest(catalog.root) == before
    dc.write(rows([2]), "t", table_version="2")  # a new version takes the table's properties
    assert [r["id"] for r in table_rows(table_version="2")] == [2]


def test_files_at_the_target_size_are_left_alone(catalog):
    dc.write(rows(range(5000)), "t", table_properties={"delta.targetFileSize": "1000"})
    for i in range(10):
        dc.write(rows([10_000 + i]), "t")
    assert "AUTO_COMPACT" in operations()
    assert any(f.rows == 5000 for f in files_of()), "the right-sized file was not rewritten"


# ------------------------------------------------------------------------ writers come first
def test_a_step_yields_to_a_writer_holding_the_table_and_changes_nothing(catalog):
    for i in range(9):
        dc.write(rows([i]), "t", auto_compact=False)
    storage = catalog.storage
    leases.acquire(storage, "default", "t", "someone-else", time.time_ns())
    before = tree_digest(catalog.root)
    assert compaction.compact_step(locate("t")) is None
    assert tree_digest(catalog.root) == before, "its files are deleted, nothing is committed"
    leases.release(storage, "default", "t", "someone-else")
    assert compaction.compact_step(locate("t")) is not None


def test_a_step_yields_to_a_merge_that_changed_a_file_it_read(catalog, monkeypatch):
    """A MERGE committing while a step writes its files wins: the step gives up."""
    dc.write(rows(range(4)), "t", schema=KEYED, table_properties=EAGER, auto_compact=False)
    for i in range(4, 8):
        dc.write(rows([i]), "t", mode="merge", auto_compact=False)
    engine = get_engine("local")
    real = type(engine).compact
    written: list = []

    def merge_meanwhile(self, table, files):
        written.extend(real(self, table, files))
        dc.write(rows([0, 5], 99), "t", mode="merge", auto_compact=False)  # touches its inputs
        return written

    monkeypatch.setattr(type(engine), "compact", merge_meanwhile)
    assert compaction.compact_step(locate("t")) is None
    monkeypatch.undo()
    assert {r["id"]: r["v"] for r in table_rows()}[5] == 99
    assert "AUTO_COMPACT" not in operations()
    assert written and not any(os.path.exists(w.uri) for w in written), "its files are deleted"


def test_concurrent_writers_never_fail_because_of_compaction(catalog):
    dc.write(rows(range(50)), "t", schema=KEYED, table_properties=EAGER)
    errors: list[Exception] = []

    def writer(offset: int) -> None:
        for i in range(15):
            try:
                dc.run_transaction(
                    lambda i=i: dc.write(rows([offset + i], i), "t", mode="merge"), retries=20
                )
            except Exception as e:  # any failure is reported below
                errors.append(e)

    threads = [threading.Thread(target=writer, args=((k + 1) * 1000,)) for k in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len(table_rows()) == 50 + 45
    assert "AUTO_COMPACT" in operations()


# ------------------------------------------------------------------------------------ kill -9
STALL = """
import sys, time
import workbench as dc
from workbench.core.ops import compaction
from workbench.core.transactions.transaction import Transaction
dc.init_local(sys.argv[1])
point, flag = sys.argv[2], sys.argv[3]
def stall():
    open(flag, "w").write(point)
    time.sleep(60)
if point == "files_written":
    real = compaction.get_engine
    class Stalling:
        def __init__(self, engine): self.engine = engine
        def compact(self, table, files):
            written = self.engine.compact(table, files)
            stall()
    compaction.get_engine = lambda name: Stalling(real(name))
else:
    from workbench.core.transactions import rollforward
    real = rollforward.apply_entry
    def apply_entry(catalog, rows):
        if any(r["operation"] == "AUTO_COMPACT" for r in rows):
            stall()
        real(catalog, rows)
    import workbench.core.transactions.transaction as txn
    txn.apply_entry = apply_entry
import pyarrow as pa
dc.write(pa.table({"id": pa.array([int(sys.argv[4])], pa.int64())}), "t")
"""


@pytest.mark.slow
@pytest.mark.parametrize("point", ["files_written", "after_log_commit"])
def test_a_step_killed_midway_is_all_or_nothing_and_the_next_writer_goes_on(
    catalog, point, monkeypatch
):
    monkeypatch.setenv("WORKBENCH_LEASE_SECONDS", "2")  # the killed writer's lease soon expires
    for i in range(7):
        dc.write(pa.table({"id": pa.array([i], pa.int64())}), "t", auto_compact=False)
    flag = Path(catalog.root).parent / "flag"
    proc = subprocess.Popen(
        [sys.executable, "-c", STALL, catalog.root, point, str(flag), "7"],
        cwd=ROOT,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 60
    while not flag.exists():
        assert proc.poll() is None, proc.stderr.read().decode()[-2000:]
        assert time.monotonic() < deadline
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    dc.init_local(catalog.root)
    assert sorted(r["id"] for r in dc.read("t", read_as="pyarrow").to_pylist()) == list(range(8))
    compacted = "AUTO_COMPACT" in operations()
    assert compacted == (point == "after_log_commit"), "committed exactly when its entry was"
    dc.write(pa.table({"id": pa.array([8], pa.int64())}), "t")
    uri = dc.get_table("t").uri
    assert sorted(r["id"] for r in delta_rows(DeltaTable(uri)).to_pylist()) == list(range(9))


# ----------------------------------------------------------------------------------- branches
def test_compaction_on_a_branch_stays_on_it_and_folds_only_its_own_files(catalog):
    for i in range(5):
        dc.write(rows([i]), "t", auto_compact=False)
    main_files = {f.path for f in files_of()}
    folder_before = sorted(os.listdir(f"{dc.get_table('t').uri}/_delta_log"))
    dc.create_branch("exp")
    with dc.branch("exp"):
        for i in range(5, 20):
            dc.write(rows([i]), "t")
        on_branch = {f.path for f in open_table(locate("t")).files}
        assert "AUTO_COMPACT" in operations()
    assert main_files <= on_branch, "main's files stay as main has them"
    assert len(on_branch) < 5 + 15, "the branch's own files were folded"
    assert sorted(os.listdir(f"{dc.get_table('t').uri}/_delta_log")) == folder_before
    assert [r["id"] for r in table_rows()] == list(range(5))
    dc.merge_branch("exp")
    assert [r["id"] for r in table_rows()] == list(range(20))


def test_a_vacuum_between_a_steps_files_and_its_commit_makes_it_yield(catalog, monkeypatch):
    """Vacuum deletes files no version names, which a step's are until it commits: the step
    finds them gone once it holds the table and gives up, so no version names a missing file."""
    for i in range(9):
        dc.write(rows([i]), "t", auto_compact=False)
    engine = get_engine("local")
    real = type(engine).compact

    def vacuum_meanwhile(self, table, files):
        written = real(self, table, files)
        dc.vacuum(retain=0)
        return written

    monkeypatch.setattr(type(engine), "compact", vacuum_meanwhile)
    assert compaction.compact_step(locate("t")) is None
    monkeypatch.undo()
    assert "AUTO_COMPACT" not in operations()
    assert [r["id"] for r in table_rows()] == list(range(9))
    uri = dc.get_table("t").uri
    assert sorted(r["id"] for r in delta_rows(DeltaTable(uri)).to_pylist()) == list(range(9))
