"""Schemas: Field and Schema, consistency types (NONE, COERCE, VALIDATE), type promotion,
automatic and manual schema evolution, past and future defaults, ``alter_table``.

Ports DeltaCAT 2.0 (deltacat/tests/catalog/test_default_catalog_impl.py):
``TestHelperFunctionErrorCases`` (test_helper_function_consistency,
test_helper_function_robustness); ``TestDatasetTypes.test_daft_schema_validation_and_coercion``;
``TestTableVersionWriteModes`` (test_schema_validation_and_coercion and the past/future-default
tests); ``TestSchemaConsistency`` (test_missing_field_backfill_behavior, the type-promotion
tests, the automatic/manual schema-evolution tests,
test_schema_evolution_comprehensive_dataset_types, test_schema_evolution_with_past_defaults)
and ``TestAlterTable`` (all five).

Not ported: Ray-only tests and RAY_DATASET grid cases (Ray start-up cost) and DeltaCAT's
skipped test_past_default_enforcement_ray_dataset_pyarrow_parquet. ``MergeOrder``, ``SortOrder`` and
``SchemaConsistencyType`` are taken from the top-level module.
"""

from __future__ import annotations

import datetime
from decimal import Decimal

import daft
import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest

import workbench as dc
from tests.compat.helpers import (
    basic_schema,
    ctype,
    dtype,
    error,
    member,
    mode,
    people,
    prop,
    read_in,
    simple_merge_schema,
    write_in,
)

pytestmark = pytest.mark.compat

NS = "test_namespace"


def consistency(name):
    return member("SchemaConsistencyType", name)


def _field(name, arrow_type, nullable=True, **kwargs):
    return dc.Field.of(pa.field(name, arrow_type, nullable=nullable), **kwargs)


_write, _read = write_in, read_in


def _schema_names(cat, table, namespace=NS):
    schema = dc.get_table(table=table, namespace=namespace, catalog=cat).table_version.schema
    return [f.arrow.name for f in schema.field_ids_to_fields.values()]


# --- TestHelperFunctionErrorCases ------------------------------------------------------------


def test_helper_function_consistency():
    """Schema.of over Field.of: field counts and merge-key flags."""
    plain, keyed, simple = basic_schema(), basic_schema(merge_key=True), simple_merge_schema()
    assert [len(s.fields) for s in (plain, keyed, simple)] == [4, 4, 2]
    assert sum(f.is_merge_key for f in plain.fields) == 0
    assert sum(f.is_merge_key for f in keyed.fields) >= 1
    assert sum(f.is_merge_key for f in simple.fields) >= 1


def test_helper_function_robustness():
    for field in basic_schema().fields:
        assert field.arrow is not None and field.arrow.type is not None


# --- Consistency types and validation --------------------------------------------------------


def test_daft_schema_validation_and_coercion(catalogs):
    ns = "test_daft_schema"
    cat = catalogs.add(namespace=ns)
    # (a) A Daft frame matching the declared schema.
    declared = dc.Schema.of(
        schema=pa.schema([("id", pa.int64()), ("name", pa.string()), ("value", pa.float64())])
    )
    frame = daft.from_pydict(
        {"id": [1, 2, 3], "name": ["alice", "bob", "charlie"], "value": [1.0, 2.0, 3.0]}
    )
    _write(
        cat,
        frame,
        "daft_validation_test",
        namespace=ns,
        schema=declared,
        content_type=ctype("PARQUET"),
    )
    rows = _read(cat, "daft_validation_test", namespace=ns, read_as=dtype("PYARROW"))
    assert rows.num_rows == 3 and set(rows.column_names) == {"id", "name", "value"}
    # (b) Integers into a float field. The raw metadata keys are not DeltaCAT's own
    # (no "DELTACAT:" prefix), so DeltaCAT ignores them; the ints still become floats.
    value = pa.field("value", pa.float64()).with_metadata(
        {b"field_id": b"3", b"consistency_type": b"coerce"}
    )
    coerce = dc.Schema.of(
        schema=pa.schema([pa.field("id", pa.int64()), pa.field("name", pa.string()), value])
    )
    ints = daft.from_pydict(
        {"id": [4, 5, 6], "name": ["david", "emma", "frank"], "value": [10, 20, 30]}
    )
    _write(
        cat, ints, "daft_coercion_test", namespace=ns, schema=coerce, content_type=ctype("PARQUET")
    )
    coerced = _read(cat, "daft_coercion_test", namespace=ns, read_as=dtype("PYARROW"))
    assert coerced.num_rows == 3
    assert pa.types.is_floating(coerced.column("value").type)
    assert sorted(coerced.column("value").to_pylist()) == [10.0, 20.0, 30.0]
    # (c) An AUTO write of a Daft frame with a new column evolves the schema.
    two = dc.Schema.of(schema=pa.schema([("id", pa.int64()), ("name", pa.string())]))
    _write(
        cat,
        daft.from_pydict({"id": [7, 8], "name": ["grace", "henry"]}),
        "daft_evolution_test",
        namespace=ns,
        schema=two,
        content_type=ctype("PARQUET"),
    )
    wider = daft.from_pydict(
        {"id": [9, 10], "name": ["iris", "jack"], "new_field": ["auto_added_1", "auto_added_2"]}
    )
    _write(cat, wider, "daft_evolution_test", "AUTO", namespace=ns, content_type=ctype("PARQUET"))
    evolved = _read(cat, "daft_evolution_test", namespace=ns, read_as=dtype("PYARROW"))
    assert evolved.num_rows == 4
    values = evolved.column("new_field").to_pylist()
    assert sorted(values, key=lambda v: (v is None, v)) == [
        "auto_added_1",
        "auto_added_2",
        None,
        None,
    ]


