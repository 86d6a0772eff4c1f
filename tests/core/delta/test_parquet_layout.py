"""The Parquet files every writer puts into a table are laid out for readers that skip: row
groups of about ``ROW_GROUP_BYTES`` (not a million rows), a page index, dictionaries only where
values repeat, Bloom filters on varied text, integers that step by little stored as their
steps; so a lookup by a sorted column opens one row group, and one by a unique text value only
the row groups that may hold it, in any Delta reader that reads them."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import workbench as dc
from workbench.core.catalog.locations import locate
from workbench.core.delta.data_files import ROW_GROUP_BYTES, ROW_GROUP_ROWS, parquet_layout
from workbench.core.transactions.table_versions import open_table

ROWS = 200_000


def sorted_events(rows: int = ROWS) -> pa.Table:
    """Rows sorted by ``user`` with a repeating ``kind`` and a unique ``note`` each."""
    rng = np.random.default_rng(3)
    return pa.table(
        {
            "user": np.sort(rng.integers(0, 20_000, rows)),
            "kind": pa.array(rng.choice(["view", "click", "buy"], rows)),
            "note": [f"{n:016x}" for n in rng.integers(0, 2**62, rows)],
        }
    )


def footers(table: str = "t") -> list[pq.FileMetaData]:
    return [pq.ParquetFile(f.absolute).metadata for f in open_table(locate(table)).files]


def assert_laid_out(meta: pq.FileMetaData, max_rows: int) -> None:
    """Several row groups of at most ``max_rows`` rows, each column with a page index."""
    assert meta.num_row_groups > 1
    for g in range(meta.num_row_groups):
        group = meta.row_group(g)
        assert group.num_rows <= max_rows
        for c in range(group.num_columns):
            assert group.column(c).has_column_index and group.column(c).has_offset_index


def encodings(meta: pq.FileMetaData, column: str) -> tuple:
    index = meta.schema.names.index(column)
    return meta.row_group(0).column(index).encodings


def test_workbench_writes_small_row_groups_with_a_page_index(catalog):
    dc.write(sorted_events(), "t")
    (meta,) = footers()
    assert_laid_out(meta, ROW_GROUP_ROWS[1])
    assert "RLE_DICTIONARY" in encodings(meta, "kind"), "three values: a dictionary pays"
    assert "RLE_DICTIONARY" not in encodings(meta, "note"), "unique values: no dictionary"
    rows = [meta.row_group(g).num_rows for g in range(meta.num_row_groups)]
    assert ROW_GROUP_ROWS[0] <= rows[0] < ROWS // 4


def test_varied_text_has_a_bloom_filter_that_rules_out_the_row_groups_without_a_value(catalog):
    import duckdb

    data = sorted_events()
    dc.write(data, "t")
    (meta,) = footers()
    group = meta.row_group(0)
    blooms = {
        meta.schema.names[c]: group.column(c).bloom_filter_offset is not None
        for c in range(group.num_columns)
    }
    assert blooms == {"user": False, "kind": False, "note": True}, "unique text only"
    path = open_table(locate("t")).files[0].absolute
    probe = (
        "SELECT count(*) FILTER (NOT bloom_filter_excludes), count(*)"
        " FROM parquet_bloom_probe(?, 'note', ?)"
    )
    present = data.column("note")[ROWS // 2].as_py()
    maybe, groups = duckdb.execute(probe, [path, present]).fetchone()
    assert groups == meta.num_row_groups > 3
    assert 1 <= maybe <= 2, "the row group holding it, and a false positive at most"
    maybe, _ = duckdb.execute(probe, [path, "absent"]).fetchone()
    assert maybe <= 1


def test_ordered_ids_and_times_are_stored_as_steps_and_read_back_by_every_reader(catalog):
    import datetime

    import polars as pl
    from deltalake import DeltaTable

    rng = np.random.default_rng(5)
    start = datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)
    ids = np.arange(ROWS, dtype=np.int64) * 3 + 2**40
    rows = pa.table(
        {
            "id": ids,
            "ts": pa.array([start + datetime.timedelta(seconds=int(i)) for i in range(ROWS)]),
            "day": pa.array(np.arange(ROWS, dtype=np.int32) // 50_000, pa.int32()),  # repeats
            "code": pa.array(rng.integers(-(2**62), 2**62, ROWS)),  # varied: plain
            "gap": pa.array([None if i % 7 else int(i) for i in range(ROWS)], pa.int64()),
        }
    )
    dc.write(rows, "t")
    (meta,) = footers()
    assert "DELTA_BINARY_PACKED" in encodings(meta, "id")
    assert "DELTA_BINARY_PACKED" in encodings(meta, "ts")
    assert "DELTA_BINARY_PACKED" in encodings(meta, "gap"), "steps between the values there"
    assert "DELTA_BINARY_PACKED" not in encodings(meta, "code")
    assert "RLE_DICTIONARY" in encodings(meta, "day")
    plain = pa.BufferOutputStream()
    pq.write_table(rows.select(["id", "ts"]), plain, row_group_size=ROWS)
    ours = sum(
        meta.row_group(g).column(c).total_compressed_size
        for g in range(meta.num_row_groups)
        for c in range(2)
    )
    assert ours * 4 < plain.getvalue().size, "steps of 3 and of a second take a few bits a row"
    uri = dc.get_table("t").uri
    assert dc.read("t", read_as="pyarrow").equals(rows)
    assert dc.sql("SELECT * FROM default.t ORDER BY id", read_as="pyarrow").equals(rows)
    assert DeltaTable(uri).to_pyarrow_table().sort_by("id").equals(rows)
    assert pl.scan_delta(uri).sort("id").collect().to_arrow().cast(rows.schema).equals(rows)
    assert dc.read("t").sort("id").to_arrow().cast(rows.schema).equals(rows)  # Daft's reader


def test_row_groups_follow_the_width_of_a_row_within_bounds():
    narrow = pa.table({"a": pa.array(np.zeros(1000, np.int8))})
    wide = pa.table({f"c{i}": np.arange(1000, dtype=np.float64) for i in range(100)})
    medium = pa.table({"a": np.arange(1000), "b": np.arange(1000.0)})  # 16 bytes a row
    assert parquet_layout(narrow)["row_group_size"] == ROW_GROUP_ROWS[1]
    assert parquet_layout(wide)["row_group_size"] == ROW_GROUP_ROWS[0]
    assert parquet_layout(medium)["row_group_size"] == ROW_GROUP_BYTES // 16
    nested = pa.table(
        {
            "s": [{"x": "a", "y": [1]}] * 10,
            "m": pa.array([[("k", "v")]] * 10, pa.map_(pa.string(), pa.string())),
        }
    )
    assert parquet_layout(nested)["bloom_filter_options"] == {}
    assert parquet_layout(nested)["use_dictionary"] == [
        "s.x",
        "s.y.list.element",
        "m.key_value.key",
        "m.key_value.value",
    ]


def test_daft_writes_small_row_groups_with_a_page_index(catalog):
    import daft

    dc.write(daft.from_arrow(sorted_events()), "t")
    for meta in footers():  # Daft sizes row groups from its own estimate of their bytes
        assert_laid_out(meta, ROW_GROUP_ROWS[1])


def test_spark_writes_small_row_groups_with_a_page_index(spark, catalog):
    dc.write(spark.createDataFrame(sorted_events().to_pandas()).coalesce(1), "t")
    (meta,) = footers()
    assert_laid_out(meta, ROWS // 2)


@pytest.mark.usefixtures("ray_cluster")
def test_ray_writes_small_row_groups_with_a_page_index(catalog):
    import ray.data

    dc.write(ray.data.from_arrow(sorted_events()).repartition(1), "t")
    (meta,) = footers()
    assert_laid_out(meta, ROW_GROUP_ROWS[1])
