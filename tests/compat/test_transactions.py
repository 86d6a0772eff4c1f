"""Multi-table transactions: atomic commit and rollback, nesting, catalog scoping, history.

Ports DeltaCAT 2.0 ``TestMultiTableTransactions`` (deltacat/tests/catalog/
test_default_catalog_impl.py), all 18 tests. As in DeltaCAT, most calls pass no ``catalog=``
and rely on the class's catalog being the default. Extra catalogs are registered through the
``catalogs`` fixture instead of ``dc.put_catalog`` (see conftest.py).

test_transaction_history_querying is ported without DeltaCAT's ``except Exception`` fallback,
which made the original pass whatever ``dc.transactions`` returned.
"""

from __future__ import annotations

import pandas as pd
import pyarrow as pa
import pytest

import workbench as dc
from tests.compat.helpers import copy_on_write, ctype, dtype, mode, rows_by_id

pytestmark = pytest.mark.compat

NS = "transaction_test_namespace"
MISMATCH = "Transaction and catalog parameters are mutually exclusive"


@pytest.fixture(autouse=True)
def cat(catalogs) -> str:
    return catalogs.add("transaction_test_catalog", namespace=NS)


def _create(data, table, namespace=NS, write_mode="CREATE", **kwargs):
    dc.write_to_table(
        data=data,
        table=table,
        namespace=namespace,
        mode=mode(write_mode),
        auto_create_namespace=True,
        **kwargs,
    )


def _read(table, namespace=NS, **kwargs) -> pd.DataFrame:
    return dc.to_pandas(dc.read_table(table, namespace=namespace, **kwargs))


def _pair(column, value):
    return pd.DataFrame({"id": [1, 2], column: [value, value]})


def test_basic_multi_table_transaction():
    customers = pd.DataFrame(
        {
            "customer_id": [1, 2, 3],
            "name": ["Alice", "Bob", "Charlie"],
            "email": ["alice@example.com", "bob@example.com", "charlie@example.com"],
        }
    )
    orders = pd.DataFrame(
        {
            "order_id": [101, 102, 103],
            "customer_id": [1, 2, 1],
            "amount": [25.50, 15.75, 42.00],
            "status": ["completed", "pending", "completed"],
        }
    )
    with dc.transaction():
        _create(customers, "customers")
        _create(orders, "orders")
    for table in ("customers", "orders"):
        assert dc.dataset_length(dc.read_table(table, namespace=NS)) == 3
        assert dc.table_exists(table, namespace=NS)


def test_transaction_rollback_on_error():
    _create(pd.DataFrame({"id": [1, 2], "value": ["a", "b"]}), "rollback_test")
    with pytest.raises(ValueError), dc.transaction():
        _create(pd.DataFrame({"id": [3], "value": ["c"]}), "rollback_test", write_mode="APPEND")
        raise ValueError("Simulated transaction error")
    rows = _read("rollback_test")
    assert len(rows) == 2
    assert set(rows["value"]) == {"a", "b"}


def test_complex_multi_table_operations():
    products = pd.DataFrame(
        {
            "product_id": [1, 2, 3, 4],
            "name": ["Widget", "Gadget", "Tool", "Device"],
            "price": [10.99, 25.50, 15.75, 99.99],
            "category": ["electronics", "electronics", "tools", "electronics"],
        }
    )
    sales = pd.DataFrame(
        {
            "sale_id": [1001, 1002, 1003, 1004, 1005],
            "product_id": [1, 2, 1, 3, 4],
            "quantity": [2, 1, 1, 3, 1],
            "sale_date": ["2024-01-01", "2024-01-01", "2024-01-02", "2024-01-02", "2024-01-03"],
        }
    )
    with dc.transaction():
        _create(products, "products")
        _create(sales, "sales")
        seen = _read("products")  # the transaction reads its own uncommitted table
        electronics = seen[seen["category"] == "electronics"]
        summary = pd.DataFrame(
            {
                "category": ["electronics"],
                "product_count": [len(electronics)],
                "avg_price": [electronics["price"].mean()],
                "total_value": [electronics["price"].sum()],
            }
        )
        _create(summary, "category_summary")
    for table in ("products", "sales", "category_summary"):
        assert dc.table_exists(table, namespace=NS)
    result = _read("category_summary")
    assert len(result) == 1
    assert result.iloc[0]["category"] == "electronics"
    assert result.iloc[0]["product_count"] == 3
    assert result.iloc[0]["avg_price"] == pytest.approx(45.49333, rel=1e-4)


