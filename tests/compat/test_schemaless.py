"""Schemaless tables and content types: which formats go to which tables, manifests, and
reading every stored format back.

Ports DeltaCAT 2.0 (deltacat/tests/catalog/test_default_catalog_impl.py):
``TestContentTypeDatasetCompatibility`` (test_write_schema_content_types_compatibility,
test_write_schemaless_content_types_compatibility, test_read_content_type_compatibility,
test_schemaless_content_type_blocked_from_schema_table,
test_schemaless_content_type_allows_schemaless_table, test_schema_content_type_allows_schema_table,
test_schema_content_type_allows_schemaless_table), ``TestSchemalessContentTypeBehavior`` (all
three), the schemaless tests of ``TestSchemaConsistency`` (append, merge/delete, evolving schema,
distributed datasets) and ``TestDatasetTypes.test_daft_multi_format_reading`` /
``test_daft_mixed_content_type_reading``.

DeltaCAT builds its parameter grids from ``DatasetType.writable_content_types()`` and
``readable_content_types()``; the grids are written out here with DeltaCAT's values, and
test_dataset_type_content_type_sets checks those sets themselves. Not ported: RAY_DATASET
writers and readers (Ray start-up cost) and the stream-position columns of the manifest
(stream positions are out of scope; see REPORT.md). ``infer_table_schema(data)`` is written
``dc.Schema.of(data.schema)``.
"""

from __future__ import annotations

import pandas as pd
import pyarrow as pa
import pytest

import workbench as dc
from tests.compat.helpers import (
    SCHEMA_CONTENT_TYPES,
    SCHEMALESS_CONTENT_TYPES,
    ctype,
    dtype,
    error,
    five_rows,
    mode,
    prop,
    write_in,
)

pytestmark = pytest.mark.compat

NS = "test_namespace"
ALL_NINE = {"CSV", "TSV", "UNESCAPED_TSV", "PSV", "PARQUET", "FEATHER", "JSON", "AVRO", "ORC"}
DISTRIBUTED_WRITABLE = {"CSV", "TSV", "UNESCAPED_TSV", "PSV", "PARQUET", "JSON"}
WRITABLE = {
    "NUMPY": ALL_NINE,
    "PYARROW": ALL_NINE,
    "PANDAS": ALL_NINE,
    "POLARS": ALL_NINE,
    "RAY_DATASET": DISTRIBUTED_WRITABLE,
    "DAFT": DISTRIBUTED_WRITABLE,
    "PYARROW_PARQUET": set(),
}
READABLE = {
    **{name: ALL_NINE for name in ("NUMPY", "PYARROW", "PANDAS", "POLARS", "RAY_DATASET")},
    "DAFT": {"PARQUET", "JSON", "CSV", "PSV", "TSV", "UNESCAPED_TSV"},
    "PYARROW_PARQUET": {"PARQUET"},
}
# Writers of the write grids; RAY_DATASET is left out (Ray start-up cost).
WRITERS = ["NUMPY", "PYARROW", "PANDAS", "POLARS", "DAFT"]


def _table_name(prefix, writer, content_type):
    return f"{prefix}_{dtype(writer).value}_{ctype(content_type).value}".replace("/", "_").replace(
        "-", "_"
    )


def _write(cat, data, table, content_type, write_mode="CREATE", namespace=NS, **kwargs):
    write_in(cat, data, table, write_mode, namespace, content_type=ctype(content_type), **kwargs)


def test_dataset_type_content_type_sets():
    """The sets DeltaCAT's content-type grids are generated from (not a DeltaCAT test case)."""
    for name, expected in WRITABLE.items():
        assert {c.name for c in dtype(name).writable_content_types()} == expected, name
    for name, expected in READABLE.items():
        assert {c.name for c in dtype(name).readable_content_types()} == expected, name
    assert {d.name for d in dc.DatasetType.local()} == {
        "NUMPY",
        "PANDAS",
        "POLARS",
        "PYARROW",
        "PYARROW_PARQUET",
    }
    # DeltaCAT's {DAFT, RAY_DATASET}, plus workbench's SPARK (a type DeltaCAT does not have).
    assert {d.name for d in dc.DatasetType.distributed()} == {"DAFT", "RAY_DATASET", "SPARK"}


