"""Write modes, schema evolution, defaults and table descriptions on real Delta tables."""

from __future__ import annotations

import pandas as pd
import pyarrow as pa
import pytest

import workbench as dc


def keyed_schema(*extra: dc.Field) -> dc.Schema:
    return dc.Schema.of([dc.Field.of(pa.field("id", pa.int64()), is_merge_key=True), *extra])


def rows(table: str, **kwargs) -> list[dict]:
    return dc.read(table, read_as=dc.DatasetType.PYARROW, **kwargs).sort_by("id").to_pylist()


def test_auto_mode_creates_then_merges_keyed_tables(catalog):
    result = dc.write(pa.table({"id": [1, 2], "v": ["a", "b"]}), "t", schema=keyed_schema())
    assert (result.mode, result.version, result.rows_added) == ("create", 0, 2)
    result = dc.write(pa.table({"id": [2, 3], "v": ["B", "c"]}), "t")
    assert (result.mode, result.rows_added, result.rows_updated) == ("merge", 1, 1)
    assert rows("t") == [{"id": 1, "v": "a"}, {"id": 2, "v": "B"}, {"id": 3, "v": "c"}]


def test_partial_merge_keeps_other_columns_and_fills_future_default(catalog):
    schema = keyed_schema(
        dc.Field.of(pa.field("paid", pa.float64()), future_default=0.0),
        dc.Field.of(pa.field("method", pa.string())),
    )
    dc.write(pd.DataFrame({"id": [1, 2], "method": ["card", "cash"]}), "fin", schema=schema)
    assert [r["paid"] for r in rows("fin")] == [0.0, 0.0]
    dc.write(pd.DataFrame({"id": [2, 3], "paid": [9.5, 1.25]}), "fin", mode="merge")
    dc.write(pd.DataFrame({"id": [4], "method": ["gift"]}), "fin", mode="merge")
    assert rows("fin") == [
        {"id": 1, "paid": 0.0, "method": "card"},
        {"id": 2, "paid": 9.5, "method": "cash"},
        {"id": 3, "paid": 1.25, "method": None},
        {"id": 4, "paid": 0.0, "method": "gift"},
    ]


def test_replace_keeps_schema_and_keys(catalog):
    dc.write(pd.DataFrame({"id": [1, 2], "v": ["a", "b"]}), "t", schema=keyed_schema())
    result = dc.write(pd.DataFrame({"id": [9]}), "t", mode="replace")
    assert (result.rows_added, result.rows_removed) == (1, 2)
    assert rows("t") == [{"id": 9, "v": None}]
    assert dc.get_table("t").merge_keys == ["id"]


def test_dedupe_last_keeps_the_last_row_of_each_key(catalog):
    dc.write(pd.DataFrame({"id": [1], "v": ["a"]}), "t", schema=keyed_schema())
    dc.write(pd.DataFrame({"id": [2, 2, 1], "v": ["x", "y", "z"]}), "t", dedupe="last")
    assert rows("t") == [{"id": 1, "v": "z"}, {"id": 2, "v": "y"}]
    dc.write(pd.DataFrame({"id": [3, 3], "v": ["first", "second"]}), "t", dedupe="first")
    assert rows("t")[-1] == {"id": 3, "v": "first"}


def test_composite_merge_keys(catalog):
    schema = dc.Schema.of(
        [
            dc.Field.of(pa.field("site", pa.string()), is_merge_key=True),
            dc.Field.of(pa.field("day", pa.int32()), is_merge_key=True),
            dc.Field.of(pa.field("visits", pa.int64())),
        ]
    )

    def days(*values):
        return pd.array(values, dtype="int32")

    dc.write(
        pd.DataFrame({"site": ["a", "a"], "day": days(1, 2), "visits": [5, 6]}), "v", schema=schema
    )
    dc.write(pd.DataFrame({"site": ["a", "b"], "day": days(2, 2), "visits": [60, 7]}), "v")
    dc.write(pd.DataFrame({"site": ["a"], "day": days(1)}), "v", mode="delete")
    got = dc.read("v", read_as=dc.DatasetType.PANDAS).sort_values(["site", "day"])
    assert got.values.tolist() == [["a", 2, 60], ["b", 2, 7]]


def test_widening_int32_to_int64_rewrites_and_keeps_history(catalog):
    dc.write(pa.table({"n": pa.array([1, 2], pa.int32())}), "w")
    result = dc.write(pa.table({"n": pa.array([2**40], pa.int64())}), "w")
    assert result.schema_changes == ("~n",)
    assert dc.get_table("w").schema.field("n").type == pa.int64()
    assert dc.read("w", read_as=dc.DatasetType.PYARROW).column("n").to_pylist() == [1, 2, 2**40]
    old = dc.read("w", read_as=dc.DatasetType.PYARROW, version=0)
    assert old.column("n").type == pa.int32() and old.num_rows == 2


def test_narrower_data_is_cast_to_the_table_type(catalog):
    dc.write(
        pa.table({"n": pa.array([1], pa.int64()), "s": pa.array(["a"], pa.large_string())}), "c"
    )
    dc.write(pa.table({"n": pa.array([2], pa.int8()), "s": pa.array(["b"], pa.string())}), "c")
    info = dc.get_table("c")
    assert info.schema.field("n").type == pa.int64() and info.version == 1


