"""The Spark engine on a real local SparkSession: every mode, parity with the local engine,
transactions, failure cleanup, SQL, the data source and settings."""

from __future__ import annotations

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings

import workbench as dc
from tests.conftest import entries, tree_digest
from tests.engine_parity import STEPS, random_steps, run_sequence
from tests.engines.test_engines import check_reserved_names
from workbench.core.catalog.locations import locate
from workbench.core.transactions.table_versions import open_table

pytestmark = pytest.mark.spark

KEYED = dc.Schema.of(
    [
        dc.Field.of(pa.field("id", pa.int64()), is_merge_key=True),
        dc.Field.of(pa.field("v", pa.string())),
        dc.Field.of(pa.field("score", pa.float64()), future_default=0.0),
    ]
)


def rows(table: str, namespace: str = "default") -> list[dict]:
    data = dc.read(table, namespace, read_as=dc.DatasetType.PYARROW).sort_by("id")
    return data.to_pylist()


def frame(spark, data: dict, ddl: str):
    return spark.createDataFrame(list(zip(*data.values(), strict=True)), ddl)


def test_every_mode_on_spark_matches_the_local_engine(spark, tmp_path, new_catalog):
    local = run_sequence("local", tmp_path / "local")
    on_spark = run_sequence("spark", new_catalog(tmp_path / "spark"), spark=spark)
    assert on_spark == local  # rows, schema with keys, and versions recorded in the log
    assert dc.get_table("t").schema.names == ["id", "v", "score", "extra"]
    assert dc.transactions(read_as="pandas")["engine"].iloc[0] == "spark"


def test_append_replace_and_widening_on_spark(spark, catalog):
    dc.write(frame(spark, {"n": [1, 2]}, "n int"), "log")
    dc.write(frame(spark, {"n": [3], "tag": ["x"]}, "n int, tag string"), "log", mode="append")
    assert dc.read("log", read_as="pandas")["n"].tolist() == [1, 2, 3]
    dc.write(frame(spark, {"n": [2**40]}, "n long"), "log", mode="append")
    assert dc.get_table("log").schema.field("n").type == pa.int64()
    assert sorted(dc.read("log", read_as="pandas")["n"]) == [1, 2, 3, 2**40]
    result = dc.write(frame(spark, {"n": [9]}, "n long"), "log", mode="replace")
    assert result.rows_removed == 4 and dc.read("log", read_as="pandas")["n"].tolist() == [9]


def test_spark_reads_at_versions_and_as_of(spark, catalog):
    dc.write(pa.table({"id": [1, 2], "v": ["a", "b"]}), "t", schema=KEYED)
    dc.tag("start")
    dc.write(frame(spark, {"id": [3], "v": ["c"]}, "id long, v string"), "t")
    now = dc.read("t", read_as=dc.DatasetType.SPARK)
    assert sorted(r.id for r in now.collect()) == [1, 2, 3]
    assert dc.read("t", read_as=dc.DatasetType.SPARK, as_of="start").count() == 2
    assert dc.read("t", read_as=dc.DatasetType.SPARK, version=0, columns=["v"]).columns == ["v"]


