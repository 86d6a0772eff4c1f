"""The Spark data source (``format("workbench")``) driven as a hostile user would: every mistake
in its options, table name or point in time is workbench's own error, raised before Spark
plans; Spark's save modes do what Spark users expect of them; every form a valid option may
take reads what ``dc.read`` reads."""

from __future__ import annotations

import time
from datetime import datetime

import pandas as pd
import pyarrow as pa
import pytest

import workbench as dc
from tests.conftest import tree_digest
from tests.engines.test_spark import assert_plain, frame, rows

pytestmark = pytest.mark.spark


def ids(data) -> list[int]:
    return sorted(r.id for r in data.collect())


def test_read_mistakes_are_workbench_errors_raised_before_spark_plans(spark, catalog):
    dc.write(pa.table({"id": [1, 2]}), "t")
    cases = [
        ({"asOf": "nonsense"}, "default.t", dc.TimeTravelError, "neither a transaction id"),
        ({}, "default.missing", dc.TableNotFoundError, "does not exist"),
        ({"version": "99"}, "default.t", dc.TableVersionNotFoundError, "no version 99"),
        ({"version": "two"}, "default.t", dc.InvalidArgumentError, "a Delta version number"),
        ({"branch": "nope"}, "default.t", dc.BranchNotFoundError, "'nope' does not exist"),
        ({"catalog": "nope"}, "default.t", dc.CatalogNotFoundError, "'nope' not found"),
        ({}, "nope.default.t", dc.CatalogNotFoundError, "'nope' not found"),
        ({"as_of": "1"}, "default.t", dc.InvalidArgumentError, "did you mean 'asOf'"),
        ({"versionAsOf": "0"}, "default.t", dc.InvalidArgumentError, "did you mean 'version'"),
        ({"verison": "0"}, "default.t", dc.InvalidArgumentError, "did you mean 'version'"),
        ({"root": catalog.root, "catalog": "default"}, "t", dc.InvalidArgumentError, "not both"),
        ({"catalog": "default"}, "x.default.t", dc.InvalidArgumentError, "catalog once"),
        ({}, "a.b.c.d", dc.InvalidArgumentError, "needs the table"),
        ({}, None, dc.InvalidArgumentError, "needs the table"),
        ({}, ["default.t", "default.t"], dc.InvalidArgumentError, "reads one table"),
    ]
    for options, table, error, message in cases:
        reader = spark.read.format("workbench").options(**options)
        with pytest.raises(error, match=message) as raised:
            reader.load(table)  # before any Spark action: at load, where Spark plans
        assert_plain(raised.value)
    given_schema = spark.read.format("workbench").schema("id long")  # Spark asks no schema()
    with pytest.raises(dc.TableNotFoundError, match="does not exist"):
        given_schema.load("default.missing")
    dc.write(pa.table({"id": [3]}), "t", mode="replace")
    dc.vacuum(retain=0)
    with pytest.raises(dc.TableVersionNotFoundError, match=r"dc\.vacuum removed") as raised:
        spark.read.format("workbench").option("version", "0").load("default.t")
    assert_plain(raised.value)


def test_each_form_of_a_point_in_time_reads_that_state(spark, catalog):
    dc.write(pa.table({"id": [1]}), "t")
    dc.tag("one")
    first = dc.transactions()["transaction_id"][0].as_py()
    time.sleep(0.01)
    moment, ns = datetime.now(), time.time_ns()  # naive: local time, as dc.read takes it
    time.sleep(0.01)
    dc.write(pa.table({"id": [2]}), "t", mode="append")
    points = [first, "one", str(ns), f" {ns} ", moment.isoformat()]
    for point in points:
        assert ids(spark.read.format("workbench").option("asOf", point).load("t")) == [1], point
    assert ids(spark.read.format("workbench").option("version", " 0 ").load("t")) == [1]
    assert ids(spark.read.format("workbench").option("ASOF", "one").load("t")) == [1]
    assert ids(spark.read.format("workbench").load("default.t")) == [1, 2]


