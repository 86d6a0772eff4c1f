"""A catalog on S3 (moto's server on 127.0.0.1): every API works there as on a local folder,
and tables move between a local and an S3 catalog."""

from __future__ import annotations

import functools
import subprocess
import sys
from collections.abc import Callable

import pandas as pd
import pyarrow as pa
import pytest
from deltalake import DeltaTable

import workbench as dc
from tests.conftest import entries
from tests.delta_readers import delta_rows
from tests.engine_parity import KEYED, outcome, run_sequence
from workbench.core.catalog.locations import locate
from workbench.core.transactions.table_versions import open_table

pytestmark = pytest.mark.s3
KEYED_DOCS = dc.Schema.of(
    [
        dc.Field.of(pa.field("id", pa.int64()), is_merge_key=True),
        dc.Field.of(pa.field("text", pa.string())),
    ]
)


def test_every_write_mode_and_reads_on_s3(s3_catalog, tmp_path):
    local = run_sequence("local", tmp_path / "local")
    dc.init({"default": s3_catalog})
    assert run_sequence_on(s3_catalog) == local
    info = dc.get_table("t")
    assert info.uri.startswith("s3://")
    direct = DeltaTable(info.uri, storage_options=s3_catalog.properties.storage_options)
    assert direct.version() == info.version
    assert delta_rows(direct).num_rows == info.row_count


def run_sequence_on(catalog: dc.Catalog) -> dict:
    """The parity sequence in the current (S3) catalog."""
    from tests.engine_parity import OPERATIONS, payload

    for mode, data, ddl in OPERATIONS:
        dc.write(
            payload("local", data, ddl), "t", mode=mode, schema=KEYED if mode == "create" else None
        )
    return outcome()


def test_transactions_history_time_travel_and_tags_on_s3(s3_catalog):
    dc.write(pa.table({"id": [1, 2], "v": ["a", "b"]}), "a", schema=KEYED)
    dc.tag("start")
    with dc.transaction(commit_message="both"):
        dc.write(pa.table({"id": [3], "v": ["c"]}), "a")
        dc.write(pd.DataFrame({"n": [1]}), "b")
        assert dc.read("a", read_as="pyarrow").num_rows == 3  # read-your-writes
    with pytest.raises(RuntimeError), dc.transaction():
        dc.write(pa.table({"id": [4], "v": ["d"]}), "a")
        raise RuntimeError("abort")
    assert dc.read("a", read_as="pyarrow").num_rows == 3
    assert dc.read("a", as_of="start", read_as="pyarrow").num_rows == 2
    history = dc.transactions(read_as="pandas")
    assert history["commit_message"].iloc[0] == "both"
    assert sorted(history["tables"].iloc[0]) == ["default.a", "default.b"]
    assert dc.tags() == {"start": history["transaction_id"].iloc[1]}
    dc.drop_table("b")
    assert not dc.table_exists("b")
    before_drop = history["transaction_id"].iloc[0]
    assert dc.read("b", as_of=before_drop, read_as="pyarrow").num_rows == 1


def test_a_new_reader_of_the_catalog_log_fetches_its_commits_a_batch_at_a_time(
    s3_catalog, monkeypatch
):
    """A process opening a catalog on S3 reads the commits after the saved state a batch at a
    time (all under way together), and knows what a commit-by-commit reader knows."""
    from workbench.core.base.caches import clear_process_caches
    from workbench.core.storage.store import Storage
    from workbench.core.transactions import catalog_log

    writes = catalog_log.STATE_EVERY + 12  # a saved state, then twelve commits to read
    for i in range(writes):
        dc.write(pa.table({"id": [i]}), "t", auto_compact=False)
    get_keys = Storage.get_keys

    def fetched_by_a_new_process(ahead: int) -> tuple[list[int], list[int]]:
        clear_process_caches()
        monkeypatch.setattr(catalog_log, "COMMITS_AHEAD", ahead)
        fetches: list[int] = []

        def counted(self, keys):
            if all(catalog_log.LOG_KEY in k for k in keys):  # the catalog log's
                fetches.append(len(keys))
            return get_keys(self, keys)

        monkeypatch.setattr(Storage, "get_keys", counted)
        ids = dc.read("t", read_as="pyarrow").column("id").to_pylist()
        monkeypatch.setattr(Storage, "get_keys", get_keys)
        return fetches, ids

    one_by_one, ids = fetched_by_a_new_process(1)
    batched, same_ids = fetched_by_a_new_process(8)
    assert sorted(ids) == sorted(same_ids) == list(range(writes))
    assert len(one_by_one) >= 12 + 1, "a request per commit, and one finding none"
    assert len(batched) <= 1 + 12 // 8 + 1, batched


