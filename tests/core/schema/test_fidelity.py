"""Data fidelity: what is read back is what was written and committed, exactly."""

from __future__ import annotations

import glob
import os
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timezone
from decimal import Decimal

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from deltalake import DeltaTable, write_deltalake

import workbench as dc
from tests.conftest import fail_log_commits
from tests.delta_readers import delta_rows, duckdb_delta_scan, standard_json_log
from workbench.exceptions import SchemaValidationError, TableVersionNotFoundError, TimeTravelError

KEYED = dc.Schema.of(
    [
        dc.Field.of(pa.field("id", pa.int64()), is_merge_key=True),
        dc.Field.of(pa.field("name", pa.string())),
    ]
)


def extension_frame() -> pd.DataFrame:
    """A frame of pandas extension and non-default dtypes, with nulls."""
    return pd.DataFrame(
        {
            "big": pd.array([1, None, 2**53 + 1], dtype="Int64"),
            "small": pd.array([1, None, 3], dtype="UInt16"),
            "ratio": pd.array([1.5, None, 2.0], dtype="Float64"),
            "flag": pd.array([True, None, False], dtype="boolean"),
            "text": pd.array(["a", None, "c"], dtype="string"),
            "level": pd.Categorical(
                ["lo", "hi", "lo"], categories=["lo", "mid", "hi"], ordered=True
            ),
            "city": pd.Categorical(["Oslo", None, "Lima"]),
            "local": pd.to_datetime(["2024-03-31 01:30", "2024-10-27 02:30", None]).tz_localize(
                "Europe/Paris", ambiguous=[True, True, True]
            ),
            "ns": pd.to_datetime(["2024-01-01 00:00:00.000001"] * 3).as_unit("ns"),
            "byte": np.array([1, 2, 255], dtype="uint8"),
            "plain": ["x", "y", "z"],
        }
    )


def test_nullable_integers_never_pass_through_floats(catalog):
    frame = pd.DataFrame({"v": pd.array([None, 2**53 + 1], dtype="Int64")})
    dc.write(frame, "t")
    back = dc.read("t", read_as=dc.DatasetType.PANDAS)
    assert str(back["v"].dtype) == "Int64"
    assert back["v"].iloc[1] == 2**53 + 1
    as_numpy = dc.read("t", read_as=dc.DatasetType.NUMPY)
    assert as_numpy[1, 0] == 2**53 + 1 and as_numpy.dtype != np.float64
    # Integers with nulls written from Arrow (no pandas dtype noted) read as nullable ints too.
    dc.write(pa.table({"w": pa.array([None, 2**60], pa.int64())}), "arrow_ints")
    ints = dc.read("arrow_ints", read_as=dc.DatasetType.PANDAS)["w"]
    assert str(ints.dtype) == "Int64" and ints.iloc[1] == 2**60


def test_pandas_dtypes_round_trip_through_create_merge_and_delete(catalog):
    frame = extension_frame()
    dc.write(frame, "t")
    pd.testing.assert_frame_equal(dc.read("t", read_as=dc.DatasetType.PANDAS), frame)
    assert dc.read("t", read_as=dc.DatasetType.PYARROW).schema.field("local").type.tz == (
        "Europe/Paris"
    )
    keyed = frame.assign(id=[1, 2, 3])
    schema = dc.Schema.of([dc.Field.of(pa.field("id", pa.int64()), is_merge_key=True)])
    dc.write(keyed, "k", schema=schema)
    dc.write(keyed.iloc[[1]].assign(big=pd.array([7], dtype="Int64")), "k", mode="merge")
    dc.write(pd.DataFrame({"id": [3]}), "k", mode="delete")
    back = dc.read("k", read_as=dc.DatasetType.PANDAS).sort_values("id", ignore_index=True)
    expected = keyed.iloc[:2].copy()
    expected.loc[1, "big"] = 7
    pd.testing.assert_frame_equal(back[expected.columns], expected.reset_index(drop=True))


