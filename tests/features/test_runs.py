"""``dc.run``: runs, their steps, metrics and linked transactions, in the catalog's run log."""

from __future__ import annotations

import contextlib
import json
import logging
import math
import time
from datetime import datetime

import numpy as np
import pyarrow as pa
import pytest
from deltalake import DeltaTable

import workbench as dc
from tests.conftest import tree_digest
from tests.delta_readers import duckdb_delta_scan
from workbench.core.events.config import configure_events


def _rows(n: int) -> pa.Table:
    return pa.table({"id": list(range(n))})


def _events(run_id: str) -> list[dict]:
    return dc.run_events(run_id).to_pylist()


def test_a_run_records_its_steps_metrics_and_transactions(catalog):
    with dc.run("daily", {"day": "2026-11-21"}) as run:
        with run.step("load") as step:
            step.rows_in = 3
            dc.write(_rows(3), "raw")
            step.rows_out = 3
        run.log_metric("rows", 3)
        with dc.transaction():
            dc.write(_rows(2), "raw")
            dc.write(_rows(1), "daily")
    found = dc.runs(read_as="pandas")
    assert len(found) == 1
    record = found.iloc[0]
    assert (record["name"], record["kind"], record["status"]) == ("daily", "pipeline", "succeeded")
    assert record["parameters"] == '{"day": "2026-11-21"}'
    assert len(record["transactions"]) == 2
    events = _events(run.run_id)
    assert [e["event_type"] for e in events] == [
        "RUN_STARTED",
        "STEP_STARTED",
        "TRANSACTION_COMMITTED",
        "STEP_FINISHED",
        "METRIC_LOGGED",
        "TRANSACTION_COMMITTED",
        "RUN_SUCCEEDED",
    ]
    assert events[3]["step"]["rows_out"] == 3 and events[3]["step"]["status"] == "succeeded"
    assert events[4]["metric"] == {"name": "rows", "value": 3.0}
    assert events[5]["transaction"]["tables"] == ["default.daily", "default.raw"]
    assert events[5]["transaction"]["rows_added"] == 3


def test_a_failed_run_records_the_error_and_raises_it(catalog):
    with pytest.raises(ZeroDivisionError), dc.run("broken") as run, run.step("divide"):
        1 / 0  # noqa: B018
    record = dc.runs(status="failed", read_as="pandas").iloc[0]
    assert (record["error_type"], record["error_message"]) == (
        "ZeroDivisionError",
        "division by zero",
    )
    step = _events(run.run_id)[2]["step"]
    assert (step["status"], step["error_message"]) == ("failed", "division by zero")


def test_a_decorated_function_is_a_run_per_call(catalog):
    @dc.run("refresh", kind="job")
    def refresh(n: int) -> int:
        dc.write(_rows(n), "t")
        return n

    assert refresh(2) == 2 and refresh(3) == 3
    found = dc.runs(name="refresh", read_as="pandas")
    assert list(found["status"]) == ["succeeded", "succeeded"]
    assert list(found["kind"]) == ["job", "job"]
    assert len(dc.lineage("t")) == 2
    assert len(dc.runs(kind="pipeline")) == 0


def test_only_committed_transactions_are_linked_to_the_innermost_run(catalog):
    with dc.run("outer") as outer:
        with dc.run("inner") as inner:
            dc.write(_rows(1), "a")
        with pytest.raises(RuntimeError), dc.transaction():
            dc.write(_rows(1), "b")
            raise RuntimeError("abort")
        dc.write(_rows(1), "c")
    assert [e["transaction"]["tables"] for e in _events(inner.run_id) if e["transaction"]] == [
        ["default.a"]
    ]
    assert [e["transaction"]["tables"] for e in _events(outer.run_id) if e["transaction"]] == [
        ["default.c"]
    ]
    assert len(dc.lineage("b")) == 0


def test_runs_filter_by_time_and_limit(catalog):
    for name in ("first", "second", "third"):
        with dc.run(name):
            pass
    names = dc.runs(read_as="pandas")["name"].tolist()
    assert names == ["third", "second", "first"]
    assert dc.runs(limit=1, read_as="pandas")["name"].tolist() == ["third"]
    second = dc.runs(name="second", read_as="pandas").iloc[0]["started"]
    assert dc.runs(since=int(second), read_as="pandas")["name"].tolist() == ["third", "second"]
    assert dc.runs(until=int(second), read_as="pandas")["name"].tolist() == ["second", "first"]


