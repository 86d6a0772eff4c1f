"""Filters between workbench's tree and Daft's expressions: a ``filter=`` as a Daft
``where`` (with SQL's meaning: zero and negative zero are equal, which Daft's total order of
floats tells apart), and the filter Daft pushes into a table's scan as a tree, so file skipping
reads it, and as DuckDB SQL where both give it one meaning, so DuckDB can read the rows."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from daft.expressions.visitor import PredicateVisitor

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
    Opaque,
    Or,
    children,
    columns_of,
    is_exact,
)

if TYPE_CHECKING:
    import daft
    import pyarrow as pa

    from workbench.core.filters.table_filter import TableFilter


def where(frame: daft.DataFrame, row_filter: TableFilter) -> daft.DataFrame:
    """``frame`` with only the rows ``row_filter`` holds for."""
    import daft

    if is_exact(row_filter.predicate):
        return frame.where(to_daft(row_filter.engine_tree))
    return frame.where(daft.sql_expr(row_filter.sql))


def to_daft(expr: Expr) -> daft.Expression:
    """A tree (with no ``Opaque`` part) as a Daft expression."""
    from daft import col, lit

    if isinstance(expr, Column):
        found = col(expr.path[0])
        for name in expr.path[1:]:
            found = found[name]
        return found
    if isinstance(expr, Literal):
        return _literal(expr)
    if isinstance(expr, Compare):
        return _compare(expr)
    if isinstance(expr, And):
        return _fold([to_daft(p) for p in expr.parts], lambda a, b: a & b)
    if isinstance(expr, Or):
        return _fold([to_daft(p) for p in expr.parts], lambda a, b: a | b)
    if isinstance(expr, Not):
        return ~to_daft(expr.operand)
    if isinstance(expr, IsNull):
        operand = to_daft(expr.operand)
        return operand.not_null() if expr.negated else operand.is_null()
    if isinstance(expr, IsNaN):
        found = to_daft(expr.operand).is_nan()
        return ~found if expr.negated else found
    if isinstance(expr, In):  # NOTs pushed down first: a NOT IN list holding NULL is never true
        values = [v for v in expr.values if v.value is not None]
        if expr.negated and len(values) < len(expr.values):
            return lit(False)
        op, join = ("!=", lambda a, b: a & b) if expr.negated else ("==", lambda a, b: a | b)
        compares = [_compare(Compare(op, expr.operand, v)) for v in values]
        return _fold(compares, join) if compares else lit(expr.negated)
    if isinstance(expr, Like):
        operand = to_daft(expr.operand)
        found = operand.ilike(expr.pattern) if expr.case_insensitive else operand.like(expr.pattern)
        return ~found if expr.negated else found
    if isinstance(expr, Cast):
        from workbench.engines.daft.write import daft_type

        return to_daft(expr.operand).cast(daft_type(expr.type))
    raise TypeError(f"not a filter Daft can run: {expr!r}")


def _fold(items: list[daft.Expression], join: Any) -> daft.Expression:
    found = items[0]
    for item in items[1:]:
        found = join(found, item)
    return found


def _literal(literal: Literal) -> daft.Expression:
    from daft import lit

    from workbench.engines.daft.write import daft_type

    value = lit(literal.value)
    if literal.type is not None and literal.value is not None:
        try:
            return value.cast(daft_type(literal.type))
        except Exception:  # a type Daft lacks: the value as it is
            return value
    return value


def _compare(expr: Compare) -> daft.Expression:
    """A comparison; one with a float zero also meets negative zero, as SQL's does."""
    left, right = to_daft(expr.left), expr.right
    if _float_zero(right):
        plus, minus = _literal(Literal(0.0, right.type)), _literal(Literal(-0.0, right.type))
        return {
            # a range, not an OR of two equalities (which Daft folds into an IN that keeps one)
            "==": (left >= minus) & (left <= plus),
            "!=": (left < minus) | (left > plus),
            "<": left < minus,
            "<=": left <= plus,
            ">": left > plus,
            ">=": left >= minus,
        }[expr.op]
    other = to_daft(right)
    return {
        "==": left == other,
        "!=": left != other,
        "<": left < other,
        "<=": left <= other,
        ">": left > other,
        ">=": left >= other,
    }[expr.op]


def _float_zero(expr: Expr) -> bool:
    """True for a zero compared as a float (negative zero must meet it too)."""
    import pyarrow.types as t

    if not isinstance(expr, Literal) or isinstance(expr.value, bool) or expr.value != 0:
        return False
    return isinstance(expr.value, float) or (expr.type is not None and t.is_floating(expr.type))


