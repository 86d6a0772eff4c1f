"""Write semantics: merge (upsert), partial upsert, replace, delete by key, merge order.

Ports DeltaCAT 2.0 ``TestCopyOnWrite`` (deltacat/tests/catalog/test_default_catalog_impl.py):
test_simple_append_no_compaction_needed, test_two_upsert_deltas_with_compaction,
test_upsert_compaction_with_schema_evolution, test_partial_upsert_all_dataset_types,
test_partial_upsert_with_schema_evolution, test_three_upsert_deltas_comprehensive_merge,
test_chrono_rejects_merge_keys, test_verify_delta_types_created,
test_replace_mode_with_duplicates_existing_table (and _v2), the four merge-order tests; and
``TestTableVersionWriteModes.test_delete_mode_merge_key_only_validation``.

Left out here, as DeltaCAT internals: stream positions returned by writes
(``deltas[0].stream_position``), the ``Delta`` metafile listing in
test_upsert_compaction_with_schema_evolution, and the concurrency tests (see REPORT.md). The
RAY_DATASET cases of the partial-upsert tests use the session's Ray instance.
"""

from __future__ import annotations

import pandas as pd
import pyarrow as pa
import pytest

import workbench as dc
from tests.compat.helpers import (
    basic_schema,
    copy_on_write,
    ctype,
    dtype,
    error,
    member,
    mode,
    people,
    people_upsert,
    prop,
    rows_by_id,
)

pytestmark = pytest.mark.compat

NS = "test_e2e_compaction"
PEOPLE = {
    1: ("Alice", 25, "NYC"),
    2: ("Bob", 30, "LA"),
    3: ("Charlie", 35, "Chicago"),
    4: ("Dave", 40, "Houston"),
    5: ("Eve", 45, "Phoenix"),
}


@pytest.fixture
def cat(catalogs) -> str:
    return catalogs.add("test_compaction_catalog", namespace=NS)


def _keyed_table(cat, table, schema=None, properties=None):
    """DeltaCAT's TestCopyOnWrite._create_table_with_merge_keys."""
    dc.create_table(
        table=table,
        namespace=NS,
        schema=schema or basic_schema(merge_key=True),
        content_types=[ctype("PARQUET")],
        table_properties=properties or copy_on_write(),
        catalog=cat,
        auto_create_namespace=True,
    )


def _write(cat, data, table, write_mode="MERGE"):
    return dc.write_to_table(
        data=data,
        table=table,
        namespace=NS,
        mode=mode(write_mode),
        content_type=ctype("PARQUET"),
        catalog=cat,
        auto_create_namespace=True,
    )


def _read(cat, table, **kwargs):
    return dc.read_table(table=table, namespace=NS, catalog=cat, **kwargs)


def test_simple_append_no_compaction_needed(cat):
    _write(cat, people(), "test_simple_append", "CREATE")
    result = _read(cat, "test_simple_append")
    assert dc.dataset_length(result) == 5
    assert rows_by_id(result) == PEOPLE


def test_two_upsert_deltas_with_compaction(cat):
    _keyed_table(cat, "test_two_upserts")
    assert len(_write(cat, people(), "test_two_upserts")) == 1
    # int64 ages into the int32 field: NONE consistency promotes the type.
    assert len(_write(cat, people_upsert(), "test_two_upserts")) == 1
    result = _read(cat, "test_two_upserts")
    assert dc.dataset_length(result) == 7
    assert rows_by_id(result) == {
        **PEOPLE,
        3: ("Charlie_Updated", 36, "Chicago_New"),
        4: ("Dave_Updated", 41, "Houston_New"),
        6: ("Frank", 50, "Boston"),
        7: ("Grace", 55, "Seattle"),
    }


