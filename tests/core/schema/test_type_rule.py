"""One rule decides whether data of one type can go into a column of another: a conversion
that loses no value is always accepted (keys and other columns, every mode, every engine), and
the consistency types say only what happens beyond that."""

from __future__ import annotations

import pyarrow as pa
import pytest

import workbench as dc
from tests.conftest import tree_digest
from tests.engine_parity import payload

KEYED = dc.Schema.of(
    [dc.Field.of(pa.field("id", pa.int64()), is_merge_key=True), pa.field("v", pa.string())]
)
ENGINES = ["local", "daft", pytest.param("ray", marks=pytest.mark.ray)]
ENGINES += [pytest.param("spark", marks=pytest.mark.spark)]


def _rows(table: str) -> list[dict]:
    return dc.read(table, read_as=dc.DatasetType.PYARROW).sort_by("id").to_pylist()


@pytest.mark.parametrize("engine", ENGINES)
def test_a_narrower_key_goes_into_a_wider_key_in_every_keyed_mode(request, catalog, engine):
    spark = request.getfixturevalue("spark") if engine == "spark" else None
    if engine == "ray":
        request.getfixturevalue("ray_cluster")

    def narrow(ids, values=None):  # int32 keys (TYPES["extra"] is int32)
        data = {"extra": ids} if values is None else {"extra": ids, "v": values}
        ddl = "extra int" if values is None else "extra int, v string"
        frame = payload(engine, data, ddl, spark)
        if engine == "spark":
            return frame.withColumnRenamed("extra", "id")
        if engine == "daft":
            return frame.with_column_renamed("extra", "id")
        if engine == "ray":
            return frame.rename_columns({"extra": "id"})
        return frame.rename_columns(["id", *(["v"] if values is not None else [])])

    dc.write(pa.table({"id": [1, 2], "v": ["a", "b"]}), "t", schema=KEYED)
    dc.write(narrow([2, 3], ["B", "c"]), "t", mode="merge")
    dc.write(narrow([4], ["d"]), "t")  # AUTO: a merge
    dc.write(narrow([1]), "t", mode="delete")
    assert _rows("t") == [
        {"id": 2, "v": "B"},
        {"id": 3, "v": "c"},
        {"id": 4, "v": "d"},
    ]
    dc.write(narrow([7], ["g"]), "t", mode="replace")
    assert _rows("t") == [{"id": 7, "v": "g"}]
    assert dc.get_table("t").schema.field("id").type == pa.int64()


def test_validate_columns_take_lossless_data_and_keep_their_type(catalog):
    schema = dc.Schema.of(
        [
            dc.Field.of(pa.field("n", pa.int64()), consistency_type="validate"),
            dc.Field.of(pa.field("x", pa.float64()), consistency_type="validate"),
            dc.Field.of(pa.field("d", pa.decimal128(10, 2)), consistency_type="validate"),
            dc.Field.of(pa.field("s", pa.string()), consistency_type="validate"),
        ]
    )
    first = {"n": [1], "x": [1.5], "d": pa.array([1], pa.decimal128(10, 2)), "s": ["a"]}
    dc.write(pa.table(first), "t", schema=schema)
    narrower = {
        "n": pa.array([2], pa.int8()),
        "x": pa.array([2.5], pa.float32()),
        "d": pa.array([2], pa.decimal128(4, 1)),
        "s": pa.array(["b"], pa.large_string()),
    }
    dc.write(pa.table(narrower), "t")
    info = dc.get_table("t")
    assert [f.type for f in info.schema] == [f.type for f in schema]
    got = dc.read("t", read_as=dc.DatasetType.PYARROW)
    assert got.column("n").to_pylist() == [1, 2] and got.column("s").to_pylist() == ["a", "b"]
    before = tree_digest(catalog.root)
    for column, wider in (("n", pa.array([3.5])), ("x", pa.array([1], pa.int64()))):
        with pytest.raises(dc.SchemaValidationError, match="VALIDATE"):
            dc.write(pa.table({column: wider}), "t")
    assert tree_digest(catalog.root) == before