def test_nested_transactions():
    """A nested transaction is independent; the outer one continues after it."""
    with dc.transaction():
        _create(pd.DataFrame({"id": [1, 2], "level": ["outer", "outer"]}), "nested_test_outer")
        with dc.transaction():
            _create(pd.DataFrame({"id": [3, 4], "level": ["inner", "inner"]}), "nested_test_inner")
            assert dc.dataset_length(dc.read_table("nested_test_inner", namespace=NS)) == 2
        _create(
            pd.DataFrame({"id": [5, 6], "level": ["additional", "additional"]}),
            "nested_test_outer",
            write_mode="APPEND",
        )
    outer, inner = _read("nested_test_outer"), _read("nested_test_inner")
    assert len(outer) == 4
    assert set(outer["level"]) == {"outer", "additional"}
    assert len(inner) == 2
    assert (inner["level"] == "inner").all()


def test_nested_transaction_independence_on_outer_failure():
    """The inner transaction stays committed when the outer one fails afterwards."""
    outer_failure = "Simulated outer transaction failure"
    with pytest.raises(ValueError, match=outer_failure), dc.transaction():
        _create(
            pd.DataFrame({"id": [3, 4], "status": ["rollback", "rollback"]}),
            "outer_failure_test",
        )
        with dc.transaction():
            _create(_pair("status", "committed"), "inner_success_test")
            inside = _read("inner_success_test")
            assert len(inside) == 2
            assert (inside["status"] == "committed").all()
        raise ValueError("Simulated outer transaction failure")
    assert dc.table_exists("inner_success_test", namespace=NS)
    after = _read("inner_success_test")
    assert len(after) == 2
    assert (after["status"] == "committed").all()
    assert not dc.table_exists("outer_failure_test", namespace=NS)


def test_transaction_context_isolation():
    with dc.transaction():
        _create(pd.DataFrame({"id": [1], "source": ["context_a"]}), "context_test_outer")
        with dc.transaction():
            _create(pd.DataFrame({"id": [2], "source": ["context_b"]}), "context_test_inner")
            inner = _read("context_test_inner")
            assert len(inner) == 1
            assert inner.iloc[0]["source"] == "context_b"
        outer = _read("context_test_outer")  # still uncommitted, seen by its own transaction
        assert len(outer) == 1
        assert outer.iloc[0]["source"] == "context_a"
    assert dc.table_exists("context_test_outer", namespace=NS)
    assert dc.table_exists("context_test_inner", namespace=NS)


def test_default_catalog_transaction():
    with dc.transaction():
        _create(_pair("source", "default_catalog"), "default_catalog_test", namespace="default")
    assert dc.table_exists("default_catalog_test", namespace="default")
    rows = _read("default_catalog_test", namespace="default")
    assert len(rows) == 2
    assert (rows["source"] == "default_catalog").all()


def test_named_catalog_transaction(catalogs, cat):
    specific = catalogs.add("specific_transaction_catalog", namespace="specific_ns", default=False)
    with dc.transaction(specific):  # the catalog name is passed positionally
        _create(
            _pair("source", "specific_catalog"), "specific_catalog_test", namespace="specific_ns"
        )
    assert dc.table_exists("specific_catalog_test", namespace="specific_ns", catalog=specific)
    assert not dc.table_exists("specific_catalog_test", namespace=NS, catalog=cat)
    rows = _read("specific_catalog_test", namespace="specific_ns", catalog=specific)
    assert len(rows) == 2
    assert (rows["source"] == "specific_catalog").all()


def _only_in_own_catalog(tables: dict[str, str], namespace: str):
    """Each table exists in its own catalog and in none of the others."""
    for table, owner in tables.items():
        for catalog in tables.values():
            exists = dc.table_exists(table, namespace=namespace, catalog=catalog)
            assert exists == (catalog == owner), (table, catalog)


