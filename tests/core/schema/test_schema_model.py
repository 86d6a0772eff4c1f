"""DeltaCAT's field model on real tables: field ids and schema versions, consistency types,
past and future defaults, merge order, ``Schema.update()`` and ``dc.alter_table``."""

from __future__ import annotations

import pandas as pd
import pyarrow as pa
import pytest

import workbench as dc
from tests.conftest import tree_digest
from workbench.exceptions import (
    InvalidArgumentError,
    SchemaCompatibilityError,
    SchemaValidationError,
    TableNotFoundError,
    UnsupportedFeatureError,
)


def _field(name, arrow_type, nullable=True, **kwargs):
    return dc.Field.of(pa.field(name, arrow_type, nullable=nullable), **kwargs)


def _keyed(**kwargs):
    return dc.Schema.of([_field("id", pa.int64(), is_merge_key=True), *kwargs.values()])


def _schema(table="t"):
    return dc.get_table(table).table_version.schema


@pytest.mark.parametrize(
    "call",
    [
        lambda: _field("x", pa.int64(), field_id=-1),
        lambda: _field("x", pa.int64(), field_id=True),
        lambda: _field("x", pa.int64(), consistency_type="strict"),
        lambda: _field("x", pa.int64(), is_merge_key=True, consistency_type="coerce"),
        lambda: _field("x", pa.string(), is_event_time=True),
        lambda: _field("x", pa.int64(), merge_order="ascending"),
        lambda: _field("x", pa.int64(), past_default="zero"),
        lambda: _field("x", pa.int64(), doc=3),
        lambda: dc.Schema.of(
            [_field("a", pa.int64(), field_id=1), _field("b", pa.int64(), field_id=1)]
        ),
        lambda: dc.MergeOrder.of("sideways"),
    ],
)
def test_bad_field_arguments_raise_a_typed_error(call):
    with pytest.raises(SchemaValidationError):
        call()


def test_field_ids_and_schema_versions_persist(catalog):
    schema = dc.Schema.of(
        [_field("a", pa.int64(), field_id=7, doc="the a"), _field("b", pa.string())]
    )
    assert [f.id for f in schema.fields] == [7, 8]
    dc.write(pa.table({"a": [1], "b": ["x"]}), "t", schema=schema)
    stored = _schema()
    assert (stored.id, stored.field("a").doc, list(stored.field_ids_to_fields)) == (
        0,
        "the a",
        [7, 8],
    )
    dc.write(pa.table({"a": [2], "c": [1.5]}), "t")  # adds c: the next id, the next version
    stored = _schema()
    assert (stored.id, stored.field("c").id, stored.field(9).name) == (1, 9, "c")


def test_validate_refuses_another_type_and_changes_nothing(catalog):
    dc.write(
        pa.table({"id": pa.array([1], pa.int32())}),
        "t",
        schema=dc.Schema.of([_field("id", pa.int32(), is_merge_key=True)]),
    )
    before = tree_digest(catalog.root)
    with pytest.raises(SchemaValidationError, match="Data type mismatch"):
        dc.write(pa.table({"id": pa.array([2], pa.int64())}), "t")
    assert tree_digest(catalog.root) == before


def test_table_default_consistency_type_applies_to_fields_without_one(catalog):
    validate = {dc.TableProperty.DEFAULT_SCHEMA_CONSISTENCY_TYPE: dc.SchemaConsistencyType.VALIDATE}
    dc.write(pa.table({"n": pa.array([1], pa.int32())}), "t", table_properties=validate)
    with pytest.raises(SchemaValidationError, match="Data type mismatch"):
        dc.write(pa.table({"n": pa.array([2], pa.int64())}), "t")
    dc.write(pa.table({"n": [3]}), "u")  # no property: int64 into int64 and widening as before
    dc.write(pa.table({"n": pa.array([4], pa.int8())}), "u")
    assert dc.read("u", read_as=dc.DatasetType.PYARROW).column("n").to_pylist() == [3, 4]


