"""Merge-on-read with Delta deletion vectors: MERGE and DELETE mark rows deleted instead of
rewriting files, every read leaves those rows out, and other Delta readers agree."""

from __future__ import annotations

import os
import random
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest

import workbench as dc
from tests.conftest import tree_digest
from tests.delta_readers import duckdb_delta_scan
from workbench.core.base.caches import clear_process_caches

DV_TABLE = Path(__file__).parents[2] / "data" / "delta-rs" / "table-with-dv-small"
VECTORS = {"delta.enableDeletionVectors": "true"}


def keyed_schema() -> dc.Schema:
    return dc.Schema.of(
        [
            dc.Field.of(pa.field("id", pa.int64()), is_merge_key=True),
            dc.Field.of(pa.field("v", pa.string())),
            dc.Field.of(pa.field("n", pa.int64())),
        ]
    )


def rows(ids, tag: str) -> pd.DataFrame:
    ids = list(ids)
    return pd.DataFrame({"id": ids, "v": [f"{tag}{i}" for i in ids], "n": ids})


def table_rows(name: str, **read) -> list[dict]:
    data = dc.read(name, read_as=dc.DatasetType.PYARROW, **read)
    return sorted(data.to_pylist(), key=lambda r: r["id"])


def vector_files(name: str) -> list[str]:
    return sorted(p for p in os.listdir(dc.get_table(name).uri) if p.startswith("deletion_vector"))


def vectors_of(name: str) -> list:
    """The deletion vector descriptors of a table's newest version, one per file that has one."""
    from workbench.core.delta.deletion_vectors import vectors_in_log

    info = dc.get_table(name)
    return list(vectors_in_log(info.uri, info.version).values())


SCATTERED = range(0, 240, 4)  # 60 rows of the first file: too many for an inline vector


def table_files(name: str) -> list:
    from deltalake import DeltaTable

    from workbench.core.delta.data_files import in_write_order
    from workbench.core.delta.snapshot import data_files_of

    uri = dc.get_table(name).uri
    return in_write_order(data_files_of(DeltaTable(uri), uri))


@pytest.fixture
def vectored(catalog):
    """A keyed table with deletion vectors on, 1,000 rows in four files."""
    dc.create_table("t", schema=keyed_schema(), table_properties=VECTORS)
    for start in range(0, 1000, 250):
        dc.write(rows(range(start, start + 250), "a"), "t", mode="merge")
    return "t"


def test_workbench_reads_a_vector_another_writer_made():
    from deltalake import DeltaTable

    from workbench.core.delta.deletion_vectors import read_vector, undeleted_mask
    from workbench.core.delta.snapshot import data_files_of

    (f,) = data_files_of(DeltaTable(str(DV_TABLE)), str(DV_TABLE))
    deleted = read_vector(str(DV_TABLE), f.deletion_vector)
    assert sorted(deleted) == [0, 9] and f.live_rows == 8
    assert undeleted_mask(f.rows, deleted).tolist() == [False] + [True] * 8 + [False]


def test_inline_vectors_read_as_delta_kernel_writes_them():
    from workbench.core.delta.deletion_vectors import read_vector
    from workbench.core.delta.vector_descriptor import Descriptor

    # an inline vector from delta-kernel-rs' tests: rows 3, 4, 7, 11, 18 and 29 deleted
    kernel = Descriptor("i", "^Bg9^0rr910000000000iXQKl0rr91000f55c8Xg0@@D72lkbi5=-{L", None, 44, 6)
    assert sorted(read_vector("unused", kernel)) == [3, 4, 7, 11, 18, 29]
    with pytest.raises(dc.DeletionVectorError, match="holds 6 rows"):
        read_vector("unused", Descriptor("i", kernel.path_or_inline, None, 44, 5))
    with pytest.raises(dc.DeletionVectorError, match="not a Z85 digit"):
        read_vector("unused", Descriptor("i", "~" * 55, None, 44, 6))


