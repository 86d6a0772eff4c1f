"""The run log's two backends on real files: one parity suite holds SQLite and Delta to the
same answers; schema migration, refusal of newer stores, URIs, concurrent appenders and runs
whose process was killed."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.delta_readers import standard_json_log
from workbench.core.base.errors import EventLogVersionError, InvalidArgumentError
from workbench.core.events.config import open_event_log
from workbench.core.events.log import EventLog, RunRecord, RunStatus
from workbench.core.events.model import (
    COMMON_FIELDS,
    PAYLOAD_FIELDS,
    SCHEMA_VERSION,
    Event,
    EventType,
    this_process,
)

BACKENDS = ("sqlite", "delta")
ROOT = Path(__file__).resolve().parents[2]
BASE = 1_700_000_000_000_000_000  # ns
ELSEWHERE = "build-server-7"  # another host: a run without an ending there stays running
E = EventType

# run id -> (name, kind, ending, start offset); "abandoned": started on this host by a process
# that is gone; None: no ending yet. run-09 and run-10 start at the same time.
RUNS: dict[str, tuple[str, str, str | None, int]] = {
    "run-01": ("ingest", "pipeline", "succeeded", 0),
    "run-02": ("train", "inference", "failed", 10),
    "run-03": ("ingest", "pipeline", "failed", 20),
    "run-04": ("nightly-report", "report", "succeeded", 30),
    "run-05": ("train", "inference", "succeeded", 40),
    "run-06": ("ingest", "pipeline", None, 50),
    "run-07": ("score", "inference", "abandoned", 60),
    "run-08": ("nightly-report", "report", "succeeded", 70),
    "run-09": ("score", "inference", "failed", 80),
    "run-10": ("ingest", "pipeline", "succeeded", 80),
}
TABLES = {  # run id -> tables of its transactions, in commit order
    "run-01": [["sales.orders"], ["sales.customers", "sales.orders"]],
    "run-03": [["sales.orders"]],
    "run-05": [["ml.features"], ["ml.predictions"]],
    "run-08": [["reports.daily"]],
    "run-10": [["sales.orders", "ml.features"]],
}


def run_events(run_id: str) -> list[Event]:
    """A run's events: start, steps, metrics, transactions and its ending (if any)."""
    name, kind, ending, offset = RUNS[run_id]
    t = BASE + offset * 1000
    gone = ending == "abandoned"
    start = {
        "name": name,
        "kind": kind,
        "parameters": json.dumps({"limit": offset, "mode": kind}),
        **({**this_process(), "process_started": 1} if gone else {"host": ELSEWHERE}),
        **({"pid": 4242, "process_started": BASE} if not gone else {}),
        "notebook": f"notebooks/{name}.ipynb" if offset % 20 == 0 else None,
    }
    catalog = "lake" if offset % 30 else None
    events = [Event(run_id, E.RUN_STARTED, start, catalog, t, f"{t:020d}{run_id}-0")]

    def add(kind: EventType, payload: dict[str, Any], at: int) -> None:
        events.append(Event(run_id, kind, payload, catalog, t + at, f"{t + at:020d}{run_id}-9"))

    add(E.STEP_STARTED, {"name": "load", "status": "running"}, 1)
    add(E.STEP_FINISHED, {"name": "load", "status": "ok", "rows_in": 100, "rows_out": 90}, 2)
    add(E.METRIC_LOGGED, {"name": "rows_per_s", "value": 1234.5 + offset}, 3)
    for i, tables in enumerate(TABLES.get(run_id, [])):
        tx = {"transaction_id": f"tx-{run_id}-{i}", "tables": tables, "rows_added": 10 * i}
        add(E.TRANSACTION_COMMITTED, {**tx, "rows_removed": 0}, 4)  # same time: id decides
        events[-1] = dataclasses.replace(events[-1], event_id=f"{t + 4:020d}{run_id}-{i}")
    if ending in ("succeeded", "failed"):
        failed = ending == "failed"
        outcome = {
            "status": ending,
            "duration_ns": 5000 + offset,
            "error_type": "ValueError" if failed else None,
            "error_message": f"bad input in {run_id}" if failed else None,
        }
        add(E.RUN_FAILED if failed else E.RUN_SUCCEEDED, outcome, 5)
    return events