@pytest.mark.parametrize(
    "writer, content_type",
    [(w, c) for w in WRITERS for c in SCHEMA_CONTENT_TYPES if c in WRITABLE[w]],
)
def test_write_schema_content_types_compatibility(cat, writer, content_type):
    """A table with a schema stores ORC, Feather or Avro files too, and reads them back."""
    base = five_rows()
    table = _table_name("schema_table", writer, content_type)
    extra = {"schema": dc.Schema.of(base.schema)} if writer == "NUMPY" else {}
    _write(
        cat,
        dc.from_pyarrow(base, dtype(writer)),
        table,
        content_type,
        table_properties={prop("SUPPORTED_READER_TYPES"): None},
        **extra,
    )
    assert dc.table_exists(table=table, namespace=NS, catalog=cat)
    rows = dc.read_table(table=table, namespace=NS, catalog=cat, read_as=dtype("PANDAS"))
    assert len(rows) == 5


@pytest.mark.parametrize(
    "writer, content_type",
    [(w, c) for w in WRITERS for c in SCHEMALESS_CONTENT_TYPES if c in WRITABLE[w]],
)
def test_write_schemaless_content_types_compatibility(cat, writer, content_type):
    base = five_rows()
    table = _table_name("schemaless_table", writer, content_type)
    _write(cat, dc.from_pyarrow(base, dtype(writer)), table, content_type, schema=None)
    assert dc.table_exists(table=table, namespace=NS, catalog=cat)
    manifest = dc.read_table(table=table, namespace=NS, catalog=cat, read_as=dtype("DAFT"))
    rows = dc.from_manifest_table(
        manifest_table=manifest,
        read_as=dtype("PYARROW"),
        schema=dc.Schema.of(base.schema),
        catalog=cat,
    )
    assert len(dc.to_pandas(rows)) == 5


# (reader, content type, expected error): PyArrow writes each schema content type; RAY_DATASET
# readers are left out (Ray start-up cost).
READ_CASES = [
    (reader, content_type, None)
    for reader in ["NUMPY", "PYARROW", "PYARROW_PARQUET", "PANDAS", "POLARS", "DAFT"]
    for content_type in SCHEMA_CONTENT_TYPES
    if content_type in READABLE[reader]
] + [
    (reader, content_type, failure)
    for reader, failure in [
        ("PYARROW_PARQUET", "NonRetryableDownloadTableError"),
        ("DAFT", "NotImplementedError"),
    ]
    for content_type in ["ORC", "AVRO", "FEATHER"]
]


@pytest.mark.parametrize("reader, content_type, failure", READ_CASES)
def test_read_content_type_compatibility(cat, reader, content_type, failure):
    base = five_rows()
    _write(
        cat,
        base,
        "compatibility_test_table",
        content_type,
        table_properties={prop("SUPPORTED_READER_TYPES"): None},
    )
    read = {"table": "compatibility_test_table", "namespace": NS, "catalog": cat}
    if failure is None:
        result = dc.read_table(**read, read_as=dtype(reader), max_parallelism=1)
        assert result is not None
        schema = {"schema": base.schema} if reader == "NUMPY" else {}
        rows = dc.to_pandas(result, **schema)
        assert len(rows) == 5
        assert set(rows.columns) == {"id", "name", "value", "category"}
        return
    expected = NotImplementedError if failure == "NotImplementedError" else error(failure)
    with pytest.raises(expected) as caught:
        dc.read_table(**read, read_as=dtype(reader))
    words = ["not implemented", "supports", "content type"]
    words += ["native reader"] if reader == "DAFT" else ["not supported", "unknown", "unsupported"]
    assert any(w in str(caught.value).lower() for w in words), str(caught.value)


def _create(cat, schema, **properties):
    dc.create_table(
        table="test-table",
        namespace="test-namespace",
        catalog=cat,
        schema=schema,
        auto_create_namespace=True,
        **properties,
    )


def _write_no_mode(cat, content_type):
    dc.write_to_table(
        data=five_rows(),
        table="test-table",
        namespace="test-namespace",
        catalog=cat,
        content_type=ctype(content_type),
        auto_create_namespace=True,
    )


