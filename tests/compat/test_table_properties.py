"""Table properties: defaults, inheritance by table versions, reader compatibility checks.

Ports DeltaCAT 2.0 (deltacat/tests/catalog/test_default_catalog_impl.py):
``TestTablePropertyInheritance`` (all three tests), ``TestSchemaConsistency.
test_schema_evolution_mode_table_property_persistence``, the reader-compatibility tests of
``TestContentTypeDatasetCompatibility`` (default, custom, None and empty supported readers) and
``TestCopyOnWrite.test_verify_merge_keys_require_read_optimization``.
"""

from __future__ import annotations

import pandas as pd
import pyarrow as pa
import pytest

import workbench as dc
from tests.compat.helpers import basic_schema, ctype, dtype, error, member, mode, prop

pytestmark = pytest.mark.compat

NS = "test_inheritance"


@pytest.fixture
def cat(catalogs) -> str:
    return catalogs.add(namespace=NS)


def _level(name):
    return member("TableReadOptimizationLevel", name)


def _create(cat, table, data, version=None, **kwargs):
    dc.write_to_table(
        data=data,
        table=table,
        namespace=NS,
        catalog=cat,
        mode=mode("CREATE"),
        content_type=ctype("PARQUET"),
        auto_create_namespace=True,
        **({"table_version": version} if version else {}),
        **kwargs,
    )


def _table(cat, table, version=None):
    if version is None:
        return dc.get_table(table, namespace=NS, catalog=cat)
    return dc.get_table(table, namespace=NS, table_version=version, catalog=cat)


def test_table_version_inherits_parent_table_properties(cat):
    props = {
        prop("READ_OPTIMIZATION_LEVEL"): _level("NONE"),
        prop("APPENDED_RECORD_COUNT_COMPACTION_TRIGGER"): 1000,
        prop("APPENDED_FILE_COUNT_COMPACTION_TRIGGER"): 100,
        prop("DEFAULT_COMPACTION_HASH_BUCKET_COUNT"): 8,
    }
    days = pd.to_datetime(["2023-01-01", "2023-01-02", "2023-01-03"])
    _create(
        cat,
        "inheritance_test_table",
        pd.DataFrame({"id": [1, 2, 3], "value": ["a", "b", "c"], "timestamp": days}),
        table_properties=props,
    )
    table = _table(cat, "inheritance_test_table")
    for key, value in props.items():
        assert table.table.properties[key] == value
    # With no version properties given, version 1 holds exactly the table's (defaults included).
    assert _table(cat, "inheritance_test_table", "1").table_version.properties == (
        table.table.properties
    )

    more_days = pd.to_datetime(["2023-01-04", "2023-01-05", "2023-01-06"])
    _create(
        cat,
        "inheritance_test_table",
        pd.DataFrame({"id": [4, 5, 6], "value": ["d", "e", "f"], "timestamp": more_days}),
        version="2",
    )
    v2 = _table(cat, "inheritance_test_table", "2").table_version.properties
    current = _table(cat, "inheritance_test_table").table.properties
    for name in [
        "READ_OPTIMIZATION_LEVEL",
        "DEFAULT_COMPACTION_HASH_BUCKET_COUNT",
        "SCHEMA_EVOLUTION_MODE",
        "DEFAULT_SCHEMA_CONSISTENCY_TYPE",
    ]:
        assert v2[prop(name)] == current[prop(name)]
    assert v2[prop("READ_OPTIMIZATION_LEVEL")] == _level("NONE")
    assert v2[prop("DEFAULT_COMPACTION_HASH_BUCKET_COUNT")] == 8


def test_table_version_inheritance_is_at_creation_time(cat):
    table = "creation_time_test_table"
    first = {
        prop("READ_OPTIMIZATION_LEVEL"): _level("MAX"),
        prop("APPENDED_RECORD_COUNT_COMPACTION_TRIGGER"): 500,
        prop("DEFAULT_COMPACTION_HASH_BUCKET_COUNT"): 4,
    }
    _create(
        cat, table, pd.DataFrame({"id": [1, 2], "name": ["Alice", "Bob"]}), table_properties=first
    )
    v1 = _table(cat, table, "1").table_version.properties
    assert v1 == _table(cat, table).table.properties
    for key, value in first.items():
        assert v1[key] == value
    snapshot = dict(v1)

    second = {
        prop("READ_OPTIMIZATION_LEVEL"): _level("NONE"),
        prop("APPENDED_RECORD_COUNT_COMPACTION_TRIGGER"): 1000,
        prop("APPENDED_FILE_COUNT_COMPACTION_TRIGGER"): 200,
        prop("DEFAULT_COMPACTION_HASH_BUCKET_COUNT"): 16,
    }
    dc.alter_table(table=table, namespace=NS, catalog=cat, table_properties=second)
    for key, value in second.items():
        assert _table(cat, table).table.properties[key] == value
    # Version 1 keeps what it inherited when it was created.
    v1_after = _table(cat, table, "1").table_version.properties
    assert v1_after == snapshot
    assert v1_after[prop("APPENDED_RECORD_COUNT_COMPACTION_TRIGGER")] == 500
    assert v1_after[prop("DEFAULT_COMPACTION_HASH_BUCKET_COUNT")] == 4

    _create(cat, table, pd.DataFrame({"id": [3, 4], "name": ["Charlie", "Diana"]}), version="2")
    v2 = _table(cat, table, "2").table_version.properties
    for key, value in second.items():
        assert v2[key] == value
    assert v2[prop("APPENDED_RECORD_COUNT_COMPACTION_TRIGGER")] == 1000
    assert v2[prop("DEFAULT_COMPACTION_HASH_BUCKET_COUNT")] == 16
    assert _table(cat, table, "1").table_version.properties == snapshot
    assert v2 != snapshot