def fill(log: EventLog) -> None:
    """The history, appended out of time order as concurrent runs would: batches and singles."""
    for run_id in ("run-03", "run-01", "run-02", "run-06", "run-05"):
        log.append(run_events(run_id))
    for run_id in ("run-04", "run-07"):
        for event in run_events(run_id):
            log.append(event)
    log.append([e for r in ("run-10", "run-08", "run-09") for e in run_events(r)])


def make_log(backend: str, folder: Path) -> EventLog:
    """An empty event log of ``backend`` in ``folder``."""
    if backend == "sqlite":
        return open_event_log(f"sqlite://{folder / 'events.db'}")
    return open_event_log(f"delta://{folder / 'events'}")


@pytest.fixture(scope="module")
def filled(tmp_path_factory: pytest.TempPathFactory) -> dict[str, EventLog]:
    """Both backends holding the same history."""
    logs = {b: make_log(b, tmp_path_factory.mktemp(b)) for b in BACKENDS}
    for log in logs.values():
        fill(log)
    return logs


@pytest.fixture(params=BACKENDS)
def log(request: pytest.FixtureRequest, filled: dict[str, EventLog]) -> EventLog:
    """Each backend, filled with the history."""
    return filled[request.param]


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    """Each backend's name."""
    return request.param


# ----------------------------------------------------------------------------------- parity
QUERIES: dict[str, Callable[[EventLog], list[Any]]] = {
    "runs": lambda log: log.runs(),
    "runs by name": lambda log: log.runs(name="ingest"),
    "runs by kind": lambda log: log.runs(kind="inference"),
    "runs failed": lambda log: log.runs(status=RunStatus.FAILED),
    "runs running": lambda log: log.runs(status=RunStatus.RUNNING),
    "runs abandoned": lambda log: log.runs(status=RunStatus.ABANDONED),
    "runs in a window": lambda log: log.runs(since=BASE + 20_000, until=BASE + 70_000),
    "runs all filters": lambda log: log.runs("ingest", "pipeline", "succeeded", BASE, BASE * 2),
    "latest": lambda log: log.latest(),
    "touching orders": lambda log: log.touching("sales.orders"),
    "touching features": lambda log: log.touching("ml.features"),
    "events of a failed run": lambda log: log.events("run-02"),
    "events with transactions": lambda log: log.events("run-01"),
}
EMPTY_QUERIES = {
    "runs of no name": lambda log: log.runs(name="nobody"),
    "touching no table": lambda log: log.touching("sales.nothing"),
    "events of no run": lambda log: log.events("run-99"),
}


def fields(answer: list[Any]) -> list[dict[str, Any]]:
    """An answer as plain field dictionaries, so a difference shows the field."""
    return [{**dataclasses.asdict(item), "type": type(item).__name__} for item in answer]


@pytest.mark.parametrize("query", QUERIES, ids=list(QUERIES))
def test_backends_answer_alike(filled: dict[str, EventLog], query: str):
    answers = {b: fields(QUERIES[query](filled[b])) for b in BACKENDS}
    assert answers["sqlite"], "a parity check of an empty answer proves little"
    assert answers["sqlite"] == answers["delta"]


@pytest.mark.parametrize("query", EMPTY_QUERIES, ids=list(EMPTY_QUERIES))
def test_backends_answer_nothing_alike(filled: dict[str, EventLog], query: str):
    assert [EMPTY_QUERIES[query](filled[b]) for b in BACKENDS] == [[], []]


# --------------------------------------------------------------------------------- semantics
def test_runs_are_newest_first_with_their_status(log: EventLog):
    runs = log.runs()
    expected_order = sorted(RUNS, key=lambda r: (RUNS[r][3], r), reverse=True)
    assert [r.run_id for r in runs] == expected_order
    statuses = {r.run_id: r.status for r in runs}
    assert statuses == {r: RUNS[r][2] or RunStatus.RUNNING for r in RUNS}


