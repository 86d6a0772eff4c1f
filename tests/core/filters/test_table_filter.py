"""A read's ``filter=``: SQL text and pyarrow expressions become one checked tree with the
meaning SQL gives it, and every mistake is an ``InvalidFilterError`` that says what to write."""

from __future__ import annotations

import datetime as dt
import decimal

import pyarrow as pa
import pyarrow.compute as pc
import pytest

import workbench as dc
from workbench.core.filters.expression import (
    And,
    Column,
    Compare,
    In,
    IsNull,
    Like,
    Literal,
    Not,
    Opaque,
    Or,
    is_exact,
    without_not,
)
from workbench.core.filters.sql_text import to_sql
from workbench.core.filters.table_filter import table_filter

SCHEMA = pa.schema(
    [
        ("id", pa.int64()),
        ("ts", pa.timestamp("us", "UTC")),
        ("naive", pa.timestamp("us")),
        ("user", pa.string()),
        ("amount", pa.float64()),
        ("price", pa.decimal128(10, 2)),
        ("flag", pa.bool_()),
        ("day", pa.date32()),
        ("point", pa.struct([("x", pa.int32()), ("y", pa.string())])),
        ("odd name", pa.int64()),
    ]
)
UTC = dt.timezone.utc


def tree(value):
    return table_filter(value, SCHEMA, "ns.t").predicate


def test_text_becomes_a_typed_tree():
    assert tree("id = 5") == Compare("==", Column(("id",)), Literal(5, pa.int64()))
    assert tree("5 < id") == Compare(">", Column(("id",)), Literal(5, pa.int64()))
    moment = tree("ts >= '2026-01-01' AND ts < '2026-01-02 10:00:00+02'")
    assert moment == And(
        (
            Compare(
                ">=",
                Column(("ts",)),
                Literal(dt.datetime(2026, 1, 1, tzinfo=UTC), SCHEMA.field("ts").type),
            ),
            Compare(
                "<",
                Column(("ts",)),
                Literal(dt.datetime(2026, 1, 2, 8, tzinfo=UTC), SCHEMA.field("ts").type),
            ),
        )
    )
    assert tree("day = '2026-02-28'").right == Literal(dt.date(2026, 2, 28), pa.date32())
    assert tree("price BETWEEN 1.5 AND 2").parts[0].right.value == decimal.Decimal("1.5")
    assert tree("user IN ('a', 'b')") == In(
        Column(("user",)), (Literal("a", pa.string()), Literal("b", pa.string()))
    )
    assert tree("user IS NOT NULL") == IsNull(Column(("user",)), negated=True)
    assert tree("user LIKE 'ab%'") == Like(Column(("user",)), "ab%")
    assert tree("starts_with(user, 'ab')") == Like(Column(("user",)), "ab%")
    assert tree("point.x = 3") == Compare("==", Column(("point", "x")), Literal(3, pa.int32()))
    assert tree('"odd name" > 1') == Compare(">", Column(("odd name",)), Literal(1, pa.int64()))


def test_a_boolean_column_alone_is_a_condition():
    assert tree("flag") == Compare("==", Column(("flag",)), Literal(True, pa.bool_()))
    assert tree("NOT flag") == Not(Compare("==", Column(("flag",)), Literal(True, pa.bool_())))


def test_what_the_tree_does_not_model_stays_with_the_text():
    made = table_filter("lower(user) = 'bob' OR id = 1", SCHEMA, "ns.t")
    assert made.sql == "lower(user) = 'bob' OR id = 1"
    assert not made.exact and made.columns == {"user", "id"}
    assert isinstance(made.predicate.parts[0], (Opaque, Compare))
    # a number compared with text: SQL casts the column, so the tree cannot say which rows
    assert isinstance(tree("user = 1"), Opaque)


