"""URLs: ``dc.put``, ``dc.get``, ``dc.list`` and ``dc.copy`` on ``dc://`` URLs.

Ports DeltaCAT 2.0 ``TestDeltaCAT`` (deltacat/tests/test_deltacat_api.py):
test_cross_catalog_namespace_copy, test_catalog_listing_shallow_local_metafiles, the namespace
and table parts of test_recursive_listing_multiple_namespaces_with_tables,
test_recursive_listing_multiple_tables_per_namespace and
test_recursive_listing_empty_namespaces_mixed_with_populated, the data part of
test_recursive_cross_catalog_copy, and the six cross-catalog table and namespace copy tests.
test_put_catalog_url_registers_catalog ports the ``setup_method`` of the class.

DeltaCAT's own metafile model is out of scope (see REPORT.md), so these tests check names and
data, not metafile ids (``equivalent_to`` versus ``==``), streams, partitions, deltas or their
counts. Not ported: test_catalog_listing_shallow_ray_dataset,
test_recursive_listing_multiple_deltas_per_table, test_non_recursive_listing_vs_recursive_listing
and test_recursive_listing_all_children_processed.
"""

from __future__ import annotations

import pandas as pd
import pytest

import workbench as dc
from tests.compat.helpers import dtype, member, mode, prop

pytestmark = pytest.mark.compat

ONE, TWO = "test_catalog_1", "test_catalog_2"


@pytest.fixture(autouse=True)
def two_catalogs(catalogs):
    """DeltaCAT's setup_method registers two empty catalogs (see test_put_catalog_url...)."""
    catalogs.add(ONE)
    catalogs.add(TWO, default=False)


def url(text):
    return dc.DeltaCatUrl(text)


def _write(data, table, namespace, write_mode="CREATE", catalog=ONE, **kwargs):
    dc.write_to_table(
        data=data,
        table=table,
        namespace=namespace,
        catalog=catalog,
        mode=mode(write_mode),
        **kwargs,
    )


def _read(table, namespace, catalog):
    return dc.read_table(table=table, namespace=namespace, catalog=catalog, read_as=dtype("PANDAS"))


def assert_same_rows(expected: pd.DataFrame, actual: pd.DataFrame):
    """DeltaCAT's _assert_data_equivalence: equal frames (dtypes included) once sorted by the
    first column."""
    if len(expected) == 0:
        return
    key = expected.columns[0]
    pd.testing.assert_frame_equal(
        expected.sort_values(key).reset_index(drop=True),
        actual.sort_values(key).reset_index(drop=True),
    )


def _names(objects, kind):
    """Names of the listed objects of one kind ("Namespace" or "Table")."""
    return [o.name for o in objects if type(o).__name__ == kind]


def test_put_catalog_url_registers_catalog(tmp_path):
    """``dc.put`` of a catalog URL with ``root=`` registers a catalog, which starts with the
    namespace ``default`` only."""
    catalog = dc.put(url("dc://test_catalog_3"), root=str(tmp_path / "three"))
    assert isinstance(catalog, dc.Catalog)
    assert [n.name for n in dc.list(url("dc://test_catalog_3"))] == ["default"]


def test_cross_catalog_namespace_copy():
    source = dc.put(url(f"dc://{ONE}/test_namespace"))
    copied = dc.copy(url(f"dc://{ONE}/test_namespace"), url(f"dc://{TWO}/test_namespace"))
    assert isinstance(source, dc.Namespace) and isinstance(copied, dc.Namespace)
    assert source.name == copied.name == "test_namespace"
    assert dc.get(url(f"dc://{ONE}/test_namespace")).name == "test_namespace"
    assert dc.get(url(f"dc://{TWO}/test_namespace")).name == "test_namespace"


def test_catalog_listing_shallow_local_metafiles():
    dc.put(url(f"dc://{ONE}/test_namespace"))
    assert "test_namespace" in [o.name for o in dc.list(url(f"dc://{ONE}"))]


def _rows(column="value", values=("a", "b", "c")):
    return pd.DataFrame({"id": list(range(1, len(values) + 1)), column: list(values)})


def test_recursive_listing_multiple_namespaces_with_tables():
    for ns in ("namespace_alpha", "namespace_beta", "namespace_gamma"):
        dc.put(url(f"dc://{ONE}/{ns}"))
    for i, ns in enumerate(("namespace_alpha", "namespace_beta", "namespace_gamma"), 1):
        _write(
            _rows(),
            f"table{i}",
            ns,
            content_type=member("ContentType", "PARQUET"),
            auto_create_namespace=True,
        )
    listed = dc.list(url(f"dc://{ONE}"), recursive=True)
    namespaces = _names(listed, "Namespace")
    assert len(namespaces) == 4
    assert set(namespaces) == {"namespace_alpha", "namespace_beta", "namespace_gamma", "default"}
    tables = _names(listed, "Table")
    assert len(tables) == 3 and set(tables) == {"table1", "table2", "table3"}