def test_upsert_compaction_with_schema_evolution(cat):
    table = "test_upsert_schema_evolution"
    fields = list(basic_schema(merge_key=True).fields)
    email = dc.Field.of(pa.field("email", pa.string()), past_default="no-email@example.com")
    _keyed_table(cat, table, schema=dc.Schema.of([*fields, email]))
    _write(cat, people(), table)  # no email column
    update = people_upsert().assign(
        email=["charlie@example.com", "dave@example.com", "frank@example.com", "grace@example.com"],
        department=["Engineering", "Sales", "Marketing", "HR"],  # a new column
    )
    _write(cat, update, table)
    result = _read(cat, table)
    assert dc.dataset_length(result) == 7
    rows = result.to_pandas()
    assert {"id", "name", "age", "city", "email", "department"} <= set(rows.columns)
    untouched = rows[rows["id"].isin([1, 2, 5])]
    assert len(untouched) == 3
    assert (untouched["email"] == "no-email@example.com").sum() == 3
    assert untouched["department"].dropna().empty
    updated = rows[rows["id"].isin([3, 4, 6, 7])]
    assert updated["email"].str.contains("@example.com").sum() == 4
    assert len(updated["department"].dropna()) == 4
    by_id = rows_by_id(rows, ("name", "age", "city", "email", "department"))
    assert by_id[3] == ("Charlie_Updated", 36, "Chicago_New", "charlie@example.com", "Engineering")
    assert by_id[4] == ("Dave_Updated", 41, "Houston_New", "dave@example.com", "Sales")


RAY = pytest.param("RAY_DATASET", marks=pytest.mark.ray)


def _start_ray_for(request, dataset):
    """The session's Ray instance, for the RAY_DATASET cases only."""
    if dataset == "RAY_DATASET":
        request.getfixturevalue("ray_cluster")


@pytest.mark.parametrize("dataset", ["PANDAS", "PYARROW", "POLARS", "DAFT", "NUMPY", RAY])
def test_partial_upsert_all_dataset_types(request, cat, dataset):
    """A MERGE without ``city`` keeps existing cities; an explicit null age overwrites."""
    _start_ray_for(request, dataset)
    dt = dtype(dataset)
    table = f"test_partial_upsert_{dt.value}"
    _keyed_table(cat, table)
    first = pd.DataFrame(
        {
            "id": [1, 2, 3],
            "name": ["Alice", "Bob", "Charlie"],
            "age": [25, 30, 35],
            "city": ["NYC", "LA", "Chicago"],
        }
    )
    _write(cat, dc.from_pandas(first, dt), table)
    partial = pd.DataFrame(
        {"id": [1, 2, 4], "name": ["Alice_Updated", "Bob_Updated", "Dave"], "age": [26, None, 40]}
    )
    _write(cat, dc.from_pandas(partial, dt), table)
    arrow_schema = dc.get_table(table, catalog=cat, namespace=NS).table_version.schema.arrow
    rows = dc.to_pandas(_read(cat, table, read_as=dt), schema=arrow_schema)
    assert len(rows) == 4
    row = {int(r["id"]): r for _, r in rows.iterrows()}
    assert (row[1]["name"], row[1]["age"], row[1]["city"]) == ("Alice_Updated", 26, "NYC")
    assert row[2]["name"] == "Bob_Updated" and pd.isna(row[2]["age"]) and row[2]["city"] == "LA"
    assert (row[3]["name"], row[3]["age"], row[3]["city"]) == ("Charlie", 35, "Chicago")
    assert row[4]["name"] == "Dave" and row[4]["age"] == 40 and pd.isna(row[4]["city"])


@pytest.mark.parametrize("dataset", ["PANDAS", "PYARROW", "POLARS", "DAFT", RAY])
def test_partial_upsert_with_schema_evolution(request, cat, dataset):
    """A MERGE without ``age`` that adds ``department`` keeps ages and adds the column."""
    _start_ray_for(request, dataset)
    dt = dtype(dataset)
    table = f"test_partial_upsert_schema_evolution_{dt.value}"
    _keyed_table(cat, table)
    first = pd.DataFrame(
        {"id": [1, 2, 3], "name": ["Alice", "Bob", "Charlie"], "age": [25, 30, 35]}
    )
    _write(cat, dc.from_pandas(first, dt), table)
    partial = pd.DataFrame(
        {
            "id": [1, 2, 4],
            "name": ["Alice_Updated", "Bob_Updated", "Dave"],
            "city": ["NYC", "LA", "Houston"],
            "department": ["Engineering", None, "Sales"],
        }
    )
    _write(cat, dc.from_pandas(partial, dt), table)
    arrow_schema = dc.get_table(table, catalog=cat, namespace=NS).table_version.schema.arrow
    rows = dc.to_pandas(_read(cat, table, read_as=dt), schema=arrow_schema)
    assert len(rows) == 4
    row = {int(r["id"]): r for _, r in rows.iterrows()}
    assert (row[1]["name"], row[1]["age"], row[1]["city"], row[1]["department"]) == (
        "Alice_Updated",
        25,
        "NYC",
        "Engineering",
    )
    assert (row[2]["name"], row[2]["age"], row[2]["city"]) == ("Bob_Updated", 30, "LA")
    assert pd.isna(row[2]["department"])
    assert (row[3]["name"], row[3]["age"]) == ("Charlie", 35)
    assert pd.isna(row[3]["city"]) and pd.isna(row[3]["department"])
    assert row[4]["name"] == "Dave" and pd.isna(row[4]["age"])
    assert (row[4]["city"], row[4]["department"]) == ("Houston", "Sales")


