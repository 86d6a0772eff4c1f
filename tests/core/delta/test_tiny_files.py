"""Tiny data files decoded one by one, on the calling thread, instead of through a dataset scan:
the same rows in the same types as the scan gives, and a file whose own columns differ from the
table's is left to the scan (which fills and casts them)."""

from __future__ import annotations

import datetime as dt
import decimal
import os

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import workbench as dc
from workbench.core.delta import reading
from workbench.core.delta.data_files import DataFile
from workbench.core.delta.tiny_files import decode, is_tiny
from workbench.core.storage.store import Storage

UTC = dt.timezone.utc


def many_types(start: int) -> pa.Table:
    """Three rows of many Arrow types, nulls among them."""
    ids = [start, start + 1, start + 2]
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "small": pa.array([1, None, 3], pa.int16()),
            "score": pa.array([0.5, None, float("inf")], pa.float64()),
            "name": pa.array(["a", None, "é漢"], pa.string()),
            "flag": pa.array([True, False, None], pa.bool_()),
            "at": pa.array(
                [dt.datetime(2026, 1, 1, tzinfo=UTC), None, None], pa.timestamp("us", "UTC")
            ),
            "day": pa.array([dt.date(2026, 11, 26), None, dt.date(1970, 1, 1)], pa.date32()),
            "price": pa.array(
                [decimal.Decimal("1.25"), None, decimal.Decimal("-3.50")], pa.decimal128(9, 2)
            ),
            "tags": pa.array([["x"], [], None], pa.list_(pa.string())),
            "point": pa.array(
                [{"x": 1, "y": 2.0}, None, {"x": None, "y": None}],
                pa.struct([("x", pa.int32()), ("y", pa.float64())]),
            ),
            "blob": pa.array([b"\x00\x01", None, b""], pa.binary()),
        }
    )


def opened_table(name: str):
    from workbench.core.catalog.locations import locate
    from workbench.core.transactions.table_versions import open_table

    return open_table(locate(name, None, None))


def test_tiny_files_decode_to_what_the_scan_reads(catalog):
    for start in range(0, 12, 3):
        dc.write(many_types(start), "t")
    opened = opened_table("t")
    assert len(opened.files) == 4 and all(is_tiny(f) for f in opened.files)

    def unexpected(f):
        raise AssertionError(f"{f.path} was left to the scan")

    decoded = decode(opened.storage, opened.files, opened.schema.arrow, unexpected)
    for f, table in zip(opened.files, decoded, strict=True):
        scanned = reading._read(opened, [f], None)
        assert table.schema == scanned.schema and table.equals(scanned)
    subset = decode(opened.storage, opened.files, opened.schema.arrow, unexpected, ["tags", "id"])
    assert [t.column_names for t in subset] == [["tags", "id"]] * 4
    assert subset[1].column("id").to_pylist() == [3, 4, 5]
    every = pa.concat_tables(many_types(s) for s in range(0, 12, 3))
    got = dc.read("t", read_as=dc.DatasetType.PYARROW)
    assert got.select(every.column_names).cast(every.schema).equals(every)


def test_a_file_from_before_the_schema_evolved_is_left_to_the_scan(catalog):
    dc.write(pa.table({"id": [1, 2]}), "t")
    dc.write(pa.table({"id": [3], "extra": ["new"]}), "t")  # a column added on write
    opened = opened_table("t")
    scanned = []

    def scan(f):
        scanned.append(f.path)
        return reading._read(opened, [f], None)

    first, second = decode(opened.storage, opened.files, opened.schema.arrow, scan)
    assert scanned == [opened.files[0].path]
    assert first.to_pylist() == [{"id": 1, "extra": None}, {"id": 2, "extra": None}]
    assert second.to_pylist() == [{"id": 3, "extra": "new"}]
    assert dc.read("t", read_as=dc.DatasetType.PYARROW).column("extra").to_pylist() == [
        None,
        None,
        "new",
    ]


def _file_of(path, rows: int) -> DataFile:
    return DataFile(os.path.basename(path), str(path), os.path.getsize(path), rows, 0, {}, {})


def test_a_file_holding_a_column_in_another_type_is_left_to_the_scan(tmp_path):
    narrow, wide = tmp_path / "narrow.parquet", tmp_path / "wide.parquet"
    pq.write_table(pa.table({"id": pa.array([1, 2], pa.int32())}), narrow)
    pq.write_table(pa.table({"id": pa.array([3], pa.int64())}), wide)
    schema = pa.schema([pa.field("id", pa.int64())])
    scanned = []

    def scan(f):
        scanned.append(f.path)
        return pq.read_table(f.absolute).cast(schema)

    tables = decode(Storage(str(tmp_path)), [_file_of(narrow, 2), _file_of(wide, 1)], schema, scan)
    assert scanned == ["narrow.parquet"]
    assert [t.schema for t in tables] == [schema, schema]
    assert [t.column("id").to_pylist() for t in tables] == [[1, 2], [3]]


def test_a_missing_tiny_file_fails_as_missing(tmp_path):
    path = tmp_path / "gone.parquet"
    pq.write_table(pa.table({"id": [1]}), path)
    f = _file_of(path, 1)
    path.unlink()
    schema = pa.schema([pa.field("id", pa.int64())])
    with pytest.raises(FileNotFoundError):
        decode(Storage(str(tmp_path)), [f], schema, lambda f: pa.table({}))


def test_on_an_object_store_tiny_files_are_fetched_in_groups_and_a_missing_one_fails(
    s3_catalog, monkeypatch
):
    from workbench.core.delta import tiny_files
    from workbench.core.storage import file_cache

    for start in range(0, 15, 3):
        dc.write(many_types(start), "t")
    opened = opened_table("t")
    storage = opened.storage
    groups = []
    fetch = type(storage).get_many

    def counted(self, uris, immutable=False):
        groups.append(len(uris))
        return fetch(self, uris, immutable)

    monkeypatch.setattr(type(storage), "get_many", counted)
    monkeypatch.setattr(tiny_files, "WHOLE_FILES_BYTES", 2 * max(f.size for f in opened.files))
    file_cache.clear()
    tables = decode(storage, opened.files, opened.schema.arrow, lambda f: None)
    assert groups == [2, 2, 1]
    assert pa.concat_tables(tables).column("id").to_pylist() == list(range(15))
    storage.remove(opened.files[-1].absolute)
    file_cache.clear()
    with pytest.raises(FileNotFoundError):
        decode(storage, opened.files, opened.schema.arrow, lambda f: None)