@pytest.mark.parametrize("deleted", [[0, 9], range(200), range(0, 400, 4)], ids=len)
def test_small_vectors_go_inline_and_large_ones_to_a_file(tmp_path, deleted):
    from pyroaring import BitMap64

    from workbench.core.delta.deletion_vectors import (
        INLINE_BYTES,
        read_vector,
        serialize,
        store_vector,
    )

    stored = store_vector(str(tmp_path), BitMap64(deleted))
    assert stored.inline == (len(serialize(BitMap64(deleted))) <= INLINE_BYTES)
    assert bool(os.listdir(tmp_path)) != stored.inline  # a file only when not inline
    assert list(read_vector(str(tmp_path), stored)) == list(deleted)


def test_keyed_tables_take_vectors_by_default_and_a_property_turns_them_off(catalog):
    from deltalake import DeltaTable

    dc.write(rows(range(10), "a"), "keyed", schema=keyed_schema())
    dc.write(pd.DataFrame({"n": [1]}), "unkeyed")
    configuration = DeltaTable(dc.get_table("keyed").uri).metadata().configuration
    assert configuration["delta.enableDeletionVectors"] == "true"  # recorded in the table
    assert DeltaTable(dc.get_table("unkeyed").uri).protocol().min_reader_version == 1
    dc.write(pd.DataFrame({"id": [3]}), "keyed", mode="delete")
    assert len(vectors_of("keyed")) == 1 and len(table_rows("keyed")) == 9


def test_an_existing_table_turns_vectors_on_only_when_asked(catalog):
    from deltalake import DeltaTable

    off = {"delta.enableDeletionVectors": False}
    dc.write(rows(range(10), "a"), "plain", schema=keyed_schema(), table_properties=off)
    dc.write(pd.DataFrame({"id": [1]}), "plain", mode="delete")
    uri = dc.get_table("plain").uri
    assert DeltaTable(uri).protocol().min_reader_version == 1 and vectors_of("plain") == []
    dc.alter_table("plain", table_version_properties=VECTORS)
    assert DeltaTable(uri).protocol().reader_features == ["deletionVectors"]
    dc.write(pd.DataFrame({"id": [2]}), "plain", mode="delete")
    assert len(vectors_of("plain")) == 1
    assert [r["id"] for r in table_rows("plain")] == [0, 3, 4, 5, 6, 7, 8, 9]


def test_merge_and_delete_mark_rows_and_write_only_the_change(vectored):
    files_before = dc.get_table(vectored).file_count
    result = dc.write(rows([5, 260, 2000], "b"), vectored, mode="merge")
    assert (result.rows_added, dc.get_table(vectored).row_count) == (1, 1001)
    dc.write(pd.DataFrame({"id": [6, 7, 2000]}), vectored, mode="delete")
    info = dc.get_table(vectored)
    assert info.row_count == 998 and info.file_count == files_before + 1  # one new file
    assert len(vectors_of(vectored)) == 3  # files 1 and 2 (merge, delete) and the merge's file
    assert all(v.inline for v in vectors_of(vectored)) and vector_files(vectored) == []
    got = {r["id"]: r["v"] for r in table_rows(vectored)}
    assert got[5] == "b5" and got[260] == "b260" and 6 not in got and 2000 not in got
    assert len(got) == 998


def test_partial_merge_keeps_the_columns_it_does_not_give(vectored):
    dc.write(pd.DataFrame({"id": [10, 11], "v": ["x", "y"]}), vectored, mode="merge")
    got = {r["id"]: (r["v"], r["n"]) for r in table_rows(vectored)}
    assert got[10] == ("x", 10) and got[11] == ("y", 11) and got[12] == ("a12", 12)