def test_catalog_isolation_in_transactions(catalogs):
    a = catalogs.add("catalog_isolation_test_a", namespace="test_ns", default=False)
    b = catalogs.add("catalog_isolation_test_b", namespace="test_ns", default=False)
    _create(_pair("catalog", "A"), "catalog_a_table", namespace="test_ns", catalog=a)
    with dc.transaction(b):
        _create(_pair("catalog", "B"), "catalog_b_table", namespace="test_ns")
        rows = _read("catalog_b_table", namespace="test_ns")
        assert len(rows) == 2
        assert (rows["catalog"] == "B").all()
        with pytest.raises(ValueError, match=MISMATCH):
            dc.read_table("catalog_a_table", namespace="test_ns", catalog=a)
    _only_in_own_catalog({"catalog_a_table": a, "catalog_b_table": b}, "test_ns")


def test_transaction_scope_is_catalog_specific(catalogs):
    primary = catalogs.add("scoped_ops_primary", namespace="scoped_ns", default=False)
    secondary = catalogs.add("scoped_ops_secondary", namespace="scoped_ns", default=False)
    with dc.transaction(primary):
        _create(_pair("catalog", "primary"), "primary_table", namespace="scoped_ns")
        rows = _read("primary_table", namespace="scoped_ns")
        assert len(rows) == 2
        assert (rows["catalog"] == "primary").all()
    with dc.transaction(secondary):
        _create(_pair("catalog", "secondary"), "secondary_table", namespace="scoped_ns")
        rows = _read("secondary_table", namespace="scoped_ns")
        assert len(rows) == 2
        assert (rows["catalog"] == "secondary").all()
        with pytest.raises(ValueError, match=MISMATCH):
            dc.read_table("primary_table", namespace="scoped_ns", catalog=primary)
    _only_in_own_catalog({"primary_table": primary, "secondary_table": secondary}, "scoped_ns")


def test_nested_transactions_different_catalogs(catalogs):
    outer = catalogs.add("nested_different_outer", namespace="nested_ns", default=False)
    inner = catalogs.add("nested_different_inner", namespace="nested_ns", default=False)
    with dc.transaction(outer):
        _create(_pair("location", "outer"), "nested_outer_table", namespace="nested_ns")
        with dc.transaction(inner):
            _create(_pair("location", "inner"), "nested_inner_table", namespace="nested_ns")
            assert (
                dc.dataset_length(dc.read_table("nested_inner_table", namespace="nested_ns")) == 2
            )
        # The outer transaction's catalog is in force again.
        assert dc.dataset_length(dc.read_table("nested_outer_table", namespace="nested_ns")) == 2
    _only_in_own_catalog({"nested_outer_table": outer, "nested_inner_table": inner}, "nested_ns")


def test_cross_catalog_operations_raise_value_error_with_validation(catalogs):
    primary = catalogs.add("primary_exception_catalog", default=False)
    secondary = catalogs.add("secondary_exception_catalog", default=False)
    rows = pa.Table.from_pydict({"id": [1, 2], "value": ["a", "b"]})
    with pytest.raises(ValueError, match=MISMATCH), dc.transaction(primary):
        _create(rows, "cross_catalog_table", namespace="scoped_ns", catalog=secondary)
    assert not dc.table_exists("cross_catalog_table", namespace="scoped_ns", catalog=secondary)


def test_non_existent_catalog_raises_validation_value_error(catalogs):
    catalogs.add("primary_nonexistent_catalog", default=False)
    with pytest.raises(ValueError, match=r"Catalog 'invalid_catalog_name' not found\."):
        dc.transaction("invalid_catalog_name")  # the call itself checks the name


def test_mixed_operations_validation_prevents_cross_catalog_access(catalogs):
    primary = catalogs.add("primary_mixed_catalog", default=False)
    secondary = catalogs.add("secondary_mixed_catalog", default=False)
    rows = pa.Table.from_pydict({"id": [1, 2], "value": ["a", "b"]})
    with pytest.raises(ValueError, match=MISMATCH), dc.transaction(primary):
        _create(rows, "primary_table", namespace="scoped_ns")
        _create(rows, "secondary_table", namespace="scoped_ns", catalog=secondary)
    # The failed transaction's first write is rolled back too.
    assert not dc.table_exists("primary_table", namespace="scoped_ns", catalog=primary)
    assert not dc.table_exists("secondary_table", namespace="scoped_ns", catalog=secondary)