def test_schema_validation_and_coercion(catalogs):
    cat = catalogs.add("test_table_version_catalog")
    good = pa.table(
        {"id": [1, 2, 3], "name": ["alice", "bob", "charlie"], "score": [95.5, 87.2, 92.1]}
    )
    bad = good.set_column(0, "id", pa.array(["not_a_number", "invalid", "bad"]))

    def schema(id_type, score_type, id_kind, name_kind, score_kind):
        return dc.Schema.of(
            [
                _field("id", id_type, consistency_type=consistency(id_kind)),
                _field("name", pa.string(), consistency_type=consistency(name_kind)),
                _field("score", score_type, consistency_type=consistency(score_kind)),
            ]
        )

    def create(data, table, declared):
        _write(cat, data, table, namespace="test_ns", schema=declared)

    coerce = schema(pa.int32(), pa.float32(), "COERCE", "NONE", "COERCE")
    create(good, "coerce_test_table", coerce)
    create(good, "validate_test_table", schema(pa.int64(), pa.float64(), *["VALIDATE"] * 3))
    create(good, "none_test_table", schema(pa.int32(), pa.float32(), *["NONE"] * 3))
    with pytest.raises(error("SchemaValidationError")):
        create(bad, "coerce_fail_table", coerce)
    with pytest.raises(error("SchemaValidationError")):
        create(good, "validate_fail_table", schema(pa.int32(), pa.float32(), *["VALIDATE"] * 3))


def test_missing_field_backfill_behavior(cat):
    schema = dc.Schema.of(
        [
            _field("required_field", pa.string(), False, consistency_type=consistency("VALIDATE")),
            _field(
                "default_field",
                pa.int64(),
                False,
                consistency_type=consistency("COERCE"),
                future_default=42,
            ),
            _field("nullable_field", pa.string(), consistency_type=consistency("COERCE")),
            _field(
                "non_nullable_no_default",
                pa.float64(),
                False,
                consistency_type=consistency("COERCE"),
            ),
            _field(
                "none_with_default",
                pa.string(),
                False,
                consistency_type=consistency("NONE"),
                future_default="default_value",
            ),
            _field("none_nullable", pa.int32(), consistency_type=consistency("NONE")),
        ]
    )
    full = {
        "required_field": ["val1", "val2"],
        "default_field": [1, 2],
        "nullable_field": ["a", "b"],
        "non_nullable_no_default": [1.1, 2.2],
        "none_with_default": ["x", "y"],
        "none_nullable": [10, 20],
    }

    def without(column):
        return pd.DataFrame({k: v for k, v in full.items() if k != column})

    with pytest.raises(error("SchemaValidationError"), match="required but not present"):
        _write(
            cat, without("required_field"), "test_missing_fields_table_test1", None, schema=schema
        )
    with pytest.raises(
        error("SchemaValidationError"), match=r"required.*not present.*no future_default"
    ):
        _write(
            cat,
            without("non_nullable_no_default"),
            "test_missing_fields_table_test2",
            None,
            schema=schema,
        )

    partial = pd.DataFrame(
        {"required_field": ["val1", "val2"], "non_nullable_no_default": [1.1, 2.2]}
    )
    _write(cat, partial, "test_missing_fields_table_test3", schema=schema)
    rows = dc.to_pandas(_read(cat, "test_missing_fields_table_test3"))
    assert len(rows) == 2
    assert list(rows["required_field"]) == ["val1", "val2"]
    assert list(rows["non_nullable_no_default"]) == [1.1, 2.2]
    assert list(rows["default_field"]) == [42, 42]  # future default
    # DeltaCAT (pandas 2) sees None; pandas 3 shows a null string as NaN. Either way: null.
    assert rows["nullable_field"].isna().tolist() == [True, True]
    assert list(rows["none_with_default"]) == ["default_value", "default_value"]
    # DeltaCAT's pandas gives NaN; workbench keeps integers with nulls as pandas' Int32 (pd.NA).
    assert rows["none_nullable"].isna().all()

    extra = pd.DataFrame({**full, "extra_field": ["shouldn't", "fail"]})  # evolves the schema
    _write(cat, extra, "test_missing_fields_table_test4", None, schema=schema)
    rows = _read(cat, "test_missing_fields_table_test4", read_as=dtype("PANDAS"), max_parallelism=1)
    assert len(rows) == 2
    assert set(rows.columns) == set(extra.columns)