def test_a_failed_run_keeps_its_error_and_timing(log: EventLog):
    (failed,) = [r for r in log.runs() if r.run_id == "run-02"]
    assert failed == RunRecord(
        run_id="run-02",
        name="train",
        kind="inference",
        status=RunStatus.FAILED,
        started=BASE + 10_000,
        ended=BASE + 10_005,
        duration_ns=5010,
        parameters=json.dumps({"limit": 10, "mode": "inference"}),
        error_type="ValueError",
        error_message="bad input in run-02",
        catalog="lake",
        host=ELSEWHERE,
        pid=4242,
        process_started=BASE,
        notebook=None,
        transactions=(),
    )


def test_runs_filter_by_name_kind_status_and_inclusive_time(log: EventLog):
    assert {r.run_id for r in log.runs(name="ingest")} == {"run-01", "run-03", "run-06", "run-10"}
    assert {r.run_id for r in log.runs(kind="report")} == {"run-04", "run-08"}
    assert {r.run_id for r in log.runs(status="failed")} == {"run-02", "run-03", "run-09"}
    window = log.runs(since=BASE + 20_000, until=BASE + 40_000)
    assert [r.run_id for r in window] == ["run-05", "run-04", "run-03"]
    assert [r.run_id for r in log.runs(name="ingest", status="succeeded")] == ["run-10", "run-01"]


def test_transactions_are_listed_in_commit_order(log: EventLog):
    by_id = {r.run_id: r.transactions for r in log.runs()}
    assert by_id["run-01"] == ("tx-run-01-0", "tx-run-01-1")
    assert by_id["run-05"] == ("tx-run-05-0", "tx-run-05-1")
    assert by_id["run-02"] == ()


def test_latest_is_the_newest_run_of_each_name(log: EventLog):
    latest = log.latest()
    assert [(r.name, r.run_id) for r in latest] == [
        ("ingest", "run-10"),
        ("nightly-report", "run-08"),
        ("score", "run-09"),
        ("train", "run-05"),
    ]


def test_touching_gives_a_tables_lineage(log: EventLog):
    assert [r.run_id for r in log.touching("sales.orders")] == ["run-10", "run-03", "run-01"]
    assert [r.run_id for r in log.touching("sales.customers")] == ["run-01"]
    assert [r.run_id for r in log.touching("sales")] == []


def test_events_are_oldest_first_and_whole(log: EventLog):
    expected = [Event.from_row(e.row()) for e in run_events("run-01")]
    assert log.events("run-01") == expected
    assert [e.event_type for e in log.events("run-07")] == [
        E.RUN_STARTED,
        E.STEP_STARTED,
        E.STEP_FINISHED,
        E.METRIC_LOGGED,
    ]


# --------------------------------------------------------------------------- schema versions
def write_v1_store(backend: str, folder: Path, events: list[Event]) -> str:
    """A store as schema version 1 wrote it (no ``run.notebook``), holding ``events``; its URI."""
    rows = [e.row(version=1) for e in events]
    if backend == "sqlite":
        path = folder / "v1.db"
        columns = [c for c, _ in COMMON_FIELDS] + [
            f"{p}__{f}" for p, fs in PAYLOAD_FIELDS[1].items() for f, _ in fs
        ]
        with sqlite3.connect(path) as db:
            db.execute(f"CREATE TABLE events ({', '.join(columns)})")
            db.executemany(
                f"INSERT INTO events VALUES ({', '.join('?' for _ in columns)})",
                [[_flat_value(row, c) for c in columns] for row in rows],
            )
            db.execute("PRAGMA user_version = 1")
        db.close()
        return f"sqlite://{path}"
    import pyarrow as pa
    from deltalake import DeltaTable, write_deltalake

    from workbench.core.events.delta import VERSION_PROPERTY, event_schema

    path = str(folder / "v1")
    table = DeltaTable.create(path, event_schema(1))
    table.alter.set_table_properties({VERSION_PROPERTY: "1"}, raise_if_not_exists=False)
    write_deltalake(table, pa.Table.from_pylist(rows, schema=event_schema(1)), mode="append")
    return f"delta://{path}"