def _keyed_schema(key, *others):
    fields = [dc.Field.of(pa.field(key, pa.int64()), is_merge_key=True)]
    fields += [dc.Field.of(pa.field(name, t)) for name, t in others]
    return dc.Schema.of(fields)


PERSON = (("name", pa.string()), ("age", pa.int32()), ("city", pa.string()))


def _create_keyed(table, schema, **kwargs):
    dc.create_table(
        table=table,
        namespace=NS,
        schema=schema,
        content_types=[ctype("PARQUET")],
        table_properties=copy_on_write(),
        **kwargs,
    )


def _merge(data, table, write_mode="MERGE"):
    _create(data, table, write_mode=write_mode, content_type=ctype("PARQUET"))


def _people(ids, names, ages, cities):
    return pd.DataFrame({"id": ids, "name": names, "age": ages, "city": cities})


def _keyed_rows(table):
    return rows_by_id(pd.DataFrame(dc.read_table(table, namespace=NS).to_pydict()))


def test_multi_table_transaction_with_merge_keys():
    first = _people([1, 2, 3], ["Alice", "Bob", "Charlie"], [25, 30, 35], ["NYC", "LA", "Chicago"])
    with dc.transaction():
        _create_keyed("customers_merge_keys", _keyed_schema("id", *PERSON))
        _create_keyed("employees_merge_keys", _keyed_schema("id", *PERSON))
        _merge(first, "customers_merge_keys")
        _merge(first, "employees_merge_keys")
        _merge(
            _people([2, 4], ["Bob_Updated", "Dave"], [31, 40], ["LA_Updated", "Houston"]),
            "customers_merge_keys",
        )
        _merge(
            _people([3, 5], ["Charlie_Updated", "Eve"], [36, 45], ["Chicago_Updated", "Phoenix"]),
            "employees_merge_keys",
        )
    assert _keyed_rows("customers_merge_keys") == {
        1: ("Alice", 25, "NYC"),
        2: ("Bob_Updated", 31, "LA_Updated"),
        3: ("Charlie", 35, "Chicago"),
        4: ("Dave", 40, "Houston"),
    }
    assert _keyed_rows("employees_merge_keys") == {
        1: ("Alice", 25, "NYC"),
        2: ("Bob", 30, "LA"),
        3: ("Charlie_Updated", 36, "Chicago_Updated"),
        5: ("Eve", 45, "Phoenix"),
    }


def test_multi_table_transaction_with_delete_operations():
    everyone = _people(
        [1, 2, 3, 4, 5],
        ["Alice", "Bob", "Charlie", "Dave", "Eve"],
        [25, 30, 35, 40, 45],
        ["NYC", "LA", "Chicago", "Houston", "Phoenix"],
    )
    with dc.transaction():
        for table in ("customers_delete_ops", "employees_delete_ops"):
            _create_keyed(table, _keyed_schema("id", *PERSON), auto_create_namespace=True)
            _merge(everyone, table)
        _merge(pd.DataFrame({"id": [2, 4]}), "customers_delete_ops", "DELETE")
        _merge(pd.DataFrame({"id": [1, 5]}), "employees_delete_ops", "DELETE")
    assert _keyed_rows("customers_delete_ops") == {
        1: ("Alice", 25, "NYC"),
        3: ("Charlie", 35, "Chicago"),
        5: ("Eve", 45, "Phoenix"),
    }
    assert _keyed_rows("employees_delete_ops") == {
        2: ("Bob", 30, "LA"),
        3: ("Charlie", 35, "Chicago"),
        4: ("Dave", 40, "Houston"),
    }