def _pyarrow_rows(cat, table):
    result = _read(cat, table, read_as=dtype("PYARROW"))
    if isinstance(result, list):
        return pd.concat([t.to_pandas() for t in result], ignore_index=True, sort=False)
    return dc.to_pandas(result)


def test_schema_type_promotion_with_none_consistency(cat):
    """A NONE field widens int32 -> int64 -> float64 and rejects strings."""
    table = "type_promotion_table"
    schema = dc.Schema.of(
        [
            _field("id", pa.int64(), consistency_type=consistency("VALIDATE")),
            _field("count", pa.int32(), consistency_type=consistency("NONE")),
            _field("name", pa.string(), consistency_type=consistency("VALIDATE")),
        ]
    )
    first = pd.DataFrame(
        {
            "id": [1, 2, 3],
            "count": pd.array([10, 20, 30], dtype="int32"),
            "name": ["Alice", "Bob", "Charlie"],
        }
    )
    _write(cat, first, table, schema=schema)
    rows = _pyarrow_rows(cat, table)
    assert len(rows) == 3 and rows["count"].dtype.name.startswith("int32")
    big = pd.DataFrame(
        {
            "id": [4, 5],
            "count": pd.array([2147483648, 2147483649], dtype="int64"),
            "name": ["Diana", "Eve"],
        }
    )
    _write(cat, big, table, "APPEND")
    rows = _pyarrow_rows(cat, table)
    assert len(rows) == 5 and rows["count"].dtype.name.startswith("int64")
    assert rows["count"].iloc[-1] == 2147483649  # rows come back in write order
    _write(cat, pd.DataFrame({"id": [6], "count": [3.14159], "name": ["Frank"]}), table, "APPEND")
    rows = _pyarrow_rows(cat, table)
    assert len(rows) == 6 and rows["count"].dtype.name in ("float64", "double")
    assert abs(rows["count"].iloc[-1] - 3.14159) < 0.00001
    with pytest.raises(error("SchemaValidationError"), match="Cannot unify types"):
        dc.write_to_table(
            data=pd.DataFrame({"id": [7], "count": ["not_a_number"], "name": ["Grace"]}),
            table=table,
            namespace=NS,
            catalog=cat,
            mode=mode("APPEND"),
        )


def test_binary_type_promotion_and_stability(cat):
    """A NONE string field widens to binary and never narrows back."""
    table = "binary_promotion_table"
    schema = dc.Schema.of(
        [
            _field("id", pa.int64(), consistency_type=consistency("VALIDATE")),
            _field("data", pa.string(), consistency_type=consistency("NONE")),
            _field("category", pa.string(), consistency_type=consistency("VALIDATE")),
        ]
    )
    _write(
        cat,
        pd.DataFrame(
            {"id": [1, 2, 3], "data": ["hello", "world", "test"], "category": ["A", "B", "C"]}
        ),
        table,
        schema=schema,
    )
    rows = _pyarrow_rows(cat, table)
    # pandas 3 names its default string dtype "str" (DeltaCAT's pandas 2: object).
    assert len(rows) == 3 and rows["data"].dtype.name in ("object", "string", "str")
    binary = pd.DataFrame(
        {"id": [4, 5], "data": [b"binary_data_1", b"binary_data_2"], "category": ["D", "E"]}
    )
    _write(cat, binary, table, "APPEND")
    rows = _pyarrow_rows(cat, table)
    assert len(rows) == 5 and rows["data"].dtype.name == "object"
    assert isinstance(rows["data"].iloc[-1], bytes) and rows["data"].iloc[-1] == b"binary_data_2"
    text = pd.DataFrame(
        {"id": [6, 7], "data": ["back_to_string_1", "back_to_string_2"], "category": ["F", "G"]}
    )
    _write(cat, text, table, "APPEND")
    rows = _pyarrow_rows(cat, table)
    assert len(rows) == 7 and rows["data"].dtype.name == "object"

    blobs = pa.array([b"test1", b"test2"], type=pa.binary())
    promoted, changed = _field(
        "test", pa.string(), consistency_type=consistency("NONE")
    ).promote_type_if_needed(blobs)
    assert changed and pa.types.is_binary(promoted.type)
    strings = pa.array(["string1", "string2"], type=pa.string())
    promoted, changed = _field(
        "test", pa.binary(), consistency_type=consistency("NONE")
    ).promote_type_if_needed(strings)
    assert not changed and pa.types.is_binary(promoted.type)
    for narrow in (pa.int32(), pa.float64()):
        with pytest.raises(error("SchemaValidationError"), match="Cannot unify types"):
            _field("test", narrow, consistency_type=consistency("NONE")).promote_type_if_needed(
                blobs
            )


