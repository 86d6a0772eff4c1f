"""DeltaCAT README flows, rewritten with our own data: same API, same printed shape of results."""

from __future__ import annotations

import contextlib

import pandas as pd
import pyarrow as pa
import pytest

import workbench as dc
from workbench.exceptions import TableNotFoundError


def test_quick_start_adds_rows_and_evolves_schema(catalog, capsys):
    dc.write(pd.DataFrame({"id": [1, 2], "tree": ["oak", "elm"], "height": [20, 15]}), "trees")
    dc.read("trees").show()
    dc.write(
        pd.DataFrame({"id": [3], "tree": ["ash"], "height": [11], "park": ["Regent's"]}), "trees"
    )
    df = dc.read("trees")
    df.select("tree", "height", "park").show()
    out = capsys.readouterr().out
    assert "oak" in out and "Regent's" in out
    parks = dc.read("trees", read_as=dc.DatasetType.PYARROW).column("park").to_pylist()
    assert parks == [None, None, "Regent's"]


def test_idempotent_writes_with_replace_and_drop(catalog):
    first = pd.DataFrame({"id": [1, 2], "tree": ["oak", "elm"]})
    more = pd.DataFrame({"id": [3], "tree": ["ash"], "park": ["Hyde"]})
    for _ in range(3):
        mode = dc.TableWriteMode.CREATE
        if dc.table_exists("trees"):
            mode = dc.TableWriteMode.REPLACE
        dc.write(first, "trees", mode=mode)
        dc.write(more, "trees", mode=dc.TableWriteMode.ADD)
        assert dc.dataset_length(dc.read("trees")) == 3
    for _ in range(2):
        with contextlib.suppress(TableNotFoundError):
            dc.drop_table("trees")
        dc.write(first, "trees", mode=dc.TableWriteMode.CREATE)
        dc.write(more, "trees", mode=dc.TableWriteMode.ADD)
        assert dc.dataset_length(dc.read("trees")) == 3


def test_ordered_appends_read_back_in_write_order(catalog, capsys):
    batch = pd.DataFrame({"id": [10, 20], "colour": ["red", "blue"]})
    dc.create_table("paints", schema=dc.Schema.of(dc.dataset_schema(batch)))
    dc.write(batch, "paints", mode=dc.TableWriteMode.APPEND)
    for i in range(8):
        dc.write(
            pd.DataFrame({"id": [i], "colour": [f"c{i}"], "shade": ["dark"]}),
            "paints",
            mode=dc.TableWriteMode.APPEND,
        )
    result = dc.read("paints", read_as=dc.DatasetType.PANDAS)
    print(result)
    assert result["id"].tolist() == [10, 20, *range(8)]
    assert "shade" in capsys.readouterr().out


def test_schemaless_table_records_files_and_reads_them(catalog, capsys):
    dc.create_table("drops")
    dc.write(pd.DataFrame({"id": [1, 2], "v": ["a", "b"]}), "drops", mode=dc.TableWriteMode.APPEND)
    dc.write(
        pd.DataFrame({"id": [3], "v": ["c"], "w": [1.5]}), "drops", mode=dc.TableWriteMode.APPEND
    )
    manifest = dc.read("drops", read_as=dc.DatasetType.PANDAS)
    print(manifest)
    assert list(manifest.columns[:4]) == [
        "path",
        "meta_content_type",
        "meta_record_count",
        "meta_content_length",
    ]
    assert manifest["meta_record_count"].tolist() == [2, 1]
    structured = dc.from_manifest_table(manifest)
    structured.show()
    table = dc.to_pyarrow(structured)
    assert table.column("id").to_pylist() == [1, 2, 3]
    assert table.column("w").to_pylist() == [None, None, 1.5]
    assert manifest["meta_content_type"].tolist() == ["application/parquet"] * 2
    assert "Showing first 3 of 3 rows" in capsys.readouterr().out