@pytest.mark.parametrize("vectors", [False, True], ids=["copy-on-write", "merge-on-read"])
def test_merge_touches_only_files_holding_matching_keys(spark, catalog, vectors):
    data = spark.range(0, 400).selectExpr("id", "cast(id as string) as v").repartition(4, "id")
    properties = {"delta.enableDeletionVectors": vectors}
    dc.write(data, "t", schema=KEYED, table_properties=properties)
    files_before = _files("t")
    assert len(files_before) == 4 and dc.get_table("t").row_count == 400
    full = frame(spark, {"id": [5, 400], "v": ["five", "new"], "score": [1.0, 2.0]}, DDL)
    dc.write(full, "t")
    files_after = _files("t")
    if vectors:  # the file holding key 5 stays, with a vector deleting that row
        assert files_before <= files_after and len(_vectored("t")) == 1
    else:
        assert len(files_before - files_after) == 1, "only the file holding key 5 is rewritten"
    assert len(files_after - files_before) >= 1 and dc.get_table("t").row_count == 401
    assert next(r for r in rows("t") if r["id"] == 5)["v"] == "five"
    partial = frame(spark, {"id": [5, 6, 401], "v": ["5", "six", "new"]}, "id long, v string")
    dc.write(partial, "t")  # no score: matched rows keep theirs, new rows take the default
    if vectors:
        assert files_before <= _files("t"), "the file holding key 6 is marked, not rewritten"
    dc.write(frame(spark, {"id": [7, 8]}, "id long"), "t", mode="delete")
    got = {r["id"]: r for r in rows("t")}
    assert len(got) == 400 and got[6]["v"] == "six" and got[401]["score"] == 0.0
    assert (got[5]["v"], got[5]["score"]) == ("5", 1.0) and {7, 8}.isdisjoint(got)


@pytest.mark.local_folder("Spark's own Parquet reader opens the files: no hadoop-aws for s3://")
def test_spark_reads_local_merges_and_refuses_unrecorded_versions(spark, catalog):
    from deltalake import DeltaTable, write_deltalake

    from tests.core.schema.test_fidelity import files_use_declared_types

    dc.write(pa.table({"id": [1, 2, 3], "v": ["a", "b", "c"]}), "t", schema=KEYED)
    dc.write(pa.table({"id": [2, 4], "v": ["B", "d"]}), "t")  # local engine MERGE
    dc.write(pa.table({"id": [1]}), "t", mode="delete")
    files_use_declared_types(catalog.root, "t")
    spark_rows = sorted((r.id, r.v) for r in dc.read("t", read_as=dc.DatasetType.SPARK).collect())
    assert spark_rows == [(2, "B"), (3, "c"), (4, "d")]
    uri = dc.get_table("t").uri
    assert spark.read.parquet(*DeltaTable(uri).file_uris()).count() == 3
    write_deltalake(uri, pa.table({"id": [9], "v": ["ghost"], "score": [0.0]}), mode="append")
    ghost = DeltaTable(uri).version()
    with pytest.raises(dc.TableVersionNotFoundError):
        dc.read("t", read_as=dc.DatasetType.SPARK, version=ghost)


def _files(table: str) -> set[str]:
    return {f.absolute for f in open_table(locate(table)).files}


def _vectored(table: str) -> list[str]:
    return [f.absolute for f in open_table(locate(table)).files if f.deletion_vector]


def test_spark_and_local_writes_share_one_transaction(spark, catalog):
    dc.write(pa.table({"id": [1], "v": ["a"]}), "a", schema=KEYED)
    with pytest.raises(RuntimeError), dc.transaction():
        dc.write(frame(spark, {"id": [2], "v": ["b"]}, "id long, v string"), "a")
        dc.write(pa.table({"k": [1]}), "b")
        raise RuntimeError("abort")
    assert [r["id"] for r in rows("a")] == [1] and not dc.table_exists("b")
    with dc.transaction(commit_message="both"):
        dc.write(frame(spark, {"id": [2], "v": ["b"]}, "id long, v string"), "a")
        dc.write(pa.table({"k": [1]}), "b")
    latest = dc.transactions(read_as="pyarrow").to_pylist()[0]
    assert sorted(latest["tables"]) == ["default.a", "default.b"]
    assert latest["engine"] == "local+spark"  # the log records the engine of each table change
    changes = dc.read_transaction(latest["transaction_id"]).changes
    assert {c["table_name"]: c["engine"] for c in changes} == {"a": "spark", "b": "local"}