def test_critical_column_type_promotion_prevention(cat):
    """Merge keys, merge-order and event-time fields are always VALIDATE."""
    merge_order = {"merge_order": dc.MergeOrder.of()}
    for name, arrow_type, flags in [
        ("merge_key_field", pa.int32(), {"is_merge_key": True}),
        ("merge_order_field", pa.int32(), merge_order),
        ("event_time_field", pa.int64(), {"is_event_time": True}),
    ]:
        with pytest.raises(ValueError, match="must have VALIDATE consistency type"):
            _field(name, arrow_type, consistency_type=consistency("NONE"), **flags)
    for field in [
        _field("merge_key_field", pa.string(), is_merge_key=True),
        _field("merge_order_field", pa.int32(), **merge_order),
        _field("event_time_field", pa.int64(), is_event_time=True),
        _field(
            "valid_merge_key",
            pa.string(),
            is_merge_key=True,
            consistency_type=consistency("VALIDATE"),
        ),
    ]:
        assert dc.Field._consistency_type(field.arrow) == consistency("VALIDATE")
    regular = _field("regular_field", pa.int32(), consistency_type=consistency("NONE"))
    assert dc.Field._consistency_type(regular.arrow) == consistency("NONE")

    table = "critical_column_table"
    schema = dc.Schema.of(
        [
            _field("merge_key", pa.int64(), is_merge_key=True),
            _field("data", pa.string(), consistency_type=consistency("NONE")),
        ]
    )
    _write(
        cat, pd.DataFrame({"merge_key": [1, 2, 3], "data": ["A", "B", "C"]}), table, schema=schema
    )
    string_keys = pd.DataFrame({"merge_key": ["string_key_1", "string_key_2"], "data": ["D", "E"]})
    # The mode is checked before the types.
    with pytest.raises(
        error("SchemaValidationError"),
        match="APPEND mode cannot be used with tables that have merge keys",
    ):
        _write(cat, string_keys, table, "APPEND")
    with pytest.raises(error("SchemaValidationError"), match="Data type mismatch"):
        _write(cat, string_keys, table, "MERGE")


# --- Automatic and manual schema evolution ---------------------------------------------------


@pytest.mark.parametrize(
    "case, first_mode, second_mode, new_column",
    [
        ("auto", "AUTO", "AUTO", "new_field"),
        ("append", "CREATE", "APPEND", "append_field"),
        ("replace", "CREATE", "REPLACE", "replace_field"),  # REPLACE evolves the schema too
        ("merge", "CREATE", "APPEND", "merge_field"),  # DeltaCAT's "merge" test writes APPEND
    ],
)
def test_automatic_schema_evolution(catalogs, case, first_mode, second_mode, new_column):
    """DeltaCAT's test_automatic_schema_evolution_with_{auto,append,replace,merge}_write_mode."""
    cat = catalogs.add(namespace=NS)
    table = f"schema_evolution_{case}_test"
    first = pd.DataFrame([{"id": 1, "name": "alice", "value": 10.5}])
    second = pd.DataFrame([{"id": 2, "name": "bob", "value": 20.5, new_column: "added"}])
    _write(cat, pa.Table.from_pandas(first), table, first_mode, content_type=ctype("PARQUET"))
    _write(cat, pa.Table.from_pandas(second), table, second_mode, content_type=ctype("PARQUET"))
    names = _schema_names(cat, table)
    assert new_column in names
    if case == "auto":
        assert len(names) == 4  # no pandas index column


def test_automatic_schema_evolution_with_create_write_mode(catalogs):
    cat = catalogs.add(namespace=NS)
    row = pd.DataFrame([{"id": 1, "name": "alice", "value": 10.5, "create_field": "created"}])
    _write(
        cat,
        pa.Table.from_pandas(row),
        "schema_evolution_create_test",
        content_type=ctype("PARQUET"),
    )
    names = _schema_names(cat, "schema_evolution_create_test")
    assert "create_field" in names and len(names) == 4


