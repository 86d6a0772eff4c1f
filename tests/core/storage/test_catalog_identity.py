"""Each catalog is its own (issue 37): what a process opens or remembers for a catalog is keyed
by its root and its storage options, so a catalog whose credentials the store refuses gets a
typed error on its first call of any kind, two catalogs on one root with other options each
reach their own store, no credential shows anywhere, and ``dc.pop_catalog`` forgets a
catalog's cached state."""

from __future__ import annotations

import functools
import logging
import os
import shutil
import tempfile
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest

import workbench as dc
from tests.conftest import tree_digest
from workbench.core.storage.store import Storage

KEYED = dc.Schema.of(
    [
        dc.Field.of(pa.field("id", pa.int64()), is_merge_key=True),
        dc.Field.of(pa.field("v", pa.string())),
    ]
)
READ_AS = ["daft", "pandas", "pyarrow", "polars", "numpy", "pyarrow_parquet"]
WRONG_SECRET = "Wr0ng-s3cret-of-issue-37-x9Q"


def _fill(catalog: str) -> None:
    """Tables of every kind on ``catalog`` (one with a deletion vector), a tag and a run, each
    read once: everything this process caches of a catalog is warm."""
    with dc.run("fill", {"rows": 3}, catalog=catalog):
        dc.write(
            pa.table({"id": [1, 2, 3], "v": ["a", "b", "c"]}), "t", schema=KEYED, catalog=catalog
        )
        dc.write(pa.table({"id": [2]}), "t", mode="delete", catalog=catalog)
        dc.write(pa.table({"n": [1]}), "plain", catalog=catalog)
    dc.tag("filled", catalog=catalog)
    for kind in READ_AS:
        dc.read(_table_for(kind), catalog=catalog, read_as=kind)
    assert dc.list_tables(catalog=catalog) and dc.transactions(catalog=catalog).num_rows
    assert dc.runs(catalog=catalog).num_rows == 1


def _in_transaction(catalog: str) -> None:
    with dc.transaction(catalog=catalog):
        dc.write(pa.table({"n": [2]}), "plain", mode="append")


def _every_call(catalog: str) -> dict[str, Callable[[], object]]:
    """A call of each kind on ``catalog``: listing, describing, history, runs, every read path
    and every kind of change."""
    on = functools.partial
    calls: dict[str, Callable[[], object]] = {
        "list_namespaces": on(dc.list_namespaces, catalog=catalog),
        "namespace_exists": on(dc.namespace_exists, "default", catalog=catalog),
        "list_tables": on(dc.list_tables, catalog=catalog),
        "table_exists": on(dc.table_exists, "t", catalog=catalog),
        "get_table": on(dc.get_table, "t", catalog=catalog),
        "transactions": on(dc.transactions, catalog=catalog),
        "tags": on(dc.tags, catalog=catalog),
        "read as of a tag": on(dc.read, "t", catalog=catalog, as_of="filled"),
        "runs": on(dc.runs, catalog=catalog),
        "lineage": on(dc.lineage, "t", catalog=catalog),
        "show": on(dc.show, "t", catalog=catalog),
        "sql local": on(dc.sql, "SELECT * FROM default.t", "local", catalog=catalog),
        "sql daft": on(dc.sql, "SELECT * FROM default.t", "daft", catalog=catalog),
        "append": on(dc.write, pa.table({"n": [2]}), "plain", mode="append", catalog=catalog),
        "merge": on(
            dc.write, pa.table({"id": [3], "v": ["C"]}), "t", mode="merge", catalog=catalog
        ),
        "delete": on(dc.write, pa.table({"id": [3]}), "t", mode="delete", catalog=catalog),
        "create_table": on(dc.create_table, "new", schema=KEYED, catalog=catalog),
        "create_namespace": on(dc.create_namespace, "ns", catalog=catalog),
        "transaction": on(_in_transaction, catalog),
        "optimize": on(dc.optimize, "t", catalog=catalog),
    }
    for kind in READ_AS:
        calls[f"read {kind}"] = on(dc.read, _table_for(kind), catalog=catalog, read_as=kind)
    return calls


def _table_for(read_as: str) -> str:
    """The table each ``read_as`` reads: files as they are only of the one without vectors."""
    return "plain" if read_as == "pyarrow_parquet" else "t"


def _text_of(error: BaseException) -> str:
    """Everything an error shows: its message, its repr and its whole traceback with causes."""
    return "\n".join([str(error), repr(error), *traceback.format_exception(error)])


