"""Multi-process reliability: atomic multi-table transactions from several hosts, under
contention and kill -9, seen through the catalog and by tools reading the table folders.

``WORKBENCH_RELIABILITY_TRANSACTIONS`` sets the transfers per writer (25 here; the closing
figures of the commit protocol use 250).
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from deltalake import DeltaTable

import workbench as dc
from tests.core.transactions import reliability_workers as workers

pytestmark = pytest.mark.slow  # processes killed at random points
ROOT = Path(__file__).resolve().parents[3]
TRANSFERS = int(os.environ.get("WORKBENCH_RELIABILITY_TRANSACTIONS", "25"))
# a multiple of 4: batches of four writers, one stalled at each crash point in turn
KILLS = int(os.environ.get("WORKBENCH_RELIABILITY_KILLS", "12"))
LEASE_SECONDS = "2"


@pytest.fixture(params=["local", "vectors", pytest.param("s3", marks=pytest.mark.s3)])
def spec(request, tmp_path) -> str:
    """A fresh catalog, on the local disk (its tables merge-on-read for ``vectors``) or on S3,
    as the workers name it."""
    if request.param in ("local", "vectors"):
        root = str(tmp_path / "catalog")
        return json.dumps({"root": root, "vectors": request.param == "vectors"})
    s3 = request.getfixturevalue("s3")
    return json.dumps({"root": f"s3://{s3.new_bucket()}/catalog", "options": s3.options})


def spawn(*args: object, host: str = "host-0") -> subprocess.Popen:
    env = {
        **os.environ,
        "WORKBENCH_HOST_ID": host,
        "WORKBENCH_LEASE_SECONDS": LEASE_SECONDS,
        "WORKBENCH_LEASE_WAIT_SECONDS": "30",
    }
    return subprocess.Popen(
        [sys.executable, "-m", "tests.core.transactions.reliability_workers", *map(str, args)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def finish(proc: subprocess.Popen, timeout: float) -> None:
    assert proc.wait(timeout=timeout) == 0, proc.stderr.read().decode()[-3000:]


def outcomes(report: Path) -> list[tuple[str | None, int]]:
    """Each finished transfer of a writer: its committed id (None: gave up) and attempts."""
    if not report.exists():
        return []
    lines = [line.split() for line in report.read_text().splitlines() if line != "ready"]
    return [(None if txn == "-" else txn, int(attempts)) for txn, attempts in lines]


def start_readers(spec: str, folder: Path) -> tuple[Path, list[subprocess.Popen]]:
    """A reader through the catalog and a reader of the table folders, until told to stop."""
    stop = folder / "stop"
    return stop, [
        spawn("reader", spec, stop, folder / "catalog_reader"),
        spawn("folder_reader", spec, stop, folder / "folder_reader"),
    ]


def stop_readers(stop: Path, readers: list[subprocess.Popen], folder: Path) -> dict:
    stop.touch()
    for proc in readers:
        finish(proc, 120)
    return {
        "catalog": json.loads((folder / "catalog_reader").read_text()),
        "folders": json.loads((folder / "folder_reader").read_text()),
    }


def committed_transactions(spec: str) -> dict[str, dict]:
    """The log's transactions by id."""
    workers.connect(spec)
    history = dc.transactions(read_as=dc.DatasetType.PYARROW).to_pylist()
    return {h["transaction_id"]: h for h in history}


def assert_catalog_consistent(spec: str, reported: set[str]) -> dict[str, dict]:
    """Every reported commit is in the log, whole (both tables), and every state the catalog
    ever showed keeps the total."""
    history = committed_transactions(spec)
    missing = reported - set(history)
    assert not missing, f"{len(missing)} reported commits are not in the log"
    for h in history.values():
        if h["commit_message"] == "transfer":
            assert sorted(h["tables"]) == ["bank.a", "bank.b"], h
    assert workers.snapshot_total() == workers.TOTAL
    for txn in history:
        assert workers.snapshot_total(as_of=txn) == workers.TOTAL
    return history


def assert_folders_match_catalog(spec: str) -> None:
    """Once the catalog has been used, each table folder's newest Delta version is the one the
    catalog recorded, holding the same rows."""
    workers.connect(spec)
    options = json.loads(spec).get("options")
    tables = workers.read_both()  # the catalog is used: committed entries are in place
    for name, rows in tables.items():
        info = dc.get_table(name, namespace="bank")
        direct = DeltaTable(info.uri, storage_options=options)
        assert direct.version() == info.version
        assert workers.delta_rows(direct).sort_by("k").to_pylist() == rows.sort_by("k").to_pylist()


