"""A Daft frame of a table filters as Daft does: the filter Daft pushes into the scan is read
by DuckDB where both give it one meaning (text, integers, times, nulls; files with deletion
vectors too) and by Daft's own reader where they may not (floats, whose -0.0 and NaN Daft
orders its own way), and either way the rows are those Daft keeps of the same rows in memory."""

from __future__ import annotations

import asyncio
import datetime as dt
import math
import os
from dataclasses import replace

import daft
import pyarrow as pa
import pytest
from daft import col
from daft.io.pushdowns import Pushdowns

import workbench as dc
from workbench.core.catalog.locations import locate
from workbench.core.transactions.table_versions import open_table
from workbench.engines.daft.engine import FILE_COLUMN
from workbench.engines.daft.table_source import TableFiles

T0 = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
KEYED = dc.Schema.of(
    [
        dc.Field.of(pa.field("id", pa.int64()), is_merge_key=True),
        dc.Field.of(pa.field("s", pa.string())),
        dc.Field.of(pa.field("f", pa.float64())),
        dc.Field.of(pa.field("t", pa.timestamp("us", "UTC"))),
    ]
)
FLOATS = [0.0, -0.0, float("nan"), 1.5, None, -2.0]


def rows(ids: range) -> pa.Table:
    return pa.table(
        {
            "id": pa.array(list(ids), pa.int64()),
            "s": [None if i % 7 == 0 else f"s{i % 5}" for i in ids],
            "f": [FLOATS[i % len(FLOATS)] for i in ids],
            "t": [T0 + dt.timedelta(hours=i) for i in ids],
        }
    )


PREDICATES = {
    "text": col("s") == "s3",
    "text in": col("s").is_in(["s1", "s4"]),
    "in with null": col("s").is_in(["s1", None]),
    "not text": ~(col("s") == "s2"),
    "null": col("s").is_null(),
    "int range": (col("id") >= 17) & (col("id") < 43),
    "or": (col("id") == 5) | (col("s") == "s0"),
    "time": col("t") > T0 + dt.timedelta(hours=30),
    "float above -0": col("f") > -0.0,
    "float below 0": col("f") < 0.0,
    "float equal": col("f") == 0.0,
    "not float": ~(col("f") > 1.0),
}


@pytest.fixture
def table(catalog):
    """Four appends, then a delete by key: one file carries a deletion vector."""
    off = {"delta.autoOptimize.autoCompact": "false"}
    dc.write(rows(range(0, 15)), "t", schema=KEYED, table_properties=off)
    for start in (15, 30, 45):
        dc.write(rows(range(start, start + 15)), "t", mode="merge")
    dc.write(pa.table({"id": pa.array([3, 20, 21], pa.int64())}), "t", mode="delete")
    return dc.read("t", read_as="pyarrow")


def plain(table: pa.Table) -> list[tuple]:
    """Rows as tuples, NaN as text (NaN equals nothing, itself included)."""
    return [
        tuple("NaN" if isinstance(v, float) and math.isnan(v) else v for v in row.values())
        for row in table.to_pylist()
    ]


@pytest.mark.parametrize("name", PREDICATES)
def test_a_daft_frame_keeps_the_rows_daft_keeps(table, name):
    expected = daft.from_arrow(table).where(PREDICATES[name]).to_arrow()
    got = dc.read("t").where(PREDICATES[name]).to_arrow()
    assert plain(got) == plain(expected)


def _task_kinds(predicate) -> set[str]:
    """The kinds of task the table's Daft source makes for ``predicate`` pushed into it."""
    opened = open_table(locate("t"))
    arrow = pa.schema([pa.field(f.name, f.type) for f in opened.schema])
    storage = opened.loc.catalog.storage
    source = TableFiles(opened.files, opened.uri, arrow, storage, None, None, opened)

    async def kinds() -> set[str]:
        return {type(task).__name__ async for task in source.get_tasks(Pushdowns(predicate))}

    return asyncio.run(kinds())


def test_duckdb_reads_the_filters_both_read_alike_and_daft_the_others(table):
    assert _task_kinds(PREDICATES["text"]) == {"_DuckDbFilesTask"}
    assert _task_kinds(PREDICATES["time"]) == {"_DuckDbFilesTask"}
    assert "_DuckDbFilesTask" not in _task_kinds(PREDICATES["float above -0"])
    assert "_DuckDbFilesTask" not in _task_kinds(PREDICATES["in with null"])
    assert "_DuckDbFilesTask" not in _task_kinds(None)


@pytest.mark.parametrize("path", ["path", FILE_COLUMN])  # the merge path's own name too
def test_a_daft_frame_with_its_path_column_read_by_duckdb(table, path):
    frame = dc.read("t", file_path_column=path).where(col("s") == "s3").to_arrow()
    files = {f.absolute for f in open_table(locate("t")).files}
    assert frame.num_rows == sum(1 for s in table.column("s").to_pylist() if s == "s3")
    assert frame.column_names == [*table.column_names, path]
    assert set(frame.column(path).to_pylist()) <= files


def test_a_count_of_every_row_is_the_logs_and_opens_no_file(table):
    frame = dc.read("t")
    for f in open_table(locate("t")).files:  # after planning: a file read now would fail
        os.remove(f.absolute)
    assert frame.count_rows() == table.num_rows  # the vector's deletes left out
    with pytest.raises(Exception):  # noqa: B017 - whichever error Daft raises, it reads
        frame.to_arrow()


def test_counts_the_log_cannot_answer_read_the_rows(table):
    frame = dc.read("t")
    assert frame.where(col("s") == "s3").count_rows() == sum(
        1 for s in table.column("s").to_pylist() if s == "s3"
    )
    assert frame.limit(5).count_rows() == 5
    non_null = frame.agg(col("s").count()).to_pydict()["s"]
    assert non_null == [sum(1 for s in table.column("s").to_pylist() if s is not None)]


def test_a_file_without_a_row_count_is_counted_by_reading_it(table):
    opened = open_table(locate("t"))
    arrow = pa.schema([pa.field(f.name, f.type) for f in opened.schema])
    files = [replace(opened.files[0], rows=0), *opened.files[1:]]  # as a writer without stats
    source = TableFiles(files, opened.uri, arrow, opened.loc.catalog.storage, None, None, opened)
    assert not source.supports_count_pushdown()
    assert source.read().count_rows() == table.num_rows