def duckdb_prefilter(predicate: Expr, schema: pa.Schema) -> str | None:
    """DuckDB SQL keeping every row the pushed (bound) ``predicate`` keeps in Daft, or None
    where the two may disagree: a float column (Daft orders -0.0 below 0.0 and NaN by a total
    order), a cast (DuckDB fails where Daft may not), an IN list holding null, anything
    Daft's tree does not show. Daft still applies its filter to the rows."""
    from workbench.core.filters.sql_text import to_sql

    return to_sql(predicate) if _same_meaning(predicate, schema) else None


def _same_meaning(expr: Expr, schema: pa.Schema) -> bool:
    import pyarrow.types as t

    from workbench.core.filters.binding import column_type

    if isinstance(expr, Column):
        kind = column_type(schema, expr.path)
        return kind is not None and not t.is_floating(kind)
    if isinstance(expr, Literal):
        return not isinstance(expr.value, float)
    if isinstance(expr, In) and not all(_same_meaning(v, schema) for v in expr.values):
        return False
    if isinstance(expr, In) and any(v.value is None for v in expr.values):
        return False
    if not isinstance(expr, (Compare, In, IsNull, And, Or, Not)):
        return False  # Cast, Like, IsNaN, Opaque
    return all(_same_meaning(part, schema) for part in children(expr))


def from_daft(expression: daft.Expression) -> Expr:
    """A filter Daft pushed into a scan as a tree (what it does not model: ``Opaque``)."""
    return _Tree().visit(expression)


class _Tree(PredicateVisitor[Any]):
    """Daft's expression tree folded into workbench's; a part Daft's visitor cannot show (some
    functions) is ``Opaque``."""

    def visit(self, expr: Any) -> Expr:
        try:
            return super().visit(expr)
        except ValueError:
            return Opaque()

    def visit_col(self, name: str) -> Expr:
        return Column((name,))

    def visit_lit(self, value: Any) -> Expr:
        return Literal(value)

    def visit_alias(self, expr: Any, alias: str) -> Expr:
        return self.visit(expr)

    def visit_cast(self, expr: Any, dtype: Any) -> Expr:
        inner = self.visit(expr)
        try:
            return Cast(inner, dtype.to_arrow_dtype())
        except Exception:
            return Opaque(frozenset(columns_of(inner)))

    def visit_try_cast(self, expr: Any, dtype: Any) -> Expr:
        return Opaque(frozenset(columns_of(self.visit(expr))))

    def visit_and(self, left: Any, right: Any) -> Expr:
        return And((self.visit(left), self.visit(right)))

    def visit_or(self, left: Any, right: Any) -> Expr:
        return Or((self.visit(left), self.visit(right)))

    def visit_not(self, expr: Any) -> Expr:
        return Not(self.visit(expr))

    def _compare(self, op: str, left: Any, right: Any) -> Expr:
        from workbench.core.filters.expression import FLIPPED

        a, b = self.visit(left), self.visit(right)
        if isinstance(a, Literal) and not isinstance(b, Literal):
            return Compare(FLIPPED[op], b, a)
        return Compare(op, a, b)

    def visit_equal(self, left: Any, right: Any) -> Expr:
        return self._compare("==", left, right)

    def visit_not_equal(self, left: Any, right: Any) -> Expr:
        return self._compare("!=", left, right)

    def visit_less_than(self, left: Any, right: Any) -> Expr:
        return self._compare("<", left, right)

    def visit_less_than_or_equal(self, left: Any, right: Any) -> Expr:
        return self._compare("<=", left, right)

    def visit_greater_than(self, left: Any, right: Any) -> Expr:
        return self._compare(">", left, right)

    def visit_greater_than_or_equal(self, left: Any, right: Any) -> Expr:
        return self._compare(">=", left, right)

    def visit_between(self, expr: Any, lower: Any, upper: Any) -> Expr:
        return And((self._compare(">=", expr, lower), self._compare("<=", expr, upper)))

    def visit_is_in(self, expr: Any, items: list[Any]) -> Expr:
        values = [self.visit(i) for i in items]
        if all(isinstance(v, Literal) for v in values):
            return In(self.visit(expr), tuple(values))
        return Opaque(frozenset(columns_of(self.visit(expr))))

    def visit_is_null(self, expr: Any) -> Expr:
        return IsNull(self.visit(expr))

    def visit_not_null(self, expr: Any) -> Expr:
        return IsNull(self.visit(expr), negated=True)

    def visit_function(self, name: str, args: list[Any]) -> Expr:
        parts = [self.visit(a) for a in args]
        return Opaque(frozenset().union(*(columns_of(p) for p in parts)))

    def visit_coalesce(self, args: list[Any]) -> Expr:
        return self.visit_function("coalesce", args)