def test_versions_and_table_description(catalog):
    dc.write(pd.DataFrame({"id": [1, 2, 3]}), "t")
    dc.write(pd.DataFrame({"id": [4]}), "t", mode="append")
    info = dc.get_table("t")
    assert (info.version, info.row_count, info.file_count) == (1, 4, 2)
    assert info.size_bytes > 0 and not info.schemaless
    assert "rows" in info._repr_html_() and "version: 1" in str(info)
    assert dc.read("t", read_as=dc.DatasetType.PANDAS, version=0)["id"].tolist() == [1, 2, 3]
    assert dc.read("t", read_as=dc.DatasetType.PANDAS, columns=["id"]).shape == (4, 1)


def test_several_catalogs_are_independent(tmp_path):
    dc.init(
        catalogs={
            "staging": dc.Catalog(dc.CatalogProperties(str(tmp_path / "staging"))),
            "prod": dc.Catalog(dc.CatalogProperties(str(tmp_path / "prod"))),
        }
    )
    dc.write(pd.DataFrame({"id": [1]}), "t", catalog="staging")
    assert dc.table_exists("t", catalog="staging") and not dc.table_exists("t", catalog="prod")
    assert dc.get_catalog().root.endswith("staging"), "the first catalog is the default"
    dc.write(pd.DataFrame({"id": [2]}), "t", catalog="prod")
    assert dc.read("t", catalog="prod", read_as=dc.DatasetType.PANDAS)["id"].tolist() == [2]


def test_namespace_lifecycle(catalog):
    assert [n.name for n in dc.list_namespaces()] == ["default"]  # every catalog has it
    dc.create_namespace("sales")
    dc.create_namespace("sales")  # idempotent, as re-running a notebook cell expects
    dc.write(pd.DataFrame({"id": [1]}), "orders", namespace="sales")
    dc.write(pd.DataFrame({"id": [1]}), "t", namespace="ops", auto_create_namespace=True)
    assert [n.name for n in dc.list_namespaces()] == ["default", "ops", "sales"]
    assert next(t.url for t in dc.list_tables("sales")).endswith("/sales/orders")
    dc.drop_namespace("sales", purge=True)
    assert not dc.namespace_exists("sales") and dc.namespace_exists("ops")


def test_tables_are_open_delta_tables_for_other_engines(catalog):
    import daft
    import deltalake
    import polars as pl

    off = {"delta.enableDeletionVectors": "false"}  # plain Parquet files for every reader
    dc.write(
        pa.table({"id": [1, 2], "v": ["a", "b"]}),
        "open",
        schema=keyed_schema(),
        table_properties=off,
    )
    path = f"{catalog.root}/default/open"
    assert deltalake.DeltaTable(path).protocol().min_reader_version == 1
    assert sorted(pl.read_delta(path)["id"].to_list()) == [1, 2]
    assert sorted(daft.read_deltalake(path).to_pydict()["id"]) == [1, 2]
    field = deltalake.DeltaTable(path).schema().fields[0]
    assert field.metadata["workbench.mergeKey"] == "true", "merge keys travel with the table"


@pytest.mark.parametrize("fmt", list(dc.ContentType))
def test_schemaless_tables_store_each_content_type(catalog, fmt):
    dc.create_table(
        "files", table_properties={dc.TableProperty.SUPPORTED_READER_TYPES: [dc.DatasetType.PANDAS]}
    )
    data = pa.table({"id": [1, 2], "s": ["x", "y"]})
    dc.write(data, "files", content_type=fmt)
    manifest = dc.read("files", read_as=dc.DatasetType.PYARROW)
    assert manifest.column("path").to_pylist()[0].endswith("." + fmt.extension)
    back = dc.from_manifest_table(manifest, read_as=dc.DatasetType.PYARROW)
    assert back.column("s").to_pylist() == ["x", "y"]


def test_schemaless_rejects_formats_a_supported_reader_cannot_read(catalog):
    dc.create_table("files")
    dc.write(pa.table({"id": [1]}), "files", content_type=dc.ContentType.ORC)  # no readers named
    readers = {dc.TableProperty.SUPPORTED_READER_TYPES: [dc.DatasetType.DAFT]}
    dc.create_table("daft_files", table_properties=readers)
    with pytest.raises(dc.TableValidationError, match="ORC"):
        dc.write(pa.table({"id": [1]}), "daft_files", content_type=dc.ContentType.ORC)


def test_append_of_many_record_batches_keeps_row_order(catalog):
    batches = [pa.table({"n": list(range(i * 3, i * 3 + 3))}) for i in range(8)]
    data = pa.concat_tables(batches)
    assert data.column("n").num_chunks == 8
    dc.write(data, "ordered")
    dc.write(pa.concat_tables(batches), "ordered", mode="append")
    assert dc.read("ordered", read_as=dc.DatasetType.PYARROW).column("n").to_pylist() == [
        *range(24),
        *range(24),
    ]


def test_merge_keys_and_columns_with_capitals_and_spaces(catalog):
    schema = dc.Schema.of([dc.Field.of(pa.field("User ID", pa.int64()), is_merge_key=True)])
    dc.write(pd.DataFrame({"User ID": [1, 2], "Full Name": ["a", "b"]}), "people", schema=schema)
    dc.write(pd.DataFrame({"User ID": [2, 3], "Full Name": ["B", "c"]}), "people")
    dc.write(pd.DataFrame({"User ID": [1]}), "people", mode="delete")
    got = dc.read("people", read_as=dc.DatasetType.PYARROW).sort_by("User ID").to_pylist()
    assert got == [{"User ID": 2, "Full Name": "B"}, {"User ID": 3, "Full Name": "c"}]