@pytest.mark.parametrize("content_type", ["CSV", "TSV", "UNESCAPED_TSV", "PSV", "JSON"])
def test_schemaless_content_type_blocked_from_schema_table(cat, content_type):
    _create(
        cat,
        dc.Schema.of(five_rows().schema),
        table_properties={prop("SUPPORTED_READER_TYPES"): None},
    )
    with pytest.raises(error("TableValidationError")) as caught:
        _write_no_mode(cat, content_type)
    message = str(caught.value)
    assert "cannot be written to a table with a schema" in message
    assert ctype(content_type).value in message
    assert "has a schema" in message


@pytest.mark.parametrize("content_type", ["CSV", "TSV", "UNESCAPED_TSV", "PSV", "JSON"])
def test_schemaless_content_type_allows_schemaless_table(cat, content_type):
    _create(cat, None)
    _write_no_mode(cat, content_type)
    _assert_one_file_of(cat, content_type)


# The readers each format can serve, as DeltaCAT's test declares them.
READERS_BY_FORMAT = {
    "PARQUET": ["PYARROW", "PANDAS", "POLARS", "DAFT", "RAY_DATASET"],
    "ORC": ["PYARROW", "PANDAS", "POLARS"],
    "FEATHER": ["PYARROW", "PANDAS", "POLARS"],
    "AVRO": ["PYARROW", "PANDAS", "POLARS", "RAY_DATASET"],
}


@pytest.mark.parametrize("content_type", SCHEMA_CONTENT_TYPES)
def test_schema_content_type_allows_schema_table(cat, content_type):
    readers = [dtype(r) for r in READERS_BY_FORMAT[content_type]]
    _create(
        cat,
        dc.Schema.of(five_rows().schema),
        table_properties={prop("SUPPORTED_READER_TYPES"): readers},
    )
    _write_no_mode(cat, content_type)
    rows = dc.read("test-table", "test-namespace", cat, read_as="pyarrow")
    assert rows.sort_by("id").to_pylist() == five_rows().to_pylist()


@pytest.mark.parametrize("content_type", SCHEMA_CONTENT_TYPES)
def test_schema_content_type_allows_schemaless_table(cat, content_type):
    _create(cat, None)
    _write_no_mode(cat, content_type)
    _assert_one_file_of(cat, content_type)


def _assert_one_file_of(cat, content_type: str) -> None:
    """The schemaless table's manifest holds the one file written, of that content type."""
    manifest = dc.read("test-table", "test-namespace", cat, read_as="pyarrow").to_pylist()
    assert len(manifest) == 1 and manifest[0]["meta_record_count"] == 5
    assert manifest[0]["meta_content_type"] == ctype(content_type).value


SCHEMALESS_NS = "schemaless_namespace"


@pytest.fixture
def schemaless_cat(catalogs) -> str:
    return catalogs.add("schemaless_test_catalog", namespace=SCHEMALESS_NS)


def test_csv_write_without_explicit_schema_fails(schemaless_cat):
    """Without ``schema=None`` the schema is inferred, and CSV cannot go to such a table."""
    people = pd.DataFrame(
        {"id": [1, 2, 3], "name": ["Alice", "Bob", "Charlie"], "age": [25, 30, 35]}
    )
    with pytest.raises(error("TableValidationError")) as caught:
        _write(schemaless_cat, people, "csv_inferred_schema_test", "CSV", namespace=SCHEMALESS_NS)
    message = str(caught.value)
    assert "schemaless" in message.lower()
    assert "text/csv" in message
    assert "cannot be written to a table with a schema" in message


def test_csv_write_with_explicit_schema_none_works(schemaless_cat):
    table = "csv_schemaless_test"
    first = pd.DataFrame(
        {"id": [1, 2, 3], "name": ["Alice", "Bob", "Charlie"], "age": [25, 30, 35]}
    )
    more = pd.DataFrame({"id": [4, 5, 6], "name": ["Diana", "Eve", "Frank"], "age": [28, 32, 29]})
    _write(schemaless_cat, first, table, "CSV", namespace=SCHEMALESS_NS, schema=None)
    found = dc.get_table(table, namespace=SCHEMALESS_NS, catalog=schemaless_cat)
    assert found.table_version.schema is None
    _write(schemaless_cat, more, table, "CSV", "APPEND", namespace=SCHEMALESS_NS)
    result = dc.read_table(table, namespace=SCHEMALESS_NS, catalog=schemaless_cat)
    assert result is not None
    assert hasattr(result, "columns")


