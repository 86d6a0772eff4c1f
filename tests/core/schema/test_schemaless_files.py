"""Schemaless manifests, text content types on schema tables, from_manifest_table."""

from __future__ import annotations

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import workbench as dc
from tests.conftest import tree_digest

ROWS = pa.table({"id": [1, 2, 3], "name": ["a", "b", "c"]})


def test_text_content_type_on_table_with_schema_changes_nothing(catalog):
    dc.write(ROWS, "typed")
    before = tree_digest(catalog.root)
    for fmt in (dc.ContentType.CSV, dc.ContentType.JSON, dc.ContentType.UNESCAPED_TSV):
        with pytest.raises(dc.TableValidationError, match=f"'{fmt.value}' cannot be written"):
            dc.write(ROWS, "typed", content_type=fmt)
    assert tree_digest(catalog.root) == before
    assert dc.read("typed", read_as=dc.DatasetType.PYARROW).num_rows == 3


def test_text_content_type_with_inferred_schema_creates_nothing(catalog):
    with pytest.raises(dc.TableValidationError, match="schema=None"):
        dc.write(ROWS, "t", namespace="fresh", content_type="csv", auto_create_namespace=True)
    assert not dc.namespace_exists("fresh")
    dc.write(
        ROWS, "t", namespace="fresh", content_type="csv", schema=None, auto_create_namespace=True
    )
    assert dc.get_table("t", namespace="fresh").schemaless


def test_schema_content_types_on_table_with_schema_are_stored_as_parquet(catalog):
    with pytest.warns(UserWarning, match="stored as Parquet"):
        dc.write(ROWS, "typed", content_type=dc.ContentType.ORC)
    files = dc.read("typed", read_as=dc.DatasetType.PYARROW_PARQUET)
    assert isinstance(files, pq.ParquetFile) and files.read().num_rows == 3


def test_manifest_has_deltacat_columns_and_paths_under_the_catalog_root(catalog):
    dc.write(ROWS, "files", schema=None, content_type=dc.ContentType.CSV)
    dc.write(ROWS.slice(0, 1), "files", mode="append", content_type=dc.ContentType.JSON)
    manifest = dc.read("files", read_as=dc.DatasetType.PYARROW)
    assert manifest.column("meta_record_count").to_pylist() == [3, 1]
    assert manifest.column("meta_content_type").to_pylist() == ["text/csv", "application/json"]
    paths = manifest.column("path").to_pylist()
    assert all(p.startswith("default/files/_data/") for p in paths)
    picked = dc.read("files", read_as=dc.DatasetType.PANDAS, columns=["meta_record_count"])
    assert list(picked.columns) == ["meta_record_count"]
    back = dc.from_manifest_table(manifest, read_as=dc.DatasetType.PYARROW)
    assert back.column("id").to_pylist() == [1, 2, 3, 1]


def test_manifest_rows_carry_deltacat_stream_positions_and_entry_facts(catalog):
    """Each file's stream position is the Delta version that added it plus one (DeltaCAT
    counts from 1); a REPLACE keeps counting; the other entry columns say who wrote it, that
    it is needed, its encoding and the in-memory size of the rows written."""
    dc.create_table("files")  # version 0: no file
    dc.write(ROWS, "files", mode="append")
    dc.alter_table("files", table_description="raw drops")  # a commit without a file
    dc.write(ROWS.slice(0, 1), "files", mode="append")
    manifest = dc.read("files", read_as=dc.DatasetType.PYARROW)
    assert manifest.column("stream_position").to_pylist() == [2, 4]
    assert manifest.column("previous_stream_position").to_pylist() == [1, 3]
    assert manifest.column("author_name").to_pylist() == ["workbench.write"] * 2
    assert manifest.column("author_version").to_pylist() == [dc.__version__] * 2
    assert manifest.column("mandatory").to_pylist() == [True, True]
    assert manifest.column("meta_content_encoding").to_pylist() == ["identity"] * 2
    sizes = manifest.column("meta_source_content_length").to_pylist()
    assert sizes == [ROWS.nbytes, ROWS.slice(0, 1).nbytes]
    dc.write(ROWS, "files", mode="replace")
    assert dc.read("files", read_as="pyarrow").column("stream_position").to_pylist() == [5]
    picked = dc.read("files", read_as="pandas", columns=["stream_position", "mandatory"])
    assert picked.to_dict("list") == {"stream_position": [5], "mandatory": [True]}