def test_time_travel_on_s3_builds_old_versions_from_the_catalog_log(s3_catalog, monkeypatch):
    from workbench.core.delta import table_cache
    from workbench.core.transactions import snapshot_cache

    dc.write(
        pa.table({"id": range(200), "v": ["a"] * 200, "score": [1.0] * 200}), "t", schema=KEYED
    )
    steps = [
        lambda: dc.write(pa.table({"id": [1, 300], "v": ["b", "b"]}), "t", mode="merge"),
        lambda: dc.write(pa.table({"id": range(0, 200, 3)}), "t", mode="delete"),  # a vector file
        lambda: dc.write(pa.table({"id": [5], "v": ["c"], "extra": [7]}), "t", mode="merge"),
        lambda: dc.optimize("t"),
        lambda: dc.write(pa.table({"id": [2]}), "t", mode="delete"),  # an inline vector
    ]
    seen = {}
    for step in steps:
        step()
        txn = dc.transactions()["transaction_id"][0].as_py()
        seen[txn] = sorted(dc.read("t", read_as="pyarrow").to_pylist(), key=lambda r: r["id"])
    info = dc.get_table("t")
    direct = DeltaTable(info.uri, storage_options=s3_catalog.properties.storage_options)
    snapshot_cache._clear()  # as a fresh process would: nothing remembered

    def no_delta_log(*args, **kwargs):
        raise AssertionError("an as_of read opened the table's Delta log")

    monkeypatch.setattr(table_cache, "at_version", no_delta_log)
    for version, (txn, rows) in enumerate(seen.items(), start=1):
        got = dc.read("t", as_of=txn, read_as="pyarrow")
        assert sorted(got.to_pylist(), key=lambda r: r["id"]) == rows
        direct.load_as_version(version)  # Delta's own reader agrees on every version
        assert sorted(delta_rows(direct).column("id").to_pylist()) == [r["id"] for r in rows]


def test_urls_copy_between_a_local_and_an_s3_catalog(s3_catalog, tmp_path):
    local = dc.Catalog(dc.CatalogProperties(str(tmp_path / "local")))
    dc.init({"lake": s3_catalog, "laptop": local}, default="laptop")
    dc.write(
        pa.table({"id": [1, 2], "v": ["a", "b"]}),
        "t",
        "shop",
        auto_create_namespace=True,
        schema=KEYED,
    )
    dc.create_table(
        "files",
        "shop",
        table_properties={dc.TableProperty.SUPPORTED_READER_TYPES: [dc.DatasetType.PANDAS]},
    )
    dc.write(pd.DataFrame({"x": [1]}), "files", "shop", content_type=dc.ContentType.CSV)
    copied = dc.copy("dc://laptop/shop/**", "dc://lake/shop")
    assert {r.name for r in copied} == {"t", "files"}
    assert dc.get("dc://lake/shop/t", read_as="pyarrow").num_rows == 2
    assert dc.get_table("t", "shop", "lake").merge_keys == ["id"]
    manifest = dc.read("files", "shop", "lake", read_as="pyarrow")
    assert manifest.column("path")[0].as_py().startswith("shop/files/")  # under the root
    assert dc.from_manifest_table(manifest, read_as="pyarrow", catalog="lake").num_rows == 1
    dc.put("dc://lake/shop/more", pd.DataFrame({"n": [1, 2]}))
    assert [r.name for r in dc.list("dc://lake/shop")] == ["files", "more", "t"]
    dc.copy("dc://lake/shop/more", "dc://laptop/shop/back")
    assert dc.read("back", "shop", "laptop", read_as="pyarrow").num_rows == 2