def test_three_upsert_deltas_comprehensive_merge(cat):
    _keyed_table(cat, "test_three_upserts")
    _write(cat, people(), "test_three_upserts")
    _write(cat, people_upsert(), "test_three_upserts")
    third = pd.DataFrame(
        {
            "id": [1, 5, 8, 9],
            "name": ["Alice_Final", "Eve_Final", "Henry", "Iris"],
            "age": [26, 46, 60, 65],
            "city": ["NYC_Final", "Phoenix_Final", "Denver", "Portland"],
        }
    )
    _write(cat, third, "test_three_upserts")
    result = _read(cat, "test_three_upserts")
    assert dc.dataset_length(result) == 9
    assert rows_by_id(result) == {
        1: ("Alice_Final", 26, "NYC_Final"),
        2: ("Bob", 30, "LA"),
        3: ("Charlie_Updated", 36, "Chicago_New"),
        4: ("Dave_Updated", 41, "Houston_New"),
        5: ("Eve_Final", 46, "Phoenix_Final"),
        6: ("Frank", 50, "Boston"),
        7: ("Grace", 55, "Seattle"),
        8: ("Henry", 60, "Denver"),
        9: ("Iris", 65, "Portland"),
    }


def test_chrono_rejects_merge_keys(cat):
    _keyed_table(cat, "test_chrono_merge_keys_rejected")
    two = pd.DataFrame(
        {"id": [1, 2], "name": ["Alice", "Bob"], "age": [25, 30], "city": ["NYC", "LA"]}
    )
    with pytest.raises(error("SchemaValidationError")):
        _write(cat, two, "test_chrono_merge_keys_rejected", "CHRONO")


def test_verify_delta_types_created(cat):
    _keyed_table(cat, "test_delta_types")
    _write(cat, people(), "test_delta_types")
    schema = dc.get_table(table="test_delta_types", namespace=NS, catalog=cat).table_version.schema
    assert schema.merge_keys
    assert any(f.is_merge_key for f in schema.fields if f.arrow.name == "id")


@pytest.mark.parametrize("suffix", ["", "_v2"])
def test_replace_mode_with_duplicates_existing_table(cat, suffix):
    """DeltaCAT's test and its _v2 twin: REPLACE on a keyed table keeps the last duplicate."""
    table = f"test_replace_duplicates_existing{suffix}"
    _keyed_table(cat, table)
    _write(cat, people().head(3), table, "AUTO")
    duplicates = pd.DataFrame(
        {
            "id": [4, 5, 4, 6, 5],
            "name": ["Dave", "Eve", "Dave_Updated", "Frank", "Eve_Updated"],
            "age": [40, 45, 41, 50, 46],
            "city": ["Houston", "Phoenix", "Houston_New", "Boston", "Phoenix_New"],
        }
    )
    _write(cat, duplicates, table, "REPLACE")
    result = _read(cat, table)
    assert dc.dataset_length(result) == 3
    assert rows_by_id(result.collect().to_pandas()) == {
        4: ("Dave_Updated", 41, "Houston_New"),
        5: ("Eve_Updated", 46, "Phoenix_New"),
        6: ("Frank", 50, "Boston"),
    }


MERGE_ORDER_PROPERTIES = {
    "READ_OPTIMIZATION_LEVEL": ("TableReadOptimizationLevel", "MAX"),
    "APPENDED_RECORD_COUNT_COMPACTION_TRIGGER": 1,
    "APPENDED_FILE_COUNT_COMPACTION_TRIGGER": 1000,
    "APPENDED_DELTA_COUNT_COMPACTION_TRIGGER": 100,
}


def _merge_order_properties():
    return {
        prop(k): member(*v) if isinstance(v, tuple) else v
        for k, v in MERGE_ORDER_PROPERTIES.items()
    }


