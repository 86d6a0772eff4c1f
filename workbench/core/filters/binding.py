"""A filter tree checked against a table's columns: every column exists (struct fields
followed), every constant compared with a column holds a value of that column's type (text
read as SQL reads it), and a boolean column used alone means ``column = TRUE``."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from workbench.core.base.errors import InvalidFilterError
from workbench.core.filters.duck import cast_value
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
)

if TYPE_CHECKING:
    import pyarrow as pa


def bind(expr: Expr, schema: pa.Schema, table: str, *, lenient: bool = False) -> Expr:
    """``expr`` with its constants typed by the columns they meet; raises
    ``InvalidFilterError`` naming the column or value at fault. ``lenient`` (SQL text, which
    DuckDB has bound already): a number compared with a column of text, or the like, leaves
    its comparison ``Opaque`` (SQL casts the column there) instead of refusing it."""
    return _Binder(schema, table, lenient).predicate(expr)


def column_type(schema: pa.Schema, path: tuple[str, ...]) -> pa.DataType | None:
    """The type of a column or struct field, or None when the table has none by that path."""
    import pyarrow as pa

    if path[0] not in schema.names:
        return None
    kind = schema.field(path[0]).type
    for name in path[1:]:
        if not pa.types.is_struct(kind) or kind.get_field_index(name) < 0:
            return None
        kind = kind.field(name).type
    return kind


class _Binder:
    def __init__(self, schema: pa.Schema, table: str, lenient: bool):
        self.schema, self.table, self.lenient = schema, table, lenient

    def predicate(self, expr: Expr) -> Expr:
        """``expr`` where a row's truth is asked for (a boolean column alone: ``= TRUE``)."""
        import pyarrow as pa

        if isinstance(expr, (And, Or)):
            return type(expr)(tuple(self.predicate(p) for p in expr.parts))
        if isinstance(expr, Not):
            return Not(self.predicate(expr.operand))
        if isinstance(expr, Column):
            kind = self.type_of(expr)
            if not pa.types.is_boolean(kind):
                raise InvalidFilterError(
                    f"The filter's column {_shown(expr)} of table {self.table!r} is {kind}, not "
                    f"a condition; compare it, e.g. {_shown(expr)} = ... or "
                    f"{_shown(expr)} IS NOT NULL."
                )
            return Compare("==", expr, Literal(True, kind))
        if isinstance(expr, Literal):
            if expr.value is not None and not isinstance(expr.value, bool):
                raise InvalidFilterError(
                    f"The filter {expr.value!r} is a value, not a condition on table "
                    f"{self.table!r}'s rows; write one such as id = {expr.value!r}."
                )
            return Literal(expr.value, pa.bool_())
        return self.term(expr)

    def term(self, expr: Expr) -> Expr:
        if isinstance(expr, Column):
            self.type_of(expr)
            return expr
        if isinstance(expr, Compare):
            return self.compare(expr)
        if isinstance(expr, In):
            kind = self.operand_type(expr.operand)
            values = tuple(self.constant(v, kind, expr.operand) for v in expr.values)
            if any(v is None for v in values):
                return Opaque(frozenset(_names(expr.operand)))
            return In(self.term(expr.operand), values, expr.negated)  # type: ignore[arg-type]
        if isinstance(expr, (IsNull, IsNaN, Like, Cast)):
            return replace(expr, operand=self.term(expr.operand))
        if isinstance(expr, (And, Or, Not)):
            return self.predicate(expr)
        return expr

    def compare(self, expr: Compare) -> Expr:
        left, right = self.term(expr.left), expr.right
        if isinstance(right, Literal):
            typed = self.constant(right, self.operand_type(left), left)
            if typed is None:
                return Opaque(frozenset(_names(left)))
            return Compare(expr.op, left, typed)
        return Compare(expr.op, left, self.term(right))

    def operand_type(self, operand: Expr) -> pa.DataType | None:
        if isinstance(operand, Column):
            return self.type_of(operand)
        if isinstance(operand, Cast):
            self.term(operand.operand)
            return operand.type
        return None

    def constant(self, literal: Literal, kind: Any, operand: Expr) -> Literal | None:
        """``literal`` as a value of ``kind``: numbers meet numbers and times meet times as
        they are, text is read as a value of the type (as SQL reads a quoted constant). None
        when SQL would rather cast the column (a number compared with text: the tree cannot
        say which rows match, the engine decides), or no type is known."""
        if kind is None or literal.value is None:
            return Literal(literal.value, kind) if literal.value is None else literal
        if _same_family(literal, kind):
            return Literal(literal.value, kind) if literal.type is None else literal
        if self.lenient and not isinstance(literal.value, str):
            return None
        try:
            return Literal(cast_value(literal.value, kind), kind)
        except ValueError as e:
            raise InvalidFilterError(
                f"The filter compares {_shown(operand)} of table {self.table!r}, which is "
                f"{kind}, with {literal.value!r}, which is not such a value ({e})."
            ) from e

    def type_of(self, column: Column) -> pa.DataType:
        kind = column_type(self.schema, column.path)
        if kind is None:
            raise InvalidFilterError(
                f"Table {self.table!r} has no column {_shown(column)} for the filter; its "
                f"columns are {self.schema.names}."
            )
        return kind


def _same_family(literal: Literal, kind: pa.DataType) -> bool:
    """True when the constant needs no cast to meet a column of ``kind``: numbers with
    numbers, text with text, booleans with booleans, times with times."""
    import datetime
    import decimal

    import pyarrow.types as t

    value = literal.value
    if isinstance(value, bool):
        return t.is_boolean(kind)
    if isinstance(value, (int, float, decimal.Decimal)):
        return t.is_integer(kind) or t.is_floating(kind) or t.is_decimal(kind)
    if isinstance(value, str):
        return t.is_string(kind) or t.is_large_string(kind) or t.is_string_view(kind)
    if isinstance(value, bytes):
        return t.is_binary(kind) or t.is_large_binary(kind) or t.is_fixed_size_binary(kind)
    if isinstance(value, datetime.datetime):
        return t.is_timestamp(kind) and (value.tzinfo is None) == (kind.tz is None)
    if isinstance(value, datetime.date):
        return t.is_date(kind)
    return False


def _names(expr: Expr) -> set[str]:
    from workbench.core.filters.expression import columns_of

    return columns_of(expr)


def _shown(column: Expr) -> str:
    if isinstance(column, Column):
        return ".".join(column.path)
    return "the value"