def test_optimize_and_vacuum_on_s3(s3_catalog):
    for i in range(4):
        dc.write(pa.table({"n": [i]}), "log", mode="append" if i else "create")
    assert dc.get_table("log").file_count == 4
    dc.optimize("log")
    assert dc.get_table("log").file_count == 1
    result = dc.vacuum(retain=0)
    assert len(result.files) == 4
    assert dc.read("log", read_as="pyarrow").column("n").to_pylist() == [0, 1, 2, 3]


def test_magics_and_widgets_on_s3(s3_catalog):
    from IPython.core.interactiveshell import InteractiveShell

    from workbench.widgets import CatalogBrowser, HistoryBrowser

    dc.write(
        pa.table({"id": [1, 2], "v": ["a", "b"]}),
        "orders",
        "shop",
        auto_create_namespace=True,
        schema=KEYED,
    )
    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "workbench")
    shown = shell.run_line_magic("dc", "show shop.orders")
    assert list(shown["id"]) == [1, 2]
    assert shell.run_line_magic("dc", "describe shop.orders").row_count == 2
    browser = CatalogBrowser()
    browser.select("shop.orders")
    assert "orders" in browser.summary.value
    assert browser.preview.frame["id"].tolist() == [1, 2]
    assert HistoryBrowser().table.frame["tables"].tolist() == ["shop, shop.orders"]


def test_daft_reads_and_writes_on_s3(s3_catalog):
    import daft

    dc.write(daft.from_pydict({"id": [1, 2, 3], "v": ["a", "b", "c"]}), "t", schema=KEYED)
    dc.write(daft.from_pydict({"id": [2, 4], "v": ["B", "d"]}), "t")
    assert sorted(dc.read("t").to_pydict()["id"]) == [1, 2, 3, 4]
    assert dc.get_table("t").uri.startswith("s3://")


def test_ray_reads_and_writes_on_s3(ray_cluster, s3_catalog):
    import ray.data

    dc.write(
        ray.data.from_arrow(pa.table({"id": [1, 2, 3], "v": ["a", "b", "c"]})), "t", schema=KEYED
    )
    dc.write(ray.data.from_arrow(pa.table({"id": [2, 4], "v": ["B", "d"]})), "t")
    dc.write(ray.data.from_arrow(pa.table({"id": [1]})), "t", mode="delete")
    rows = dc.read("t", read_as=dc.DatasetType.RAY_DATASET).take_all()
    assert sorted((r["id"], r["v"]) for r in rows) == [(2, "B"), (3, "c"), (4, "d")]


def test_spark_reads_and_writes_on_s3(spark, s3_catalog):
    frame = spark.createDataFrame([(1, "a"), (2, "b"), (3, "c")], "id long, v string")
    dc.write(frame, "t", schema=KEYED)
    dc.write(spark.createDataFrame([(2, "B"), (4, "d")], "id long, v string"), "t")
    dc.write(spark.createDataFrame([(1,)], "id long"), "t", mode="delete")
    spark_rows = dc.read("t", read_as=dc.DatasetType.SPARK).collect()
    assert sorted((r.id, r.v) for r in spark_rows) == [(2, "B"), (3, "c"), (4, "d")]
    assert dc.sql("SELECT count(*) AS n FROM default.t", engine="spark")["n"].tolist() == [3]
    assert spark.read.format("workbench").load("default.t").count() == 3
    more = spark.createDataFrame([(7, "x"), (8, "y")], "id long, v string").repartition(2)
    more.write.format("workbench").mode("append").save("default.fresh")  # staged, moved in
    more.write.format("workbench").mode("append").save("default.fresh")  # written in place
    assert sorted(r["id"] for r in dc.read("fresh", read_as="pyarrow").to_pylist()) == [7, 7, 8, 8]
    assert not entries(s3_catalog.root + "/_workbench/staging")  # not even a folder marker