def test_a_sqlite_run_log_chosen_at_init(tmp_path):
    dc.init_local(tmp_path / "lake")
    dc.init(events=f"sqlite:///{tmp_path}/runs.db")
    try:
        with dc.run("to-sqlite"):
            dc.write(_rows(1), "t")
        assert (tmp_path / "runs.db").exists()
        assert dc.runs(read_as="pandas")["name"].tolist() == ["to-sqlite"]
    finally:
        configure_events(None)


def test_a_failing_run_log_never_fails_the_run(tmp_path, caplog):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    dc.init_local(tmp_path / "lake")
    dc.init(events=f"delta://{blocker}/events")
    try:
        with caplog.at_level(logging.WARNING), dc.run("unrecorded"):
            dc.write(_rows(1), "t")
        assert "could not record" in caplog.text
        assert dc.read("t", read_as="pyarrow").num_rows == 1
        with pytest.raises(dc.EventLogUnavailableError, match="Cannot open the run log"):
            dc.runs()
    finally:
        configure_events(None)


@pytest.mark.parametrize(
    "call",
    [
        lambda: dc.run(""),
        lambda: dc.run(3),
        lambda: dc.run("x", kind="weekly"),
        lambda: dc.run("x", parameters=[1]),
        lambda: dc.runs(status="done"),
        lambda: dc.runs(limit=-1),
        lambda: dc.runs(kind=5),
        lambda: dc.runs(name=["nightly"]),
        lambda: dc.run_events(""),
        lambda: dc.init(events="postgres://db/runs"),
    ],
)
def test_bad_run_arguments_are_typed_errors(catalog, call):
    with pytest.raises(dc.InvalidArgumentError):
        call()


@pytest.mark.parametrize(
    "value",
    ["3", None, True, np.bool_(True), [1.0], 10**400, 2**60 + 1],
    ids=["text", "none", "bool", "numpy-bool", "list", "too-large", "rounded"],
)
def test_metrics_are_numbers_a_float64_holds_as_given(catalog, value):
    with dc.run("metrics") as run, pytest.raises(dc.InvalidArgumentError, match="'loss'"):
        run.log_metric("loss", value)
    assert not [e for e in _events(run.run_id) if e["metric"]]


def test_runs_of_a_catalog_on_s3_go_to_its_delta_run_log(s3_catalog):
    with dc.run("on-s3") as run:
        dc.write(_rows(2), "t")
    assert dc.runs(read_as="pandas")["name"].tolist() == ["on-s3"]
    assert [e["event_type"] for e in _events(run.run_id)][-1] == "RUN_SUCCEEDED"
    root = s3_catalog.root.rstrip("/")
    stored = DeltaTable(
        f"{root}/_workbench/events", storage_options=s3_catalog.properties.storage_options
    )
    assert stored.to_pyarrow_table().num_rows == len(_events(run.run_id))


def test_latest_gives_the_newest_run_of_each_name(catalog):
    for name, fails in [("a", False), ("b", False), ("a", True)]:
        with pytest.raises(ValueError) if fails else contextlib.nullcontext(), dc.run(name):
            if fails:
                raise ValueError("late data")
    latest = dc.runs(latest=True, read_as="pandas")
    assert latest[["name", "status"]].values.tolist() == [["a", "failed"], ["b", "succeeded"]]
    with pytest.raises(dc.InvalidArgumentError, match="latest=True"):
        dc.runs(name="a", latest=True)


def test_runs_as_of_a_catalog_state_are_those_started_by_its_commit(catalog):
    with dc.run("first"):
        dc.write(_rows(1), "t")
    pinned = dc.transactions(limit=1).column("transaction_id")[0].as_py()
    with dc.run("quiet"):
        pass  # commits nothing, but started after `pinned` committed
    assert dc.runs(as_of=pinned, read_as="pandas")["name"].tolist() == ["first"]
    with dc.run("second"):
        dc.write(_rows(1), "t", mode="append")
    with dc.run("third"):
        dc.write(_rows(1), "t", mode="append")
    assert dc.runs(as_of=pinned, read_as="pandas")["name"].tolist() == ["first"]  # the same
    dc.tag("pinned", pinned)
    assert dc.runs(name="first", as_of="pinned").num_rows == 1
    newest = dc.transactions(limit=1).column("transaction_id")[0].as_py()
    assert dc.runs(as_of=newest).num_rows == 4  # nothing came after: every run
    second = dc.runs(name="second").column("started")[0].as_py()
    assert dc.runs(as_of=newest, until=second).num_rows == 3  # the earlier bound wins
    with pytest.raises(dc.InvalidArgumentError, match="latest=True"):
        dc.runs(as_of=pinned, latest=True)