def test_a_failed_spark_job_commits_nothing_and_leaves_no_files(spark, catalog):
    from pyspark.sql import functions as F
    from pyspark.sql.types import StringType

    dc.write(pa.table({"id": [1], "v": ["a"]}), "t", schema=KEYED)
    before = tree_digest(catalog.root + "/default/t")

    @F.udf(returnType=StringType())
    def explode(value):
        raise ValueError("bad row")

    broken = frame(spark, {"id": [2], "v": ["b"]}, "id long, v string").withColumn(
        "v", explode("v")
    )
    with pytest.raises(Exception, match="bad row"):
        dc.write(broken, "t")
    assert rows("t") == [{"id": 1, "v": "a", "score": 0.0}]
    assert tree_digest(catalog.root + "/default/t") == before
    assert not [d for d in entries(catalog.root + "/default/t") if d.startswith("spark-")]


def test_spark_key_checks_and_dedupe(spark, catalog):
    dc.write(pa.table({"id": [1], "v": ["a"]}), "t", schema=KEYED)
    duplicate = frame(spark, {"id": [2, 2], "v": ["x", "y"]}, "id long, v string")
    with pytest.raises(dc.MergeKeyError, match="repeat a merge key"):
        dc.write(duplicate, "t")
    with pytest.raises(dc.MergeKeyError, match="null merge key"):
        dc.write(frame(spark, {"id": [None], "v": ["x"]}, "id long, v string"), "t")
    dc.write(duplicate, "t", dedupe="first")
    assert len(rows("t")) == 2


def test_spark_sql_and_the_workbench_data_source(spark, catalog):
    dc.write(pa.table({"id": [1, 2], "v": ["a", "b"]}), "t", "shop", auto_create_namespace=True)
    dc.tag("two")
    dc.write(pa.table({"id": [3], "v": ["c"]}), "t", "shop", mode="append")
    counted = dc.sql("SELECT count(*) AS n FROM shop.t WHERE v <> 'shop.t'", engine="spark")
    assert counted["n"].tolist() == [3]
    assert dc.sql("SELECT * FROM shop.t", engine="spark", as_of="two", read_as="spark").count() == 2
    reader = spark.read.format("workbench").option("root", catalog.root)
    assert reader.load("shop.t").count() == 3
    assert reader.option("asOf", "two").load("shop.t").count() == 2
    extra = frame(spark, {"id": [4], "v": ["d"]}, "id long, v string")
    extra.write.format("workbench").option("root", catalog.root).mode("append").save("shop.t")
    assert sorted(dc.read("t", "shop", read_as="pandas")["id"]) == [1, 2, 3, 4]
    extra.write.format("workbench").option("root", catalog.root).mode("overwrite").save("shop.t")
    assert dc.read("t", "shop", read_as="pandas")["id"].tolist() == [4]
    dc.write(pa.table({"id": [7, 8], "v": ["x", "y"]}), "t", "shop", table_version="2")
    fresh = spark.read.format("workbench").option("root", catalog.root)
    assert fresh.load("shop.t").count() == 2  # the current version
    assert fresh.option("tableVersion", "1").load("shop.t").count() == 1


def test_data_source_tasks_write_the_parts_and_the_commit_adds_only_their_files(spark, catalog):
    dc.write(pa.table({"id": [1], "v": ["a"]}), "t", "shop", auto_create_namespace=True)
    writer = spark.range(2, 302).selectExpr("id", "cast(id AS string) AS v").repartition(3)
    writer.write.format("workbench").mode("append").save("shop.t")
    info = dc.get_table("t", "shop")
    assert (info.row_count, info.file_count) == (301, 4)  # one part per task, none rewritten
    evolved = spark.createDataFrame([(9, "z", 1.5)], "id long, v string, extra double")
    evolved.write.format("workbench").mode("overwrite").save("shop.t")
    got = dc.read("t", "shop", read_as="pyarrow").to_pylist()
    assert got == [{"id": 9, "v": "z", "extra": 1.5}]  # the new column, as dc.write adds it
    assert dc.transactions()["tables"][0].as_py() == ["shop.t"]  # one transaction per write
    spark.createDataFrame([(1, "n")], "id long, v string").write.format("workbench").mode(
        "append"
    ).save("shop.fresh")  # a missing table is created
    assert rows("fresh", "shop") == [{"id": 1, "v": "n"}]
    assert not entries(catalog.root + "/_workbench/staging")