def test_manual_schema_evolution_mode_prevents_automatic_field_addition(catalogs):
    cat = catalogs.add(namespace=NS)
    table = "schema_evolution_manual_test"
    dc.write_to_table(
        data=pa.Table.from_pandas(pd.DataFrame([{"id": 1, "name": "alice", "value": 10.5}])),
        table=table,
        namespace=NS,
        mode=mode("CREATE"),
        content_type=ctype("PARQUET"),
        catalog=cat,
        table_version_properties={prop("SCHEMA_EVOLUTION_MODE"): dc.SchemaEvolutionMode.MANUAL},
    )
    extra = pd.DataFrame([{"id": 2, "name": "bob", "value": 20.5, "manual_field": "should_fail"}])
    with pytest.raises(
        error("SchemaValidationError"), match="Field 'manual_field' is not present in the schema"
    ):
        _write(cat, pa.Table.from_pandas(extra), table, "APPEND", content_type=ctype("PARQUET"))
    names = _schema_names(cat, table)
    assert "manual_field" not in names and len(names) == 3


# --- Schema evolution across writer and reader dataset types ---------------------------------


def _typed_batches():
    """Three batches: DeltaCAT's 15 columns, then +4, +3."""
    first = pa.table(
        {
            "int8_col": pa.array([1, 2, 3], pa.int8()),
            "int16_col": pa.array([10, 20, 30], pa.int16()),
            "int32_col": pa.array([100, 200, 300], pa.int32()),
            "int64_col": pa.array([1000, 2000, 3000], pa.int64()),
            "uint8_col": pa.array([10, 20, 30], pa.uint8()),
            "uint16_col": pa.array([100, 200, 300], pa.uint16()),
            "uint32_col": pa.array([1000, 2000, 3000], pa.uint32()),
            "uint64_col": pa.array([10000, 20000, 30000], pa.uint64()),
            "float32_col": pa.array([1.1, 2.2, 3.3], pa.float32()),
            "float64_col": pa.array([10.1, 20.2, 30.3], pa.float64()),
            "string_col": pa.array(["alice", "bob", "charlie"], pa.string()),
            "binary_col": pa.array([b"data1", b"data2", b"data3"], pa.binary()),
            "bool_col": pa.array([True, False, True], pa.bool_()),
            "date32_col": pa.array([datetime.date(2023, 1, d) for d in (1, 2, 3)], pa.date32()),
            "timestamp_col": pa.array(
                [datetime.datetime(2023, 1, 1, h) for h in (10, 11, 12)], pa.timestamp("us")
            ),
        }
    )
    second = first
    for name, column in [
        (
            "decimal_col",
            pa.array([Decimal("1.50"), Decimal("2.50"), Decimal("3.50")], pa.decimal128(10, 2)),
        ),
        ("list_col", pa.array([[1, 2], [3, 4], [5, 6]], pa.list_(pa.int32()))),
        ("nullable_col", pa.array([10.5, None, 30.5], pa.float64())),
        ("extra_string_col", pa.array(["extra1", "extra2", "extra3"], pa.string())),
    ]:
        second = second.append_column(name, column)
    third = second
    person = pa.struct([pa.field("name", pa.string()), pa.field("age", pa.int32())])
    for name, column in [
        (
            "struct_col",
            pa.array(
                [
                    {"name": "alice", "age": 30},
                    {"name": "bob", "age": 25},
                    {"name": "charlie", "age": 35},
                ],
                person,
            ),
        ),
        ("large_int_col", pa.array([100000, 200000, 300000], pa.int64())),
        ("category_col", pa.array(["category_a", "category_b", "category_a"], pa.string())),
    ]:
        third = third.append_column(name, column)
    return first, second, third


def _is_text(t):
    return pa.types.is_string(t) or pa.types.is_large_string(t)


# RAY_DATASET writers and readers are not ported (Ray start-up cost).
EVOLUTION_WRITERS = ["PYARROW", "PANDAS", "POLARS", "DAFT"]