def test_refused_credentials_on_a_root_another_catalog_read_fail_typed_on_every_call(
    checking_s3, caplog
):
    caplog.set_level(logging.DEBUG)
    root = f"s3://{checking_s3.new_bucket()}/lake"
    good = checking_s3.options
    dc.put_catalog("good", dc.Catalog(dc.CatalogProperties(root, good)), default=True)
    _fill("good")
    before = tree_digest(root, good)
    wrong = {**good, "AWS_SECRET_ACCESS_KEY": WRONG_SECRET}
    dc.put_catalog("bad", dc.Catalog(dc.CatalogProperties(root, wrong)))
    shown = []
    for name, call in _every_call("bad").items():
        with pytest.raises(dc.StorageUnreachableError, match="credentials") as raised:
            call()
        shown.append(_text_of(raised.value))
        assert WRONG_SECRET not in shown[-1], name
    assert tree_digest(root, good) == before  # nothing written
    assert sorted(dc.read("t", catalog="good", read_as="pandas")["id"]) == [1, 3]  # good as before
    handles = [dc.get_table("t", catalog="good"), dc.table("t", catalog="good")]
    shown += [repr(x) for x in [dc.list_catalogs(), dc.delta_table("t", catalog="good"), *handles]]
    shown += [caplog.text, *_history_of("good")]
    for secret in (WRONG_SECRET, good["AWS_SECRET_ACCESS_KEY"]):
        assert not any(secret in text for text in shown)
        assert secret.encode() not in _stored_bytes(root, good)


def _history_of(catalog: str) -> list[str]:
    """The run log's and the catalog log's rows, as text."""
    runs = dc.runs(catalog=catalog)
    events = [dc.run_events(run, catalog=catalog) for run in runs["run_id"].to_pylist()]
    return [str(t.to_pylist()) for t in [runs, *events, dc.transactions(catalog=catalog)]]


def _stored_bytes(root: str, options: dict[str, str]) -> bytes:
    """Every object under ``root``, one after the other."""
    storage = Storage(root, options)
    return b"".join(storage.get(entry["path"]) or b"" for entry in storage.list(""))


@pytest.fixture(scope="module")
def other_s3() -> Iterator:
    """A second moto server: another endpoint for the same bucket names."""
    from workbench.testing import LocalS3

    with LocalS3() as server:
        yield server


def _rows(catalog: str, table: str) -> list[int]:
    return sorted(dc.read(table, catalog=catalog, read_as="pandas")["id"])


def test_two_catalogs_on_one_root_with_other_endpoints_each_reach_their_own(s3, other_s3):
    bucket = s3.new_bucket()
    other_s3.new_bucket(bucket)
    root = f"s3://{bucket}/lake"
    dc.put_catalog("a", dc.Catalog(dc.CatalogProperties(root, s3.options)), default=True)
    dc.put_catalog("b", dc.Catalog(dc.CatalogProperties(root, other_s3.options)))
    for name, ids in (("a", [1, 2, 3]), ("b", [10, 20])):
        dc.write(pa.table({"id": ids, "v": ["x"] * len(ids)}), "t", schema=KEYED, catalog=name)
    import daft  # Daft writes by URI into the table folder: the URI alone names no catalog

    for name, ids in (("a", [4]), ("b", [30]), ("a", [5])):  # each used after the other
        dc.write(daft.from_pydict({"id": ids, "v": ["d"]}), "t", mode="merge", catalog=name)
        dc.write(pd.DataFrame({"id": ids[:1]}), "t", mode="delete", catalog=name)  # a vector
        dc.write(pd.DataFrame({"id": ids, "v": ["p"]}), "t", mode="merge", catalog=name)
    with dc.transaction(catalog="b"):
        dc.write(daft.from_pydict({"n": [7]}), "only_b")
    with dc.run("on b", catalog="b"):
        dc.write(pa.table({"id": [40], "v": ["r"]}), "t", mode="merge", catalog="b")
    assert _rows("a", "t") == [1, 2, 3, 4, 5]
    assert _rows("b", "t") == [10, 20, 30, 40]
    assert not dc.table_exists("only_b", catalog="a") and dc.table_exists("only_b", catalog="b")
    assert dc.transactions(catalog="a").num_rows == 7 and dc.runs(catalog="a").num_rows == 0
    assert dc.runs(catalog="b").num_rows == 1
    # what each server holds was written with its own endpoint's catalog only
    for server, tables in ((s3, ["t"]), (other_s3, ["only_b", "t"])):
        listed = Storage(root, server.options).folders("default")
        assert listed == tables