def test_named_index_is_written_as_a_column_and_a_default_index_is_dropped(catalog):
    dc.write(pd.DataFrame({"id": [1, 2], "v": [3, 4]}).set_index("id"), "named")
    assert dc.read("named", read_as=dc.DatasetType.PANDAS).to_dict("list") == {
        "id": [1, 2],
        "v": [3, 4],
    }
    dc.write(pd.DataFrame({"v": [5, 6, 7]}).iloc[1:], "unnamed")
    assert dc.get_table("unnamed").schema.names == ["v"]
    two = pd.DataFrame({"a": [1, 2], "b": ["x", "y"], "v": [0.5, 1.5]}).set_index(["a", "b"])
    dc.write(two, "multi")
    assert dc.get_table("multi").schema.names == ["a", "b", "v"]
    half = two.copy()
    half.index = half.index.set_names(["a", None])
    with pytest.raises(SchemaValidationError, match="named and unnamed levels"):
        dc.write(half, "half")
    clash = pd.DataFrame({"v": [1]}, index=pd.Index([9], name="v"))
    with pytest.raises(SchemaValidationError, match="same name as a column"):
        dc.write(clash, "clash")


def same_storage(stored: pa.DataType, declared: pa.DataType) -> bool:
    """A file's Arrow type stores the declared Delta type: equal up to offset widths (a Delta
    string may be written as large_string) and list item names; never a view type."""
    t = pa.types
    if t.is_string_view(stored) or t.is_binary_view(stored) or t.is_list_view(stored):
        return False
    if stored == declared:
        return True
    if t.is_large_string(stored) or t.is_large_binary(stored):
        return (stored == pa.large_string() and declared == pa.string()) or (
            stored == pa.large_binary() and declared == pa.binary()
        )
    if (t.is_list(stored) or t.is_large_list(stored)) and t.is_list(declared):
        return same_storage(stored.value_type, declared.value_type)
    return False


def files_use_declared_types(root: str, name: str, namespace: str = "default") -> None:
    """Every data file of the table's current version stores the declared column types."""
    info = dc.get_table(name, namespace=namespace)
    declared = {f.name: f.type for f in info.schema}
    storage = dc.get_catalog().storage
    for uri in dc.delta_table(name, namespace=namespace).file_uris():
        filesystem, path = storage.locate(uri)
        for column in pq.read_schema(path, filesystem=filesystem):
            assert same_storage(column.type, declared[column.name]), (uri, column)


def test_every_reader_reads_a_merged_and_deleted_table_without_vectors(catalog):
    import daft
    import duckdb
    import polars as pl

    off = {"delta.enableDeletionVectors": "false"}  # copy-on-write: plain Parquet files
    dc.write(
        pd.DataFrame({"id": [1, 2, 3], "name": ["a", "b", "c"]}),
        "t",
        schema=KEYED,
        table_properties=off,
    )
    dc.write(pd.DataFrame({"id": [2, 4], "name": ["B", "d"]}), "t", mode="merge")
    dc.write(pd.DataFrame({"id": [1]}), "t", mode="delete")
    files_use_declared_types(catalog.root, "t")
    expected = [(2, "B"), (3, "c"), (4, "d")]
    info = dc.get_table("t")
    via_daft = daft.read_deltalake(info.uri).sort("id").to_pydict()
    assert list(zip(via_daft["id"], via_daft["name"], strict=True)) == expected
    via_polars = pl.read_delta(info.uri).sort("id").rows()
    assert via_polars == expected
    via_duckdb = duckdb.sql(
        f"SELECT id, name FROM read_parquet({DeltaTable(info.uri).file_uris()!r}) ORDER BY id"
    ).fetchall()
    assert via_duckdb == expected
    assert sorted(dc.read("t").to_pydict()["id"]) == [2, 3, 4]  # dc.read as Daft, the default


def test_readers_that_apply_vectors_read_a_merged_and_deleted_keyed_table(catalog):
    import daft
    import polars as pl

    dc.write(pd.DataFrame({"id": [1, 2, 3], "name": ["a", "b", "c"]}), "t", schema=KEYED)
    dc.write(pd.DataFrame({"id": [2, 4], "name": ["B", "d"]}), "t", mode="merge")
    dc.write(pd.DataFrame({"id": [1]}), "t", mode="delete")
    expected = [(2, "B"), (3, "c"), (4, "d")]
    info = dc.get_table("t")
    assert pl.read_delta(info.uri).sort("id").rows() == expected
    via_deltalake = delta_rows(DeltaTable(info.uri)).sort_by("id").to_pylist()
    assert [(r["id"], r["name"]) for r in via_deltalake] == expected
    assert sorted(dc.read("t").to_pydict()["id"]) == [2, 3, 4]
    with pytest.raises(NotImplementedError, match="deletion vectors"):  # refuses, never wrong
        daft.read_deltalake(info.uri).collect()