def _flat_value(row: dict[str, Any], column: str) -> Any:
    if "__" not in column:
        return row[column]
    payload, field = column.split("__")
    value = (row[payload] or {}).get(field)
    return json.dumps(value) if isinstance(value, list) else value


def stored_version(uri: str) -> int:
    """The schema version a store records."""
    if uri.startswith("sqlite://"):
        with sqlite3.connect(uri[len("sqlite://") :]) as db:
            version = db.execute("PRAGMA user_version").fetchone()[0]
        db.close()
        return version
    from deltalake import DeltaTable

    from workbench.core.events.delta import VERSION_PROPERTY

    return int(DeltaTable(uri[len("delta://") :]).metadata().configuration[VERSION_PROPERTY])


def test_an_older_store_is_migrated_on_open_losing_nothing(backend: str, tmp_path: Path):
    old = [e for r in ("run-01", "run-02") for e in run_events(r)]
    uri = write_v1_store(backend, tmp_path, old)
    assert stored_version(uri) == 1
    log = open_event_log(uri)
    assert stored_version(uri) == SCHEMA_VERSION
    new = Event(
        "run-new",
        E.RUN_STARTED,
        {"name": "ingest", "kind": "pipeline", "host": ELSEWHERE, "notebook": "nb/ingest.ipynb"},
        timestamp=BASE * 2,
    )
    log.append(new)
    reopened = open_event_log(uri)  # a second open finds nothing to migrate
    for store in (log, reopened):
        runs = {r.run_id: r for r in store.runs()}
        assert set(runs) == {"run-01", "run-02", "run-new"}
        assert runs["run-new"].notebook == "nb/ingest.ipynb"
        assert runs["run-01"].notebook is None
        assert runs["run-01"].transactions == ("tx-run-01-0", "tx-run-01-1")
        assert runs["run-02"].error_message == "bad input in run-02"
        for run_id in ("run-01", "run-02"):
            assert store.events(run_id) == [
                Event.from_row(e.row(version=1)) for e in run_events(run_id)
            ]


def test_a_store_of_a_newer_schema_is_refused(backend: str, tmp_path: Path):
    log = make_log(backend, tmp_path)
    newer = SCHEMA_VERSION + 1
    if backend == "sqlite":
        with sqlite3.connect(log.path) as db:
            db.execute(f"PRAGMA user_version = {newer}")
        db.close()
    else:
        from workbench.core.events.delta import VERSION_PROPERTY

        log._table.alter.set_table_properties(
            {VERSION_PROPERTY: str(newer)}, raise_if_not_exists=False
        )
    with pytest.raises(EventLogVersionError, match="Upgrade workbench") as raised:
        open_event_log(log.uri)
    assert f"version {newer}" in str(raised.value)


# --------------------------------------------------------------------------------------- URIs
def test_uris_name_their_backend(tmp_path: Path):
    from workbench.core.events.delta import DeltaEventLog
    from workbench.core.events.sqlite import SqliteEventLog

    sqlite_log = open_event_log(f"sqlite://{tmp_path / 'a.db'}")
    delta_log = open_event_log(f"delta://{tmp_path / 'd'}")
    assert isinstance(sqlite_log, SqliteEventLog)
    assert isinstance(delta_log, DeltaEventLog)
    assert open_event_log(sqlite_log.uri).uri == sqlite_log.uri == f"sqlite://{tmp_path / 'a.db'}"
    assert open_event_log(delta_log.uri).uri == delta_log.uri == f"delta://{tmp_path / 'd'}"