def test_explicit_table_version_properties_override_inheritance(cat):
    table = "explicit_override_test_table"
    table_props = {
        prop("READ_OPTIMIZATION_LEVEL"): _level("MAX"),
        prop("APPENDED_RECORD_COUNT_COMPACTION_TRIGGER"): 1000,
    }
    version_props = {
        prop("READ_OPTIMIZATION_LEVEL"): _level("NONE"),
        prop("APPENDED_RECORD_COUNT_COMPACTION_TRIGGER"): 500,
        prop("DEFAULT_COMPACTION_HASH_BUCKET_COUNT"): 16,
    }
    _create(
        cat,
        table,
        pd.DataFrame({"category": ["X", "Y"], "count": [10, 20]}),
        table_properties=table_props,
        table_version_properties=version_props,
    )
    for key, value in table_props.items():
        assert _table(cat, table).table.properties[key] == value
    for key, value in version_props.items():
        assert _table(cat, table, "1").table_version.properties[key] == value

    # A later version inherits from the table, not from version 1.
    _create(cat, table, pd.DataFrame({"category": ["Z"], "count": [30]}), version="2")
    v2 = _table(cat, table, "2").table_version.properties
    current = _table(cat, table).table.properties
    for name in ["READ_OPTIMIZATION_LEVEL", "APPENDED_RECORD_COUNT_COMPACTION_TRIGGER"]:
        assert v2[prop(name)] == current[prop(name)]
    assert v2[prop("APPENDED_RECORD_COUNT_COMPACTION_TRIGGER")] == 1000


def test_schema_evolution_mode_table_property_persistence(catalogs):
    cat = catalogs.add(namespace="test_namespace")
    row = pa.Table.from_pandas(pd.DataFrame([{"id": 1, "name": "test"}]))

    def evolution_mode(table, **kwargs):
        dc.write_to_table(
            data=row,
            table=table,
            namespace="test_namespace",
            mode=mode("CREATE"),
            content_type=ctype("PARQUET"),
            catalog=cat,
            auto_create_namespace=True,
            **kwargs,
        )
        found = dc.get_table(table=table, namespace="test_namespace", catalog=cat)
        return found.table_version.read_table_property(prop("SCHEMA_EVOLUTION_MODE"))

    assert evolution_mode("schema_evolution_property_test") == "auto"
    manual = {prop("SCHEMA_EVOLUTION_MODE"): dc.SchemaEvolutionMode.MANUAL}
    assert (
        evolution_mode("schema_evolution_manual_property_test", table_version_properties=manual)
        == "manual"
    )


def _write_pandas_bools_as_avro(cat, **kwargs):
    bools = pa.table({"bool_column": [True, False, True, False]}).to_pandas()
    dc.write_to_table(
        data=bools,
        table="reader_compat_test_table",
        namespace="test_namespace",
        catalog=cat,
        content_type=ctype("AVRO"),
        mode=mode("CREATE"),
        auto_create_namespace=True,
        **kwargs,
    )


BOOL_AVRO_DAFT = (
    "Field 'bool_column' with type 'bool' written by pandas to application/avro cannot be read "
    "by required reader type daft"
)


@pytest.mark.parametrize("readers", ["default", "custom"])
def test_reader_compatibility_validation_with_supported_readers(cat, readers):
    """DeltaCAT's ..._with_default_supported_readers and ..._with_custom_supported_readers:
    Daft cannot read pandas booleans stored as Avro, so the write is refused."""
    kwargs = {}
    if readers == "custom":
        kwargs["table_properties"] = {prop("SUPPORTED_READER_TYPES"): [dtype("DAFT")]}
    with pytest.raises(error("TableValidationError"), match=BOOL_AVRO_DAFT):
        _write_pandas_bools_as_avro(cat, **kwargs)


@pytest.mark.parametrize("readers", [None, []], ids=["none", "empty"])
def test_reader_compatibility_no_validation_when_supported_readers_unset(cat, readers):
    """DeltaCAT's ..._when_supported_readers_none and ..._when_supported_readers_empty."""
    _write_pandas_bools_as_avro(cat, table_properties={prop("SUPPORTED_READER_TYPES"): readers})
    result = dc.read_table(
        table="reader_compat_test_table",
        namespace="test_namespace",
        catalog=cat,
        read_as=dtype("PYARROW"),
    )
    assert len(result) == 4


def test_verify_merge_keys_require_read_optimization(cat):
    with pytest.raises(NotImplementedError) as caught:
        dc.create_table(
            table="test_merge_keys_require_read_optimization",
            namespace="test_e2e_compaction",
            schema=basic_schema(merge_key=True),
            content_types=[ctype("PARQUET")],
            table_properties={prop("READ_OPTIMIZATION_LEVEL"): _level("NONE")},
            catalog=cat,
            auto_create_namespace=True,
        )
    assert "read optimization level `none` is not yet supported" in str(caught.value)