def test_other_readers_see_exactly_the_same_rows(vectored):
    import polars as pl
    from deltalake import DeltaTable, QueryBuilder
    from deltalake.exceptions import DeltaProtocolError

    dc.write(rows(range(100, 140), "c"), vectored, mode="merge")
    dc.write(pd.DataFrame({"id": list(range(300, 320))}), vectored, mode="delete")
    dc.write(pd.DataFrame({"id": SCATTERED}), vectored, mode="delete")
    assert {v.inline for v in vectors_of(vectored)} == {True, False}  # both kinds are read
    ours = table_rows(vectored)
    uri = dc.get_table(vectored).uri
    table = DeltaTable(uri)
    assert table.protocol().reader_features == ["deletionVectors"]
    theirs = pa.table(QueryBuilder().register("t", table).execute("select * from t").read_all())
    assert sorted(theirs.to_pylist(), key=lambda r: r["id"]) == ours
    assert pl.read_delta(uri).sort("id").to_dicts() == ours
    assert duckdb_delta_scan(uri) == ours  # DuckDB's delta extension (delta-kernel-rs)
    with pytest.raises(DeltaProtocolError, match="deletionVectors"):  # cannot apply: refuses
        table.to_pyarrow_table()


def test_reads_naming_each_rows_file_leave_deleted_rows_out(vectored):
    dc.write(pd.DataFrame({"id": [0, 1]}), vectored, mode="delete")
    data = dc.read(vectored, read_as=dc.DatasetType.PYARROW, file_path_column="file")
    assert data.num_rows == 998 and 0 not in data.column("id").to_pylist()
    assert len(set(data.column("file").to_pylist())) == 4


def test_time_travel_reads_every_version_as_it_was(vectored):
    before = dc.transactions().to_pylist()[0]["transaction_id"]
    dc.write(pd.DataFrame({"id": [1, 2, 3]}), vectored, mode="delete")
    assert len(table_rows(vectored, as_of=before)) == 1000
    assert len(table_rows(vectored)) == 997
    version = dc.get_table(vectored).version
    assert len(table_rows(vectored, version=version - 1)) == 1000
    change = dc.diff(vectored, before=before)
    assert (change.added, change.removed) == (0, 3)


def test_optimize_folds_vectors_and_vacuum_keeps_what_versions_need(vectored):
    dc.write(rows([*SCATTERED, 300], "d"), vectored, mode="merge")
    dc.write(pd.DataFrame({"id": [i + 1 for i in SCATTERED] + [600]}), vectored, mode="delete")
    expected = table_rows(vectored)
    assert dc.vacuum(retain=0).files  # vectors the newest version no longer reads
    assert table_rows(vectored) == expected
    assert vector_files(vectored)
    dc.optimize(vectored)
    assert all(f.deletion_vector is None for f in _files(vectored))
    assert table_rows(vectored) == expected
    dc.vacuum(retain=0)
    assert vector_files(vectored) == [] and table_rows(vectored) == expected


def _files(name: str):
    from workbench.core.catalog.locations import locate
    from workbench.core.transactions.table_versions import open_table

    return open_table(locate(name)).files


def test_a_failed_transaction_leaves_no_vector_behind(vectored):
    root = dc.get_catalog().root
    before = tree_digest(root)
    with pytest.raises(RuntimeError), dc.transaction():
        dc.write(pd.DataFrame({"id": SCATTERED}), vectored, mode="delete")  # a vector file
        dc.write(rows([3], "e"), vectored, mode="merge")  # an inline vector
        raise RuntimeError("changed my mind")
    assert tree_digest(root) == before


def test_two_changes_in_one_transaction_combine_their_vectors(vectored):
    with dc.transaction():
        dc.write(pd.DataFrame({"id": [1]}), vectored, mode="delete")
        dc.write(pd.DataFrame({"id": [2]}), vectored, mode="delete")
        dc.write(rows([3], "f"), vectored, mode="merge")
    got = {r["id"]: r["v"] for r in table_rows(vectored)}
    assert 1 not in got and 2 not in got and got[3] == "f3" and len(got) == 998