def test_a_table_default_of_validate_accepts_narrower_data(catalog):
    validate = {dc.TableProperty.DEFAULT_SCHEMA_CONSISTENCY_TYPE: dc.SchemaConsistencyType.VALIDATE}
    dc.write(pa.table({"n": [1]}), "t", table_properties=validate)
    dc.write(pa.table({"n": pa.array([2], pa.int16())}), "t")
    assert dc.read("t", read_as=dc.DatasetType.PYARROW).column("n").type == pa.int64()


def test_a_new_table_declared_wider_than_its_data_keeps_the_declared_type(catalog):
    dc.write(pa.table({"id": pa.array([1], pa.int32()), "v": ["a"]}), "t", schema=KEYED)
    assert dc.get_table("t").schema.field("id").type == pa.int64()
    with pytest.raises(dc.SchemaValidationError, match="int32"):
        narrow = dc.Schema.of([dc.Field.of(pa.field("id", pa.int32()), is_merge_key=True)])
        dc.write(pa.table({"id": [1]}), "u", schema=narrow)
    assert not dc.table_exists("u")


def test_unsigned_columns_take_and_widen_to_what_holds_every_value(catalog):
    """The rule compares unsigned columns by the type they were written as (Delta stores them
    as wider signed types or, for uint64, a decimal): narrower unsigned data goes in, a wider
    one widens the column, and signed data into an unsigned column is refused."""
    big = 2**64 - 1
    dc.write(pa.table({"u": pa.array([big], pa.uint64())}), "t")
    dc.write(pa.table({"u": pa.array([5], pa.uint32())}), "t", mode="append")
    dc.write(pa.table({"u": pa.array([6], pa.uint8())}), "t", mode="append")
    got = dc.read("t", read_as=dc.DatasetType.PYARROW)
    assert got.schema.field("u").type == pa.uint64()
    assert got.column("u").to_pylist() == [big, 5, 6]
    before = tree_digest(catalog.root)
    with pytest.raises(dc.SchemaValidationError, match=r"uint64.*int64|int64.*uint64"):
        dc.write(pa.table({"u": pa.array([-1], pa.int64())}), "t", mode="append")
    assert tree_digest(catalog.root) == before
    dc.write(pa.table({"u": pa.array([1], pa.uint32())}), "w")
    result = dc.write(pa.table({"u": pa.array([big], pa.uint64())}), "w", mode="append")
    assert result.schema_changes == ("~u",)
    got = dc.read("w", read_as=dc.DatasetType.PYARROW)
    assert got.schema.field("u").type == pa.uint64()
    assert got.column("u").to_pylist() == [1, big]
    dc.write(pa.table({"s": pa.array([1], pa.uint32())}), "s")
    dc.write(pa.table({"s": pa.array([-1], pa.int32())}), "s", mode="append")  # widens to int64
    got = dc.read("s", read_as=dc.DatasetType.PYARROW)
    assert got.schema.field("s").type == pa.int64() and got.column("s").to_pylist() == [1, -1]


UUID_KEYED = dc.Schema.of(
    [dc.Field.of(pa.field("id", pa.uuid()), is_merge_key=True), pa.field("v", pa.string())]
)


