"""A file whose statistics rule a query out is never opened, on any read path: the files the
log's bounds exclude are overwritten with bytes that are no Parquet (same names, same sizes,
so listings and existence checks still pass), and every path must still answer exactly."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pytest

import workbench as dc

OFF = {"delta.autoOptimize.autoCompact": "false"}
PART = 100
PARTS = 8
WANTED = 3 * PART + 42


def _table(keyed: bool) -> None:
    """``PARTS`` appends of ``PART`` rows each (ids in ranges, a file each); keyed: then a
    delete, which leaves a deletion vector in the file holding ``WANTED``."""
    schema = None
    if keyed:
        schema = dc.Schema.of(
            [
                dc.Field.of(pa.field("id", pa.int64()), is_merge_key=True),
                dc.Field.of(pa.field("v", pa.string())),
            ]
        )
    for k in range(PARTS):
        ids = list(range(k * PART, (k + 1) * PART))
        rows = pa.table({"id": pa.array(ids, pa.int64()), "v": [f"v{i}" for i in ids]})
        extra = {"table_properties": OFF, **({"schema": schema} if keyed else {})} if k == 0 else {}
        later = "merge" if keyed else "append"
        dc.write(rows, "t", "ns", mode="create" if k == 0 else later, **extra)
    if keyed:
        dc.write(pa.table({"id": pa.array([WANTED + 1], pa.int64())}), "t", "ns", mode="delete")


def _spoil_all_but_the_candidate() -> int:
    """Overwrite every data file whose bounds exclude ``WANTED``; how many were spoilt."""
    from workbench.core.catalog.locations import locate
    from workbench.core.transactions.table_versions import open_table

    opened = open_table(locate("t", "ns"))
    spoilt = 0
    for f in opened.files:
        if f.low["id"] <= WANTED <= f.high["id"]:
            continue
        path = opened.storage.fs_path(f.absolute)
        size = os.path.getsize(path)
        with open(path, "wb") as out:
            out.write(b"not parquet " * (size // 12) + b"!" * (size % 12))
        spoilt += 1
    assert spoilt == PARTS - 1
    return spoilt


def _one(result: Any) -> list[int]:
    if hasattr(result, "to_arrow"):  # Daft
        result = result.to_arrow()
    if hasattr(result, "to_pandas") and not isinstance(result, pa.Table):
        result = result.to_pandas() if not hasattr(result, "rows") else result.to_arrow()
    if isinstance(result, pa.Table):
        return result.column("id").to_pylist()
    return [int(v) for v in result["id"]]


LOCAL_PATHS: dict[str, Callable[[], Any]] = {
    "sql:local": lambda: dc.sql(f"SELECT * FROM ns.t WHERE id = {WANTED}", read_as="pyarrow"),
    "sql:daft": lambda: dc.sql(
        f"SELECT * FROM ns.t WHERE id = {WANTED}", engine="daft", read_as="pyarrow"
    ),
    "read:pyarrow": lambda: dc.read("t", "ns", read_as="pyarrow", filter=f"id = {WANTED}"),
    "read:pyarrow expression": lambda: dc.read(
        "t", "ns", read_as="pyarrow", filter=pc.field("id") == WANTED
    ),
    "read:pandas": lambda: dc.read("t", "ns", read_as="pandas", filter=f"id = {WANTED}"),
    "read:polars": lambda: dc.read("t", "ns", read_as="polars", filter=f"id = {WANTED}"),
    "read:daft": lambda: dc.read("t", "ns", filter=f"id = {WANTED}"),
    "daft where": lambda: dc.read("t", "ns").where(_daft_id() == WANTED),
    "handle": lambda: dc.table("ns.t").read("pyarrow", filter=f"id = {WANTED}"),
}


def _daft_id() -> Any:
    from daft import col

    return col("id")


@pytest.mark.parametrize("keyed", [False, True], ids=["appends", "with-vectors"])
def test_no_path_opens_a_file_its_statistics_rule_out(catalog, keyed):
    dc.create_namespace("ns")
    _table(keyed)
    _spoil_all_but_the_candidate()
    for name, read in LOCAL_PATHS.items():
        assert _one(read()) == [WANTED], name
    plan = dc.sql(f"SELECT * FROM ns.t WHERE id = {WANTED}", explain=True)
    assert (plan.kept_files, plan.files) == (1, PARTS)
    assert "1 of 8 file(s)" in str(plan) and "<table>" in plan._repr_html_()
    # and a query no statistics can narrow does open them (the spoilt files are real)
    with pytest.raises(dc.WorkbenchError):
        dc.sql("SELECT count(*) FROM ns.t WHERE v = 'v1'", read_as="pyarrow")


@pytest.mark.spark
@pytest.mark.parametrize("keyed", [False, True], ids=["appends", "with-vectors"])
def test_spark_opens_no_file_its_statistics_rule_out(catalog, spark, keyed):
    from pyspark.sql import functions as F

    dc.create_namespace("ns")
    _table(keyed=keyed)
    _spoil_all_but_the_candidate()
    through_source = spark.read.format("workbench").load("ns.t")
    for frame in (
        dc.read("t", "ns", read_as="spark", filter=f"id = {WANTED}"),
        through_source.where(F.col("id") == WANTED),
        through_source.where((F.col("id") >= WANTED) & (F.col("id") <= WANTED)).select("id"),
        dc.sql(f"SELECT * FROM ns.t WHERE id = {WANTED}", engine="spark", read_as="spark"),
    ):
        assert [r["id"] for r in frame.collect()] == [WANTED]


@pytest.mark.spark
def test_every_scan_of_a_loaded_frame_keeps_every_row_its_filters_hold(catalog, spark):
    """Spark 4.3 gives every scan of one loaded DataFrame the read planned last (and plans none
    for a scan with no filter it can push): each scan reads what any scan of the frame admitted,
    so a union of a frame with a filtered copy of itself, a self-join, a count after a filtered
    read and a filtered read after a count all keep their rows, while a frame of its own skips."""
    from pyspark.sql import functions as F

    dc.create_namespace("ns")
    _table(keyed=False)
    frame = spark.read.format("workbench").load("ns.t")
    assert frame.columns == ["id", "v"]
    both = frame.select(F.lit("all").alias("k"), "id").unionByName(
        frame.where(F.col("id") == WANTED).select(F.lit("one").alias("k"), "id")
    )
    counts = {row["k"]: row["count"] for row in both.groupBy("k").count().collect()}
    assert counts == {"all": PARTS * PART, "one": 1}
    assert frame.where(F.col("id") == WANTED).count() == 1
    assert frame.count() == PARTS * PART
    assert frame.where(F.col("id") < PART).count() == PART
    pairs = frame.alias("a").join(
        frame.where(F.col("id") == WANTED).alias("b"), F.col("a.id") <= F.col("b.id")
    )
    assert pairs.count() == WANTED + 1
    fresh = spark.read.format("workbench").load("ns.t")  # a load of its own skips again
    _spoil_all_but_the_candidate()
    assert [r["id"] for r in fresh.where(F.col("id") == WANTED).collect()] == [WANTED]


@pytest.mark.ray
def test_ray_opens_no_file_its_statistics_rule_out(catalog, ray_cluster):
    from ray.data.expressions import col

    dc.create_namespace("ns")
    _table(keyed=True)
    whole = dc.read("t", "ns", read_as="ray_dataset")  # each filter planned on its own copy
    assert whole.union(whole.filter(expr=col("id") == WANTED)).count() == PARTS * PART
    _spoil_all_but_the_candidate()
    given = dc.read("t", "ns", read_as="ray_dataset", filter=f"id = {WANTED}")
    pushed = dc.read("t", "ns", read_as="ray_dataset").filter(expr=col("id") == WANTED)
    for ds in (given, pushed):
        assert [r["id"] for r in ds.take_all()] == [WANTED]


@pytest.mark.parametrize("keyed", [False, True], ids=["appends", "with-vectors"])
def test_a_diff_reads_only_the_files_the_two_points_do_not_share(catalog, keyed):
    from workbench.core.catalog.locations import locate
    from workbench.core.transactions.table_versions import open_table

    dc.create_namespace("ns")
    _table(keyed)
    before = open_table(locate("t", "ns"))
    change = pa.table({"id": pa.array([WANTED, 10_000], pa.int64()), "v": ["new", "added"]})
    dc.write(change, "t", "ns", mode="merge" if keyed else "append")
    after = open_table(locate("t", "ns"))
    kept = {f.identity for f in after.files}
    for f in before.files:  # the files both points read the same way: never opened
        if f.identity in kept:
            path = before.storage.fs_path(f.absolute)
            with open(path, "wb") as out:
                out.write(b"x" * os.path.getsize(path))
    got = dc.diff("t", "ns", before=before.version)
    assert (got.added, got.removed, got.changed) == ((1, 0, 1) if keyed else (2, 0, 0))


def test_a_daft_frame_read_twice_with_different_filters_keeps_every_row(catalog):
    """Daft pushes each scan's filter into its own planning of the shared source."""
    dc.create_namespace("ns")
    _table(keyed=True)
    frame = dc.read("t", "ns")
    both = frame.concat(frame.where(_daft_id() == WANTED))
    assert both.count_rows() == PARTS * PART - 1 + 1
