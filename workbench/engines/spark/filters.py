"""Filters between workbench's tree and Spark: a ``filter=`` as a DataFrame ``where`` (Spark's
comparisons already have SQL's meaning for nulls and NaN), and the filters Spark pushes into
the ``workbench`` data source as a tree, so file skipping reads them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from workbench.core.filters.expression import (
    And,
    Cast,
    Column,
    Compare,
    Expr,
    In,
    IsNaN,
    IsNull,
    Like,
    Literal,
    Not,
    Or,
    is_exact,
)

if TYPE_CHECKING:
    from pyspark.sql import Column as SparkColumn
    from pyspark.sql import DataFrame

    from workbench.core.filters.table_filter import TableFilter


def where(frame: DataFrame, row_filter: TableFilter) -> DataFrame:
    """``frame`` with only the rows ``row_filter`` holds for (text only the filter's own SQL
    holds runs as Spark SQL)."""
    from pyspark.sql import functions as F

    if is_exact(row_filter.predicate):
        return frame.where(to_spark(row_filter.engine_tree))
    return frame.where(F.expr(row_filter.sql))


def to_spark(expr: Expr) -> SparkColumn:
    """A tree (no ``Opaque`` part, NOTs pushed down) as a Spark column expression."""
    from functools import reduce

    from pyspark.sql import functions as F

    if isinstance(expr, Column):
        found = F.col(_quoted(expr.path[0]))
        for name in expr.path[1:]:
            found = found.getField(name)
        return found
    if isinstance(expr, Literal):
        return _literal(expr)
    if isinstance(expr, Compare):
        left, right = to_spark(expr.left), to_spark(expr.right)
        return {
            "==": left == right,
            "!=": left != right,
            "<": left < right,
            "<=": left <= right,
            ">": left > right,
            ">=": left >= right,
        }[expr.op]
    if isinstance(expr, And):
        return reduce(lambda a, b: a & b, [to_spark(p) for p in expr.parts])
    if isinstance(expr, Or):
        return reduce(lambda a, b: a | b, [to_spark(p) for p in expr.parts])
    if isinstance(expr, Not):
        return ~to_spark(expr.operand)
    if isinstance(expr, IsNull):
        operand = to_spark(expr.operand)
        return operand.isNotNull() if expr.negated else operand.isNull()
    if isinstance(expr, IsNaN):
        found = F.isnan(to_spark(expr.operand))
        return ~found if expr.negated else found
    if isinstance(expr, In):
        values = [v for v in expr.values if v.value is not None]
        if expr.negated and len(values) < len(expr.values):
            return F.lit(False)  # NOT IN a list holding NULL holds for no row
        if not values:
            return F.lit(expr.negated)
        found = to_spark(expr.operand).isin([_literal(v) for v in values])
        return ~found if expr.negated else found
    if isinstance(expr, Like):
        operand = to_spark(expr.operand)
        found = operand.ilike(expr.pattern) if expr.case_insensitive else operand.like(expr.pattern)
        return ~found if expr.negated else found
    if isinstance(expr, Cast):
        return to_spark(expr.operand).cast(_spark_type(expr.type))
    raise TypeError(f"not a filter Spark can run: {expr!r}")


def _literal(literal: Literal) -> SparkColumn:
    from pyspark.sql import functions as F

    value = F.lit(literal.value)
    if literal.type is None:
        return value
    return value.cast(_spark_type(literal.type))


def _spark_type(arrow: Any) -> Any:
    import pyarrow as pa

    from workbench.engines.spark.files import spark_schema

    return spark_schema(pa.schema([pa.field("v", arrow)]))["v"].dataType


def _quoted(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def from_pushed(filters: list[Any]) -> Expr | None:
    """The AND of the filters Spark pushed into a scan that the tree can read (None: none)."""
    from workbench.core.filters.expression import conjoin

    parts = [tree for tree in map(_pushed, filters) if tree is not None]
    return conjoin(parts)


def _pushed(pushed: Any) -> Expr | None:
    """One pushed filter (``pyspark.sql.datasource``'s ``EqualTo``, ``In``, ...) as a tree."""
    from pyspark.sql import datasource as ds

    if isinstance(pushed, ds.Not):
        inner = _pushed(pushed.child)
        return None if inner is None else Not(inner)
    column = Column(tuple(pushed.attribute))
    comparisons = {
        ds.EqualTo: "==",
        ds.GreaterThan: ">",
        ds.GreaterThanOrEqual: ">=",
        ds.LessThan: "<",
        ds.LessThanOrEqual: "<=",
    }
    for kind, op in comparisons.items():
        if type(pushed) is kind:
            return Compare(op, column, Literal(pushed.value))
    if isinstance(pushed, ds.In):
        return In(column, tuple(Literal(v) for v in pushed.value))
    if isinstance(pushed, ds.IsNull):
        return IsNull(column)
    if isinstance(pushed, ds.IsNotNull):
        return IsNull(column, negated=True)
    if isinstance(pushed, ds.StringStartsWith) and not any(c in pushed.value for c in "%_\\"):
        return Like(column, pushed.value + "%")
    return None