def test_save_mistakes_are_workbench_errors_and_write_nothing(spark, catalog):
    dc.write(pa.table({"id": [1], "v": ["a"]}), "t")
    before = tree_digest(catalog.root)
    one = frame(spark, {"id": [2], "v": ["b"]}, "id long, v string")
    cases = [
        ({}, None, dc.InvalidArgumentError, r"needs the table as its path: \.save"),
        ({"mergeSchema": "true"}, "t", dc.InvalidArgumentError, "Unknown option"),
        ({"asOf": "1"}, "t", dc.InvalidArgumentError, "Unknown option"),
        ({"catalog": "nope"}, "t", dc.CatalogNotFoundError, "'nope' not found"),
        ({"branch": "nope"}, "t", dc.BranchNotFoundError, "'nope' does not exist"),
        ({}, "nope.default.t", dc.CatalogNotFoundError, "'nope' not found"),
    ]
    for save_mode in ("append", "overwrite", None):
        for options, table, error, message in cases:
            writer = one.write.format("workbench").options(**options)
            with pytest.raises(error, match=message) as raised:
                writer.save(table, mode=save_mode)
            assert_plain(raised.value)
    assert tree_digest(catalog.root) == before


def test_save_modes_do_what_spark_users_expect(spark, catalog):
    data = frame(spark, {"id": [1, 2], "v": ["a", "b"]}, "id long, v string")
    writer = data.write.format("workbench")  # no mode: Spark's default, errorifexists
    writer.save("shop.t")  # creates the missing table (and its namespace)
    assert rows("t", "shop") == [{"id": 1, "v": "a"}, {"id": 2, "v": "b"}]
    before = tree_digest(catalog.root)
    with pytest.raises(dc.TableAlreadyExistsError, match="errorifexists") as raised:
        writer.save("shop.t")  # the same writer again, still in Spark's default mode
    assert_plain(raised.value)
    data.write.format("workbench").mode("ignore").save("shop.t")  # exists: left as it is
    assert tree_digest(catalog.root) == before
    data.write.format("workbench").mode("ignore").save("shop.other")  # missing: created
    assert rows("other", "shop") == rows("t", "shop")
    more = frame(spark, {"id": [3], "v": ["c"]}, "id long, v string")
    more.write.format("workbench").mode("append").save("shop.t")
    assert [r["id"] for r in rows("t", "shop")] == [1, 2, 3]


def test_a_table_name_may_carry_its_catalog(spark, catalog, tmp_path, new_catalog):
    dc.put_catalog("second", new_catalog(tmp_path / "second"))
    dc.write(pa.table({"id": [1]}), "t", catalog="second")
    assert ids(spark.read.format("workbench").load("second.default.t")) == [1]
    more = frame(spark, {"id": [3]}, "id long")
    more.write.format("workbench").mode("append").save("second.default.t")
    assert sorted(dc.read("t", catalog="second", read_as="pandas")["id"]) == [1, 3]
    assert not dc.table_exists("t")  # nothing went to the default catalog


def test_a_schemaless_table_reads_as_the_manifest_dc_read_gives(spark, catalog):
    readers = {dc.TableProperty.SUPPORTED_READER_TYPES: [dc.DatasetType.PANDAS]}
    dc.create_table("files", table_properties=readers)
    dc.write(pd.DataFrame({"x": [1]}), "files", content_type=dc.ContentType.CSV)
    through_source = spark.read.format("workbench").load("default.files")
    through_read = dc.read("files", read_as="spark")
    assert through_source.schema == through_read.schema
    assert through_source.collect() == through_read.collect()


def test_a_save_inside_a_transaction_is_part_of_it(spark, catalog):
    dc.write(pa.table({"id": [1], "v": ["a"]}), "t")
    before = tree_digest(catalog.root)
    more = frame(spark, {"id": [2], "v": ["b"]}, "id long, v string")
    with pytest.raises(RuntimeError, match="abort"), dc.transaction():
        more.write.format("workbench").mode("append").save("default.t")
        more.write.format("workbench").mode("append").save("default.fresh")
        raise RuntimeError("abort")
    assert tree_digest(catalog.root) == before  # neither save committed on its own
    with dc.transaction(commit_message="both"):
        more.write.format("workbench").mode("append").save("default.t")
        dc.write(pa.table({"n": [1]}), "other")
    assert [r["id"] for r in rows("t")] == [1, 2]
    latest = dc.transactions().to_pylist()[0]
    assert latest["commit_message"] == "both"
    assert sorted(latest["tables"]) == ["default.other", "default.t"]


def test_a_save_to_a_schemaless_table_stores_the_rows_as_dc_write_does(spark, catalog):
    readers = {dc.TableProperty.SUPPORTED_READER_TYPES: [dc.DatasetType.PANDAS]}
    dc.create_table("files", table_properties=readers)
    data = frame(spark, {"id": [1], "v": ["a"]}, "id long, v string")
    data.write.format("workbench").mode("append").save("default.files")
    dc.write(data, "files", mode="append")
    manifest = dc.read("files", read_as="pandas")
    assert manifest["meta_record_count"].tolist() == [1, 1]
    assert manifest["meta_content_type"].nunique() == 1
