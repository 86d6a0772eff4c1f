"""Multi-process reliability: atomic multi-table transactions under concurrency and kill -9."""

from __future__ import annotations

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
from tests import reliability_workers as workers

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parent.parent


def spawn(*args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "tests.reliability_workers", *args],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def committed_ids(report: Path) -> set[str]:
    return set(report.read_text().split()) if report.exists() else set()


def assert_catalog_consistent(root: str, reported: set[str]) -> None:
    """Every reported commit is in the log with both tables, and every state keeps the total."""
    dc.init_local(root)
    history = dc.transactions(read_as=dc.DatasetType.PYARROW).to_pylist()
    logged = {h["transaction_id"]: h for h in history}
    missing = reported - set(logged)
    assert not missing, f"{len(missing)} reported commits are not in the log"
    for h in history:
        if h["commit_message"] == "transfer":
            assert sorted(h["tables"]) == ["bank.a", "bank.b"], h
    assert workers.snapshot_total() == workers.TOTAL
    for h in history:
        assert workers.snapshot_total(as_of=h["end_time"]) == workers.TOTAL, h


def test_concurrent_transfers_keep_totals_and_lose_no_commit(tmp_path):
    root = str(tmp_path / "catalog")
    workers.setup(root)
    writers = [spawn("writer", root, "25", str(i), str(tmp_path / f"w{i}")) for i in range(3)]
    readers = [spawn("reader", root, "6", str(tmp_path / f"r{i}")) for i in range(2)]
    for proc in writers + readers:
        assert proc.wait(timeout=120) == 0, proc.stderr.read().decode()[-2000:]
    reported = set().union(*(committed_ids(tmp_path / f"w{i}") for i in range(3)))
    assert len(reported) == 75
    checks = violations = 0
    for i in range(2):
        c, v = map(int, (tmp_path / f"r{i}").read_text().split())
        checks, violations = checks + c, violations + v
    assert checks > 20 and violations == 0
    assert_catalog_consistent(root, reported)


def test_killed_writers_leave_whole_transactions_and_are_repaired(tmp_path):
    root = str(tmp_path / "catalog")
    workers.setup(root)
    rng = random.Random(7)
    reported: set[str] = set()
    for run in range(12):
        report = tmp_path / f"crash{run}"
        flag = tmp_path / f"paused{run}"
        between_commits = run % 3 == 2  # every third run (and the last) dies between commits
        proc = spawn("crash", root, str(run), str(report), str(flag) if between_commits else "")
        if between_commits:
            deadline = time.monotonic() + 60
            while not flag.exists():
                assert proc.poll() is None, proc.stderr.read().decode()[-2000:]
                assert time.monotonic() < deadline
                time.sleep(0.01)
        else:
            time.sleep(rng.uniform(0.3, 2.0))
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        reported |= committed_ids(report)
    assert_catalog_consistent(root, reported)
    heads = [DeltaTable(f"{root}/bank/{t}").version() for t in ("a", "b")]
    recorded = [dc.get_table(t, namespace="bank").version for t in ("a", "b")]
    assert heads[0] > recorded[0] or heads[1] > recorded[1], "the last kill left dangling versions"
    assert_only_recorded_versions_readable(root)
    # The next writer repairs tables left with uncommitted versions and commits normally.
    workers.writer(root, 3, 99, str(tmp_path / "after"))
    reported |= committed_ids(tmp_path / "after")
    assert_catalog_consistent(root, reported)
    assert_only_recorded_versions_readable(root)


def assert_only_recorded_versions_readable(root: str) -> None:
    """Delta versions of killed or repaired transactions are refused; recorded ones read."""
    dc.init_local(root)
    recorded: dict[str, set[int]] = {"a": set(), "b": set()}
    for h in dc.transactions(read_as=dc.DatasetType.PYARROW).to_pylist():
        for change in dc.read_transaction(h["transaction_id"]).changes:
            if change["table_name"] in recorded:
                recorded[change["table_name"]].add(change["table_version"])
    unrecorded = 0
    for table, versions in recorded.items():
        head = DeltaTable(f"{root}/bank/{table}").version()
        for version in range(head + 1):
            if version in versions:
                dc.read(table, namespace="bank", version=version, read_as=dc.DatasetType.PYARROW)
            else:
                unrecorded += 1
                with pytest.raises(dc.TableVersionNotFoundError):
                    dc.read(table, namespace="bank", version=version)
    assert unrecorded, "kills and repairs left Delta versions the log never recorded"