def test_none_promotes_and_coerce_casts(catalog):
    schema = dc.Schema.of(
        [
            _field("loose", pa.int64(), consistency_type="none"),
            _field("cast", pa.int32(), consistency_type="coerce"),
        ]
    )
    dc.write(pa.table({"loose": [1], "cast": pa.array([1], pa.int32())}), "t", schema=schema)
    dc.write(pa.table({"loose": [2.5], "cast": [2.0]}), "t", mode="append")
    rows = dc.read("t", read_as=dc.DatasetType.PYARROW)
    assert rows.schema.field("loose").type == pa.float64()
    assert rows.schema.field("cast").type == pa.int32()
    assert rows.column("loose").to_pylist() == [1.0, 2.5]
    with pytest.raises(SchemaValidationError):
        dc.write(pa.table({"loose": [3.0], "cast": [3.5]}), "t", mode="append")  # not exact


def test_merge_order_keeps_the_best_ranked_row_of_a_key(catalog):
    order = dc.MergeOrder.of(dc.SortOrder.DESCENDING)
    schema = _keyed(v=_field("v", pa.string()), at=_field("at", pa.int64(), merge_order=order))
    dc.create_table("t", schema=schema)
    dc.write(pd.DataFrame({"id": [1, 1, 2], "v": ["new", "old", "x"], "at": [9, 3, 1]}), "t")
    rows = dc.read("t", read_as=dc.DatasetType.PANDAS).sort_values("id")
    assert rows["v"].tolist() == ["new", "x"]


def test_merge_order_duplicates_from_a_lazy_engine_are_refused(catalog):
    daft = pytest.importorskip("daft")
    schema = _keyed(at=_field("at", pa.int64(), is_event_time=True))
    dc.create_table("t", schema=schema)
    before = tree_digest(catalog.root)
    with pytest.raises(UnsupportedFeatureError, match="merge order"):
        dc.write(daft.from_pydict({"id": [1, 1], "at": [1, 2]}), "t")
    assert tree_digest(catalog.root) == before


def test_alter_table_backfills_past_defaults_and_bumps_the_version(catalog):
    dc.write(pa.table({"id": [1, 2]}), "t")
    before = _schema()
    status = _field("status", pa.string(), False, past_default="old", future_default="new")
    dc.alter_table("t", schema_updates=before.update().add_field(status), table_description="d")
    dc.write(pa.table({"id": [3]}), "t")
    rows = dc.read("t", read_as=dc.DatasetType.PYARROW)
    assert rows.column("status").to_pylist() == ["old", "old", "new"]
    after = dc.get_table("t")
    assert (after.table_version.schema.id, after.table_version.schema.field("status").id) == (
        before.id + 1,
        1,
    )
    files = dc.read("t", read_as=dc.DatasetType.PYARROW_PARQUET)  # the values are in the files
    files = files if isinstance(files, list) else [files]
    assert sorted(v for f in files for v in f.read().column("status").to_pylist()) == [
        "new",
        "old",
        "old",
    ]


def test_alter_table_bad_arguments_change_nothing(catalog):
    dc.write(pa.table({"id": [1]}), "t")
    base = _schema()
    before = tree_digest(catalog.root)
    required = _field("r", pa.string(), False)
    with pytest.raises(SchemaCompatibilityError, match="allow_incompatible_changes"):
        base.update().add_field(required)
    with pytest.raises(InvalidArgumentError, match="schema_updates"):
        dc.alter_table("t", schema_updates=base)
    with pytest.raises(InvalidArgumentError, match="table_description"):
        dc.alter_table("t", table_description=5)
    with pytest.raises(TableNotFoundError):
        dc.alter_table("missing", table_description="x")
    dc.alter_table("t", schema_updates=base.update().add_field(_field("a", pa.int64())))
    changed = tree_digest(catalog.root)
    with pytest.raises(SchemaValidationError, match="schema version 0"):  # built on a stale base
        dc.alter_table("t", schema_updates=base.update().add_field(_field("b", pa.int64())))
    assert tree_digest(catalog.root) == changed != before


def test_alter_table_widens_and_removes_by_rewriting(catalog):
    dc.write(pa.table({"id": [1], "n": pa.array([5], pa.int32()), "gone": ["x"]}), "t")
    update = _schema().update(allow_incompatible_changes=True)
    dc.alter_table(
        "t", schema_updates=update.update_field_type("n", pa.int64()).remove_field("gone")
    )
    rows = dc.read("t", read_as=dc.DatasetType.PYARROW)
    assert rows.column_names == ["id", "n"] and rows.schema.field("n").type == pa.int64()