def test_only_versions_a_committed_transaction_recorded_are_readable(catalog):
    dc.write(pd.DataFrame({"id": [1], "name": ["a"]}), "t", schema=KEYED)
    path = dc.get_table("t").uri
    # A version written into the folder outside the catalog, then the next catalog commit,
    # which undoes it.
    write_deltalake(path, pa.table({"id": [66], "name": ["ghost"]}), mode="append")
    dc.write(pd.DataFrame({"id": [2], "name": ["b"]}), "t")
    assert DeltaTable(path).version() == 2
    with pytest.raises(TableVersionNotFoundError, match="readable versions are 0, 2"):
        dc.read("t", version=1)
    with pytest.raises(TableVersionNotFoundError):
        dc.diff("t", before=1)
    assert dc.read("t", version=2, read_as=dc.DatasetType.PYARROW).column("id").to_pylist() == [
        1,
        2,
    ]


def test_a_failed_write_adds_no_version_at_all(catalog, monkeypatch):
    dc.write(pd.DataFrame({"id": [1], "name": ["a"]}), "t", schema=KEYED)
    fail_log_commits(monkeypatch, OSError("disk full"))
    with pytest.raises(dc.WriteFailedError):
        dc.write(pd.DataFrame({"id": [1], "extra": [5]}), "t")  # evolves the schema too
    monkeypatch.undo()
    assert DeltaTable(dc.get_table("t").uri).version() == 0
    with pytest.raises(TableVersionNotFoundError):
        dc.read("t", version=1)


@pytest.fixture
def away_from_utc(monkeypatch):
    """Local time in a zone with an offset and summer time, so naive times are tested for real."""
    monkeypatch.setenv("TZ", "America/Sao_Paulo")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def test_time_travel_points_resolve_exactly(catalog, away_from_utc):
    for i in range(8):
        dc.write(pd.DataFrame({"v": [i]}), "t", mode="add" if i else "create")
    history = dc.transactions(read_as=dc.DatasetType.PANDAS)
    for end in history["end_time"]:
        expected = dc.read("t", as_of=int(end), read_as=dc.DatasetType.PYARROW).num_rows
        stamp = pd.Timestamp(int(end), tz="UTC")
        naive_local = stamp.tz_convert(datetime.now().astimezone().tzinfo).tz_localize(None)
        for point in (end, np.int64(end), stamp, stamp.tz_convert("Asia/Tokyo"), naive_local):
            got = dc.read("t", as_of=point, read_as=dc.DatasetType.PYARROW).num_rows
            assert got == expected, point
    # A naive datetime and a naive pandas Timestamp are the same (local) instant.
    naive = datetime.now()
    aware = naive.astimezone()
    rows = {
        dc.read("t", as_of=p, read_as=dc.DatasetType.PYARROW).num_rows
        for p in (naive, pd.Timestamp(naive), aware, aware.astimezone(timezone.utc))
    }
    assert len(rows) == 1
    with pytest.raises(TimeTravelError, match="future"):
        dc.read("t", as_of=time.time_ns() + 60 * 10**9)
    with pytest.raises(TimeTravelError, match="future"):
        dc.read("t", as_of=datetime.now() + pd.Timedelta(hours=1))


def test_delta_table_helper_shows_the_committed_version_during_a_transaction(catalog):
    dc.write(pd.DataFrame({"id": [1], "name": ["a"]}), "t", schema=KEYED)
    with dc.transaction():
        dc.write(pd.DataFrame({"id": [2], "name": ["b"]}), "t")
        # Another thread is outside this transaction, like any other reader.
        with ThreadPoolExecutor(1) as pool:
            outside = pool.submit(dc.delta_table, "t").result()
        assert delta_rows(outside).column("id").to_pylist() == [1]
        # Nothing of the open transaction is in the table folder: its newest version is the
        # committed one.
        assert DeltaTable(dc.get_table("t").uri).version() == outside.version()
    assert sorted(delta_rows(dc.delta_table("t")).column("id").to_pylist()) == [1, 2]


