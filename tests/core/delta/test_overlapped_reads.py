"""Reads of local tables with big files and deletion vectors: the big files stream from a scan
set going first while the small files and the vectors are decoded, and the runs between
deleted rows are sliced from each batch as it comes. Same rows as the plain path, in order."""

from __future__ import annotations

import dataclasses
import os
from types import SimpleNamespace

import pytest

import workbench as dc
from tests.core.delta.test_deletion_vectors import VECTORS, keyed_schema, rows
from tests.core.delta.test_tiny_files import opened_table
from workbench.core.delta import decoded_files, deleted_positions, reading

DELETED = [3, 700, 701, 2999, 4999]


@pytest.fixture
def lived(catalog, monkeypatch):
    """A keyed table whose first file counts as big (the bound lowered), with a few rows of it
    deleted through its vector, then two small files of merged rows."""
    monkeypatch.setattr(decoded_files, "SMALL_FILE_BYTES", 16 * 1024)
    dc.create_table("t", schema=keyed_schema(), table_properties=VECTORS)
    dc.write(rows(range(5000), "a"), "t", mode="merge")
    dc.write(rows(DELETED, "")[["id"]], "t", mode="delete")
    dc.write(rows([10, 5000], "m"), "t", mode="merge")
    dc.write(rows([11, 5001], "n"), "t", mode="merge")
    opened = opened_table("t")
    assert [decoded_files.is_small(f) for f in opened.files] == [False, True, True]
    assert deleted_positions.sparse(reading._deleted_rows(opened, opened.files), 5004)
    return opened


def expected_ids() -> list[int]:
    ids = [i for i in range(5000) if i not in {*DELETED, 10, 11}]
    return [*ids, 10, 5000, 11, 5001]


def test_big_files_stream_through_the_slicing_in_write_order(lived):
    got = reading._live_overlapped(lived, lived.files, None, True)
    assert got is not None and got.column("id").to_pylist() == expected_ids()
    plain = reading._scan(lived, lived.files, None)
    assert got.equals(
        deleted_positions.without_positions(plain, reading._deleted_rows(lived, lived.files))
    )
    assert reading.live_table(lived).equals(got)
    subset = reading.live_table(lived, columns=["v", "id"])
    assert subset.column_names == ["v", "id"] and subset.column("id").to_pylist() == expected_ids()
    assert reading.live_table(lived, columns=[]).num_rows == len(expected_ids())


@pytest.mark.parametrize("off_by", [-1, 1], ids=["fewer-in-the-log", "more-in-the-log"])
def test_a_file_whose_rows_differ_from_the_log_is_read_the_plain_way(lived, off_by):
    big = lived.files[0]
    wrong = dataclasses.replace(big, rows=big.rows + off_by)
    table = SimpleNamespace(
        uri=lived.uri,
        files=[wrong, *lived.files[1:]],
        schema=lived.schema,
        properties=lived.properties,
        storage=lived.storage,
    )
    assert reading._live_overlapped(table, table.files, None, True) is None


def test_a_big_file_removed_fails_as_missing_before_its_vector_is_read(lived):
    os.remove(lived.storage.fs_path(lived.files[0].absolute))
    with pytest.raises(FileNotFoundError):
        reading._live_overlapped(lived, lived.files, None, True)