def test_from_manifest_table_resolves_paths_in_the_catalog_named(tmp_path):
    dc.init(
        {
            "a": dc.Catalog(dc.CatalogProperties(str(tmp_path / "a"))),
            "b": dc.Catalog(dc.CatalogProperties(str(tmp_path / "b"))),
        },
        default="a",
    )
    dc.write(ROWS, "files", catalog="b", schema=None)
    manifest = dc.read("files", catalog="b", read_as=dc.DatasetType.PANDAS)
    with pytest.raises(dc.TableVersionNotFoundError, match="Pass catalog="):
        dc.from_manifest_table(manifest)
    assert len(dc.from_manifest_table(manifest, catalog="b", read_as="pandas")) == 3


def test_from_manifest_table_takes_stored_column_names_and_absolute_paths(catalog):
    dc.write(ROWS, "files", schema=None)
    manifest = dc.read("files", read_as=dc.DatasetType.PYARROW)
    absolute = [f"{catalog.root}/{p}" for p in manifest.column("path").to_pylist()]
    stored = pa.table({"path": absolute, "content_type": ["application/parquet"]})
    assert dc.from_manifest_table(stored, read_as="pyarrow").num_rows == 3


def test_from_manifest_table_names_numpy_columns_by_the_schema(catalog):
    dc.write(dc.from_pyarrow(ROWS, dc.DatasetType.NUMPY), "arrays", schema=None, content_type="csv")
    manifest = dc.read("arrays")
    plain = dc.from_manifest_table(manifest, read_as=dc.DatasetType.PYARROW)
    assert plain.column_names == ["0", "1"]
    named = dc.from_manifest_table(manifest, read_as="pyarrow", schema=dc.Schema.of(ROWS.schema))
    assert named.to_pydict() == ROWS.to_pydict()


def test_from_manifest_table_as_parquet_files(catalog):
    dc.write(ROWS, "files", schema=None)
    dc.write(ROWS, "files", mode="append")
    files = dc.from_manifest_table(dc.read("files"), read_as=dc.DatasetType.PYARROW_PARQUET)
    assert [f.read().num_rows for f in files] == [3, 3]
    with pytest.raises(dc.InvalidArgumentError, match="schema= does not apply"):
        dc.from_manifest_table(dc.read("files"), read_as="pyarrow_parquet", schema=ROWS.schema)
    dc.write(ROWS, "files", mode="append", content_type=dc.ContentType.CSV)
    with pytest.raises(dc.exceptions.NonRetryableDownloadTableError, match="text/csv"):
        dc.from_manifest_table(dc.read("files"), read_as=dc.DatasetType.PYARROW_PARQUET)


def test_merge_and_delete_on_schemaless_table_change_nothing(catalog):
    dc.write(pd.DataFrame({"id": [1]}), "files", schema=None)
    before = tree_digest(catalog.root)
    for mode in ("merge", "delete"):
        with pytest.raises(dc.MergeKeyError, match=f"{mode.upper()} mode requires tables"):
            dc.write(pd.DataFrame({"id": [1]}), "files", mode=mode)
    assert tree_digest(catalog.root) == before


def test_dataset_type_content_type_sets_follow_deltacat():
    daft, ray = dc.DatasetType.DAFT, dc.DatasetType.RAY_DATASET
    assert dc.ContentType.ORC not in daft.readable_content_types()
    assert dc.ContentType.ORC in ray.readable_content_types()
    assert dc.ContentType.AVRO not in daft.writable_content_types()
    assert dc.DatasetType.PYARROW_PARQUET.writable_content_types() == frozenset()
    local = dc.DatasetType.local() - {dc.DatasetType.PYARROW_PARQUET}
    assert all(dc.ContentType.ORC in t.readable_content_types() for t in local)