@pytest.mark.parametrize(
    "uri",
    [
        "sqlite://relative.db",
        "delta://relative/path",
        "postgres://host/db",
        "/abs/path",
        "delta+s3://",
        "",
    ],
)
def test_other_uris_are_refused_with_the_accepted_forms(uri: str):
    with pytest.raises(InvalidArgumentError, match=re.escape("sqlite:///abs/path.db")) as raised:
        open_event_log(uri)
    assert "delta:///abs/path" in str(raised.value)
    assert "delta+s3://bucket/path" in str(raised.value)


def test_a_sqlite_log_takes_no_storage_options(tmp_path: Path):
    with pytest.raises(InvalidArgumentError, match="no options"):
        open_event_log(f"sqlite://{tmp_path / 'a.db'}", aws_region="us-east-1")


# -------------------------------------------------------------------------------- processes
def worker(*args: object) -> subprocess.Popen:
    """A process of tests/features/event_log_workers.py."""
    return subprocess.Popen(
        [sys.executable, "-m", "tests.features.event_log_workers", *map(str, args)],
        cwd=ROOT,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.mark.parametrize(
    "backend",
    ["sqlite", pytest.param("delta", marks=pytest.mark.slow)],  # delta: ~20 s
)
def test_concurrent_appenders_lose_and_repeat_nothing(backend: str, tmp_path: Path):
    workers, count = 4, 500
    batch = 1 if backend == "sqlite" else 10  # Delta: one commit per 10 events (200 commits)
    log = make_log(backend, tmp_path)
    procs = [worker("append", log.uri, i, count, batch) for i in range(workers)]
    for proc in procs:
        _, errors = proc.communicate(timeout=300)
        assert proc.returncode == 0, errors
    events = [e for i in range(workers) for e in log.events(f"worker-{i}")]
    assert len(events) == workers * count
    assert len({e.event_id for e in events}) == workers * count
    for i in range(workers):
        names = [e.payload["name"] for e in log.events(f"worker-{i}")]
        assert sorted(names) == sorted(f"m{n}" for n in range(count))


def test_a_killed_run_is_abandoned_while_a_live_one_runs(backend: str, tmp_path: Path):
    log = make_log(backend, tmp_path)
    ready = tmp_path / "ready"
    proc = worker("start", log.uri, "doomed-run", ready)
    deadline = time.monotonic() + 60
    while not ready.exists():
        assert proc.poll() is None, proc.stderr.read()
        assert time.monotonic() < deadline, "the worker never started its run"
        time.sleep(0.05)
    before = {r.run_id: r.status for r in log.runs()}
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()  # reaped: no process with its pid remains
    live = {"name": "alive", "kind": "pipeline", **this_process()}
    log.append(Event("live-run", E.RUN_STARTED, live))
    assert before == {"doomed-run": RunStatus.RUNNING}
    statuses = {r.run_id: r.status for r in log.runs()}
    assert statuses == {"doomed-run": RunStatus.ABANDONED, "live-run": RunStatus.RUNNING}
    assert [r.run_id for r in log.runs(status=RunStatus.ABANDONED)] == ["doomed-run"]


# --------------------------------------------------------------------------- Delta compaction
def test_delta_compaction_merges_small_parts_leaves_full_ones_and_loses_nothing(
    monkeypatch, tmp_path: Path
):
    from deltalake import DeltaTable

    from workbench.core.delta import log_compaction, upkeep
    from workbench.core.delta.compaction_plan import CompactionSettings
    from workbench.core.events import delta

    monkeypatch.setattr(log_compaction, "STEP_EVERY", 10)
    settings = CompactionSettings(target_size=25_000, min_files=2)  # about 3 one-event parts
    monkeypatch.setattr(log_compaction, "LOG_SETTINGS", settings)
    log = delta.DeltaEventLog(str(tmp_path / "events"))
    events = [e for run_id in sorted(RUNS) for e in run_events(run_id)]
    log.append(
        [dataclasses.replace(e, event_id=f"{i}-{e.event_id}") for i in range(40) for e in events]
    )
    table = DeltaTable(str(tmp_path / "events"))
    (full,) = table.file_uris()
    assert table.get_add_actions().column("size_bytes")[0].as_py() > 25_000, (
        "one part past the target"
    )
    for event in events:  # single appends: small parts, a compaction step every tenth version
        log.append(event)
    upkeep.flush()  # the steps run in the background
    table.update_incremental()
    assert "OPTIMIZE" in [c["operation"] for c in table.history()]
    assert full in table.file_uris(), "a part past the target was rewritten"
    assert len(table.file_uris()) < len(events) // 2, "small parts were not compacted"
    reread = delta.DeltaEventLog(str(tmp_path / "events"))
    assert sum(len(reread.events(run_id)) for run_id in RUNS) == len(events) * 41


def test_a_delta_compaction_gives_way_to_another_but_not_to_appends(monkeypatch, tmp_path: Path):
    from deltalake import DeltaTable

    from workbench.core.delta import log_compaction as steps
    from workbench.core.events import delta

    monkeypatch.setattr(steps, "STEP_EVERY", 10**9)  # compactions only when called here
    monkeypatch.setattr(steps, "LOG_SETTINGS", steps.CompactionSettings(min_files=2))
    events = [e for run_id in sorted(RUNS) for e in run_events(run_id)]
    first = delta.DeltaEventLog(str(tmp_path / "events"))
    for event in events:
        first.append(event)
    second = delta.DeltaEventLog(str(tmp_path / "events"))
    stale = steps.prepare_step(first._table, first._storage)  # its part written, not committed
    assert steps.compact_log(second._table, second._storage)  # another process compacts first
    assert steps.commit_step(first._storage, stale) is None, "both would keep events twice"

    late = [dataclasses.replace(e, event_id=f"late-{e.event_id}") for e in events[:3]]
    for event in late:
        first.append(event)
    pending = steps.prepare_step(first._table, first._storage)
    second.append(dataclasses.replace(events[0], event_id="after-it-read"))
    assert steps.commit_step(first._storage, pending), "an append in between is no conflict"
    history = DeltaTable(str(tmp_path / "events")).history()
    assert [c["operation"] for c in history].count("OPTIMIZE") == 2
    reread = delta.DeltaEventLog(str(tmp_path / "events"))
    found = [e.event_id for run_id in RUNS for e in reread.events(run_id)]
    assert len(found) == len(set(found)) == len(events) + len(late) + 1


# ----------------------------------------------------------------------- non-finite numbers
def test_non_finite_metrics_reach_a_reader_that_follows_another_writers_commits(
    backend: str, tmp_path: Path
):
    import math

    writer = make_log(backend, tmp_path)
    reader = open_event_log(writer.uri)
    start = Event("run-x", E.RUN_STARTED, {"name": "fit", "kind": "pipeline"}, timestamp=BASE)
    writer.append(start)
    assert len(reader.events("run-x")) == 1  # the reader now follows from this state
    values = [math.inf, -math.inf, math.nan, 1.5]
    writer.append(
        [
            Event("run-x", E.METRIC_LOGGED, {"name": "loss", "value": v}, timestamp=BASE + i + 1)
            for i, v in enumerate(values)
        ]
    )
    for log in (reader, open_event_log(writer.uri)):  # following commits, and reading afresh
        found = [e.payload["value"] for e in log.events("run-x")[1:]]
        assert found[:2] == values[:2] and math.isnan(found[2]) and found[3] == 1.5
    if backend == "delta":
        assert standard_json_log(tmp_path / "events") > 2


# ------------------------------------------------------------------ locations held by others
def sqlite_contents(path: Path) -> tuple[Any, ...]:
    """A SQLite file's schema, user version and every table's rows (and its bytes)."""
    with sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True) as db:
        schema = db.execute("SELECT type, name, sql FROM sqlite_master ORDER BY name").fetchall()
        version = db.execute("PRAGMA user_version").fetchone()[0]
        rows = {name: db.execute(f'SELECT * FROM "{name}"').fetchall() for _, name, _ in schema}
    db.close()
    return schema, version, rows, path.read_bytes()