@pytest.mark.parametrize("reader", ["PYARROW", "PANDAS", "POLARS", "DAFT", "NUMPY"])
@pytest.mark.parametrize("writer", EVOLUTION_WRITERS)
def test_schema_evolution_comprehensive_dataset_types(cat, writer, reader):
    table = "comprehensive_schema_evolution_table"
    for i, batch in enumerate(_typed_batches()):
        _write(
            cat,
            dc.from_pyarrow(batch, dtype(writer)),
            table,
            "APPEND" if i else "CREATE",
            content_type=ctype("PARQUET"),
        )
    schema = dc.get_table(table=table, namespace=NS, catalog=cat).table_version.schema
    result = _read(cat, table, read_as=dtype(reader), max_parallelism=1)
    rows = dc.to_pyarrow(result, schema=schema.arrow) if schema else dc.to_pyarrow(result)
    assert rows.num_rows == 9
    columns = {c for c in rows.column_names if not c.startswith("__index")}
    assert columns == {f.name for f in _typed_batches()[2].schema}
    types = rows.schema
    assert types.field("int8_col").type in (pa.int8(), pa.int64())
    assert types.field("int16_col").type in (pa.int16(), pa.int64())
    assert types.field("int32_col").type in (pa.int32(), pa.int64())
    assert types.field("int64_col").type == pa.int64()
    assert types.field("uint8_col").type in (pa.uint8(), pa.uint64())
    assert types.field("uint16_col").type in (pa.uint16(), pa.uint64())
    assert types.field("uint32_col").type in (pa.uint32(), pa.uint64())
    assert types.field("uint64_col").type == pa.uint64()
    assert types.field("float32_col").type in (pa.float32(), pa.float64())
    assert types.field("float64_col").type == pa.float64()
    assert types.field("date32_col").type == pa.date32()
    assert types.field("timestamp_col").type == pa.timestamp("us")
    assert pa.types.is_decimal(types.field("decimal_col").type)
    assert types.field("decimal_col").type.scale == 2
    list_type = types.field("list_col").type
    assert pa.types.is_list(list_type) or pa.types.is_large_list(list_type)
    assert types.field("nullable_col").type == pa.float64()
    for name in ("extra_string_col", "category_col", "string_col"):
        assert _is_text(types.field(name).type), name
    assert pa.types.is_struct(types.field("struct_col").type)
    assert types.field("large_int_col").type in (pa.int64(), pa.float64())
    assert types.field("bool_col").type == pa.bool_()

    def col(name):
        return rows.column(name).to_pylist()

    # Rows come back in write order.
    assert col("int32_col") == [100, 200, 300] * 3
    assert col("string_col")[:3] == ["alice", "bob", "charlie"]
    assert col("bool_col")[:3] == [True, False, True]
    assert [float(v) for v in col("decimal_col")[3:6]] == [1.5, 2.5, 3.5]
    assert col("large_int_col")[6:9] == [100000, 200000, 300000]
    assert col("category_col")[6:9] == ["category_a", "category_b", "category_a"]
    assert col("decimal_col")[:3] == [None] * 3
    assert col("large_int_col")[:6] == [None] * 6
    assert col("category_col")[3:6] == [None] * 3


def _defaults_schema():
    return dc.Schema.of(
        [
            _field("id", pa.int64(), False, field_id=1),
            _field("name", pa.string(), field_id=2),
            _field("value", pa.float64(), field_id=3),
            _field("status", pa.string(), field_id=4, past_default="active"),
            _field("score", pa.float64(), field_id=5, past_default=0.0),
            _field("category", pa.string(), field_id=6),
        ]
    )


DEFAULT_BATCHES = [
    {"id": [1, 2, 3], "name": ["alice", "bob", "charlie"], "value": [10.1, 20.2, 30.3]},
    {
        "id": [4, 5],
        "name": ["david", "eve"],
        "value": [40.4, 50.5],
        "status": ["inactive", "active"],
        "score": [100.0, 200.0],
    },
    {
        "id": [6, 7],
        "name": ["frank", "grace"],
        "value": [60.6, 70.7],
        "status": ["pending", "active"],
        "score": [300.0, 400.0],
        "category": ["A", "B"],
    },
]


