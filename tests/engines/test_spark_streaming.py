"""Spark Structured Streaming in and out of workbench tables (``format("workbench")``): a sink
that commits each micro-batch once, however often Spark runs it, and a source of a table's new
rows or its change feed, with offsets that are table versions."""

from __future__ import annotations

import os
from pathlib import Path

import pyarrow as pa
import pytest
from deltalake import DeltaTable

import workbench as dc
from tests.conftest import tree_digest
from tests.engines.stream_kills import killed_runs
from tests.engines.test_spark import assert_plain
from workbench.engines.spark.source_options import SourceOptions
from workbench.engines.spark.streams import app_id

pytestmark = pytest.mark.spark


def ids(table: str) -> list[int]:
    return sorted(dc.read(table, read_as="pyarrow")["id"].to_pylist())


def stream(spark, source: str = "default.src", **options: str):
    return spark.readStream.format("workbench").options(**options).load(source)


def run(data, checkpoint: Path, target: str = "default.dst", **options: str) -> None:
    """Stream ``data`` into ``target`` until what is there now is written."""
    writer = data.writeStream.format("workbench").option("checkpointLocation", str(checkpoint))
    writer.options(**options).trigger(availableNow=True).start(target).awaitTermination()


def collected(spark, data, name: str) -> list[dict]:
    """What a stream gives until what is there now is read (through Spark's memory sink)."""
    query = data.writeStream.format("memory").queryName(name).trigger(availableNow=True).start()
    query.awaitTermination()
    return [r.asDict() for r in spark.sql(f"SELECT * FROM {name}").collect()]


def forget_last_commit(checkpoint: Path) -> int:
    """Make the query's last micro-batch look unfinished to Spark, as when it is killed after
    the sink committed and before Spark recorded it: Spark runs that batch again on restart."""
    commits = sorted((checkpoint / "commits").glob("[0-9]*"), key=lambda p: int(p.name))
    last = commits[-1]
    last.unlink()
    (last.parent / f".{last.name}.crc").unlink(missing_ok=True)
    return int(last.name)


def test_a_table_streams_into_another_once_per_row_across_restarts(spark, catalog, tmp_path):
    dc.write(pa.table({"id": [1, 2], "v": ["a", "b"]}), "src")
    dc.write(pa.table({"id": [3], "v": ["c"]}), "src", mode="append")
    checkpoint = tmp_path / "checkpoint"
    run(stream(spark), checkpoint)  # the sink creates its table in the stream's columns
    assert ids("dst") == [1, 2, 3]
    assert dc.get_table("dst").schema.names == ["id", "v"]
    dc.write(pa.table({"id": [4, 5], "v": ["d", "e"]}), "src", mode="append")
    run(stream(spark), checkpoint)  # the restarted query reads only the new version
    assert ids("dst") == [1, 2, 3, 4, 5]
    replayed = forget_last_commit(checkpoint)
    before = tree_digest(catalog.root)
    run(stream(spark), checkpoint)  # Spark runs the batch again: its commit is skipped
    assert ids("dst") == [1, 2, 3, 4, 5]
    assert tree_digest(catalog.root) == before  # not even a stray data file
    app = app_id(SourceOptions("dst", "default", checkpoint=str(checkpoint)))
    assert dc.idempotency_version(app) == replayed
    forget_last_commit(checkpoint)
    dc.write(pa.table({"id": [6], "v": ["f"]}), "src", mode="append")
    run(stream(spark), checkpoint)  # availableNow goes on past the batch it runs again
    assert ids("dst") == [1, 2, 3, 4, 5, 6]
    assert dc.idempotency_version(app) == replayed + 1
    options = dict(catalog.properties.storage_options)  # none for a local folder
    table = DeltaTable(dc.get_table("dst").uri, storage_options=options)
    assert table.transaction_version(app) == replayed + 1  # as deltalake reads it


def test_a_stream_merges_by_key_and_a_replayed_batch_changes_nothing(spark, catalog, tmp_path):
    keyed = dc.Schema.of(
        [dc.Field.of(pa.field("id", pa.int64()), is_merge_key=True), pa.field("v", pa.string())]
    )
    dc.create_table("dst", schema=keyed)
    dc.write(pa.table({"id": [1, 2], "v": ["a", "b"]}), "dst")
    dc.write(pa.table({"id": [2, 3], "v": ["B", "c"]}), "src")
    checkpoint = tmp_path / "checkpoint"
    merging = {"writeMode": "merge", "idempotencyApp": "upserts"}
    run(stream(spark), checkpoint, **merging)
    assert dc.read("dst", read_as="pyarrow").sort_by("id").to_pylist() == [
        {"id": 1, "v": "a"},
        {"id": 2, "v": "B"},
        {"id": 3, "v": "c"},
    ]
    assert dc.idempotency_version("upserts") == 0
    forget_last_commit(checkpoint)
    before = tree_digest(catalog.root)
    run(stream(spark), checkpoint, **merging)
    assert tree_digest(catalog.root) == before


def test_complete_output_mode_replaces_the_table_each_batch(spark, catalog, tmp_path):
    dc.write(pa.table({"id": [1, 2, 3], "v": ["a", "b", "a"]}), "src")
    counts = stream(spark).groupBy("v").count()
    writer = counts.writeStream.format("workbench").outputMode("complete")
    writer = writer.option("checkpointLocation", str(tmp_path / "checkpoint"))
    writer.trigger(availableNow=True).start("default.counts").awaitTermination()
    got = dc.read("counts", read_as="pyarrow").sort_by("v").to_pylist()
    assert got == [{"v": "a", "count": 2}, {"v": "b", "count": 1}]