def test_the_run_log_is_chosen_by_environment_then_file(tmp_path, monkeypatch):
    dc.init_local(tmp_path / "lake")
    config = tmp_path / "workbench.toml"
    config.write_text(f'[events]\nuri = "sqlite:///{tmp_path}/from-file.db"\n')
    monkeypatch.setenv("WORKBENCH_CONFIG", str(config))
    with dc.run("filed"):
        pass
    assert (tmp_path / "from-file.db").exists()
    monkeypatch.setenv("WORKBENCH_EVENTS", f"sqlite:///{tmp_path}/from-env.db")
    with dc.run("from-env"):
        pass
    assert dc.runs(read_as="pandas")["name"].tolist() == ["from-env"]
    monkeypatch.delenv("WORKBENCH_EVENTS")
    monkeypatch.delenv("WORKBENCH_CONFIG")
    assert dc.runs(read_as="pandas").empty  # the catalog's own Delta log: nothing went there


NON_FINITE = [float("inf"), float("-inf"), float("nan")]


def _same_floats(found: list[float], expected: list[float]) -> bool:
    return len(found) == len(expected) and all(
        (math.isnan(f) and math.isnan(e)) or f == e for f, e in zip(found, expected, strict=True)
    )


def test_non_finite_metrics_leave_the_catalogs_delta_run_log_readable_by_every_reader(catalog):
    import polars as pl

    with dc.run("diverged") as run:
        dc.write(_rows(1), "t")
        for value in NON_FINITE:
            run.log_metric("loss", value)
    assert dc.runs(read_as="pandas")["status"].tolist() == ["succeeded"]
    assert dc.lineage("t").num_rows == 1
    metrics = [e["metric"]["value"] for e in _events(run.run_id) if e["metric"]]
    assert _same_floats(metrics, NON_FINITE)
    folder = f"{catalog.root.rstrip('/')}/_workbench/events"
    stored = DeltaTable(folder)
    assert len(stored.history()) >= 6  # every commit's JSON parses
    values = pl.read_delta(folder).filter(pl.col("event_type") == "METRIC_LOGGED").sort("timestamp")
    assert _same_floats(values["metric"].struct.field("value").to_list(), NON_FINITE)
    scanned = duckdb_delta_scan(folder, order_by="timestamp")
    assert _same_floats([r["metric"]["value"] for r in scanned if r["metric"]], NON_FINITE)


def test_non_finite_metrics_round_trip_through_a_sqlite_run_log(tmp_path):
    dc.init_local(tmp_path / "lake")
    dc.init(events=f"sqlite:///{tmp_path}/runs.db")
    try:
        with dc.run("diverged") as run:
            for value in NON_FINITE:
                run.log_metric("loss", value)
        metrics = [e["metric"]["value"] for e in _events(run.run_id) if e["metric"]]
        assert _same_floats(metrics, NON_FINITE)  # NaN is not stored as NULL
        assert dc.runs(read_as="pandas")["status"].tolist() == ["succeeded"]
    finally:
        configure_events(None)


@pytest.fixture(params=["delta", "sqlite"])
def run_log(request, tmp_path):
    """A fresh catalog whose runs go to its own Delta run log, or to a SQLite one."""
    dc.init_local(tmp_path / "lake")
    if request.param == "sqlite":
        dc.init(events=f"sqlite:///{tmp_path}/runs.db")
    yield request.param
    configure_events(None)


def test_numpy_numbers_are_recorded_as_given_and_nothing_is_lost(run_log, caplog):
    parameters = {"n": np.int64(3), "on": np.bool_(True), "x": np.float32(0.5)}
    with caplog.at_level(logging.WARNING), dc.run("numpy", parameters) as run:
        with run.step("load") as step:
            step.rows_in, step.rows_out = np.int64(5), np.int32(4)
        run.log_metric("accuracy", np.float32(0.25))
        run.log_metric("count", np.int64(7))
    assert "could not record" not in caplog.text
    events = _events(run.run_id)
    assert [e["event_type"] for e in events] == [
        "RUN_STARTED",
        "STEP_STARTED",
        "STEP_FINISHED",
        "METRIC_LOGGED",
        "METRIC_LOGGED",
        "RUN_SUCCEEDED",
    ]
    assert (events[2]["step"]["rows_in"], events[2]["step"]["rows_out"]) == (5, 4)
    assert [e["metric"]["value"] for e in events[3:5]] == [0.25, 7.0]
    assert json.loads(events[0]["run"]["parameters"]) == {"n": 3, "on": True, "x": 0.5}