def test_long_string_keys_are_never_pruned_by_truncated_statistics(catalog):
    """A key equal to a file's maximum is found even when writers truncate long statistics."""
    keys = ["k" + "x" * 60 + str(i) for i in range(5)]
    schema = dc.Schema.of([dc.Field.of(pa.field("k", pa.string()), is_merge_key=True)])
    dc.write(pa.table({"k": keys, "v": [0] * 5}), "t", schema=schema)
    dc.write(pa.table({"k": [keys[-1]], "v": [9]}), "t")
    rows = dc.read("t", read_as=dc.DatasetType.PYARROW).to_pylist()
    assert len(rows) == 5 and {r["k"]: r["v"] for r in rows}[keys[-1]] == 9
    for path in glob.glob(os.path.join(dc.get_table("t").uri, "*.parquet")):
        assert pq.read_schema(path).field("k").type == pa.string()


def test_arrow_types_that_delta_stores_differently_read_back_as_written(catalog):
    import datetime as dt
    import uuid

    import polars as pl

    written = pa.table(
        {
            "u8": pa.array([1, 255], pa.uint8()),
            "u32": pa.array([0, 2**32 - 1], pa.uint32()),
            "half": pa.array([np.float16(1.5), None], pa.float16()),
            "day": pa.array([dt.datetime(2024, 1, 2), None], pa.date64()),
            "secs": pa.array([0, 86_400], pa.timestamp("s", tz="Asia/Kolkata")),
            "nanos": pa.array([1_000, 2_000], pa.timestamp("ns")),
            "label": pa.array(["a", "b"]).dictionary_encode(),
            "id": pa.ExtensionArray.from_storage(
                pa.uuid(), pa.array([uuid.uuid4().bytes, uuid.uuid4().bytes], pa.binary(16))
            ),
        }
    )
    dc.write(written, "t")
    back = dc.read("t", read_as=dc.DatasetType.PYARROW)
    assert back.schema.remove_metadata() == written.schema.remove_metadata()
    assert back.to_pylist() == written.to_pylist()
    assert pl.from_arrow(back).schema == dc.read("t", read_as=dc.DatasetType.POLARS).schema
    stored = dc.get_table("t").schema  # Delta's own types, as other engines read them
    assert stored.field("u8").type == pa.int16() and stored.field("secs").type.tz == "UTC"


def test_uint64_is_stored_losslessly_and_reads_back_as_uint64(catalog):
    """Delta has no unsigned 64-bit integer: the column is a decimal(20,0) noted as uint64, so
    every value up to 2**64 - 1 survives; other engines see the decimal."""
    big = 2**64 - 1
    dc.write(pa.table({"u": pa.array([big, 0, None], pa.uint64())}), "arrow")
    back = dc.read("arrow", read_as=dc.DatasetType.PYARROW)
    assert back.schema.field("u").type == pa.uint64()
    assert back.column("u").to_pylist() == [big, 0, None]
    assert dc.get_table("arrow").schema.field("u").type == pa.decimal128(20, 0)
    assert DeltaTable(dc.get_table("arrow").uri).to_pyarrow_table()["u"].to_pylist() == [
        Decimal(big),
        Decimal(0),
        None,
    ]
    frames = {
        "numpy": pd.DataFrame({"u": np.array([big, 5], dtype="uint64")}),
        "nullable": pd.DataFrame({"u": pd.array([5, None], dtype="UInt64")}),
    }
    for name, frame in frames.items():
        dc.write(frame, name)
        pd.testing.assert_frame_equal(dc.read(name, read_as=dc.DatasetType.PANDAS), frame)


