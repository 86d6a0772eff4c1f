"""A filter tree written as DuckDB SQL over the table's column names: how a filter given as an
expression runs where SQL runs it."""

from __future__ import annotations

import datetime
import decimal
import math
from typing import Any

from workbench.core.base.errors import InvalidFilterError
from workbench.core.base.identifiers import quote_identifier
from workbench.core.filters.duck import duck_type
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
)

_OPERATORS = {"==": "=", "!=": "<>", "<": "<", "<=": "<=", ">": ">", ">=": ">="}


def to_sql(expr: Expr) -> str:
    """``expr`` as DuckDB SQL text (raises ``InvalidFilterError`` for an ``Opaque`` part,
    which only the filter's own text holds)."""
    if isinstance(expr, Column):
        text = quote_identifier(expr.path[0], '"')
        for name in expr.path[1:]:
            text = f"struct_extract({text}, {_string(name)})"
        return text
    if isinstance(expr, Literal):
        return literal_sql(expr)
    if isinstance(expr, Compare):
        return f"({to_sql(expr.left)} {_OPERATORS[expr.op]} {to_sql(expr.right)})"
    if isinstance(expr, And):
        return "(" + " AND ".join(to_sql(p) for p in expr.parts) + ")"
    if isinstance(expr, Or):
        return "(" + " OR ".join(to_sql(p) for p in expr.parts) + ")"
    if isinstance(expr, Not):
        return f"(NOT {to_sql(expr.operand)})"
    if isinstance(expr, IsNull):
        return f"({to_sql(expr.operand)} IS {'NOT ' if expr.negated else ''}NULL)"
    if isinstance(expr, IsNaN):
        return f"({'NOT ' if expr.negated else ''}isnan({to_sql(expr.operand)}))"
    if isinstance(expr, In):
        if not expr.values:  # IN () holds for no row, NOT IN () for every row
            return "TRUE" if expr.negated else "FALSE"
        values = ", ".join(literal_sql(v) for v in expr.values)
        return f"({to_sql(expr.operand)} {'NOT ' if expr.negated else ''}IN ({values}))"
    if isinstance(expr, Like):
        word = "ILIKE" if expr.case_insensitive else "LIKE"
        negated = "NOT " if expr.negated else ""
        return f"({to_sql(expr.operand)} {negated}{word} {_string(expr.pattern)})"
    if isinstance(expr, Cast):
        name = duck_type(expr.type)
        if name is None:
            raise InvalidFilterError(f"A filter cannot cast to {expr.type}.")
        return f"CAST({to_sql(expr.operand)} AS {name})"
    raise InvalidFilterError("This part of the filter exists only as the filter's text.")


def literal_sql(literal: Literal) -> str:
    """A constant as SQL text of its type (so ``'2026-01-01'`` meets a time as a time)."""
    value, kind = literal.value, literal.type
    if value is None:
        return (
            "NULL"
            if kind is None or duck_type(kind) is None
            else f"CAST(NULL AS {duck_type(kind)})"
        )
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    name = duck_type(kind) if kind is not None else None
    text = _plain(value)
    return f"CAST({text} AS {name})" if name is not None else text


def _plain(value: Any) -> str:
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else f"CAST('{value}' AS DOUBLE)"
    if isinstance(value, decimal.Decimal):
        return _string(str(value))
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, bytes):
        return f"from_hex('{value.hex()}')"
    if isinstance(value, datetime.datetime):
        return _string(value.isoformat(sep=" "))  # pandas' times keep their nanoseconds
    if isinstance(value, datetime.date):
        return _string(value.isoformat())
    raise InvalidFilterError(f"A filter cannot hold the value {value!r} ({type(value).__name__}).")


def _string(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"