@pytest.mark.parametrize("rows", [5.5, -1, 2**63, "5", True], ids=str)
def test_a_row_count_the_log_cannot_store_is_refused_where_it_is_set(run_log, rows):
    with dc.run("counted") as run, run.step("load") as step:
        with pytest.raises(dc.InvalidArgumentError, match="step 'load': rows_in"):
            step.rows_in = rows
        step.rows_out = 2
    finished = [e["step"] for e in _events(run.run_id) if e["event_type"] == "STEP_FINISHED"]
    assert [(s["rows_in"], s["rows_out"]) for s in finished] == [(None, 2)]


def test_parameters_are_recorded_as_standard_json_whatever_their_types(catalog):
    class Opaque:
        def __str__(self) -> str:
            return "opaque thing"

    parameters = {
        "days": {3, 1, 2},
        "at": datetime(2026, 11, 21, 9, 30),
        "weights": np.array([[1, 2], [3, 4]]),
        "times": np.array(["2026-11-21"], dtype="datetime64[D]"),
        "limits": {"low": -math.inf, "high": math.inf, "missing": math.nan},
        "nested": [{"k": (1, 2)}],
        1: "a key that is a number",
        "other": Opaque(),
    }
    with dc.run("typed", parameters):
        pass
    recorded = dc.runs().column("parameters")[0].as_py()
    assert json.loads(recorded, parse_constant=pytest.fail) == {
        "days": [1, 2, 3],
        "at": "2026-11-21T09:30:00",
        "weights": [[1, 2], [3, 4]],
        "times": ["2026-11-21"],
        "limits": {"low": "-Infinity", "high": "Infinity", "missing": "NaN"},
        "nested": [{"k": [1, 2]}],
        "1": "a key that is a number",
        "other": "opaque thing",
    }
    with pytest.raises(dc.InvalidArgumentError, match="two keys written '1'"):
        dc.run("clash", {1: "a", "1": "b"})


def _generator_run(fails: bool):
    @dc.run("batches")
    def batches(n: int):
        for i in range(n):
            time.sleep(0.01)
            dc.write(_rows(1), "t", mode="auto")
            yield i
        if fails:
            raise ValueError("late failure")

    return batches


@pytest.mark.parametrize("fails", [False, True], ids=["succeeds", "fails"])
def test_a_decorated_generator_is_a_run_spanning_its_iteration(catalog, fails):
    with pytest.raises(ValueError) if fails else contextlib.nullcontext():
        assert list(_generator_run(fails)(3)) == [0, 1, 2]
    (record,) = dc.runs().to_pylist()
    assert record["status"] == ("failed" if fails else "succeeded")
    assert record["error_message"] == ("late failure" if fails else None)
    assert record["duration_ns"] > 0.03e9  # the body's whole run, not the call
    assert len(record["transactions"]) == 3


def test_a_generator_run_stops_when_closed_and_links_only_the_bodys_commits(catalog):
    batches = _generator_run(fails=False)(5)
    assert next(batches) == 0
    dc.write(_rows(1), "consumer")  # the consumer's own work between two items
    assert dc.runs().column("status").to_pylist() == ["running"]
    batches.close()
    (record,) = dc.runs().to_pylist()
    assert record["status"] == "succeeded" and len(record["transactions"]) == 1
    assert dc.lineage("consumer").num_rows == 0
    assert dc.current_run() is None
    assert next(iter(_generator_run(fails=False)(0)), None) is None  # an empty one ends at once
    assert dc.runs().column("status").to_pylist() == ["succeeded", "succeeded"]


@pytest.mark.parametrize("fails", [False, True], ids=["succeeds", "fails"])
def test_a_decorated_coroutine_function_is_a_run_spanning_its_execution(catalog, fails):
    import asyncio

    @dc.run("fetch")
    async def fetch(n: int) -> int:
        await asyncio.sleep(0.05)
        dc.write(_rows(n), "t")
        if fails:
            raise ValueError("late failure")
        return n

    with pytest.raises(ValueError) if fails else contextlib.nullcontext():
        assert asyncio.run(fetch(2)) == 2
    (record,) = dc.runs().to_pylist()
    assert record["status"] == ("failed" if fails else "succeeded")
    assert record["duration_ns"] > 0.05e9 and len(record["transactions"]) == 1