def test_data_source_writes_that_fail_leave_table_and_folder_as_they_were(spark, catalog):
    dc.write(pa.table({"id": [1], "v": ["a"]}), "t", schema=KEYED)
    before = tree_digest(catalog.root)
    twice = spark.createDataFrame([(2, "x"), (2, "y")], "id long, v string").repartition(2)
    with pytest.raises(dc.MergeKeyError, match="repeat a merge key") as raised:  # at commit
        twice.write.format("workbench").mode("overwrite").save("default.t")
    assert_plain(raised.value)
    with pytest.raises(dc.KeyedTableModeError, match="APPEND mode cannot be used") as raised:
        twice.write.format("workbench").mode("append").save("default.t")  # at planning
    assert_plain(raised.value)
    failing = spark.range(4).selectExpr("id", "cast(1 / (id - 3) AS string) AS v")
    with pytest.raises(Exception, match="DIVIDE_BY_ZERO"):
        spark.conf.set("spark.sql.ansi.enabled", "true")
        try:
            failing.repartition(2).write.format("workbench").mode("overwrite").save("default.t")
        finally:
            spark.conf.unset("spark.sql.ansi.enabled")
    assert tree_digest(catalog.root) == before
    assert rows("t") == [{"id": 1, "v": "a", "score": 0.0}]


def assert_plain(error: BaseException) -> None:
    """The error is workbench's own, with no Spark worker traceback or Java stack around it
    (in its message, or in the traceback the user sees)."""
    import traceback

    assert "Traceback" not in str(error) and "SQLSTATE" not in str(error)
    shown = "".join(traceback.format_exception(error))
    assert "java." not in shown and "Py4J" not in shown and "captured" not in shown


@pytest.mark.parametrize("vectors", [True, False], ids=["merge-on-read", "copy-on-write"])
def test_data_source_merges_and_deletes_by_key(spark, catalog, tmp_path, vectors):
    from deltalake import DeltaTable

    from tests.delta_readers import delta_rows

    properties = {} if vectors else {"delta.enableDeletionVectors": False}  # MoR: the default
    start = spark.range(0, 300).selectExpr("id", "cast(id AS string) AS v", "1.0 AS score")
    dc.write(start.repartition(3), "t", schema=KEYED, table_properties=properties)
    files_before = _files("t")
    upsert = frame(spark, {"id": [2, 400], "v": ["two", "new"], "score": [2.0, 4.0]}, DDL)
    upsert.write.format("workbench").option("writeMode", "merge").mode("append").save("default.t")
    evolved = frame(spark, {"id": [3, 401], "extra": [7, 8]}, "id long, extra int")
    evolved.write.format("workbench").option("writeMode", "merge").save("default.t")
    keys = frame(spark, {"id": [4, 5, 999]}, "id long")
    dc.put_catalog("elsewhere", root=str(tmp_path / "elsewhere"), default=True)
    by_root = keys.write.format("workbench").option("root", catalog.root)  # as for reads
    by_root.option("writeMode", "DELETE").save("default.t")
    dc.put_catalog("default", catalog, default=True)
    got = {r["id"]: r for r in rows("t")}
    assert len(got) == 300 and {4, 5}.isdisjoint(got)
    assert got[2] == {"id": 2, "v": "two", "score": 2.0, "extra": None}
    assert got[3] == {"id": 3, "v": "3", "score": 1.0, "extra": 7}  # kept v and score
    assert got[401] == {"id": 401, "v": None, "score": 0.0, "extra": 8}  # the defaults
    if vectors:  # matched rows are marked where they are, no file is rewritten
        assert files_before <= _files("t") and _vectored("t")
    else:
        assert not _vectored("t") and not files_before <= _files("t")
    options = dict(catalog.properties.storage_options)  # none for a local folder
    other = delta_rows(DeltaTable(dc.get_table("t").uri, storage_options=options))
    assert other.sort_by("id").to_pylist() == rows("t")
    assert [h["tables"] for h in dc.transactions().to_pylist()[:3]] == [["default.t"]] * 3