def test_pandas_arrow_dtypes_with_parameters_read_back_as_written(catalog):
    """pandas ArrowDtype columns of decimals, structs, lists of structs and maps (whose dtype
    names pandas cannot parse back) read as they were written, also after a merge."""
    import decimal

    def arrow(values, arrow_type):
        return pd.array(values, dtype=pd.ArrowDtype(arrow_type))

    frame = pd.DataFrame(
        {
            "id": [1, 2, 3],
            "price": arrow(
                [decimal.Decimal("1.10"), None, decimal.Decimal("-3.25")], pa.decimal128(10, 2)
            ),
            "point": arrow(
                [{"x": 1, "y": "a"}, None, {"x": 3, "y": None}],
                pa.struct([("x", pa.int64()), ("y", pa.string())]),
            ),
            "tags": arrow([[{"k": 1}], [], None], pa.list_(pa.struct([("k", pa.int64())]))),
            "attrs": arrow([[("a", 1)], None, []], pa.map_(pa.string(), pa.int64())),
        }
    )
    keyed = dc.Schema.of([dc.Field.of(pa.field("id", pa.int64()), is_merge_key=True)])
    dc.write(frame.iloc[:2], "t", schema=keyed)
    dc.write(frame.iloc[1:], "t")
    back = dc.read("t", read_as=dc.DatasetType.PANDAS).sort_values("id").reset_index(drop=True)
    pd.testing.assert_frame_equal(back, frame)


def test_durations_are_stored_losslessly_and_read_back(catalog):
    """Delta has no duration type: a duration column is stored as int64 in its unit, noted,
    and read back as the duration it was (pandas Timedelta too); other engines see the int."""
    frame = pd.DataFrame({"id": [1, 2, 3], "took": pd.to_timedelta(["1s", None, "2 days 1ns"])})
    dc.write(frame, "t")
    dc.write(frame.iloc[:1], "t", mode="append")
    back = dc.read("t", read_as=dc.DatasetType.PANDAS)
    pd.testing.assert_frame_equal(back, pd.concat([frame, frame.iloc[:1]], ignore_index=True))
    arrow = pa.table({"d": pa.array([5, None], pa.duration("ms"))})
    dc.write(arrow, "a")
    assert dc.read("a", read_as=dc.DatasetType.PYARROW).equals(arrow.replace_schema_metadata())
    assert dc.get_table("a").schema.field("d").type == pa.int64()


def test_uint64_merge_keys_match_exactly(catalog):
    keyed = dc.Schema.of(
        [dc.Field.of(pa.field("id", pa.uint64()), is_merge_key=True), pa.field("v", pa.string())]
    )
    big = 2**64 - 1
    dc.write(pa.table({"id": pa.array([1, big], pa.uint64()), "v": ["a", "b"]}), "t", schema=keyed)
    dc.write(pa.table({"id": pa.array([big, 2**63], pa.uint64()), "v": ["B", "c"]}), "t")
    dc.write(pa.table({"id": pa.array([1], pa.uint64())}), "t", mode="delete")
    rows = dc.read("t", read_as=dc.DatasetType.PYARROW).sort_by("id")
    assert rows.schema.field("id").type == pa.uint64()
    assert rows.to_pylist() == [{"id": 2**63, "v": "c"}, {"id": big, "v": "B"}]
    with pytest.raises(dc.SchemaValidationError, match=r"uint64|decimal"):
        dc.write(pa.table({"id": pa.array([-1], pa.int64()), "v": ["x"]}), "t")


def test_declaring_a_schema_keeps_the_pandas_dtypes_of_the_data(catalog):
    frame = pd.DataFrame(
        {
            "id": [1, 2],
            "flag": pd.array([True, None], dtype="boolean"),
            "kind": pd.Categorical(["a", "b"]),
        }
    )
    schema = dc.Schema.of(
        [
            dc.Field.of(pa.field("id", pa.int64()), is_merge_key=True),
            dc.Field.of(pa.field("flag", pa.bool_())),
        ]
    )
    dc.write(frame, "t", schema=schema)
    pd.testing.assert_frame_equal(dc.read("t", read_as=dc.DatasetType.PANDAS), frame)


def test_series_and_arrow_streams_are_datasets(catalog):
    import polars as pl

    dc.write(pd.Series([1, 2], name="a"), "from_pandas")
    dc.write(pl.Series("a", [3]), "from_pandas")
    reader = pa.RecordBatchReader.from_batches(
        pa.schema([("a", pa.int64())]), [pa.record_batch({"a": [4, 5]})]
    )
    dc.write(reader, "from_pandas")
    assert dc.read("from_pandas", read_as=dc.DatasetType.PYARROW).column("a").to_pylist() == [
        1,
        2,
        3,
        4,
        5,
    ]