def test_a_dead_endpoint_on_the_root_of_a_working_catalog_stays_its_own(s3):
    import daft

    from workbench.testing import _free_port

    root = f"s3://{s3.new_bucket()}/lake"
    dead = {**s3.options, "AWS_ENDPOINT_URL": f"http://127.0.0.1:{_free_port()}"}
    dc.put_catalog("live", dc.Catalog(dc.CatalogProperties(root, s3.options)), default=True)
    dc.write(pa.table({"id": [1], "v": ["a"]}), "t", schema=KEYED)
    dc.put_catalog("dead", dc.Catalog(dc.CatalogProperties(root, dead)))
    for call in (dc.list_tables, dc.transactions, functools.partial(dc.read, "t")):
        with pytest.raises(dc.StorageUnreachableError, match="AWS_ENDPOINT_URL"):
            call(catalog="dead")
    with pytest.raises(dc.StorageUnreachableError):  # used last: its storage is known last
        dc.write(daft.from_pydict({"id": [9], "v": ["z"]}), "t", mode="merge", catalog="dead")
    dc.write(daft.from_pydict({"id": [2], "v": ["b"]}), "t", mode="merge", catalog="live")
    assert _rows("live", "t") == [1, 2]


def test_pop_catalog_forgets_what_was_cached_of_it(tmp_path: Path):
    """Put back after a pop, a catalog reads its storage afresh: here its folder was replaced
    by another catalog's with fewer transactions, which a remembered log would not notice."""
    first, second = tmp_path / "first", tmp_path / "second"
    dc.put_catalog("other", dc.Catalog(dc.CatalogProperties(second)))
    dc.write(pa.table({"n": [1]}), "replacement", catalog="other")
    dc.put_catalog("lake", dc.Catalog(dc.CatalogProperties(first)), default=True)
    for name in ("a", "b"):
        dc.write(pa.table({"n": [1]}), name)
    assert [t.name for t in dc.list_tables()] == ["a", "b"]
    dc.pop_catalog("lake")
    shutil.rmtree(first)
    shutil.copytree(second, first)
    dc.put_catalog("lake", dc.Catalog(dc.CatalogProperties(first)), default=True)
    assert [t.name for t in dc.list_tables()] == ["replacement"]
    assert dc.read("replacement", read_as="pyarrow").num_rows == 1
    assert dc.transactions().num_rows == 1


def test_a_pin_holds_every_catalog_on_its_root_and_outlives_a_pop(tmp_path: Path):
    """A report's kernel pins its catalog; a catalog the notebook makes on that root with
    options of its own, or the catalog popped and put back, still reads pinned and cannot
    write."""
    from workbench.core.transactions.context import pin

    root = str(tmp_path / "lake")
    dc.put_catalog("lake", dc.Catalog(dc.CatalogProperties(root)), default=True)
    dc.write(pa.table({"n": [1]}), "t")
    first = dc.transactions()["transaction_id"][0].as_py()
    dc.write(pa.table({"n": [2]}), "t", mode="append")
    pin(dc.get_catalog(), first)
    popped = dc.pop_catalog("lake")
    own = dc.Catalog(dc.CatalogProperties(root, {"max_retries": "2"}))
    for catalog in (own, popped):
        dc.put_catalog("lake", catalog, default=True)
        assert dc.read("t", read_as="pyarrow").num_rows == 1
        with pytest.raises(dc.HistoricTransactionError):
            dc.write(pa.table({"n": [3]}), "t", mode="append")


def test_every_cache_but_a_reports_pin_forgets_one_catalog():
    from workbench.core.base.caches import cache_names

    assert set(cache_names()) - set(cache_names(forgetting=True)) == {
        "transactions.context.pins"  # a pin lifted by a pop would let a report's kernel write
    }