@pytest.mark.parametrize("fails", [False, True], ids=["succeeds", "fails"])
def test_a_decorated_async_generator_is_a_run_spanning_its_iteration(catalog, fails):
    import asyncio

    @dc.run("stream")
    async def stream(n: int):
        for i in range(n):
            await asyncio.sleep(0.02)
            yield i
        if fails:
            raise ValueError("late failure")

    async def consume() -> list[int]:
        return [i async for i in stream(3)]

    with pytest.raises(ValueError) if fails else contextlib.nullcontext():
        assert asyncio.run(consume()) == [0, 1, 2]
    (record,) = dc.runs().to_pylist()
    assert record["status"] == ("failed" if fails else "succeeded")
    assert record["duration_ns"] > 0.06e9


def test_init_refuses_a_run_log_location_that_holds_a_data_table_changing_nothing(catalog):
    dc.write(_rows(3), "data")
    folder = dc.get_table("data").uri
    before = tree_digest(catalog.root)
    with pytest.raises(dc.EventLogLocationError, match="Delta table of other data"):
        dc.init(events=f"delta://{folder}")
    assert tree_digest(catalog.root) == before
    with dc.run("still-recorded"):  # the catalog's own run log is still the one in use
        pass
    assert dc.runs().column("name").to_pylist() == ["still-recorded"]


def test_a_run_log_named_by_the_environment_on_a_data_table_is_refused_untouched(
    catalog, monkeypatch, caplog
):
    dc.write(_rows(3), "data")
    folder = dc.get_table("data").uri
    monkeypatch.setenv("WORKBENCH_EVENTS", f"delta://{folder}")
    before = tree_digest(folder)
    with caplog.at_level(logging.WARNING), dc.run("unrecorded"):
        dc.write(_rows(1), "other")
    assert "could not record" in caplog.text and "other data" in caplog.text
    with pytest.raises(dc.EventLogLocationError, match="choose a new folder"):
        dc.runs()
    assert tree_digest(folder) == before
    assert dc.read("data", read_as="pyarrow").num_rows == 3


def test_runs_as_of_a_time_are_those_started_by_then_as_they_stood_then(catalog):
    with dc.run("first"):
        dc.write(_rows(1), "t")
    with dc.run("long") as long:
        time.sleep(0.01)
        at = time.time_ns()
        time.sleep(0.01)
        dc.write(_rows(1), "t", mode="append")  # commits after the point
    with dc.run("later") as later:
        pass
    then = dc.runs(as_of=at, read_as="pandas")
    assert then["name"].tolist() == ["first"]  # "long" committed after the point
    with dc.run("quiet-long") as quiet:
        time.sleep(0.01)
        middle = time.time_ns()
        time.sleep(0.01)
    then = dc.runs(as_of=middle, read_as="pandas")
    assert then[["name", "status"]].values.tolist() == [
        ["quiet-long", "running"],  # it ended after the point
        ["later", "succeeded"],
        ["long", "succeeded"],
        ["first", "succeeded"],
    ]
    assert then["ended"].isna().tolist() == [True, False, False, False]
    assert dc.runs(as_of=middle, status="running").column("name").to_pylist() == ["quiet-long"]
    as_datetime = datetime.fromtimestamp(middle / 1e9).astimezone()
    assert dc.runs(as_of=as_datetime).num_rows == 4
    events = dc.run_events(quiet.run_id, as_of=middle).column("event_type").to_pylist()
    assert events == ["RUN_STARTED"]
    assert dc.run_events(later.run_id, as_of=at).num_rows == 0  # it had not started
    assert len(dc.run_events(long.run_id)) == 3  # without as_of: every event


def test_a_run_inside_a_transaction_is_linked_to_it_when_it_commits_after_the_run(catalog):
    with dc.transaction():
        with dc.run("inside") as inside:
            dc.write(_rows(2), "t")
        with dc.run("idle"):
            pass  # did no work in the transaction: not linked to it
    assert dc.lineage("t").column("name").to_pylist() == ["inside"]
    committed = [e for e in _events(inside.run_id) if e["transaction"]]
    assert committed[0]["transaction"]["tables"] == ["default.t"]
    assert dc.runs(name="idle").column("transactions").to_pylist() == [[]]
    with pytest.raises(RuntimeError), dc.transaction():
        with dc.run("rolled-back"):
            dc.write(_rows(1), "u")
        raise RuntimeError("abort after the run")
    (record,) = dc.runs(name="rolled-back").to_pylist()
    assert record["status"] == "succeeded" and record["transactions"] == []
    assert not dc.table_exists("u")


