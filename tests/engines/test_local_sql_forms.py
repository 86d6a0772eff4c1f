"""Every query form DuckDB reads tables in runs on the local engine: the tables' scans go in
front of the query as a WITH clause (merged into the query's own, after EXPLAIN), and as
temporary views only for the forms that take no WITH clause (SUMMARIZE, DESCRIBE); errors point
at the user's text wherever the scans were put."""

from __future__ import annotations

import pandas as pd
import pyarrow as pa
import pytest

import workbench as dc
from workbench.core.delta.deletion_vectors import vectors_in_log

IDS = list(range(10))
VECTORS = {"delta.enableDeletionVectors": "true"}


@pytest.fixture
def orders(catalog):
    """A keyed table of ten rows, two of them deleted by a deletion vector (the scan's anti
    join); the ids left."""
    schema = dc.Schema.of(
        [
            dc.Field.of(pa.field("id", pa.int64()), is_merge_key=True),
            dc.Field.of(pa.field("amount", pa.float64())),
        ]
    )
    dc.create_namespace("sales")
    dc.create_table("orders", "sales", schema=schema, table_properties=VECTORS)
    frame = pd.DataFrame({"id": IDS, "amount": [float(i) for i in IDS]})
    dc.write(frame, "orders", "sales", mode="merge")
    dc.write(pd.DataFrame({"id": [3, 7]}), "orders", "sales", mode="delete")
    info = dc.get_table("orders", "sales")
    assert vectors_in_log(info.uri, info.version), "the delete left a deletion vector"
    return sorted(set(IDS) - {3, 7})


def _ids(query: str) -> list[int]:
    return sorted(dc.sql(query)["id"].tolist())


@pytest.mark.parametrize(
    "query",
    [
        "SELECT id FROM sales.orders",
        "  -- the orders\n/* all */ SELECT id FROM sales.orders",
        "FROM sales.orders SELECT id",
        "(SELECT id FROM sales.orders WHERE id < 5)"
        " UNION (SELECT id FROM sales.orders WHERE id >= 5)",
        "WITH big AS (SELECT id FROM sales.orders WHERE id >= 0) SELECT id FROM big",
        "with recursive n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 9)"
        " SELECT id FROM n JOIN sales.orders ON id = i",
        "SELECT id FROM (WITH o AS (SELECT * FROM sales.orders) SELECT * FROM o)",
        "WITH orders AS (SELECT * FROM sales.orders) SELECT id FROM orders",
        "SELECT * FROM (TABLE sales.orders) ORDER BY id",
        "(WITH o AS (SELECT id FROM sales.orders) SELECT id FROM o)",
        "(SELECT id FROM sales.orders) UNION (WITH o AS (SELECT 0 AS id) SELECT id FROM o)",
    ],
)
def test_a_query_form_reads_the_live_rows(orders, query):
    assert _ids(query) == orders


def test_forms_without_a_with_clause_read_views(orders):
    """SUMMARIZE, DESCRIBE and a parenthesized query of its own WITH clause take none."""
    summary = dc.sql("SUMMARIZE sales.orders")
    assert summary.set_index("column_name").loc["id", "count"] == len(orders)
    described = dc.sql("DESCRIBE sales.orders")
    assert described["column_name"].tolist() == ["id", "amount"]


def test_an_explain_statement_and_explain_true_show_the_plan(orders):
    plan = dc.sql("EXPLAIN SELECT id FROM sales.orders WHERE id = 4")
    assert "READ_PARQUET" in "\n".join(plan["explain_value"]).upper()
    analyzed = dc.sql("EXPLAIN ANALYZE SELECT id FROM sales.orders WHERE id = 4")
    assert "READ_PARQUET" in "\n".join(analyzed["explain_value"]).upper()
    explained = dc.sql("SELECT id FROM sales.orders WHERE id = 4", explain=True)
    assert "sales.orders" in str(explained)


def test_a_query_makes_no_view(orders):
    """The scans are part of the query's text: no view created, none left behind."""
    views = "SELECT count(*) FROM duckdb_views() WHERE regexp_matches(view_name, '^__wb_t[0-9]+$')"
    counted = dc.sql(f"SELECT ({views}) AS views, count(*) AS n FROM sales.orders")
    assert counted.to_dict("records") == [{"views": 0, "n": len(orders)}]
    assert dc.sql(views).iloc[0, 0] == 0


@pytest.mark.parametrize(
    "query",
    [
        "WITH a AS (SELECT 1 AS x) SELECT nope FROM sales.orders, a",
        "/* lead */ SELECT amount, nope FROM sales.orders",
        "SELECT id FROM sales.orders WHERE nope > 1",
        "EXPLAIN SELECT nope FROM sales.orders",
    ],
)
def test_an_error_points_at_the_users_text_wherever_the_scans_went(orders, query):
    with pytest.raises(dc.SqlQueryError) as raised:
        dc.sql(query)
    assert raised.value.position is not None, str(raised.value)
    assert query[raised.value.position :].startswith("nope")
    assert "__wb" not in str(raised.value) and "read_parquet" not in str(raised.value)
