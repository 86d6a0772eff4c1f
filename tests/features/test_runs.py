"""``dc.run``: runs, their steps, metrics and linked transactions, in the catalog's run log."""

from __future__ import annotations

import contextlib
import logging

import pyarrow as pa
import pytest
from deltalake import DeltaTable

import workbench as dc
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


@pytest.mark.parametrize("value", [float("nan"), "3", None, True])
def test_metrics_are_numbers(catalog, value):
    with dc.run("metrics") as run, pytest.raises(dc.InvalidArgumentError):
        run.log_metric("loss", value)


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


def test_runs_as_of_a_catalog_state_are_those_started_before_its_next_change(catalog):
    with dc.run("first"):
        dc.write(_rows(1), "t")
    pinned = dc.transactions(limit=1).column("transaction_id")[0].as_py()
    with dc.run("quiet"):
        pass  # commits nothing: the catalog is still as it was at `pinned`
    with dc.run("second"):
        dc.write(_rows(1), "t", mode="append")
    with dc.run("third"):
        dc.write(_rows(1), "t", mode="append")
    assert dc.runs(as_of=pinned, read_as="pandas")["name"].tolist() == ["quiet", "first"]
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