def test_spark_data_source_merges_and_deletes_by_key_on_s3(spark, s3_catalog):
    start = spark.range(0, 100).selectExpr("id", "cast(id AS string) AS v").repartition(2)
    dc.write(start, "t", schema=KEYED)  # merge-on-read: matched rows get deletion vectors
    upsert = spark.createDataFrame([(1, "one", 5), (200, "new", 6)], "id long, v string, n int")
    upsert.write.format("workbench").option("writeMode", "merge").mode("append").save("default.t")
    gone = spark.createDataFrame([(2,), (3,)], "id long")
    gone.write.format("workbench").option("writeMode", "delete").save("default.t")
    got = dc.read("t", read_as="pyarrow").sort_by("id")
    assert got.num_rows == 99 and got.column("id").to_pylist()[:3] == [0, 1, 4]
    assert got.slice(1, 1).to_pylist() == [{"id": 1, "v": "one", "score": 0.0, "n": 5}]
    assert any(f.deletion_vector for f in open_table(locate("t")).files)
    info = dc.get_table("t")
    direct = DeltaTable(info.uri, storage_options=s3_catalog.properties.storage_options)
    assert delta_rows(direct).sort_by("id").to_pylist() == got.to_pylist()


def test_a_second_bucket_is_a_second_catalog(s3_catalog, s3):
    other = dc.Catalog(dc.CatalogProperties(f"s3://{s3.new_bucket()}/c", s3.options))
    dc.init({"one": s3_catalog, "two": other}, default="one")
    dc.write(pa.table({"n": [1]}), "t")
    dc.copy("dc://one/default/t", "dc://two/default/t")
    assert dc.read("t", catalog="two", read_as="pyarrow").num_rows == 1


def test_a_catalog_without_storage_options_takes_them_from_aws_environment_variables(
    s3, monkeypatch
):
    root = f"s3://{s3.new_bucket()}/catalog"
    dc.init({"default": dc.Catalog(dc.CatalogProperties(root, s3.options))})
    dc.write(pa.table({"id": [1, 2]}), "t")
    for key, value in s3.options.items():
        monkeypatch.setenv(key, value)
    dc.init({"default": dc.Catalog(dc.CatalogProperties(root))})  # like delta-rs: from the env
    dc.write(pa.table({"id": [3]}), "t", mode="append")
    assert sorted(dc.read("t", read_as="pandas")["id"]) == [1, 2, 3]
    assert dc.transactions().num_rows == 2


def test_a_store_that_cannot_be_used_is_a_typed_error_saying_what_to_check(s3, monkeypatch):
    """A missing bucket, an endpoint nothing answers on, http without AWS_ALLOW_HTTP and
    credentials the store refuses each raise StorageUnreachableError on first use."""
    from workbench.testing import LocalS3, _free_port

    def catalog(root: str, **changes: str | None) -> None:
        options = {k: v for k, v in {**s3.options, **changes}.items() if v is not None}
        dc.init({"c": dc.Catalog(dc.CatalogProperties(root, options))})

    catalog("s3://no-such-bucket/lake")
    for call in (dc.list_tables, lambda: dc.write(pd.DataFrame({"a": [1]}), "t")):
        with pytest.raises(dc.StorageUnreachableError, match=r"'no-such-bucket' .* does not exist"):
            call()
    catalog(f"s3://{s3.new_bucket()}/lake", AWS_ENDPOINT_URL=f"http://127.0.0.1:{_free_port()}")
    with pytest.raises(dc.StorageUnreachableError, match="AWS_ENDPOINT_URL"):
        dc.table_exists("t")
    catalog(f"s3://{s3.new_bucket()}/lake", AWS_ALLOW_HTTP=None)
    with pytest.raises(dc.StorageUnreachableError, match="AWS_ALLOW_HTTP=true"):
        dc.read("t")
    monkeypatch.setenv("INITIAL_NO_AUTH_ACTION_COUNT", "0")  # moto checks credentials
    with LocalS3() as checking:
        options = {**checking.options, "AWS_SECRET_ACCESS_KEY": "wrong"}
        dc.init({"c": dc.Catalog(dc.CatalogProperties("s3://bucket/lake", options))})
        with pytest.raises(dc.StorageUnreachableError, match="credentials"):
            dc.write(pd.DataFrame({"a": [1]}), "t")


