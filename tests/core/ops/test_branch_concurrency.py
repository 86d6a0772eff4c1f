"""Branches under concurrency, on a local disk and on S3, with writers on separate hosts: work
on a branch and on main in parallel, and a publish racing main's writers. No commit is lost and
no publish is partial."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pytest

import workbench as dc

pytestmark = pytest.mark.slow  # several processes
ROOT = Path(__file__).resolve().parents[3]
BATCHES = 8
TABLES = [f"t{i}" for i in range(4)]


@pytest.fixture(params=["local", pytest.param("s3", marks=pytest.mark.s3)])
def spec(request, tmp_path) -> str:
    """A fresh catalog with ``TABLES`` (a row each) and a branch ``exp``, as the workers name
    it; this process uses it too."""
    if request.param == "local":
        spec = json.dumps({"root": str(tmp_path / "catalog")})
    else:
        s3 = request.getfixturevalue("s3")
        spec = json.dumps({"root": f"s3://{s3.new_bucket()}/catalog", "options": s3.options})
    described = json.loads(spec)
    dc.init(
        {"default": dc.Catalog(dc.CatalogProperties(described["root"], described.get("options")))}
    )
    with dc.transaction():
        for name in TABLES:
            dc.write(pa.table({"id": [-1], "who": ["seed"]}), name)
    dc.create_branch("exp")
    return spec


def spawn(spec: str, branch: str, tables: list[str], tag: str, report: Path) -> subprocess.Popen:
    env = {**os.environ, "WORKBENCH_HOST_ID": f"host-{tag}", "WORKBENCH_LEASE_WAIT_SECONDS": "60"}
    args = ["appender", spec, branch, ",".join(tables), str(BATCHES), tag, str(report)]
    return subprocess.Popen(
        [sys.executable, "-m", "tests.core.ops.branch_workers", *args],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def finish(proc: subprocess.Popen) -> None:
    assert proc.wait(timeout=300) == 0, proc.stderr.read().decode()[-3000:]


def who(table: str, **read) -> list[str]:
    return sorted(dc.read(table, read_as="pyarrow", **read).column("who").to_pylist())


def test_branch_and_main_writers_work_in_parallel_and_lose_nothing(spec, tmp_path):
    procs = [
        spawn(spec, "main", TABLES[:2], "main", tmp_path / "main"),
        spawn(spec, "exp", TABLES, "branch-a", tmp_path / "a"),
        spawn(spec, "exp", TABLES[2:], "branch-b", tmp_path / "b"),
    ]
    for proc in procs:
        finish(proc)
    for name in TABLES:
        on_main = ["seed"] + ["main"] * BATCHES * (name in TABLES[:2])
        assert who(name) == sorted(on_main)
        on_branch = (
            ["seed"] + ["branch-a"] * BATCHES + ["branch-b"] * BATCHES * (name in TABLES[2:])
        )
        assert who(name, branch="exp") == sorted(on_branch)
    committed = {line for f in ("a", "b") for line in (tmp_path / f).read_text().split()}
    with dc.branch("exp"):
        history = dc.transactions(read_as="pandas")
    writes = history[~history["operations"].map(lambda ops: "AUTO_COMPACT" in ops)]
    assert set(writes["transaction_id"]) == committed, "compaction steps aside, every commit"
    result = dc.merge_branch("exp", rebase=True)
    assert result.rebased == ["default.t0", "default.t1"]
    for name in TABLES:
        assert sorted(who(name)) == sorted(
            who(name, branch="exp") + ["main"] * BATCHES * (name in TABLES[:2])
        )


def test_a_publish_racing_mains_writers_is_all_or_nothing_and_loses_no_commit(spec, tmp_path):
    for name in TABLES:
        dc.write(pa.table({"id": [0], "who": ["branch"]}), name, mode="append", branch="exp")
    writers = [spawn(spec, "main", TABLES, f"main{i}", tmp_path / f"w{i}") for i in range(2)]
    outcomes = []
    while any(w.poll() is None for w in writers):
        try:
            dc.merge_branch("exp")
            outcomes.append("published")
            break
        except dc.BranchConflictError:
            outcomes.append("conflict")
            published = [name for name in TABLES if "branch" in who(name)]
            assert published == []  # a refused publish left every table without the branch's row
    rebased = None if outcomes[-1:] == ["published"] else dc.merge_branch("exp", rebase=True)
    for w in writers:
        finish(w)
    for name in TABLES:
        assert who(name) == sorted(
            ["seed", "branch"] + [f"main{i}" for i in range(2) for _ in range(BATCHES)]
        )
    main_commits = {line for i in range(2) for line in (tmp_path / f"w{i}").read_text().split()}
    history = set(dc.transactions(read_as="pandas")["transaction_id"])
    assert main_commits <= history and len(main_commits) == 2 * BATCHES
    assert rebased is None or rebased.tables == [f"default.{n}" for n in TABLES]
    assert "published" in outcomes or rebased is not None