def test_daft_reads_merges_and_deletes_a_table_with_vectors(vectored):
    import daft

    dc.write(pd.DataFrame({"id": [1, 2]}), vectored, mode="delete")
    dc.write(rows([3, 2000], "g"), vectored, mode="merge")
    expected = table_rows(vectored)
    frame = dc.read(vectored, read_as=dc.DatasetType.DAFT).to_pandas()
    assert sorted(frame.to_dict("records"), key=lambda r: r["id"]) == expected
    assert dc.sql("SELECT count(*) AS n FROM default.t")["n"][0] == 999  # DuckDB applies them
    with pytest.raises(dc.UnsupportedFeatureError, match="fold them"):  # raw files would show
        dc.read(vectored, read_as=dc.DatasetType.PYARROW_PARQUET)
    before = {f.path for f in table_files(vectored)}
    dc.write(daft.from_pandas(rows([4, 3000], "d")), vectored, mode="merge")
    dc.write(daft.from_pydict({"id": [5]}), vectored, mode="delete")
    assert before <= {f.path for f in table_files(vectored)}  # marked, not rewritten
    got = {r["id"]: r["v"] for r in table_rows(vectored)}
    assert got[4] == "d4" and got[3000] == "d3000" and got[3] == "g3"
    assert {1, 2, 5}.isdisjoint(got) and len(got) == 999


def test_daft_reads_files_with_vectors_lazily_and_only_the_columns_asked_for(vectored):
    dc.write(pd.DataFrame({"id": SCATTERED}), vectored, mode="delete")
    lazy = dc.read(vectored, read_as=dc.DatasetType.DAFT)
    # read when the frame runs, not when it is made: first, before any process has read (and
    # kept) these vectors, which a Daft running its tasks on Ray would keep out of reach
    folder = dc.get_table(vectored).uri
    aside = {name: Path(folder, name).read_bytes() for name in vector_files(vectored)}
    for name in aside:
        os.remove(os.path.join(folder, name))
    clear_process_caches()  # the delete kept the vectors it wrote in this process
    with pytest.raises(Exception, match="deletion vector"):
        lazy.collect()
    for _ in range(10):  # a read made now fails at once, typed, every time
        with pytest.raises(dc.TableVersionNotFoundError, match="deletion_vector_"):
            dc.read(vectored, read_as=dc.DatasetType.DAFT).collect()
    for name, data in aside.items():
        Path(folder, name).write_bytes(data)
    frame = dc.read(vectored, read_as=dc.DatasetType.DAFT, file_path_column="f")
    assert sorted(frame.select("id").to_pydict()["id"]) == sorted(set(range(1000)) - {*SCATTERED})
    assert frame.where(frame["id"] < 5).select("id", "f").count_rows() == 3


@pytest.mark.parametrize("indexed", [True, False], ids=["key-index", "one-pass"])
def test_random_changes_match_a_plain_python_model(vectored, monkeypatch, indexed):
    from workbench.core.data import arrow_merge

    # how keys are found
    monkeypatch.setattr(arrow_merge, "worth_indexing", lambda rows, wanted: indexed)
    model = {i: (f"a{i}", i) for i in range(1000)}
    rng = random.Random(7)
    for step in range(12):
        ids = rng.sample(range(1200), 30)
        if rng.random() < 0.5:
            dc.write(rows(ids, f"s{step}-"), vectored, mode="merge")
            model.update({i: (f"s{step}-{i}", i) for i in ids})
        else:
            dc.write(pd.DataFrame({"id": ids}), vectored, mode="delete")
            for i in ids:
                model.pop(i, None)
        if step == 6:
            dc.optimize(vectored)
        got = {r["id"]: (r["v"], r["n"]) for r in table_rows(vectored)}
        assert got == model, f"step {step}"


