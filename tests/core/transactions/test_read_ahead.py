"""``dc.sql`` and ``dc.read`` on an object store run while another thread checks the
catalog's log for new commits, and answer as a read made after that check would: what another
process committed meanwhile is seen, a table it created is found, a store that cannot be
reached fails the read (never a stale answer from what the process remembers)."""

from __future__ import annotations

import subprocess
import sys
import threading

import pyarrow as pa
import pytest

import workbench as dc
from workbench.core.io import reader
from workbench.core.io import sql as sql_module
from workbench.core.transactions import read_ahead
from workbench.testing import LocalS3

pytestmark = pytest.mark.s3


def _count(table: str = "t") -> int:
    return dc.sql(f"SELECT count(*) AS n FROM default.{table}", read_as="pyarrow")["n"][0].as_py()


def _read(table: str = "t") -> int:
    return dc.read(table, read_as="pyarrow").num_rows


def _another_process_writes(root: str, options: dict[str, str]) -> None:
    writer = f"""
import pyarrow as pa, workbench as dc
dc.init({{"default": dc.Catalog(dc.CatalogProperties({root!r}, {options!r}))}})
dc.write(pa.table({{"id": [10, 11]}}), "t", mode="append")
dc.write(pa.table({{"id": [1]}}), "u")
"""
    subprocess.run([sys.executable, "-c", writer], check=True)


@pytest.mark.parametrize("how", ["sql", "read"])
def test_a_query_checks_the_log_on_another_thread_and_sees_what_another_process_committed(
    s3_catalog, s3, monkeypatch, how
):
    count = _count if how == "sql" else _read
    module, name = (sql_module, "_run") if how == "sql" else (reader, "_read")
    dc.write(pa.table({"id": [1, 2, 3]}), "t")
    assert count() == 3  # the log read: later queries check it beside the read
    checked_on, runs = [], []
    check, run = read_ahead.roll_forward, getattr(module, name)
    monkeypatch.setattr(
        read_ahead,
        "roll_forward",
        lambda c: checked_on.append(threading.current_thread().name) or check(c),
    )
    monkeypatch.setattr(module, name, lambda *a: runs.append(1) or run(*a))
    assert count() == 3
    assert checked_on and checked_on[0].startswith("workbench-log-check") and len(runs) == 1
    _another_process_writes(s3_catalog.root, s3.options)
    runs.clear()
    assert count() == 5  # ran on the log as read, then again on the commits found
    assert len(runs) == 2
    assert count("u") == 1  # a table the stale log does not name: found, not refused


def test_a_query_fails_when_the_check_cannot_reach_the_store():
    with LocalS3(outages=True) as server:
        root = f"s3://{server.new_bucket()}/lake"
        options = {**server.options, "retry_timeout": "1s"}
        dc.init({"default": dc.Catalog(dc.CatalogProperties(root, options))})
        dc.write(pa.table({"id": [1, 2, 3]}), "t")
        assert _count() == 3  # the log and the table's file now in the process's memory
        server.cut()
        with pytest.raises(dc.StorageUnreachableError, match="transactions/_delta_log"):
            _count()


def test_an_interrupted_read_leaves_later_views_checking_the_log(s3_catalog, monkeypatch):
    dc.write(pa.table({"id": [1, 2, 3]}), "t")
    assert _count() == 3
    run = sql_module._run

    def interrupted(*args):
        assert read_ahead.unchecked(s3_catalog)  # the read runs on the log as last read
        raise KeyboardInterrupt

    monkeypatch.setattr(sql_module, "_run", interrupted)
    with pytest.raises(KeyboardInterrupt):
        _count()
    monkeypatch.setattr(sql_module, "_run", run)
    assert not read_ahead.unchecked(s3_catalog)  # else no view would check the log again
    assert _count() == 3