def test_data_source_by_key_failures_are_typed_and_change_nothing(spark, catalog):
    dc.write(pa.table({"id": [1], "v": ["a"]}), "t", schema=KEYED)
    dc.write(pa.table({"id": [1], "v": ["a"]}), "plain")
    before = tree_digest(catalog.root)
    one = frame(spark, {"id": [1], "v": ["b"]}, "id long, v string")
    cases = [
        (one, "merge", "append", "nope", dc.TableNotFoundError, "does not exist"),
        (one, "merge", "append", "plain", dc.MergeKeyError, "needs merge keys"),
        (one, "delete", "append", "plain", dc.MergeKeyError, "needs merge keys"),
        (one, "upsert", "append", "t", dc.InvalidArgumentError, "Unknown writeMode 'upsert'"),
        (one, "merge", "overwrite", "t", dc.InvalidArgumentError, r"use \.mode\('append'\)"),
        (one, "merge", "ignore", "t", dc.InvalidArgumentError, "cannot be combined"),
        (one.union(one), "merge", "append", "t", dc.MergeKeyError, "repeat a merge key"),
        (frame(spark, {"id": [None]}, "id long"), "delete", None, "t", dc.MergeKeyError, "null"),
    ]
    for data, write_mode, save_mode, table, error, message in cases:
        writer = data.write.format("workbench").option("writeMode", write_mode)
        with pytest.raises(error, match=message) as raised:
            writer.save(f"default.{table}", mode=save_mode)
        assert_plain(raised.value)
    unregistered = one.write.format("workbench").option("root", f"{catalog.root}-other")
    with pytest.raises(dc.CatalogNotFoundError, match="no registered catalog has that root"):
        unregistered.option("writeMode", "merge").save("default.t")
    assert tree_digest(catalog.root) == before


def test_the_data_source_writer_refuses_a_write_mode_it_would_not_apply(catalog):
    """writeMode runs in save() on the driver; a writer that gets one anyway (a session workbench
    did not start) refuses it rather than appending."""
    from workbench.engines.spark.datasource import _plan
    from workbench.engines.spark.source_options import write_options

    dc.write(pa.table({"id": [1], "v": ["a"]}), "t", schema=KEYED)
    incoming = pa.schema([("id", pa.int64()), ("v", pa.string())])
    request = write_options({"path": "default.t", "writeMode": "merge"})
    with pytest.raises(dc.InvalidArgumentError, match="runs from DataFrameWriter"):
        _plan(request, incoming, False, "b")


def test_settings_come_from_init_environment_and_file(tmp_path, monkeypatch):
    from workbench.engines.spark import settings

    (tmp_path / "workbench.toml").write_text(
        '[spark]\nmaster = "local[1]"\ndriver_memory = "1g"\nconf = {"a.b" = "file"}\n'
    )
    monkeypatch.chdir(tmp_path)
    dc.init_local(tmp_path / "c")
    dc.init(engines={"spark": {}})
    assert settings.current().master == "local[1]"
    monkeypatch.setenv("WORKBENCH_SPARK_MASTER", "local[2]")
    monkeypatch.setenv("WORKBENCH_SPARK_CONF_a__b", "env")
    assert (settings.current().master, settings.current().conf) == ("local[2]", {"a.b": "env"})
    dc.init(
        {"c": dc.Catalog(dc.CatalogProperties(str(tmp_path / "c")))},
        spark={"master": "spark://cluster:7077", "conf": {"a.b": "init"}},
    )
    chosen = settings.current()
    assert (chosen.master, chosen.driver_memory, chosen.conf["a.b"]) == (
        "spark://cluster:7077",
        "1g",
        "init",
    )
    dc.init(engines={"spark": {"master": "local[3]"}})  # engines= is the general form
    assert settings.current().master == "local[3]"
    with pytest.raises(dc.InvalidArgumentError, match="masters"):
        dc.init(engines={"spark": {"masters": "x"}})
    with pytest.raises(dc.InvalidArgumentError, match="unknown engine"):
        dc.init(engines={"flink": {}})
    dc.init(engines={"spark": {}})