def test_spark_reads_merges_and_deletes_a_table_with_vectors(vectored, spark):
    dc.write(pd.DataFrame({"id": [1, 2]}), vectored, mode="delete")
    dc.write(rows([3, 2000], "g"), vectored, mode="merge")
    expected = table_rows(vectored)
    frame = dc.read(vectored, read_as=dc.DatasetType.SPARK)
    assert sorted((r.asDict() for r in frame.collect()), key=lambda r: r["id"]) == expected
    root = dc.get_catalog().root
    source = spark.read.format("workbench").option("root", root).load("default.t")
    assert sorted(r["id"] for r in source.collect()) == [r["id"] for r in expected]
    query = "SELECT count(*) AS n, sum(n) AS total FROM default.t"
    counted = dc.sql(query, engine="spark")
    assert (counted["n"][0], counted["total"][0]) == (999, sum(r["n"] for r in expected))
    files = dc.read(vectored, read_as=dc.DatasetType.SPARK, file_path_column="f")
    assert files.count() == 999 and files.filter("f NOT LIKE '%.parquet'").count() == 0
    dc.write(spark.createDataFrame(rows([4, 3000], "s")), vectored, mode="merge")
    dc.write(spark.createDataFrame(pd.DataFrame({"id": [5]})), vectored, mode="delete")
    got = {r["id"]: r["v"] for r in table_rows(vectored)}
    assert got[4] == "s4" and got[3000] == "s3000" and got[3] == "g3"
    assert {1, 2, 5}.isdisjoint(got) and len(got) == 1000 - 2 + 1 + 1 - 1
    third = dc.transactions()["transaction_id"][-4].as_py()
    old = dc.read(vectored, read_as=dc.DatasetType.SPARK, as_of=third)
    assert old.count() == 750  # time travel: after the third of the four first writes


def test_tables_keyed_by_text_or_several_columns_merge_on_read_too(catalog):
    schema = dc.Schema.of(
        [
            dc.Field.of(pa.field("region", pa.string()), is_merge_key=True),
            dc.Field.of(pa.field("code", pa.string()), is_merge_key=True),
            dc.Field.of(pa.field("n", pa.int64())),
        ]
    )
    dc.create_table("k", schema=schema, table_properties=VECTORS)
    codes = [f"c{i}" for i in range(50)]
    dc.write(pd.DataFrame({"region": ["eu"] * 50, "code": codes, "n": range(50)}), "k")
    dc.write(
        pd.DataFrame({"region": ["eu", "us"], "code": ["c3", "c3"], "n": [300, 1]}),
        "k",
        mode="merge",
    )
    dc.write(pd.DataFrame({"region": ["eu"], "code": ["c4"]}), "k", mode="delete")
    got = {(r["region"], r["code"]): r["n"] for r in dc.read("k", read_as="pyarrow").to_pylist()}
    assert got[("eu", "c3")] == 300 and got[("us", "c3")] == 1 and ("eu", "c4") not in got
    assert len(got) == 50 and vectors_of("k")


def test_a_file_mostly_deleted_is_rewritten_and_an_empty_one_removed(catalog):
    share = {**VECTORS, "workbench.deletionVectors.purgeShare": 0.25}
    dc.create_table("p", schema=keyed_schema(), table_properties=share)
    dc.write(rows(range(100), "a"), "p")
    dc.write(rows(range(100, 200), "b"), "p")
    dc.write(pd.DataFrame({"id": range(20)}), "p", mode="delete")  # 20%: a vector
    assert [f.live_rows for f in table_files("p")] == [80, 100]
    dc.write(pd.DataFrame({"id": range(20, 30)}), "p", mode="delete")  # 30%: rewritten
    assert sorted((f.rows, f.live_rows) for f in table_files("p")) == [(70, 70), (100, 100)]
    assert [r["id"] for r in table_rows("p")] == [*range(30, 200)]
    dc.write(pd.DataFrame({"id": range(100, 200)}), "p", mode="delete")  # all: file removed
    assert [f.rows for f in table_files("p")] == [70]
    assert [r["id"] for r in table_rows("p")] == [*range(30, 100)]
    dc.optimize("p")
    assert [r["id"] for r in table_rows("p")] == [*range(30, 100)]
    for bad in (0, 1.5, "half", True):
        with pytest.raises(dc.InvalidArgumentError, match="purgeShare"):
            dc.create_table(
                "bad",
                schema=keyed_schema(),
                table_properties={"workbench.deletionVectors.purgeShare": bad},
            )