def _order_field(name, order):
    merge_order = dc.MergeOrder.of(member("SortOrder", order), member("NullOrder", "AT_END"))
    return dc.Field.of(pa.field(name, pa.int64()), merge_order=merge_order)


def _event_time_field():
    return dc.Field.of(pa.field("event_time", pa.int64()), is_event_time=True)


@pytest.mark.parametrize(
    "case, expected",
    [
        # ASCENDING keeps the smallest timestamp per key.
        ("ascending", {1: ("Alice_first", 100, "old_alice"), 2: ("Bob_first", 150, "old_bob")}),
        # DESCENDING keeps the largest.
        ("descending", {1: ("Alice_last", 200, "new_alice"), 2: ("Bob_last", 250, "new_bob")}),
        # An event-time field acts as a descending merge order: the latest event wins.
        ("event_time", {1: ("Alice_late", 2000, "new_alice"), 2: ("Bob_late", 2500, "new_bob")}),
        # An explicit merge order wins over the event time.
        (
            "precedence",
            {1: ("Alice_first", 100, 2000, "old_alice"), 2: ("Bob_first", 150, 2500, "old_bob")},
        ),
    ],
)
def test_merge_order(cat, case, expected):
    """DeltaCAT's test_merge_order_ascending_functionality, ..._descending_functionality,
    test_event_time_as_default_merge_order and
    test_merge_order_takes_precedence_over_event_time: one AUTO write of duplicate keys."""
    key = dc.Field.of(pa.field("id", pa.int64()), is_merge_key=True)
    name, value = (
        dc.Field.of(pa.field("name", pa.string())),
        dc.Field.of(pa.field("value", pa.string())),
    )
    rows = {"id": [1, 1, 2, 2], "value": ["old_alice", "new_alice", "old_bob", "new_bob"]}
    if case in ("ascending", "descending"):
        fields = [key, name, _order_field("timestamp", case.upper()), value]
        rows |= {
            "name": ["Alice_first", "Alice_last", "Bob_first", "Bob_last"],
            "timestamp": [100, 200, 150, 250],
        }
        columns = ("name", "timestamp", "value")
    elif case == "event_time":
        fields = [key, name, _event_time_field(), value]
        rows |= {
            "name": ["Alice_early", "Alice_late", "Bob_early", "Bob_late"],
            "event_time": [1000, 2000, 1500, 2500],
        }
        columns = ("name", "event_time", "value")
    else:
        fields = [key, name, _order_field("timestamp", "ASCENDING"), _event_time_field(), value]
        rows |= {
            "name": ["Alice_first", "Alice_last", "Bob_first", "Bob_last"],
            "timestamp": [100, 200, 150, 250],
            "event_time": [2000, 1000, 2500, 1500],
        }
        columns = ("name", "timestamp", "event_time", "value")
    table = f"test_merge_order_{case}"
    _keyed_table(cat, table, dc.Schema.of(fields), _merge_order_properties())
    _write(cat, pd.DataFrame(rows), table, "AUTO")
    result = _read(cat, table)
    assert result.count_rows() == 2
    assert rows_by_id(result.collect().to_pandas(), columns) == expected


def test_delete_mode_merge_key_only_validation(catalogs):
    """DELETE needs only the merge-key column; other and unknown columns are ignored."""
    cat = catalogs.add("test_table_version_catalog")
    table = "delete_merge_key_test"

    def write(data, write_mode, **kwargs):
        dc.write_to_table(
            data,
            table,
            catalog=cat,
            namespace="test_ns",
            mode=mode(write_mode),
            auto_create_namespace=True,
            **kwargs,
        )

    def ids():
        return set(dc.to_pandas(dc.read_table(table, catalog=cat, namespace="test_ns"))["id"])

    start = pa.table(
        {
            "id": [1, 2, 3],
            "name": ["Alice", "Bob", "Charlie"],
            "age": [25, 30, 35],
            "city": ["NYC", "LA", "Chicago"],
        }
    )
    write(start, "CREATE", schema=basic_schema(merge_key=True))
    write(pa.table({"id": [2]}), "DELETE")
    assert ids() == {1, 3}
    write(pa.table({"id": [1], "name": ["Alice_ToDelete"], "extra_field": ["ignored"]}), "DELETE")
    assert ids() == {3}