def test_runs_in_threads_are_each_recorded_whole_on_a_new_run_log(run_log, caplog):
    import threading

    start = threading.Barrier(6)

    def work(i: int) -> None:
        start.wait()  # every thread opens the new run log at once
        with dc.run(f"thread-{i}") as run:
            dc.write(_rows(i + 1), f"t{i}")
            run.log_metric("rows", i + 1)

    with caplog.at_level(logging.WARNING):
        threads = [threading.Thread(target=work, args=(i,)) for i in range(6)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert "could not record" not in caplog.text
    records = {r["name"]: r for r in dc.runs().to_pylist()}
    assert sorted(records) == [f"thread-{i}" for i in range(6)]
    for i in range(6):
        assert records[f"thread-{i}"]["status"] == "succeeded"
        assert dc.lineage(f"t{i}").column("name").to_pylist() == [f"thread-{i}"]


def test_one_run_block_used_by_threads_at_once_ends_each_threads_own_run(catalog):
    import threading

    shared = dc.run("shared")
    inside = threading.Barrier(4)

    def work(i: int) -> None:
        with contextlib.suppress(ValueError), shared:
            inside.wait()  # all four runs open at once
            time.sleep(0.02 * (4 - i))  # the first to open ends last
            if i % 2:
                raise ValueError(f"thread {i} failed")

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    found = sorted((r["status"], r["error_message"] or "") for r in dc.runs().to_pylist())
    assert found == [
        ("failed", "thread 1 failed"),
        ("failed", "thread 3 failed"),
        ("succeeded", ""),
        ("succeeded", ""),
    ]


def test_what_a_finished_run_or_step_is_given_is_refused_not_lost(catalog):
    with dc.run("done") as run, run.step("load") as step:
        step.rows_in = 1
    with pytest.raises(dc.InvalidArgumentError, match="has finished"):
        step.rows_out = 1
    with pytest.raises(dc.InvalidArgumentError, match="has ended"):
        run.log_metric("late", 1.0)
    with pytest.raises(dc.InvalidArgumentError, match="has ended"), run.step("late"):
        pass
    assert [e["event_type"] for e in _events(run.run_id)] == [
        "RUN_STARTED",
        "STEP_STARTED",
        "STEP_FINISHED",
        "RUN_SUCCEEDED",
    ]


def test_an_error_whose_message_cannot_be_read_still_fails_the_run_with_itself(catalog):
    class Unprintable(Exception):
        def __str__(self) -> str:
            raise RuntimeError("no message")

    with pytest.raises(Unprintable), dc.run("unprintable"):
        raise Unprintable()
    (record,) = dc.runs().to_pylist()
    assert (record["status"], record["error_type"]) == ("failed", "Unprintable")
    assert "could not be read" in record["error_message"]


def test_parameters_that_cannot_be_recorded_are_refused_up_front(catalog):
    class Unprintable:
        def __str__(self) -> str:
            raise RuntimeError("no text")

    looped: dict = {"a": 1}
    looped["self"] = looped
    with pytest.raises(dc.InvalidArgumentError, match="hold themselves"):
        dc.run("looped", looped)
    with pytest.raises(dc.InvalidArgumentError, match=r"parameters\['x'\]"):
        dc.run("unprintable", {"x": Unprintable()})
    assert dc.runs().num_rows == 0


def test_odd_metric_and_step_names_round_trip_and_blank_ones_are_refused(run_log):
    names = ["é" * 5000, "名前 🚀", "a\x00b", "x" * 100_000]
    with dc.run("名前 🚀") as run:
        for i, name in enumerate(names):
            run.log_metric(name, i)
        with run.step("шаг"):
            pass
        for blank in ("", "   ", "\n"):
            with pytest.raises(dc.InvalidArgumentError, match="non-empty"):
                run.log_metric(blank, 1.0)
            with pytest.raises(dc.InvalidArgumentError, match="non-empty"), run.step(blank):
                pass
    events = _events(run.run_id)
    assert [e["metric"]["name"] for e in events if e["metric"]] == names
    assert [e["step"]["name"] for e in events if e["step"]] == ["шаг", "шаг"]
    assert dc.runs().column("name").to_pylist() == ["名前 🚀"]