@pytest.mark.parametrize(
    "reader", ["PYARROW", "PANDAS", "POLARS", "NUMPY", "PYARROW_PARQUET", "DAFT"]
)
@pytest.mark.parametrize("writer", ["PYARROW", "PANDAS", "POLARS", "NUMPY"])
def test_schema_evolution_with_past_defaults(cat, writer, reader):
    """Rows written before a column existed read back with its past default. NumPy writes map
    columns by position onto the schema."""
    table = "past_default_schema_evolution_table"
    dc.create_table(
        table=table,
        namespace=NS,
        catalog=cat,
        schema=_defaults_schema(),
        content_types=[ctype("PARQUET")],
        auto_create_namespace=True,
    )
    for batch in DEFAULT_BATCHES:
        _write(
            cat,
            dc.from_pyarrow(pa.table(batch), dtype(writer)),
            table,
            "APPEND",
            content_type=ctype("PARQUET"),
        )
    result = _read(cat, table, read_as=dtype(reader), max_parallelism=1)
    if reader == "NUMPY":
        schema = dc.get_table(table=table, namespace=NS, catalog=cat).table_version.schema
        rows = dc.to_pyarrow(result, schema=schema.arrow)
    else:
        rows = dc.to_pyarrow(result)
    assert rows.num_rows == 7
    assert {c for c in rows.column_names if not c.startswith("__index")} == {
        "id",
        "name",
        "value",
        "status",
        "score",
        "category",
    }

    def col(name):
        return rows.column(name).to_pylist()

    assert col("status") == ["active"] * 3 + ["inactive", "active", "pending", "active"]
    assert col("score") == [0.0] * 3 + [100.0, 200.0, 300.0, 400.0]
    assert col("category") == [None] * 5 + ["A", "B"]
    assert col("id") == [1, 2, 3, 4, 5, 6, 7]
    assert col("name") == ["alice", "bob", "charlie", "david", "eve", "frank", "grace"]
    assert col("value") == [10.1, 20.2, 30.3, 40.4, 50.5, 60.6, 70.7]


# --- Past and future defaults (TestTableVersionWriteModes) -----------------------------------


@pytest.fixture
def version_cat(catalogs) -> str:
    return catalogs.add("test_table_version_catalog")


def _defaults_table(cat, table, fields, rows):
    """Create a table with ``fields`` and APPEND ``rows`` that lack the defaulted columns."""
    dc.create_table(
        table,
        namespace="test_ns",
        catalog=cat,
        schema=dc.Schema.of(fields),
        content_types=[ctype("PARQUET")],
        auto_create_namespace=True,
    )
    _write(cat, pd.DataFrame(rows), table, "APPEND", namespace="test_ns")


def _read_ns(cat, table, **kwargs):
    return dc.read_table(table, catalog=cat, namespace="test_ns", **kwargs)


def test_past_default_enforcement_basic(version_cat):
    fields = [
        _field("id", pa.int64(), False, field_id=1),
        _field("name", pa.string(), field_id=2),
        _field("status", pa.string(), field_id=3, past_default="active"),
        _field("score", pa.float64(), field_id=4, past_default=0.0),
    ]
    _defaults_table(
        version_cat,
        "past_default_basic_test",
        fields,
        {"id": [1, 2, 3], "name": ["Alice", "Bob", "Charlie"]},
    )
    rows = dc.to_pandas(_read_ns(version_cat, "past_default_basic_test", read_as=dtype("PANDAS")))
    assert (rows["status"] == "active").all()
    assert (rows["score"] == 0.0).all()


def test_past_default_not_applied_when_column_exists(version_cat):
    fields = [
        _field("id", pa.int64(), False, field_id=1),
        _field("status", pa.string(), field_id=2, past_default="active"),
    ]
    _defaults_table(
        version_cat,
        "past_default_column_exists_test",
        fields,
        {"id": [1, 2, 3], "status": [None, None, None]},
    )
    rows = dc.to_pandas(
        _read_ns(version_cat, "past_default_column_exists_test", read_as=dtype("PANDAS"))
    )
    assert rows["status"].isna().all()


def test_future_default_auto_set_from_past_default():
    field = dc.Field.of(
        field=pa.field("category", pa.string(), nullable=True),
        field_id=1,
        past_default="uncategorized",
    )
    assert field.past_default == "uncategorized"
    assert field.future_default == "uncategorized"


def test_future_default_not_overridden_when_explicitly_set():
    field = dc.Field.of(
        field=pa.field("priority", pa.string(), nullable=True),
        field_id=1,
        past_default="low",
        future_default="medium",
    )
    assert (field.past_default, field.future_default) == ("low", "medium")


def _default_field_table(cat, table, default, ids):
    fields = [
        _field("id", pa.int64(), False, field_id=1),
        _field("default_field", pa.string(), field_id=2, past_default=default),
    ]
    _defaults_table(cat, table, fields, {"id": ids})


def _local_types_without_numpy():
    local = dc.DatasetType.local()
    local.remove(dtype("NUMPY"))
    return local


def _default_values(result, dataset):
    if dataset.name == "PANDAS":
        return list(dc.to_pandas(result)["default_field"])
    if dataset.name in ("PYARROW", "PYARROW_PARQUET"):
        return dc.to_pyarrow(result).column("default_field").to_pylist()
    return pl.from_pandas(dc.to_pandas(result))["default_field"].to_list()


def test_past_default_enforcement_daft_to_local_dataset_types(version_cat):
    _default_field_table(version_cat, "past_default_all_types_test", "default_value", [1, 2])
    result = _read_ns(version_cat, "past_default_all_types_test")  # one Daft read
    for dataset in _local_types_without_numpy():
        assert set(_default_values(result, dataset)) == {"default_value"}, dataset