def test_multi_table_transaction_with_commit_message():
    products = pd.DataFrame(
        {
            "product_id": [1, 2, 3],
            "name": ["Laptop", "Mouse", "Keyboard"],
            "price": [999.99, 29.99, 89.99],
            "category": ["Electronics", "Accessories", "Accessories"],
        }
    )
    orders = pd.DataFrame(
        {
            "order_id": [101, 102, 103],
            "product_id": [1, 2, 1],
            "quantity": [2, 5, 1],
            "status": ["pending", "shipped", "completed"],
        }
    )
    message = "Initial product and order data setup for Q4 2024 analytics"
    with dc.transaction(commit_message=message):
        _create_keyed(
            "products_commit_msg",
            _keyed_schema(
                "product_id",
                ("name", pa.string()),
                ("price", pa.float64()),
                ("category", pa.string()),
            ),
            auto_create_namespace=True,
        )
        _create_keyed(
            "orders_commit_msg",
            _keyed_schema(
                "order_id",
                ("product_id", pa.int64()),
                ("quantity", pa.int32()),
                ("status", pa.string()),
            ),
            auto_create_namespace=True,
        )
        _merge(products, "products_commit_msg")
        _merge(orders, "orders_commit_msg")
    for table, key, ids in [
        ("products_commit_msg", "product_id", {1, 2, 3}),
        ("orders_commit_msg", "order_id", {101, 102, 103}),
    ]:
        rows = pd.DataFrame(dc.read_table(table, namespace=NS).to_pydict())
        assert len(rows) == 3
        assert set(rows[key]) == ids
        assert dc.table_exists(table, namespace=NS)


def test_transaction_history_querying():
    first, second = (
        "Initial inventory and supplier setup",
        "Update supplier information and add inventory",
    )
    inventory = _keyed_schema(
        "item_id", ("item_name", pa.string()), ("quantity", pa.int32()), ("location", pa.string())
    )
    suppliers = _keyed_schema(
        "supplier_id",
        ("name", pa.string()),
        ("contact_email", pa.string()),
        ("rating", pa.float64()),
    )
    with dc.transaction(commit_message=first):
        _create_keyed("inventory_history_query", inventory, auto_create_namespace=True)
        _create_keyed("suppliers_history_query", suppliers, auto_create_namespace=True)
        _merge(
            pd.DataFrame(
                {
                    "item_id": [1, 2, 3],
                    "item_name": ["Widget A", "Widget B", "Widget C"],
                    "quantity": [100, 200, 150],
                    "location": ["Warehouse 1", "Warehouse 2", "Warehouse 1"],
                }
            ),
            "inventory_history_query",
        )
        _merge(
            pd.DataFrame(
                {
                    "supplier_id": [1, 2],
                    "name": ["Acme Corp", "Beta Industries"],
                    "contact_email": ["contact@acme.com", "sales@beta.com"],
                    "rating": [4.5, 3.8],
                }
            ),
            "suppliers_history_query",
        )
    with dc.transaction(commit_message=second):
        _merge(
            pd.DataFrame(
                {
                    "item_id": [2, 4],
                    "item_name": ["Widget B Updated", "Widget D"],
                    "quantity": [180, 75],
                    "location": ["Warehouse 3", "Warehouse 2"],
                }
            ),
            "inventory_history_query",
        )
        _merge(
            pd.DataFrame(
                {
                    "supplier_id": [2, 3],
                    "name": ["Beta Industries Inc", "Gamma Solutions"],
                    "contact_email": ["sales@betainc.com", "info@gamma.com"],
                    "rating": [4.0, 4.2],
                }
            ),
            "suppliers_history_query",
        )
    history = dc.transactions(read_as=dtype("PANDAS"), limit=10)
    assert len(history) >= 2
    assert {
        "transaction_id",
        "commit_message",
        "start_time",
        "end_time",
        "state",
        "operation_count",
        "table_count",
    } <= set(history.columns)
    assert {first, second} & set(history["commit_message"].dropna())
    assert len(history[history["state"] == "SUCCESS"]) >= 2
    assert dc.transactions(read_as=dtype("PYARROW"), limit=5).num_rows >= 0
    for _, row in history.head(5).iterrows():
        assert row["transaction_id"] is not None
        assert row["start_time"] is not None
        assert row["operation_count"] >= 0
        assert row["table_count"] >= 0