def test_the_key_index_finds_keys_and_keeps_to_its_budget():
    from workbench.core.data.key_index import IndexCache, KeyIndex

    index = KeyIndex.of(pa.array([30, 10, 20, 50], pa.int64()))
    positions, found = index.find(pa.array([20, 99, 30, 5], pa.int64()).to_numpy())
    assert positions.tolist() == [2, 0] and found.tolist() == [0, 2]
    cache = IndexCache(budget=index.nbytes * 2)
    for name in ("a", "b", "c"):
        cache.get("store", name, 1, lambda: pa.array([4, 3, 2, 1], pa.int64()))
    assert list(k for _, k, _ in cache.indexes) == ["b", "c"] and cache.used <= cache.budget
    cache.get("other store", "b", 1, lambda: pa.array([1], pa.int64()))
    cache.forget("store")
    (kept,) = cache.indexes.values()
    assert list(cache.indexes) == [("other store", "b", 1)] and cache.used == kept.nbytes


def test_a_file_holding_its_keys_in_order_is_indexed_without_a_sort():
    from workbench.core.data.key_index import KeyIndex

    ordered = KeyIndex.of(pa.chunked_array([[-5, 1, 2], [7, 9]], pa.int64()))
    assert ordered.positions is None and ordered.nbytes == 5 * 8
    positions, found = ordered.find(pa.array([9, 3, -5, 2], pa.int64()).to_numpy())
    assert positions.tolist() == [4, 0, 2] and found.tolist() == [0, 2, 3]
    shuffled = KeyIndex.of(pa.chunked_array([[1, 2], [2, 0]], pa.int64()))  # not increasing
    assert shuffled.positions is not None


def test_indexes_of_many_files_are_made_side_by_side_once():
    import threading

    from workbench.core.data.key_index import IndexCache

    cache, loaded = IndexCache(), []

    def loader(values: list[int]):
        def load() -> pa.Array:
            loaded.append(threading.current_thread().name)
            return pa.array(values, pa.int64())

        return load

    cache.get("store", "kept", 3, loader([3, 1, 2]))
    files = [("kept", 3, loader([3, 1, 2]))]
    files += [(f"f{i}", 2, loader([2 * i + 1, 2 * i])) for i in range(4)]
    cache.prepare("store", files)
    assert len(loaded) == 5  # the kept one once, the four others once each, on pool threads
    assert all(name.startswith("workbench-index") for name in loaded[1:])
    positions, found = cache.get("store", "f2", 2, loader([])).find(pa.array([4]).to_numpy())
    assert positions.tolist() == [1] and found.tolist() == [0] and len(loaded) == 5


def test_concurrent_deletes_of_one_file_lose_nothing(vectored):
    from concurrent.futures import ThreadPoolExecutor

    def delete(worker: int) -> None:
        for step in range(5):  # keys of the first file only: every delete changes its vector
            key = worker * 10 + step
            dc.write(pd.DataFrame({"id": [key]}), vectored, mode="delete")

    with ThreadPoolExecutor(4) as pool:
        list(pool.map(delete, range(4)))
    deleted = {w * 10 + s for w in range(4) for s in range(5)}
    remaining = [r["id"] for r in table_rows(vectored)]
    assert len(remaining) == 1000 - 20 and not deleted & set(remaining)
    assert dc.transactions().num_rows == 5 + 20  # create, 4 writes, and every delete


