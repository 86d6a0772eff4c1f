"""The read path's two caches of immutable files: the positions deletion vectors delete and the
rows of small data files, each decoded once per process. Neither may change a result."""

from __future__ import annotations

import os

import pyarrow as pa
import pytest

import workbench as dc
from tests.core.delta.test_deletion_vectors import (
    SCATTERED,
    keyed_schema,
    rows,
    table_files,
    table_rows,
    vector_files,
)
from workbench.core.delta import decoded_files
from workbench.core.delta.deleted_positions import deleted_positions


@pytest.fixture
def vectored(catalog):
    """A keyed table with deletion vectors on: four files, 60 scattered rows of the first
    deleted through a vector file."""
    dc.create_table(
        "t", schema=keyed_schema(), table_properties={"delta.enableDeletionVectors": "true"}
    )
    for start in range(0, 1000, 250):
        dc.write(rows(range(start, start + 250), "a"), "t", mode="merge")
    dc.write(pa.table({"id": list(SCATTERED)}), "t", mode="delete")
    return "t"


def expected(deleted=SCATTERED) -> list[int]:
    return sorted(set(range(1000)) - set(deleted))


def test_a_vector_is_decoded_once_into_sorted_positions_nobody_may_change(vectored):
    (f,) = [f for f in table_files(vectored) if f.deletion_vector is not None]
    uri = dc.get_table(vectored).uri
    positions = deleted_positions(uri, f.deletion_vector)
    assert positions.tolist() == list(SCATTERED)
    assert not positions.flags.writeable
    with pytest.raises(ValueError):
        positions[0] = 1
    for name in vector_files(vectored):  # kept: the vector file is not read again
        os.remove(os.path.join(uri, name))
    assert deleted_positions(uri, f.deletion_vector) is positions


def test_reads_with_kept_vectors_and_files_match_fresh_ones(vectored):
    first = [r["id"] for r in table_rows(vectored)]
    assert first == expected()
    for _ in range(3):  # the same from what the process kept
        assert [r["id"] for r in table_rows(vectored)] == first
    assert [r["id"] for r in table_rows(vectored, columns=["id"])] == first
    dc.write(pa.table({"id": [1, 2, 3]}), vectored, mode="delete")  # a new vector: read anew
    assert [r["id"] for r in table_rows(vectored)] == expected([*SCATTERED, 1, 2, 3])
    assert dc.read(vectored, read_as=dc.DatasetType.PYARROW, columns=[]).num_rows == 937


def test_a_kept_file_is_read_in_the_schema_the_table_has_now(vectored):
    table_rows(vectored)
    dc.write(rows([2000], "b").assign(extra=[7]), vectored)
    got = {r["id"]: r for r in table_rows(vectored)}
    assert got[2000]["extra"] == 7 and got[1]["extra"] is None and len(got) == 941


def test_a_version_vacuum_removed_fails_typed_though_its_files_were_kept(vectored):
    version = dc.get_table(vectored).version
    assert len(table_rows(vectored, version=version)) == 940
    dc.optimize(vectored)
    dc.vacuum(retain=0)
    with pytest.raises(dc.TableVersionNotFoundError):
        dc.read(vectored, read_as=dc.DatasetType.PYARROW, version=version)
    assert [r["id"] for r in table_rows(vectored)] == expected()


def test_files_whose_row_counts_disagree_with_the_log_are_not_kept(vectored):
    files = [f for f in table_files(vectored) if decoded_files.is_small(f)]
    assert len(files) == 4
    short = pa.table({"id": [1]})  # one row where the log counts 1,000
    assert decoded_files.file_tables("store", short.schema, files, lambda missing: short) is None
    assert not decoded_files.KEPT.values()


def test_kept_files_stay_under_the_bound_and_none_are_kept_when_it_is_zero(vectored, monkeypatch):
    table_rows(vectored)
    kept = decoded_files.KEPT.values()
    assert kept and decoded_files.KEPT.size <= decoded_files.bound()
    assert decoded_files.KEPT.size == sum(t.nbytes for t in kept)
    for megabytes in ("0", "0.02"):  # none; a bound smaller than ten times any file
        decoded_files.clear()
        monkeypatch.setenv("WORKBENCH_FILE_CACHE_MB", megabytes)
        assert [r["id"] for r in table_rows(vectored)] == expected()
        assert not decoded_files.KEPT.values()


def test_writers_replacing_files_keep_none_of_them_decoded(catalog):
    for i in range(20):  # steps of automatic compaction fold these as they come
        dc.write(pa.table({"id": [i]}), "appended")
    dc.optimize("appended")
    assert not decoded_files.KEPT.values()
    assert sorted(
        dc.read("appended", read_as=dc.DatasetType.PYARROW).column("id").to_pylist()
    ) == list(range(20))
    assert len(decoded_files.KEPT.values()) == 1  # a reader's file is kept


def test_skipping_remembers_each_files_bounds_under_its_catalog(catalog):
    from workbench.core.base.caches import forget_catalog
    from workbench.core.delta import skipping

    for start in (0, 100, 200):
        dc.write(pa.table({"id": pa.array(range(start, start + 100), pa.int64())}), "r")
    skipping._READ.clear()
    query = "SELECT id FROM default.r WHERE id = 150"
    assert dc.sql(query, read_as="pyarrow").column("id").to_pylist() == [150]
    identity = catalog.storage.identity
    kept = [key for key in skipping._READ._entries if key[0] == identity]
    assert len(kept) == 3  # one per file, for the column the query names
    dc.write(pa.table({"id": pa.array([150], pa.int64())}), "r")  # a new file: read, kept too
    assert dc.sql(query, read_as="pyarrow").column("id").to_pylist() == [150, 150]
    forget_catalog(identity)
    assert not [key for key in skipping._READ._entries if key[0] == identity]