def application_database(path: Path, tables: dict[str, str]) -> Path:
    """An application's own SQLite file with ``tables`` (name -> columns), a row in each."""
    with sqlite3.connect(path) as db:
        for name, columns in tables.items():
            db.execute(f"CREATE TABLE {name} ({columns})")
            count = len(columns.split(","))
            db.execute(f"INSERT INTO {name} VALUES ({', '.join('?' * count)})", range(count))
    db.close()
    return path


@pytest.mark.parametrize(
    "held",
    [
        {"events": "id INTEGER PRIMARY KEY, kind TEXT, payload TEXT"},
        {"users": "id INTEGER, name TEXT"},
        {"events": "id, kind", "users": "id, name"},
    ],
    ids=["its-own-events-table", "other-tables", "both"],
)
def test_a_sqlite_file_of_another_application_is_refused_untouched(tmp_path: Path, held):
    from workbench.core.base.errors import EventLogLocationError

    app = application_database(tmp_path / "app.db", held)
    before = sqlite_contents(app)
    with pytest.raises(EventLogLocationError, match=r"another application's|not a run log") as e:
        open_event_log(f"sqlite://{app}")
    assert "dc.init(events=" in str(e.value)
    assert sqlite_contents(app) == before
    assert sorted(os.listdir(tmp_path)) == ["app.db"]  # no journal left beside it