def assert_folder_readers_saw_only_commits(seen: list[str], history: dict) -> None:
    uncommitted = set(seen) - set(history)
    assert not uncommitted, f"table folders showed rows of {len(uncommitted)} uncommitted txns"


def test_concurrent_transfers_from_two_hosts_keep_totals_and_lose_no_commit(spec, tmp_path):
    workers.setup(spec)
    stop, readers = start_readers(spec, tmp_path)
    # moto's S3 server answers one request at a time: fewer transfers there, and more time
    on_s3 = json.loads(spec)["root"].startswith("s3://")
    transfers = TRANSFERS // 2 if on_s3 else TRANSFERS
    reports = [tmp_path / f"writer{i}" for i in range(4)]
    writers = [
        spawn("writer", spec, transfers, i, report, 10, host=f"host-{i % 2}")
        for i, report in enumerate(reports)
    ]
    for proc in writers:
        finish(proc, 60 + (20 if on_s3 else 6) * transfers)
    seen = stop_readers(stop, readers, tmp_path)
    results = [o for report in reports for o in outcomes(report)]
    committed = {txn for txn, _ in results if txn}
    first_try = sum(1 for txn, attempts in results if txn and attempts == 1)
    print(
        f"\n{len(results)} transfers on {json.loads(spec)['root'].split(':')[0]}: "
        f"{len(committed) / len(results):.1%} committed, {first_try / len(results):.1%} at "
        f"the first attempt; {seen['catalog']['checks']} catalog checks, "
        f"{seen['folders']['polls']} folder polls"
    )
    assert len(results) == 4 * transfers
    assert len(committed) >= 0.9 * len(results), "most transfers commit under contention"
    assert seen["catalog"]["checks"] > 10 and seen["catalog"]["violations"] == 0
    assert seen["folders"]["polls"] > 10 and seen["folders"]["violations"] == 0
    history = assert_catalog_consistent(spec, committed)
    assert_folder_readers_saw_only_commits(seen["folders"]["seen"], history)
    assert_folders_match_catalog(spec)


def test_killed_writers_leave_whole_transactions_and_the_next_writer_goes_on(spec, tmp_path):
    """Batches of writers on two hosts killed at random instants, one of each batch stalled at
    a crash point of the commit (before the log commit, after it, between table commits)."""
    workers.setup(spec)
    stop, readers = start_readers(spec, tmp_path)
    rng = random.Random(7)
    kills, batch_size = KILLS, 4
    reported: set[str] = set()
    for batch in range(kills // batch_size):
        point = workers.CRASH_POINTS[batch % len(workers.CRASH_POINTS)]
        procs = []
        for i in range(batch_size):
            name = f"crash{batch}-{i}"
            args = (point, tmp_path / f"{name}.flag") if i == 0 else ("", "")
            report = tmp_path / name
            procs.append(
                (
                    spawn("crash", spec, batch * 10 + i, report, *args, host=f"host-{i % 2}"),
                    report,
                    args,
                )
            )
        for proc, report, _ in procs:
            wait_for(report.exists, proc)  # started and connected
        for proc, report, (point_here, flag) in procs:
            if point_here:
                wait_for(flag.exists, proc, timeout=90)
            else:
                time.sleep(rng.uniform(0, 1.5))
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
            reported |= {txn for txn, _ in outcomes(report) if txn}
    # The next writer waits out the dead writers' leases, puts their commits in place, and
    # commits its own.
    after = tmp_path / "after"
    workers.writer(spec, 3, 99, str(after))
    assert all(txn for txn, _ in outcomes(after))
    seen = stop_readers(stop, readers, tmp_path)
    history = assert_catalog_consistent(spec, reported | {t for t, _ in outcomes(after)})
    assert_folder_readers_saw_only_commits(seen["folders"]["seen"], history)
    assert seen["catalog"]["violations"] == 0 and seen["folders"]["violations"] == 0
    assert_folders_match_catalog(spec)
    transfers = sum(h["commit_message"] == "transfer" for h in history.values())
    print(f"\n{kills} kills: {transfers} transfers committed, {len(reported)} reported")


def wait_for(condition, proc: subprocess.Popen, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert proc.poll() is None, proc.stderr.read().decode()[-3000:]
        assert time.monotonic() < deadline, "the worker did not get there in time"
        time.sleep(0.01)