def _as_engine(engine: str, table: pa.Table, spark: object) -> object:
    """``table`` as the engine's data; Spark has no fixed-size binary, so its columns are
    binary."""
    if engine == "daft":
        import daft

        return daft.from_arrow(table)
    if engine == "ray":
        import ray.data

        return ray.data.from_arrow(table)
    if engine == "spark":
        types = {n: "string" if n == "v" else "binary" for n in table.column_names}
        plain = pa.schema(
            [(n, pa.string() if t == "string" else pa.binary()) for n, t in types.items()]
        )
        ddl = ", ".join(f"{n} {t}" for n, t in types.items())
        rows = table.cast(plain).to_pylist()
        return spark.createDataFrame([tuple(r.values()) for r in rows], ddl)
    return table


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("vectors", [True, False])
def test_uuid_merge_keys_match_in_every_keyed_mode(request, catalog, engine, vectors):
    """A uuid key (with a fixed_size_binary(16) column beside it) takes merges, partial merges
    and deletes from every engine and reads back as written; Spark, which has no fixed-size
    binary, writes binary whose values all have 16 bytes, which keeps both types."""
    import uuid

    spark = request.getfixturevalue("spark") if engine == "spark" else None
    if engine == "ray":
        request.getfixturevalue("ray_cluster")
    ids = [uuid.uuid4().bytes for _ in range(4)]

    def rows(keys: list[int], *columns: str) -> pa.Table:
        made = {
            "id": pa.array([ids[k] for k in keys], pa.uuid()),
            "f": pa.array([ids[k] for k in keys], pa.binary(16)),
            "v": [f"v{k}" for k in keys],
        }
        return pa.table({name: made[name] for name in ("id", *columns)})

    def data(keys: list[int], *columns: str) -> object:
        return _as_engine(engine, rows(keys, *columns), spark)

    off = {} if vectors else {"delta.enableDeletionVectors": False}
    dc.write(rows([0, 1], "f", "v"), "t", schema=UUID_KEYED, table_properties=off)
    dc.write(data([1, 2], "f", "v"), "t", mode="merge")
    dc.write(data([3], "f", "v"), "t")  # AUTO: a merge
    dc.write(data([2], "v"), "t", mode="merge")  # partial: f kept from the stored row
    dc.write(data([0]), "t", mode="delete")
    got = dc.read("t", read_as=dc.DatasetType.PYARROW)
    raw = {
        name: [v.bytes if isinstance(v, uuid.UUID) else v for v in got.column(name).to_pylist()]
        for name in ("id", "f")
    }
    found = sorted(zip(raw["id"], raw["f"], got.column("v").to_pylist(), strict=True))
    assert found == sorted((ids[k], ids[k], f"v{k}") for k in (1, 2, 3))
    assert [got.schema.field(n).type for n in ("id", "f")] == [pa.uuid(), pa.binary(16)]


def test_other_binary_data_widens_a_fixed_width_column_without_rewriting_it(catalog):
    """Binary data goes into a fixed_size_binary(n) or uuid column when every value has n
    bytes; another width does not fit: the column widens to binary (Delta's type, so no stored
    row is rewritten) and reads as binary; a VALIDATE column refuses it."""
    dc.write(pa.table({"f": pa.array([b"0123456789abcdef"], pa.binary(16))}), "t")
    assert dc.write(pa.table({"f": [b"fedcba9876543210", None]}), "t").schema_changes == ()
    before = set(dc.delta_table("t").file_uris())
    result = dc.write(pa.table({"f": pa.array([b"01234567"], pa.binary(8))}), "t")
    assert result.schema_changes == ("~f",)
    assert before < set(dc.delta_table("t").file_uris())  # the first file is still live
    got = dc.read("t", read_as=dc.DatasetType.PYARROW)
    assert got.schema.field("f").type == pa.binary()
    assert got.column("f").to_pylist() == [
        b"0123456789abcdef",
        b"fedcba9876543210",
        None,
        b"01234567",
    ]
    assert dc.read("t", version=0, read_as=dc.DatasetType.PYARROW).schema.field(
        "f"
    ).type == pa.binary(16)
    schema = dc.Schema.of([dc.Field.of(pa.field("u", pa.uuid()), consistency_type="validate")])
    dc.write(pa.table({"u": pa.array([bytes(16)], pa.binary(16))}), "v", schema=schema)
    dc.write(pa.table({"u": [bytes(16)]}), "v")
    assert dc.read("v", read_as=dc.DatasetType.PYARROW).schema.field("u").type == pa.uuid()
    before = tree_digest(catalog.root)
    with pytest.raises(dc.SchemaValidationError, match="VALIDATE"):
        dc.write(pa.table({"u": pa.array([b"short"])}), "v")
    assert tree_digest(catalog.root) == before