def test_pyarrow_expressions_become_the_same_tree():
    assert tree(pc.field("id") == 5) == tree("id = 5")
    assert tree((pc.field("id") > 1) & ~pc.field("user").is_null()) == And(
        (
            Compare(">", Column(("id",)), Literal(1, pa.int64())),
            Not(IsNull(Column(("user",)))),
        )
    )
    assert tree(pc.field("point", "x") < 3).left == Column(("point", "x"))
    assert tree(pc.field("ts") > pa.scalar(dt.datetime(2026, 1, 1, tzinfo=UTC))).right.value == (
        dt.datetime(2026, 1, 1, tzinfo=UTC)
    )
    assert tree(pc.field("price") == pa.scalar(decimal.Decimal("1.50"))).right.value == (
        decimal.Decimal("1.50")
    )
    assert isinstance(tree(pc.starts_with(pc.field("user"), "ab")), Like)
    # pyarrow's isin matches a null in its set to null rows (SQL's IN never does)
    assert tree(pc.field("id").isin([1, None])) == Or(
        (In(Column(("id",)), (Literal(1, pa.int64()),)), IsNull(Column(("id",))))
    )
    made = table_filter(pc.field("id").cast(pa.string()) == "5", SCHEMA, "ns.t")
    assert made.exact and "CAST" in made.sql


def test_sql_of_a_tree_runs_and_means_the_same():
    rows = pa.table(
        {
            "id": [1, 2, None, 4],
            "user": ["a", None, "ab", "b'c"],
            "amount": [float("nan"), 2.0, -0.0, None],
        }
    )
    schema = rows.schema
    for value, kept in [
        ((pc.field("amount") > 1.0), [1, 2]),  # NaN above every number, as in SQL
        ((pc.field("amount") == 0.0), [None]),  # negative zero equals zero
        (~pc.field("id").isin([1, 2]), [4]),  # NOT IN leaves nulls out
        ((pc.field("user") == "b'c"), [4]),
    ]:
        made = table_filter(value, schema, "t")
        from workbench.core.filters.duck import filter_rows

        assert filter_rows(rows, made).column("id").to_pylist() == kept, made.sql


def test_nots_go_down_with_three_valued_meaning():
    assert without_not(tree("NOT (id < 5 OR user IS NULL)")) == And(
        (
            Compare(">=", Column(("id",)), Literal(5, pa.int64())),
            IsNull(Column(("user",)), negated=True),
        )
    )
    assert without_not(tree("NOT (id IN (1, 2))")).negated


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("nope = 1", "not found"),
        ("nope.x = 1", "not found"),
        ("id = 'abc'", "not such a value"),
        ("id", "not a condition"),
        ("5", "is a value"),
        ("", "empty"),
        ("   ", "empty"),
        ("id = (SELECT 1)", "subquery"),
        ("id = 1; DROP TABLE t", "not SQL a WHERE takes"),
        ("1) UNION SELECT * FROM t WHERE (1", "not one condition"),
        ("id = 1 ORDER BY id", "not SQL a WHERE takes"),
        ("read_text('/etc/hostname') IS NOT NULL", "cannot run"),
        ("id = ", "not SQL a WHERE takes"),
        (5, "is not a filter"),
        (["id = 1"], "is not a filter"),
        (pc.utf8_lower(pc.field("user")) == "a", "utf8_lower"),
        (pc.field("nope") == 1, "has no column"),
        (pc.field("id") == "abc", "not such a value"),
    ],
)
def test_bad_filters_say_what_is_wrong(value, says):
    with pytest.raises(dc.InvalidFilterError, match=says):
        table_filter(value, SCHEMA, "ns.t")


def test_trees_round_trip_through_sql():
    for text in [
        "id = 5 AND (user LIKE 'a%' OR NOT flag)",
        "price >= 1.25 AND day < '2026-01-01' AND ts > '2026-01-01 00:00:00+00'",
        "amount IS NULL OR isnan(amount) OR amount NOT IN (1.5, 2.5)",
        "point.x = 3",
    ]:
        first = tree(text)
        assert is_exact(first)
        assert without_not(tree(to_sql(first))) == without_not(first), text