def test_every_dataset_type_reads_and_writes(catalog):
    source = pa.table({"id": [4, 5], "bird": ["wren", "kite"]})
    dc.write(source, "birds")
    assert dc.read("birds", read_as=dc.DatasetType.PANDAS)["bird"].tolist() == ["wren", "kite"]
    assert dc.read("birds", read_as=dc.DatasetType.PYARROW).equals(
        source.cast(dc.read("birds", read_as=dc.DatasetType.PYARROW).schema)
    )
    assert dc.read("birds", read_as=dc.DatasetType.POLARS)["bird"].to_list() == ["wren", "kite"]
    assert dc.read("birds", read_as=dc.DatasetType.NUMPY).tolist() == [[4, "wren"], [5, "kite"]]
    files = dc.read("birds", read_as=dc.DatasetType.PYARROW_PARQUET)
    assert dc.to_pyarrow(files).column("bird").to_pylist() == ["wren", "kite"]
    assert dc.read("birds").to_pydict() == {"id": [4, 5], "bird": ["wren", "kite"]}
    for kind in (dc.DatasetType.DAFT, dc.DatasetType.PANDAS, dc.DatasetType.POLARS):
        name = f"birds_{kind.value}"
        dc.write(dc.from_pyarrow(source, kind), name)
        assert dc.read(name, read_as=dc.DatasetType.PYARROW).column("bird").to_pylist() == [
            "wren",
            "kite",
        ]
    dc.write(dc.from_pyarrow(source, dc.DatasetType.NUMPY), "birds_numpy")
    assert dc.read("birds_numpy", read_as=dc.DatasetType.PANDAS).values.tolist() == [
        [4, "wren"],
        [5, "kite"],
    ]


def test_ray_dataset_round_trip(ray_cluster, catalog):
    """On the test run's one Ray (a Ray shut down under a Daft that picked its Ray runner
    would fail every later Daft query of the process)."""
    source = pa.table({"id": [1, 2, 3], "fish": ["cod", "eel", "ray"]})
    dc.write(dc.from_pyarrow(source, dc.DatasetType.RAY_DATASET), "fish")
    ds = dc.read("fish", read_as=dc.DatasetType.RAY_DATASET)
    assert sorted(r["fish"] for r in ds.take_all()) == ["cod", "eel", "ray"]
    assert dc.dataset_length(ds) == 3


def test_mixed_content_types_with_limited_readers(catalog, capsys):
    row = pd.DataFrame({"id": [1], "plant": ["fern"]})
    formats = {dc.ContentType.PARQUET, dc.ContentType.AVRO, dc.ContentType.ORC}
    readers = [t for t in dc.DatasetType if formats <= t.readable_content_types()]
    assert dc.DatasetType.PANDAS in readers and dc.DatasetType.DAFT not in readers
    dc.write(
        row,
        "plants",
        content_type=dc.ContentType.PARQUET,
        table_properties={dc.TableProperty.SUPPORTED_READER_TYPES: readers},
    )
    for fmt in (dc.ContentType.AVRO, dc.ContentType.ORC, dc.ContentType.FEATHER):
        with pytest.warns(UserWarning, match="stored as Parquet"):
            dc.write(row, "plants", content_type=fmt)
    print(dc.read("plants", read_as=dc.DatasetType.PANDAS))
    assert capsys.readouterr().out.count("fern") == 4


def test_live_feature_enrichment_merges_and_deletes(catalog):
    schema = dc.Schema.of(
        [
            dc.Field.of(pa.field("cat_id", pa.int64()), is_merge_key=True),
            dc.Field.of(pa.field("nick", pa.string())),
        ]
    )
    dc.write(
        pd.DataFrame({"cat_id": [7, 8, 9], "nick": ["Mog", "Tab", "Pip"]}), "cats", schema=schema
    )
    dc.write(
        pd.DataFrame(
            {"cat_id": [7, 9, 10], "nick": ["Moggy", "Pippin", "Zed"], "lives": [9, 8, 7]}
        ),
        "cats",
    )
    df = dc.read("cats", read_as=dc.DatasetType.PANDAS).sort_values("cat_id")
    assert df["nick"].tolist() == ["Moggy", "Tab", "Pippin", "Zed"]
    assert df["lives"].isna().tolist() == [False, True, False, False]
    dc.write(pd.DataFrame({"cat_id": [8, 10]}), "cats", mode=dc.TableWriteMode.DELETE)
    df = dc.read("cats", read_as=dc.DatasetType.PANDAS).sort_values("cat_id")
    assert df["cat_id"].tolist() == [7, 9]


def test_namespaces_hold_same_named_tables(catalog, capsys):
    for ns in ("north", "south"):
        dc.create_namespace(ns)
    dc.write(pd.DataFrame({"id": [1], "town": ["York"]}), "places", namespace="north")
    dc.write(pd.DataFrame({"id": [2], "beach": ["Brighton"]}), "places", namespace="south")
    north = dc.read("places", namespace="north", read_as=dc.DatasetType.PANDAS)
    south = dc.read("places", namespace="south", read_as=dc.DatasetType.PANDAS)
    print(north)
    print(south)
    assert list(north.columns) == ["id", "town"] and list(south.columns) == ["id", "beach"]
    assert [n.name for n in dc.list_namespaces()] == ["default", "north", "south"]
    assert [t.name for t in dc.list_tables("north")] == ["places"]
    assert "Brighton" in capsys.readouterr().out