def test_branches_on_s3_publish_created_tables_and_drop(s3_catalog):
    dc.write(pd.DataFrame({"id": [1, 2]}), "t")
    dc.create_branch("exp")
    with dc.branch("exp"):
        dc.write(pd.DataFrame({"id": [3]}), "t", mode="append")
        dc.write(pd.DataFrame({"k": ["new"]}), "fresh")
        assert sorted(dc.read("t", read_as="pandas")["id"]) == [1, 2, 3]
    assert sorted(dc.read("t", read_as="pandas")["id"]) == [1, 2]
    options = s3_catalog.properties.storage_options
    assert DeltaTable(f"{s3_catalog.root}/default/t", storage_options=options).version() == 0
    dc.merge_branch("exp")
    assert sorted(dc.read("t", read_as="pandas")["id"]) == [1, 2, 3]
    fresh = DeltaTable(f"{s3_catalog.root}/default/fresh", storage_options=options)
    assert fresh.to_pyarrow_table().to_pylist() == [{"k": "new"}]
    dc.drop_branch("exp")
    assert dc.read("fresh", read_as="pandas")["k"].tolist() == ["new"]
    assert [b.name for b in dc.branches()] == ["main"]


READ_AS = ["daft", "pandas", "pyarrow", "polars", "numpy", "pyarrow_parquet"]


def _reads(table: str = "t") -> dict[str, Callable[[], object]]:
    """Every read path of a table: dc.read in each read_as, SQL on each engine, dc.show."""
    calls: dict[str, Callable[[], object]] = {
        f"read {kind}": functools.partial(dc.read, table, read_as=kind) for kind in READ_AS
    }
    for engine in ("local", "daft"):
        query = f"SELECT * FROM default.{table}"
        calls[f"sql {engine}"] = functools.partial(dc.sql, query, engine)
    calls["show"] = functools.partial(dc.show, table)
    return calls


def test_a_secret_the_store_refuses_is_a_typed_error_on_every_read(checking_s3):
    bucket = checking_s3.new_bucket()
    fresh, known = f"s3://{bucket}/fresh", f"s3://{bucket}/known"
    good = checking_s3.options
    wrong = {**good, "AWS_SECRET_ACCESS_KEY": "wrong"}
    writer = f"""
import pyarrow as pa, workbench as dc
for root in ({fresh!r}, {known!r}):
    dc.init({{"default": dc.Catalog(dc.CatalogProperties(root, {good!r}))}})
    dc.write(pa.table({{"id": [1, 2, 3], "v": ["a", "b", "c"]}}), "t", schema=dc.Schema.of([
        dc.Field.of(pa.field("id", pa.int64()), is_merge_key=True),
        dc.Field.of(pa.field("v", pa.string()))]))
    dc.write(pa.table({{"id": [2, 9]}}), "t", mode="delete")  # a file with a deletion vector
    dc.write(pa.table({{"n": [1]}}), "plain")
"""
    subprocess.run([sys.executable, "-c", writer], check=True)  # another process wrote them
    dc.init({"default": dc.Catalog(dc.CatalogProperties(fresh, wrong))})
    first_use = {
        "list_tables": dc.list_tables,
        "get_table": functools.partial(dc.get_table, "t"),
        "transactions": dc.transactions,
        "runs": dc.runs,
        **_reads(),
    }
    for name, call in first_use.items():
        with pytest.raises(dc.StorageUnreachableError, match="AWS_SECRET_ACCESS_KEY") as raised:
            call()
        assert "wrong" not in str(raised.value), name
    # One root this process read with the right secret, then with a wrong one: nothing it
    # remembers of the first catalog answers for the second (issue 37), and no raw OSError
    # gets out.
    dc.init({"default": dc.Catalog(dc.CatalogProperties(known, good))})
    assert sorted(dc.read("t", read_as="pandas")["id"]) == [1, 3]
    assert len(dc.list_tables()) == 2 and dc.transactions().num_rows and dc.runs().num_rows == 0
    dc.init({"default": dc.Catalog(dc.CatalogProperties(known, wrong))})
    reads = {**_reads("plain"), **_reads("t")}  # Daft's own reader, and its vectored files
    reads["read pyarrow_parquet"] = _reads("plain")["read pyarrow_parquet"]  # no vectors
    for name, call in {**first_use, **reads}.items():
        with pytest.raises(dc.StorageUnreachableError, match="credentials") as raised:
            call()
        assert "wrong" not in str(raised.value), name