def test_non_finite_floats_keep_a_tables_statistics_readable_by_other_readers(catalog):
    import math

    import polars as pl

    keyed = dc.Schema.of(
        [
            dc.Field.of(pa.field("id", pa.int64()), is_merge_key=True),
            dc.Field.of(pa.field("x", pa.float64())),
        ]
    )
    first = pa.table({"id": [1, 2, 3, 4], "x": [math.inf, -math.inf, math.nan, 1.0]})
    dc.write(first, "t", schema=keyed)  # Arrow keeps NaN a value (pandas would make it null)
    dc.write(pa.table({"id": [4, 5], "x": [math.nan, math.inf]}), "t", mode="merge")
    dc.write(pa.table({"id": [2]}), "t", mode="delete")  # a vector: stats kept as read
    expected = {1: math.inf, 3: math.nan, 4: math.nan, 5: math.inf}

    def same(rows: list[dict], keys: set[int] | None = None) -> bool:
        keys = set(expected) if keys is None else keys
        found = {r["id"]: r["x"] for r in rows}
        return found.keys() == keys and all(
            (math.isnan(expected[k]) and math.isnan(found[k])) or found[k] == expected[k]
            for k in keys
        )

    uri = dc.get_table("t").uri
    assert standard_json_log(uri) > 6
    assert same(delta_rows(DeltaTable(uri)).to_pylist())
    assert same(pl.read_delta(uri).to_dicts())
    assert same(duckdb_delta_scan(uri))
    assert same(dc.read("t", read_as="pyarrow").to_pylist())
    assert same(pl.scan_delta(uri).filter(pl.col("x") == math.inf).collect().to_dicts(), {1, 5})


def test_uuid_and_fixed_size_binary_columns_take_appends_and_read_back_as_written(catalog):
    """Delta has one binary type: a uuid or fixed_size_binary(n) column is stored as binary and
    noted, so appending the very same data again is no change of type, each column reads back
    as its own type (a uuid and a 16-byte column stay distinct), and data of one goes into the
    other without changing either."""
    import uuid

    def column(n: int, arrow_type: pa.DataType) -> pa.Array:
        return pa.array([uuid.uuid4().bytes for _ in range(n)], arrow_type)

    def raw(values: pa.ChunkedArray) -> list[bytes]:
        return [v.bytes if isinstance(v, uuid.UUID) else v for v in values.to_pylist()]

    first = pa.table({"id": [1], "u": column(1, pa.uuid()), "f": column(1, pa.binary(16))})
    dc.write(first, "x")
    assert dc.write(first, "x").schema_changes == ()
    crossed = pa.table({"id": [2], "u": column(1, pa.binary(16)), "f": column(1, pa.uuid())})
    assert dc.write(crossed, "x").schema_changes == ()
    back = dc.read("x", read_as=dc.DatasetType.PYARROW)
    assert back.schema.remove_metadata() == first.schema
    for name in ("u", "f"):
        written = [*raw(first.column(name)) * 2, *raw(crossed.column(name))]
        assert raw(back.column(name)) == written
    assert dc.read("x", version=0, read_as=dc.DatasetType.PYARROW).equals(back.slice(0, 1))
    assert dc.read("x").schema().to_pyarrow_schema().remove_metadata() == first.schema  # Daft
    # Delta's own type, which other readers see and every data file stores
    assert [f.type for f in dc.get_table("x").schema][1:] == [pa.binary(), pa.binary()]
    files_use_declared_types(catalog.root, "x")
    uri = dc.get_table("x").uri
    assert DeltaTable(uri).to_pyarrow_table().schema.field("u").type == pa.binary()


def test_pandas_uuid_columns_read_back_as_uuid_objects(catalog):
    import uuid

    frame = pd.DataFrame({"id": [1, 2], "u": [uuid.uuid4(), None]})
    dc.write(frame, "t")
    dc.write(frame.iloc[:1], "t")
    back = dc.read("t", read_as=dc.DatasetType.PANDAS)
    pd.testing.assert_frame_equal(back, pd.concat([frame, frame.iloc[:1]], ignore_index=True))
    assert isinstance(back["u"].iloc[0], uuid.UUID)