def test_a_file_that_is_not_a_sqlite_database_is_refused_untouched(tmp_path: Path):
    from workbench.core.base.errors import EventLogLocationError

    data = tmp_path / "data.csv"
    data.write_text("id,name\n1,a\n")
    with pytest.raises(EventLogLocationError, match="not a SQLite database"):
        open_event_log(f"sqlite://{data}")
    assert data.read_text() == "id,name\n1,a\n"


def test_a_folder_holding_other_data_is_refused_as_a_delta_run_log_untouched(tmp_path: Path):
    import pyarrow as pa
    from deltalake import write_deltalake

    from tests.conftest import tree_digest
    from workbench.core.base.errors import EventLogLocationError

    table = tmp_path / "table"
    write_deltalake(str(table), pa.table({"id": [1, 2], "name": ["a", "b"]}))
    files = tmp_path / "files"
    files.mkdir()
    (files / "data.csv").write_text("id\n1\n")
    plain_file = tmp_path / "plain.txt"
    plain_file.write_text("text")
    for where, what in [
        (table, "Delta table of other data"),
        (files, "files that are not a run log"),
        (plain_file, "is a file"),
    ]:
        before = tree_digest(tmp_path)
        with pytest.raises(EventLogLocationError, match=what):
            open_event_log(f"delta://{where}")
        assert tree_digest(tmp_path) == before


def test_an_empty_folder_or_file_becomes_a_run_log(tmp_path: Path):
    (tmp_path / "folder").mkdir()
    (tmp_path / "empty.db").touch()
    for uri in (f"delta://{tmp_path / 'folder'}", f"sqlite://{tmp_path / 'empty.db'}"):
        log = open_event_log(uri)
        log.append(Event("run-1", E.RUN_STARTED, {"name": "n", "kind": "pipeline"}))
        assert [r.run_id for r in open_event_log(uri).runs()] == ["run-1"]


def test_threads_opening_a_new_sqlite_run_log_at_once_all_open_it(tmp_path: Path):
    """The switch to WAL meets another thread's lock and SQLite refuses it at once (no busy
    wait): each open retries it, so none fails with "database is locked" (4 of 60 rounds did)."""
    import threading

    from workbench.core.events.sqlite import SqliteEventLog

    for round_ in range(40):
        path = tmp_path / f"runs-{round_}.db"
        start, failed = threading.Barrier(8), []

        def open_it(path: Path, start: threading.Barrier, failed: list) -> None:
            start.wait()
            try:
                SqliteEventLog(path).close()
            except sqlite3.Error as e:
                failed.append(e)

        threads = [threading.Thread(target=open_it, args=(path, start, failed)) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert failed == [], failed
    with sqlite3.connect(tmp_path / "runs-0.db") as db:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