def test_reprs_and_identities_show_no_credential():
    options = {"AWS_ACCESS_KEY_ID": "AKIAEXAMPLE", "AWS_SECRET_ACCESS_KEY": WRONG_SECRET}
    catalog = dc.Catalog(dc.CatalogProperties("s3://bucket/lake", options))
    other = dc.Catalog(dc.CatalogProperties("s3://bucket/lake", {**options, "AWS_REGION": "x"}))
    shown = [repr(catalog), repr(catalog.properties), repr(catalog.storage), catalog.identity]
    for secret in ("AKIAEXAMPLE", WRONG_SECRET):
        assert not any(secret in text for text in shown)
    assert "'AWS_SECRET_ACCESS_KEY': '***'" in repr(catalog.properties)
    assert catalog.identity != other.identity and catalog.identity.startswith("s3://bucket/lake#")
    assert (
        catalog.identity == dc.Catalog(dc.CatalogProperties("s3://bucket/lake", options)).identity
    )


@pytest.mark.kernel
def test_a_report_on_a_catalog_with_credentials_shows_none(checking_s3, tmp_path: Path, caplog):
    caplog.set_level(logging.DEBUG)
    good = checking_s3.options
    root = f"s3://{checking_s3.new_bucket()}/lake"
    dc.init({"default": dc.Catalog(dc.CatalogProperties(root, good))})
    dc.write(pd.DataFrame({"order": range(7)}), "orders")
    result = dc.report("catalog_overview", output=tmp_path / "r.html", progress=False)
    html = result.html.read_text()
    assert root in html and "orders" in html  # the kernel read the catalog: it had the secret
    shown = [html, result.notebook.read_text(), caplog.text, *_history_of("default")]
    assert not any(good["AWS_SECRET_ACCESS_KEY"] in text for text in shown)


def _files_holding(secret: str, folders: list[str]) -> list[str]:
    """The files under ``folders`` whose bytes hold ``secret``."""
    found = []
    for folder in folders:
        for parent, _, names in os.walk(folder):
            for name in names:
                path = os.path.join(parent, name)
                try:
                    with open(path, "rb") as file:
                        if secret.encode() in file.read():
                            found.append(path)
                except OSError:  # gone, or a socket
                    pass
    return found


SPARK_SECRET = "Sp4rk-task-payload-secret-of-issue-37"
RAY_SECRET = "R4y-task-payload-secret-of-issue-37"


def _engine_catalog(s3, secret: str) -> None:
    """A default catalog on the moto server (which takes any secret) given ``secret``."""
    options = {**s3.options, "AWS_SECRET_ACCESS_KEY": secret}
    dc.init({"default": dc.Catalog(dc.CatalogProperties(f"s3://{s3.new_bucket()}/c", options))})


def test_spark_jobs_write_no_credential_to_disk(spark, s3):
    from pyspark import SparkFiles

    _engine_catalog(s3, SPARK_SECRET)
    frame = spark.createDataFrame(pd.DataFrame({"id": [1, 2, 3], "v": ["a", "b", "c"]}))
    dc.write(frame, "t", schema=KEYED)
    dc.write(spark.createDataFrame(pd.DataFrame({"id": [2], "v": ["B"]})), "t", mode="merge")
    dc.write(spark.createDataFrame(pd.DataFrame({"id": [3]})), "t", mode="delete")
    loaded = spark.read.format("workbench").load("default.t")
    loaded.write.format("workbench").mode("append").save("default.copy")
    assert sorted(r.id for r in dc.read("copy", read_as="spark").collect()) == [1, 2]
    local = spark.conf.get("spark.local.dir", tempfile.gettempdir())
    scratch = [os.path.dirname(SparkFiles.getRootDirectory())]
    scratch += [str(p) for p in Path(local).glob("blockmgr-*")]
    assert _files_holding(SPARK_SECRET, scratch) == []


def test_ray_tasks_write_no_credential_to_disk(ray_cluster, s3):
    import ray

    _engine_catalog(s3, RAY_SECRET)
    dc.write(
        ray.data.from_pandas(pd.DataFrame({"id": [1, 2, 3], "v": list("abc")})), "t", schema=KEYED
    )
    dc.write(ray.data.from_pandas(pd.DataFrame({"id": [2], "v": ["B"]})), "t", mode="merge")
    dc.write(ray.data.from_pandas(pd.DataFrame({"id": [3]})), "t", mode="delete")
    length = dc.model(
        lambda batch: {"n": [len(v) for v in batch["v"]]},
        inputs=["v"],
        outputs={"n": pa.int64()},
        name="length",
    )
    dc.infer("t", length, engine="ray", progress=False)
    assert sorted(dc.read("t", read_as="ray_dataset").to_pandas()["id"]) == [1, 2]
    session = ray._private.worker._global_node.get_session_dir_path()
    assert _files_holding(RAY_SECRET, [session]) == []