def test_the_source_reads_new_rows_from_a_starting_version_and_stops_at_changes(
    spark, catalog, tmp_path
):
    dc.write(pa.table({"id": [1], "v": ["a"]}), "src")
    dc.write(pa.table({"id": [2], "v": ["b"]}), "src", mode="append")
    dc.write(pa.table({"id": [3], "v": ["c"]}), "src", mode="append")
    later = collected(spark, stream(spark, startingVersion="2"), "from_two")
    assert later == [{"id": 3, "v": "c"}]
    assert collected(spark, stream(spark, startingVersion="latest"), "from_latest") == []
    dc.write(pa.table({"id": [1], "v": ["x"]}), "src", mode="replace")  # rows changed
    with pytest.raises(dc.ChangeCommitError, match=r"readChangeFeed.*skipChangeCommits") as raised:
        collected(spark, stream(spark, startingVersion="2"), "stopped")
    assert_plain(raised.value)
    passed_over = collected(spark, stream(spark, skipChangeCommits="true"), "skipping")
    assert passed_over == [{"id": 1, "v": "x"}]  # the table as it is: its one row


def test_the_change_feed_source_streams_every_change_as_dc_changes_gives_it(
    spark, catalog, tmp_path
):
    keyed = dc.Schema.of(
        [dc.Field.of(pa.field("id", pa.int64()), is_merge_key=True), pa.field("v", pa.string())]
    )
    dc.write(pa.table({"id": [1, 2], "v": ["a", "b"]}), "src", schema=keyed)
    dc.write(pa.table({"id": [2, 3], "v": ["B", "c"]}), "src", mode="merge")  # an update
    feed = collected(spark, stream(spark, readChangeFeed="true", startingVersion="0"), "feed")
    expected = dc.changes("src", 0, read_as="pyarrow").to_pylist()
    for row in expected:  # Spark gives UTC times (the session's zone) without their zone
        row["_commit_timestamp"] = row["_commit_timestamp"].replace(tzinfo=None)
    key = ("_commit_version", "_change_type", "id")
    assert sorted(feed, key=lambda r: [r[k] for k in key]) == sorted(
        expected, key=lambda r: [r[k] for k in key]
    )
    assert {r["_change_type"] for r in feed} == {"insert", "update_preimage", "update_postimage"}
    snapshot = collected(spark, stream(spark, readChangeFeed="true"), "snapshot")
    assert sorted((r["id"], r["v"], r["_change_type"], r["_commit_version"]) for r in snapshot) == [
        (1, "a", "insert", 1),
        (2, "B", "insert", 1),
        (3, "c", "insert", 1),
    ]


def test_stream_mistakes_are_workbench_errors_raised_before_spark_starts(spark, catalog, tmp_path):
    dc.write(pa.table({"id": [1], "v": ["a"]}), "src")
    reads = [
        ({"asOf": "1"}, "default.src", dc.InvalidArgumentError, "Unknown option"),
        ({"startingVersion": "two"}, "default.src", dc.InvalidArgumentError, "'latest'"),
        ({"readChangeFeed": "yes"}, "default.src", dc.InvalidArgumentError, "true or false"),
        ({"starting_version": "1"}, "default.src", dc.InvalidArgumentError, "startingVersion"),
        ({}, "default.missing", dc.TableNotFoundError, "does not exist"),
        ({"branch": "nope"}, "default.src", dc.BranchNotFoundError, "'nope' does not exist"),
    ]
    for options, table, error, message in reads:
        with pytest.raises(error, match=message) as raised:
            stream(spark, table, **options)
        assert_plain(raised.value)
    data = stream(spark)
    checkpoint = str(tmp_path / "checkpoint")
    before = tree_digest(catalog.root)
    writes = [
        ({"writeMode": "delete"}, "default.dst", dc.InvalidArgumentError, "not a stream sink"),
        ({"writeMode": "merge"}, "default.dst", dc.TableNotFoundError, "merge keys"),
        ({"idempotencyApp": " "}, "default.dst", dc.InvalidArgumentError, "is empty"),
        ({"mergeSchema": "true"}, "default.dst", dc.InvalidArgumentError, "Unknown option"),
        ({"catalog": "nope"}, "default.dst", dc.CatalogNotFoundError, "'nope' not found"),
    ]
    for options, table, error, message in writes:
        writer = data.writeStream.format("workbench").option("checkpointLocation", checkpoint)
        with pytest.raises(error, match=message) as raised:
            writer.options(**options).start(table)
        assert_plain(raised.value)
    updating = data.groupBy("v").count().writeStream.format("workbench").outputMode("update")
    with pytest.raises(dc.InvalidArgumentError, match="writeMode', 'merge'"):
        updating.option("checkpointLocation", checkpoint).start("default.counts")
    assert tree_digest(catalog.root) == before
    assert not os.path.exists(checkpoint)


@pytest.mark.slow
def test_a_query_killed_at_random_moments_lands_every_row_once(catalog, tmp_path):
    report = killed_runs(Path(catalog.root), kills=1, seed=45)
    assert report.rows > 20 and report.batches_committed >= 1