def test_recursive_listing_multiple_tables_per_namespace():
    dc.put(url(f"dc://{ONE}/multi_table_namespace"))
    names = ["events", "users", "products", "orders"]
    for table in names:
        _write(
            _rows(values=("x", "y")),
            table,
            "multi_table_namespace",
            content_type=member("ContentType", "PARQUET"),
        )
    tables = _names(dc.list(url(f"dc://{ONE}"), recursive=True), "Table")
    assert len(tables) == 4 and set(tables) == set(names)


def test_recursive_listing_empty_namespaces_mixed_with_populated():
    for ns in ("empty_namespace_1", "empty_namespace_2", "populated_namespace"):
        dc.put(url(f"dc://{ONE}/{ns}"))
    rows = pd.DataFrame({"id": [1, 2], "data": ["test1", "test2"]})
    _write(
        rows,
        "test_table",
        "populated_namespace",
        content_type=member("ContentType", "PARQUET"),
        auto_create_namespace=True,
    )
    listed = dc.list(url(f"dc://{ONE}"), recursive=True)
    namespaces = _names(listed, "Namespace")
    assert len(namespaces) == 4
    assert set(namespaces) == {
        "empty_namespace_1",
        "empty_namespace_2",
        "populated_namespace",
        "default",
    }
    assert _names(listed, "Table") == ["test_table"]


def test_recursive_cross_catalog_copy():
    """``dc://cat/**`` copies every namespace and table; the copies are independent."""
    parquet = {"content_type": member("ContentType", "PARQUET"), "auto_create_namespace": True}
    dc.put(url(f"dc://{ONE}/analytics"))
    compact_every_write = {
        prop("READ_OPTIMIZATION_LEVEL"): member("TableReadOptimizationLevel", "MAX"),
        prop("APPENDED_RECORD_COUNT_COMPACTION_TRIGGER"): 1,
        prop("APPENDED_FILE_COUNT_COMPACTION_TRIGGER"): 1,
        prop("APPENDED_DELTA_COUNT_COMPACTION_TRIGGER"): 1,
    }
    events = pd.DataFrame(
        {
            "event_id": [1, 2, 3],
            "user_id": ["user_1", "user_2", "user_3"],
            "event_type": ["click", "view", "purchase"],
            "timestamp": pd.to_datetime(["2023-01-01", "2023-01-02", "2023-01-03"]),
            "value": [10.5, 20.0, 150.75],
        }
    )
    _write(events, "events", "analytics", table_properties=compact_every_write, **parquet)
    more_events = pd.DataFrame(
        {
            "event_id": [4, 5, 6, 7],
            "user_id": ["user_4", "user_1", "user_5", "user_2"],
            "event_type": ["view", "click", "purchase", "refund"],
            "timestamp": pd.to_datetime(["2023-01-04", "2023-01-05", "2023-01-06", "2023-01-07"]),
            "value": [0.0, 5.25, 299.99, -150.75],
        }
    )
    _write(more_events, "events", "analytics", "APPEND", **parquet)
    users = pd.DataFrame(
        {
            "user_id": ["user_1", "user_2", "user_3", "user_4", "user_5"],
            "username": ["alice", "bob", "charlie", "diana", "eve"],
            "email": [f"{n}@test.com" for n in ("alice", "bob", "charlie", "diana", "eve")],
            "created_at": pd.to_datetime(
                ["2022-12-01", "2022-12-15", "2022-12-20", "2023-01-01", "2023-01-03"]
            ),
            "is_active": [True, True, False, True, True],
        }
    )
    _write(users, "users", "analytics", **parquet)
    events_v2 = pd.DataFrame(
        {
            "event_id": [8, 9, 10],
            "user_id": ["user_3", "user_4", "user_5"],
            "event_type": ["signup", "login", "logout"],
            "timestamp": pd.to_datetime(["2023-01-08", "2023-01-09", "2023-01-10"]),
            "value": [0.0, 0.0, 0.0],
        }
    )
    _write(events_v2, "events", "analytics", table_version="2", **parquet)
    dc.put(url(f"dc://{ONE}/products"))
    inventory = pd.DataFrame(
        {
            "product_id": ["prod_1", "prod_2", "prod_3"],
            "name": ["Widget A", "Widget B", "Super Widget"],
            "category": ["widgets", "widgets", "premium"],
            "price": [19.99, 29.99, 149.99],
            "in_stock": [True, False, True],
            "metadata": [  # dicts with different keys
                {"color": "red"},
                {"color": "blue", "size": "large"},
                {"color": "gold", "premium": True},
            ],
        }
    )
    _write(inventory, "inventory", "products", **parquet)
    categories = pd.DataFrame(
        {
            "category_id": ["widgets", "premium", "accessories"],
            "display_name": ["Standard Widgets", "Premium Products", "Accessories"],
            "description": [
                "Basic widget products",
                "High-end premium items",
                "Additional accessories",
            ],
            "active": [True, True, False],
        }
    )
    _write(categories, "categories", "products", **parquet)
    dc.put(url(f"dc://{ONE}/empty_data"))
    dc.put(url(f"dc://{ONE}/orders"))
    orders = pd.DataFrame(
        {
            "order_id": ["order_1", "order_2", "order_3"],
            "user_id": ["user_1", "user_2", "user_1"],
            "product_ids": [["prod_1"], ["prod_2", "prod_3"], ["prod_1", "prod_2"]],
            "order_date": pd.to_datetime(["2023-01-05", "2023-01-06", "2023-01-07"]),
            "total_amount": [19.99, 179.98, 49.98],
            "status": ["completed", "pending", "completed"],
        }
    )
    _write(orders, "transactions", "orders", **parquet)

    dc.copy(url(f"dc://{ONE}/**"), url(f"dc://{TWO}/"))

    for namespace, table in [
        ("analytics", "events"),
        ("analytics", "users"),
        ("products", "inventory"),
        ("products", "categories"),
        ("orders", "transactions"),
    ]:
        assert dc.table_exists(table=table, namespace=namespace, catalog=TWO)
        source, copied = _read(table, namespace, ONE), _read(table, namespace, TWO)
        assert len(source) == len(copied)
        assert list(source.columns) == list(copied.columns)
        assert_same_rows(source, copied)
        # Appending to one catalog leaves the other as it was, in both directions.
        _write(source, table, namespace, "APPEND", auto_create_namespace=True)
        assert_same_rows(source, _read(table, namespace, TWO))
        doubled = _read(table, namespace, ONE)
        assert len(doubled) == 2 * len(source)
        _write(copied, table, namespace, "APPEND", catalog=TWO, auto_create_namespace=True)
        assert_same_rows(doubled, _read(table, namespace, ONE))
        assert len(_read(table, namespace, TWO)) == 2 * len(copied)
    assert dc.namespace_exists(namespace="empty_data", catalog=TWO)