@settings(
    max_examples=5,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(steps=STEPS)
def test_random_operation_sequences_give_identical_tables(
    spark, tmp_path_factory, new_catalog, steps
):
    sequence = random_steps(steps)
    local = run_sequence("local", tmp_path_factory.mktemp("local"), sequence)
    on_spark = run_sequence(
        "spark", new_catalog(tmp_path_factory.mktemp("spark")), sequence, spark=spark
    )
    assert on_spark == local


def test_every_valid_name_works_unquoted_in_spark_sql(spark, catalog):
    check_reserved_names("spark")


def test_the_data_source_reads_the_catalogs_of_the_driver(spark, tmp_path, new_catalog):
    dc.init({"default": new_catalog(tmp_path / "elsewhere")})  # not ./.workbench, no root option
    dc.write(pa.table({"id": [1, 2], "v": ["a", "b"]}), "t", "shop", auto_create_namespace=True)
    assert spark.read.format("workbench").load("shop.t").count() == 2
    extra = frame(spark, {"id": [3], "v": ["c"]}, "id long, v string")
    extra.write.format("workbench").mode("append").save("shop.t")
    assert sorted(dc.read("t", "shop", read_as="pandas")["id"]) == [1, 2, 3]
    second = new_catalog(tmp_path / "second")
    dc.init({"main": dc.get_catalog(), "second": second}, default="main")
    dc.write(pa.table({"id": [9]}), "other", catalog="second")
    reader = spark.read.format("workbench").option("catalog", "second")
    assert reader.load("default.other").count() == 1


def test_the_catalog_registry_works_the_same_once_spark_has_started(spark, tmp_path, new_catalog):
    """Spark's data source follows the registry; clearing it must not fail for lack of a
    default catalog, and the first catalog put after a clear becomes the default."""
    where = new_catalog(tmp_path / "first").properties
    dc.clear_catalogs()
    first = dc.put_catalog("first", root=where.root, storage_options=where.storage_options)
    assert dc.get_catalog() is first
    dc.write(pa.table({"id": [1]}), "t")
    assert spark.read.format("workbench").load("default.t").count() == 1


def test_integral_doubles_go_into_an_integer_column_checked_on_spark(spark, catalog, monkeypatch):
    """pandas makes an int column holding None a float column: its whole values go back into
    the table's int column, checked and cast by Spark (the rows never reach the driver); a
    fraction is refused as before."""
    from workbench.engines.spark import SparkEngine

    dc.write(pa.table({"id": [1, 2], "age": [25, 30]}), "t", schema=KEYED_AGE)

    def collected(*args):
        raise AssertionError("the rows were collected to the driver")

    monkeypatch.setattr(SparkEngine, "to_arrow", collected)
    dc.write(frame(spark, {"id": [2, 3], "age": [None, 40.0]}, "id long, age double"), "t")
    assert rows("t") == [{"id": 1, "age": 25}, {"id": 2, "age": None}, {"id": 3, "age": 40}]
    assert dc.get_table("t").schema.field("age").type == pa.int64()
    before = tree_digest(catalog.root)
    with pytest.raises(dc.SchemaValidationError, match="double"):
        dc.write(frame(spark, {"id": [4], "age": [1.5]}, "id long, age double"), "t")
    assert tree_digest(catalog.root) == before


DDL = "id long, v string, score double"
KEYED_AGE = dc.Schema.of(
    [dc.Field.of(pa.field("id", pa.int64()), is_merge_key=True), pa.field("age", pa.int64())]
)