def test_past_default_enforcement_local_only_dataset_types(version_cat):
    """For PYARROW_PARQUET the raw file is read, so the default must be in the data file."""
    _default_field_table(
        version_cat, "past_default_local_only_test", "local_default_value", [10, 20]
    )
    for dataset in _local_types_without_numpy():
        result = _read_ns(version_cat, "past_default_local_only_test", read_as=dataset)
        assert set(_default_values(result, dataset)) == {"local_default_value"}, dataset


def test_past_default_with_complex_data_types(version_cat):
    fields = [
        _field("id", pa.int64(), False, field_id=1),
        _field("created_at", pa.timestamp("us"), field_id=2, past_default=1640995200000000),
        _field("is_active", pa.bool_(), field_id=3, past_default=True),
    ]
    _defaults_table(version_cat, "past_default_complex_types_test", fields, {"id": [1, 2]})
    rows = dc.to_pandas(
        _read_ns(version_cat, "past_default_complex_types_test", read_as=dtype("PANDAS"))
    )
    assert (rows["created_at"] == pd.to_datetime(1640995200000000, unit="us")).all()
    assert (rows["is_active"] == np.bool_(True)).all()


# --- TestAlterTable --------------------------------------------------------------------------


def _people_table(cat, table):
    _write(cat, people(), table, schema=basic_schema())
    return dc.get_table(table=table, namespace=NS, catalog=cat).table_version.schema


def _alter(cat, table, updates, description, **kwargs):
    dc.alter_table(
        table=table,
        namespace=NS,
        catalog=cat,
        schema_updates=updates,
        table_description=description,
        **kwargs,
    )


def _current_schema(cat, table):
    return dc.get_table(table=table, namespace=NS, catalog=cat).table_version.schema


def test_alter_table_add_field(cat):
    before = _people_table(cat, "alter_table_add_test")
    email = dc.Field.of(pa.field("email", pa.string(), nullable=True))
    _alter(cat, "alter_table_add_test", before.update().add_field(email), "Added email field")
    after = _current_schema(cat, "alter_table_add_test")
    assert after.field("email").arrow.type == pa.string()
    assert after.field("email").arrow.nullable is True
    assert after.field("email").id == 4  # field ids 0-3 were taken
    assert after.id == before.id + 1
    for name in ("id", "name", "age", "city"):
        assert after.field(name) is not None


def test_alter_table_multiple_operations(cat):
    before = _people_table(cat, "alter_table_multiple_test")
    email = dc.Field.of(pa.field("email", pa.string(), nullable=True))
    status = dc.Field.of(pa.field("status", pa.string(), nullable=False), past_default="active")
    _alter(
        cat,
        "alter_table_multiple_test",
        before.update().add_field(email).add_field(status),
        "Added multiple fields",
    )
    after = _current_schema(cat, "alter_table_multiple_test")
    assert after.field("email").arrow.type == pa.string() and after.field("email").id == 4
    assert after.field("status").arrow.type == pa.string() and after.field("status").id == 5
    assert after.field("status").past_default == "active"
    assert after.id == before.id + 1


def test_alter_table_update_field_type_widening(cat):
    """Updating a field to its own type still counts as a schema change."""
    before = _people_table(cat, "alter_table_update_test")
    age = before.field("age")
    updates = before.update().update_field_type("age", age.arrow.type)
    _alter(cat, "alter_table_update_test", updates, "Made age field nullable")
    after = _current_schema(cat, "alter_table_update_test")
    assert after.field("age").arrow.nullable is True
    assert after.field("age").id == age.id
    assert after.id == before.id + 1


def test_alter_table_no_active_version_raises_error(cat):
    email = dc.Field.of(pa.field("email", pa.string(), nullable=True), field_id=100)
    with pytest.raises(error("TableNotFoundError")):
        _alter(
            cat, "alter_table_error_test", basic_schema().update().add_field(email), "Should fail"
        )


def test_alter_table_invalid_table_version_raises_error(cat):
    before = _people_table(cat, "alter_table_invalid_version_test")
    updates = before.update().add_field(
        dc.Field.of(pa.field("email", pa.string(), nullable=True), field_id=100)
    )
    with pytest.raises(ValueError, match="Invalid table version invalid_version"):
        _alter(
            cat,
            "alter_table_invalid_version_test",
            updates,
            "Should fail",
            table_version="invalid_version",
        )
    with pytest.raises(error("TableVersionNotFoundError")):
        _alter(
            cat,
            "alter_table_invalid_version_test",
            updates,
            "Should fail",
            table_version="invalid_version.1",
        )
