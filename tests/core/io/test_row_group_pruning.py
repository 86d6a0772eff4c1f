"""On an object store a filtered SQL query reads only the row groups of its candidate files
that the footers' statistics allow, whether a file is fetched whole (small) or by range (big),
and gets exactly the rows DuckDB finds over all of them: NaN above every number, nulls, times
with a zone, text, IN, NOT and OR."""

from __future__ import annotations

import datetime

import duckdb
import numpy as np
import pyarrow as pa
import pytest

import workbench as dc
from workbench.core.delta import row_groups
from workbench.core.storage import file_cache

pytestmark = pytest.mark.s3

ROWS = 120_000
T0 = datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)


def _rows() -> pa.Table:
    ids = np.arange(ROWS)
    x = (ids % 1000) / 1000.0
    x[ids % 997 == 0] = np.nan
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "x": pa.array(x, mask=ids % 1009 == 0),
            "ts": pa.array(ids * 1_000_000, pa.timestamp("us", tz="UTC")),
            "s": pa.array([f"k{i:06d}" for i in ids]),
        }
    )


PREDICATES = [
    "id = 70123",
    "id >= 30000 AND id < 30500",
    "x > 0.9995",  # above every bound: only the NaN rows, in every group
    "x IS NULL",
    f"ts >= TIMESTAMPTZ '{T0 + datetime.timedelta(seconds=100_000)}'",
    "s = 'k000042'",
    "id IN (5, 119999)",
    "NOT (id < 110000)",
    "id = 3 OR s = 'k100000'",
]


@pytest.fixture
def table(s3_catalog):
    rows = _rows()
    dc.write(rows, "t", mode="create")
    return rows


@pytest.fixture(params=["whole", "ranged"])
def fetching(request, monkeypatch):
    """Small files fetched whole, or every file read by range."""
    if request.param == "ranged":
        monkeypatch.setattr(row_groups, "WHOLE_FILE_BYTES", 0)
    file_cache.clear()
    return request.param


@pytest.fixture
def kept_groups(monkeypatch):
    """The row groups of each fragment the pruning gave, query by query."""
    seen: list[list[int]] = []
    real = row_groups.pruned_fragments

    def recording(*args, **kwargs):
        fragments = real(*args, **kwargs)
        seen.append([f.num_row_groups for f in fragments])
        return fragments

    monkeypatch.setattr(row_groups, "pruned_fragments", recording)
    return seen


@pytest.mark.parametrize("way", ["dc.sql", "dc.read(filter=)"])
@pytest.mark.parametrize("predicate", PREDICATES)
def test_a_filtered_read_gets_exactly_duckdbs_rows(table, fetching, predicate, way):
    model = duckdb.connect()
    model.execute("SET TimeZone = 'UTC'")
    model.register("rows", table)
    model.execute("CREATE TABLE t AS SELECT * FROM rows")  # DuckDB's meaning, not pyarrow's
    expected = model.sql(f"SELECT id FROM t WHERE {predicate} ORDER BY id").fetchall()
    if way == "dc.sql":
        got = dc.sql(f"SELECT id FROM default.t WHERE {predicate} ORDER BY id", read_as="pyarrow")
    else:  # in write order, which is id order here
        got = dc.read("t", read_as="pyarrow", columns=["id"], filter=predicate)
    assert [(v,) for v in got.column("id").to_pylist()] == expected


def test_a_point_query_reads_one_row_group(table, fetching, kept_groups):
    dc.sql("SELECT * FROM default.t WHERE id = 70123", read_as="pyarrow")
    (per_file,) = kept_groups
    assert per_file == [1]
    whole = dc.sql("SELECT count(*) AS n FROM default.t WHERE id >= 0", read_as="pyarrow")
    assert whole.column("n")[0].as_py() == ROWS
    assert kept_groups[1][0] > 3  # the same file holds several groups: one was chosen
    kept = len(file_cache.KEPT.values())
    assert kept == (1 if fetching == "whole" else 0)  # by range: the file is never fetched whole
    point = dc.read("t", read_as="pyarrow", filter="id = 70123")
    assert point.column("id").to_pylist() == [70123] and kept_groups[2] == [1]