def test_ray_reads_merges_and_deletes_a_table_with_vectors(vectored, ray_cluster):
    import ray.data

    dc.write(pd.DataFrame({"id": [1, 2]}), vectored, mode="delete")
    dc.write(rows([3, 2000], "g"), vectored, mode="merge")
    expected = table_rows(vectored)
    data = dc.read(vectored, read_as=dc.DatasetType.RAY_DATASET).to_pandas()
    assert sorted(data.to_dict("records"), key=lambda r: r["id"]) == expected
    before = {f.path for f in table_files(vectored)}
    dc.write(
        ray.data.from_arrow(pa.Table.from_pandas(rows([4, 3000], "r"))), vectored, mode="merge"
    )
    dc.write(ray.data.from_items([{"id": 5}]), vectored, mode="delete")
    partial = ray.data.from_items([{"id": 6, "v": "p6"}, {"id": 4000, "v": "p4000"}])
    dc.write(partial, vectored, mode="merge")  # no n: row 6 keeps its own, 4000 has none
    assert before <= {f.path for f in table_files(vectored)}  # marked, not rewritten
    got = {r["id"]: (r["v"], r["n"]) for r in table_rows(vectored)}
    assert got[4] == ("r4", 4) and got[3000] == ("r3000", 3000) and got[3] == ("g3", 3)
    assert got[6] == ("p6", 6) and got[4000] == ("p4000", None)
    assert {1, 2, 5}.isdisjoint(got) and len(got) == 1000 - 2 + 1 + 1 - 1 + 1


EDGES = [0, 1, 1698, 1699, 1700, 1702, 4998, 4999]  # first, last, around the chunks' seam


@pytest.mark.parametrize(
    "deleted", [0, 1, 3, 400, 5000, EDGES], ids=lambda n: f"{n}-deleted" if n != EDGES else "edges"
)
@pytest.mark.parametrize("columns", [["id", "v"], []], ids=["columns", "count-only"])
def test_deleted_rows_are_left_out_by_slices_or_by_a_filter_alike(deleted, columns):
    import numpy as np

    from workbench.core.delta.deleted_positions import without_positions

    data = pa.table({"id": range(5000), "v": [f"v{i}" for i in range(5000)]})
    data = pa.concat_tables([data.slice(0, 1700), data.slice(1700)]).select(columns)  # 2 chunks
    if isinstance(deleted, list):
        positions, deleted = np.array(deleted), len(deleted)
    else:
        positions = np.sort(np.random.default_rng(deleted).choice(5000, deleted, replace=False))
    mask = np.ones(5000, dtype=bool)
    mask[positions] = False
    got = without_positions(data, positions)
    assert got.num_rows == 5000 - deleted and got.equals(data.filter(pa.array(mask)))


def test_a_merge_matches_only_the_rows_a_files_vector_leaves(vectored):
    dc.write(pd.DataFrame({"id": SCATTERED}), vectored, mode="delete")
    dc.write(rows([4, 5, 6000], "m"), vectored, mode="merge")  # 4 was deleted: inserted again
    got = {r["id"]: r["v"] for r in table_rows(vectored)}
    assert (got[4], got[5], got[6000], got[6]) == ("m4", "m5", "m6000", "a6")
    assert len(got) == 1000 - len(SCATTERED) + 2
    assert set(SCATTERED).isdisjoint(set(got) - {4})


@pytest.mark.parametrize("matched", [1, 7, 300, 5000])
def test_matched_rows_are_checked_against_a_vector_one_by_one_or_by_a_mask_alike(matched):
    import numpy as np
    from pyroaring import BitMap64

    from workbench.core.data.arrow_merge import _not_deleted
    from workbench.core.delta.deletion_vectors import undeleted_mask

    rng = np.random.default_rng(matched)
    deleted = BitMap64(rng.choice(20_000, 4_000, replace=False).tolist())
    positions = np.sort(rng.choice(20_000, matched, replace=False))
    expected = undeleted_mask(20_000, deleted)[positions]
    assert _not_deleted(positions, deleted, 20_000).tolist() == expected.tolist()