def test_mixed_content_types_on_schemaless_table(schemaless_cat):
    table = "mixed_content_test"
    rows = pd.DataFrame({"id": [1, 2, 3], "value": ["a", "b", "c"]})
    _write(schemaless_cat, rows, table, "CSV", namespace=SCHEMALESS_NS, schema=None)
    _write(schemaless_cat, rows, table, "PARQUET", "APPEND", namespace=SCHEMALESS_NS)
    _write(schemaless_cat, rows, table, "JSON", "APPEND", namespace=SCHEMALESS_NS)
    found = dc.get_table(table, namespace=SCHEMALESS_NS, catalog=schemaless_cat)
    assert found.table_version.schema is None
    assert dc.read_table(table, namespace=SCHEMALESS_NS, catalog=schemaless_cat) is not None


def _write_schemaless(cat, table, data, write_mode):
    dc.write_to_table(
        data=data,
        table=table,
        namespace=NS,
        catalog=cat,
        schema=None,
        mode=mode(write_mode),
        auto_create_namespace=True,
    )


def _manifest(cat, table, read_as="PYARROW"):
    return dc.read_table(table=table, namespace=NS, catalog=cat, read_as=dtype(read_as))


def _people(ids, names, values, **more):
    return pd.DataFrame({"id": ids, "name": names, "value": values, **more})


def test_schemaless_table_append_mode(cat):
    """A schemaless table reads back as a manifest: one row per written file."""
    table = "schemaless_append_table"
    _write_schemaless(cat, table, _people([1, 2], ["Alice", "Bob"], [10.1, 20.2]), "CREATE")
    manifest = _manifest(cat, table)
    assert isinstance(manifest, pa.Table)
    rows = dc.to_pandas(manifest)
    assert len(rows) == 1
    expected = {
        "path",
        "meta_record_count",
        "meta_content_type",
        "stream_position",
        "previous_stream_position",
    }
    assert expected <= set(rows.columns)
    assert rows["meta_record_count"].iloc[0] == 2
    assert rows["stream_position"].iloc[0] == 1  # the first delta is at stream position 1
    assert rows["previous_stream_position"].iloc[0] == 0
    _write_schemaless(cat, table, _people([3, 4], ["Charlie", "Diana"], [30.3, 40.4]), "APPEND")
    rows = dc.to_pandas(_manifest(cat, table))
    assert sorted(rows["meta_record_count"]) == [2, 2]
    _write_schemaless(cat, table, _people([5, 6], ["Eve", "Frank"], [50.5, 60.6]), "APPEND")
    rows = dc.to_pandas(_manifest(cat, table))
    assert len(rows) == 3
    assert sorted(rows["meta_record_count"]) == [2, 2, 2]
    assert sorted(rows["stream_position"].tolist()) == [1, 2, 3]  # sequential from 1


def test_schemaless_table_merge_delete_mode(cat):
    table = "schemaless_merge_table"
    start = _people(
        [1, 2, 3],
        ["Alice", "Bob", "Charlie"],
        [10.1, 20.2, 30.3],
        status=["active", "active", "inactive"],
    )
    _write_schemaless(cat, table, start, "CREATE")
    rows = dc.to_pandas(_manifest(cat, table))
    assert len(rows) == 1
    assert rows["meta_record_count"].iloc[0] == 3
    for write_mode in ("MERGE", "DELETE"):
        with pytest.raises(
            error("TableValidationError"),
            match=f"{write_mode} mode requires tables to have at least one merge key",
        ):
            _write_schemaless(cat, table, _people([1], ["Alice"], [1.0]), write_mode)
    _write_schemaless(cat, table, _people([4, 5], ["Dave", "Eve"], [40.4, 50.5]), "APPEND")
    rows = dc.to_pandas(_manifest(cat, table))
    assert len(rows) == 2
    assert sorted(rows["meta_record_count"]) == [2, 3]


def _two_schemaless_writes(cat, table):
    _write_schemaless(cat, table, _people([1, 2], ["Alice", "Bob"], [10.1, 20.2]), "CREATE")
    wider = _people(
        [3, 4],
        ["Charlie", "Diana"],
        [30.3, 40.4],
        status=["active", "inactive"],
        category=["A", "B"],
    )
    _write_schemaless(cat, table, wider, "APPEND")