def test_a_dead_endpoint_fails_within_seconds_with_a_typed_error():
    """Catalog calls, inference and the Delta run log under the catalog give up on a closed
    port in seconds (delta-rs and obstore alone retry for up to three minutes)."""
    import time

    from workbench.testing import LocalS3

    table = pa.table({"id": [1, 2], "text": ["a", "bb"]})
    length = dc.model(
        lambda batch: {"n": [len(t) for t in batch["text"]]},
        inputs=["text"],
        outputs={"n": pa.int64()},
        name="length",
    )
    with LocalS3() as server:
        root = f"s3://{server.new_bucket()}/lake"
        dc.init({"default": dc.Catalog(dc.CatalogProperties(root, server.options))})
        dc.write(table, "docs", schema=KEYED_DOCS)
        dc.infer("docs", length, progress=False)  # the run log exists, with one run
    calls = {  # the server is gone: nothing listens on its port now
        "infer": functools.partial(dc.infer, "docs", length, progress=False),
        "runs": dc.runs,
        "write": functools.partial(dc.write, table, "docs"),
        "read": functools.partial(dc.read, "docs", read_as="pandas"),
        "list_tables": dc.list_tables,
    }
    for name, call in calls.items():
        started = time.monotonic()
        with pytest.raises(dc.StorageUnreachableError, match="AWS_ENDPOINT_URL"):
            call()
        assert time.monotonic() - started < 15, name


def test_a_put_if_absent_whose_first_attempt_landed_counts_as_written(s3):
    """A conditional put retried after its connection dropped finds what its first attempt
    stored: its own bytes count as written, other bytes as another writer's."""
    from workbench.core.storage.store import Storage

    storage = Storage(f"s3://{s3.new_bucket()}/lake", s3.options)
    storage.put("commit.json", b"mine")  # the first attempt, whose answer was lost
    assert storage.put_if_absent("commit.json", b"mine")
    assert not storage.put_if_absent("commit.json", b"theirs")


def test_retry_and_timeout_options_override_the_defaults():
    from datetime import timedelta

    from workbench.core.storage.limits import DEFAULTS
    from workbench.core.storage.store import Storage

    options = {"AWS_REGION": "us-east-1", "MAX_RETRIES": "9", "timeout": "2min"}
    storage = Storage("s3://bucket/lake", options)
    defaults = {k: v for k, v in DEFAULTS.items() if k != "max_retries"}
    assert storage.delta_options == {**defaults, **options}
    limits = storage.limits
    assert (limits.max_retries, limits.timeout) == (9, timedelta(minutes=2))
    assert limits.obstore_retry()["retry_timeout"] == timedelta(seconds=10)
    assert limits.daft_s3()["num_tries"] == 5  # the AWS SDKs' retries wait ever longer
    assert Storage("/tmp/lake").delta_options is None  # a local folder gets none
    for option, value in (("max_retries", "many"), ("retry_timeout", "10 parsecs")):
        with pytest.raises(dc.InvalidArgumentError, match=option):
            dc.CatalogProperties("s3://bucket/lake", {option: value})


def test_a_spark_read_with_a_secret_the_store_refuses_is_a_typed_error(spark, checking_s3):
    root = f"s3://{checking_s3.new_bucket()}/lake"
    good = checking_s3.options
    dc.init({"default": dc.Catalog(dc.CatalogProperties(root, good))})
    dc.write(pa.table({"id": [1, 2]}), "t")
    assert spark.read.format("workbench").load("default.t").count() == 2
    wrong = {**good, "AWS_SECRET_ACCESS_KEY": "wrong"}
    dc.init({"default": dc.Catalog(dc.CatalogProperties(root, wrong))})
    with pytest.raises(dc.StorageUnreachableError, match="credentials"):
        spark.read.format("workbench").load("default.t")