def _users():
    return pd.DataFrame(
        {"id": [1, 2, 3], "name": ["alice", "bob", "charlie"], "value": [1.1, 2.2, 3.3]}
    )


@pytest.mark.parametrize(
    "target", ["users", "employees"], ids=["without_rename", "with_table_rename"]
)
def test_cross_catalog_table_copy(target):
    """DeltaCAT's test_cross_catalog_table_copy_without_rename and ..._with_table_rename; plain
    string URLs with trailing slashes."""
    _write(_users(), "users", "default", auto_create_namespace=True)
    dc.copy(f"dc://{ONE}/default/users/", f"dc://{TWO}/default/{target}/")
    assert_same_rows(_users(), _read(target, "default", TWO))
    assert_same_rows(_users(), _read("users", "default", ONE))


def test_cross_catalog_namespace_recursive_copy_with_tables():
    """Copying ``ns/`` copies the namespace alone; ``ns/**`` then copies its tables."""
    users = pd.DataFrame(
        {"id": [1, 2, 3], "name": ["alice", "bob", "charlie"], "role": ["admin", "user", "user"]}
    )
    products = pd.DataFrame(
        {
            "product_id": [101, 102, 103],
            "name": ["laptop", "mouse", "keyboard"],
            "price": [999.99, 29.99, 79.99],
        }
    )
    _write(users, "users", "analytics", auto_create_namespace=True)
    _write(products, "products", "analytics")
    dc.copy(f"dc://{ONE}/analytics/", f"dc://{TWO}/analytics/")
    dc.copy(f"dc://{ONE}/analytics/**", f"dc://{TWO}/analytics/")
    assert dc.namespace_exists(namespace="analytics", catalog=TWO)
    for table, rows in (("users", users), ("products", products)):
        assert_same_rows(rows, _read(table, "analytics", TWO))
        assert_same_rows(rows, _read(table, "analytics", ONE))


@pytest.mark.parametrize(
    "source, target",
    [("production", "production"), ("staging", "development")],
    ids=["without_rename", "with_rename"],
)
def test_cross_catalog_namespace_copy_by_url(source, target):
    """DeltaCAT's test_cross_catalog_namespace_copy_without_rename and ..._with_rename."""
    dc.create_namespace(namespace=source, catalog=ONE)
    dc.copy(f"dc://{ONE}/{source}/", f"dc://{TWO}/{target}/")
    assert dc.namespace_exists(namespace=target, catalog=TWO)
    listed = [ns.name for ns in dc.list(f"dc://{TWO}/")]
    assert target in listed
    if source != target:
        assert source not in listed
    assert dc.namespace_exists(namespace=source, catalog=ONE)


def test_cross_catalog_table_copy_multiple_deltas():
    first = pd.DataFrame({"id": [1, 2], "name": ["alice", "bob"], "value": [1.1, 2.2]})
    second = pd.DataFrame({"id": [3, 4], "name": ["charlie", "david"], "value": [3.3, 4.4]})
    _write(first, "multi_delta_table", "default", auto_create_namespace=True)
    _write(second, "multi_delta_table", "default", "APPEND")
    dc.copy(f"dc://{ONE}/default/multi_delta_table/", f"dc://{TWO}/default/multi_delta_table_copy/")
    expected = pd.concat([first, second], ignore_index=True)
    assert_same_rows(expected, _read("multi_delta_table_copy", "default", TWO))