def test_schemaless_table_with_evolving_schema(cat):
    _two_schemaless_writes(cat, "schemaless_evolving_table")
    rows = dc.to_pandas(_manifest(cat, "schemaless_evolving_table"))
    assert len(rows) == 2
    assert {"path", "meta_record_count", "meta_content_type", "stream_position"} <= set(
        rows.columns
    )
    assert sorted(rows["meta_record_count"]) == [2, 2]
    assert sorted(rows["stream_position"].tolist()) == [1, 2]


def test_schemaless_table_with_distributed_datasets(cat):
    """The RAY_DATASET read of the DeltaCAT test is not ported (Ray start-up cost)."""
    import daft

    _two_schemaless_writes(cat, "schemaless_distributed_table")
    default = dc.read_table(table="schemaless_distributed_table", namespace=NS, catalog=cat)
    assert isinstance(default, daft.DataFrame)
    assert len(default.to_pandas()) == 2
    manifest = _manifest(cat, "schemaless_distributed_table", "DAFT")
    assert isinstance(manifest, daft.DataFrame)
    rows = manifest.to_pandas()
    assert len(rows) == 2
    assert {"path", "meta_record_count", "meta_content_type", "stream_position"} <= set(
        rows.columns
    )
    assert sorted(rows["meta_record_count"]) == [2, 2]


@pytest.mark.parametrize("content_type", ["PARQUET", "CSV", "TSV", "UNESCAPED_TSV", "PSV", "JSON"])
def test_daft_multi_format_reading(catalogs, content_type):
    """Even Parquet with ``schema=None`` makes a schemaless table; from_manifest_table reads
    the listed files back in order."""
    import daft

    cat = catalogs.add()
    base = five_rows()
    _write(cat, base, "multi_format_test_table", content_type, schema=None)
    manifest = dc.read_table(table="multi_format_test_table", namespace=NS, catalog=cat)
    assert isinstance(manifest, daft.DataFrame)
    paths = manifest.collect().to_pandas()["path"]
    assert not any(p.startswith(catalogs.root(cat)) for p in paths)  # relative to the root
    rows = (
        dc.from_manifest_table(
            manifest_table=manifest,
            read_as=dtype("DAFT"),
            schema=dc.Schema.of(base.schema),
            catalog=cat,
            max_parallelism=1,
        )
        .collect()
        .to_pandas()
    )
    assert len(rows) == 5
    assert set(rows.columns) == {"id", "name", "value", "category"}
    assert rows["id"].tolist() == [1, 2, 3, 4, 5]
    assert rows["name"].tolist() == ["Alice", "Bob", "Charlie", "David", "Eve"]
    assert rows["category"].tolist() == ["A", "B", "A", "C", "B"]


def _batch(i):
    ids = [3 * i + 1, 3 * i + 2, 3 * i + 3]
    return pa.table(
        {
            "id": ids,
            "name": [f"name_{n}" for n in ids],
            "value": [n * 10.1 for n in ids],
            "category": ["A", "B", "C"],
        }
    )


@pytest.mark.parametrize(
    "content_types",
    [["PARQUET", "CSV"], ["PARQUET", "JSON"], ["CSV", "JSON"], ["PARQUET", "CSV", "JSON"]],
    ids="+".join,
)
def test_daft_mixed_content_type_reading(cat, content_types):
    import daft

    formats = [ctype(c) for c in content_types]
    for i, content_type in enumerate(content_types):
        _write(
            cat,
            _batch(i),
            "mixed_format_test_table",
            content_type,
            "AUTO",
            content_types=formats,
            schema=None,
        )
    manifest = dc.read_table(table="mixed_format_test_table", namespace=NS, catalog=cat)
    assert isinstance(manifest, daft.DataFrame)
    assert "path" in manifest.collect().to_pandas().columns
    rows = (
        dc.from_manifest_table(
            manifest_table=manifest,
            read_as=dtype("DAFT"),
            schema=dc.Schema.of(_batch(0).schema),
            catalog=cat,
            max_parallelism=1,
        )
        .collect()
        .to_pandas()
    )
    n = 3 * len(content_types)
    assert len(rows) == n
    assert set(rows.columns) == {"id", "name", "value", "category"}
    assert set(rows["id"]) == set(range(1, n + 1))
    assert set(rows["name"]) == {f"name_{i}" for i in range(1, n + 1)}
