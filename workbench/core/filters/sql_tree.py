"""SQL as DuckDB parses it (``json_serialize_sql``), read into filter trees: the predicate of a
filter given as text, and the parts of a query's WHERE that belong to one table."""

from __future__ import annotations

import decimal
import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from workbench.core.filters.expression import (
    FLIPPED,
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

Node = dict[str, Any]
# A column reference's names (``["t", "id"]``) as a column of the table filtered, or None
Resolver = Callable[[list[str]], "Column | None"]

_COMPARISONS = {
    "COMPARE_EQUAL": "==",
    "COMPARE_NOTEQUAL": "!=",
    "COMPARE_LESSTHAN": "<",
    "COMPARE_LESSTHANOREQUALTO": "<=",
    "COMPARE_GREATERTHAN": ">",
    "COMPARE_GREATERTHANOREQUALTO": ">=",
}
_LIKES = {"~~": (False, False), "!~~": (True, False), "~~*": (False, True), "!~~*": (True, True)}


def parse(sql: str) -> Node:
    """DuckDB's syntax tree of ``sql`` (no table is looked up: it only parses); raises
    ``ValueError`` with DuckDB's message when the text does not parse."""
    from workbench.core.filters.duck import scratch

    with scratch() as con:  # the text inline: a Python parameter makes DuckDB import pandas
        quoted = "'" + sql.replace("'", "''") + "'"
        text = con.execute(f"SELECT json_serialize_sql({quoted})").fetchone()[0]
    tree = json.loads(text)
    if tree.get("error"):
        raise ValueError(tree.get("error_message") or "the text does not parse")
    return tree


def expression(node: Node, resolve: Resolver) -> Expr:
    """The filter tree of one SQL expression node, columns found by ``resolve``; what the tree
    does not model becomes ``Opaque``."""
    kind, of = node.get("class"), node.get("type")
    if kind == "COLUMN_REF":
        column = resolve(node["column_names"])
        return column if column is not None else Opaque(_columns(node, resolve))
    if kind == "CONSTANT":
        return Literal(constant(node["value"]))
    if kind == "CAST" and not node.get("try_cast"):
        return _cast(node, resolve)
    if kind == "COMPARISON" and of in _COMPARISONS:
        return _comparison(_COMPARISONS[of], node["left"], node["right"], resolve)
    if kind == "CONJUNCTION":
        parts = tuple(expression(c, resolve) for c in node["children"])
        return And(parts) if of == "CONJUNCTION_AND" else Or(parts)
    if kind == "OPERATOR":
        return _operator(node, resolve)
    if kind == "BETWEEN":
        low = _comparison(">=", node["input"], node["lower"], resolve)
        high = _comparison("<=", node["input"], node["upper"], resolve)
        return And((low, high))
    if kind == "FUNCTION":
        return _function(node, resolve)
    return Opaque(_columns(node, resolve))


def constant(value: Node) -> Any:
    """A DuckDB constant as a Python value (decimals as ``Decimal``, big integers whole)."""
    if value.get("is_null"):
        return None
    kind = value["type"]["id"]
    raw = value["value"]
    if kind in ("HUGEINT", "UHUGEINT"):
        upper, lower = raw["upper"], raw["lower"]
        return upper * 2**64 + lower
    if kind == "DECIMAL":
        scale = value["type"]["type_info"]["scale"]
        return decimal.Decimal(raw).scaleb(-scale)
    return raw


def _comparison(op: str, left: Node, right: Node, resolve: Resolver) -> Expr:
    a, b = expression(left, resolve), expression(right, resolve)
    if isinstance(a, Literal) and not isinstance(b, Literal):
        a, b, op = b, a, FLIPPED[op]  # the column on the left
    return Compare(op, a, b)


def _operator(node: Node, resolve: Resolver) -> Expr:
    of, inner = node["type"], node["children"]
    if of == "OPERATOR_NOT":
        return Not(expression(inner[0], resolve))
    if of in ("OPERATOR_IS_NULL", "OPERATOR_IS_NOT_NULL"):
        return IsNull(expression(inner[0], resolve), of == "OPERATOR_IS_NOT_NULL")
    if of in ("COMPARE_IN", "COMPARE_NOT_IN"):
        operand = expression(inner[0], resolve)
        values = [expression(v, resolve) for v in inner[1:]]
        if all(isinstance(v, Literal) for v in values):
            return In(operand, tuple(values), of == "COMPARE_NOT_IN")  # type: ignore[arg-type]
    return Opaque(_columns(node, resolve))


def _function(node: Node, resolve: Resolver) -> Expr:
    name, args = node["function_name"].lower(), node["children"]
    parts = [expression(a, resolve) for a in args]
    if name in _LIKES and len(parts) == 2 and isinstance(parts[1], Literal):
        negated, folded = _LIKES[name]
        if isinstance(parts[1].value, str):
            return Like(parts[0], parts[1].value, negated, folded)
    if name in ("starts_with", "prefix") and len(parts) == 2 and isinstance(parts[1], Literal):
        prefix = parts[1].value
        if isinstance(prefix, str) and not any(c in prefix for c in "%_\\"):
            return Like(parts[0], prefix + "%")
    if name == "isnan" and len(parts) == 1:
        return IsNaN(parts[0])
    field = parts[1].value if len(parts) == 2 and isinstance(parts[1], Literal) else None
    if name == "struct_extract" and isinstance(parts[0], Column) and isinstance(field, str):
        return Column((*parts[0].path, field))
    return Opaque(_columns(node, resolve))


def _cast(node: Node, resolve: Resolver) -> Expr:
    target = arrow_type(node["cast_type"])
    inner = expression(node["child"], resolve)
    if target is None:
        return Opaque(_columns(node, resolve))
    if isinstance(inner, Literal):
        from workbench.core.filters.duck import cast_value

        try:
            return Literal(cast_value(inner.value, target), target)
        except ValueError:
            return Opaque(_columns(node, resolve))
    return Cast(inner, target)


def _columns(node: Any, resolve: Resolver) -> frozenset[str]:
    """The table's columns any reference inside ``node`` names."""
    found: set[str] = set()

    def walk(n: Any) -> None:
        if isinstance(n, dict):
            if n.get("class") == "COLUMN_REF":
                column = resolve(n["column_names"])
                if column is not None:
                    found.add(column.name)
            for v in n.values():
                walk(v)
        elif isinstance(n, list):
            for v in n:
                walk(v)

    walk(node)
    return frozenset(found)


_SIMPLE_TYPES = {
    "BOOLEAN": "bool_",
    "TINYINT": "int8",
    "SMALLINT": "int16",
    "INTEGER": "int32",
    "BIGINT": "int64",
    "UTINYINT": "uint8",
    "USMALLINT": "uint16",
    "UINTEGER": "uint32",
    "UBIGINT": "uint64",
    "FLOAT": "float32",
    "DOUBLE": "float64",
    "VARCHAR": "string",
    "BLOB": "binary",
    "DATE": "date32",
}
_TIMESTAMPS = {
    "TIMESTAMP": ("us", None),
    "TIMESTAMP WITH TIME ZONE": ("us", "UTC"),
    "TIMESTAMP_NS": ("ns", None),
    "TIMESTAMP_MS": ("ms", None),
    "TIMESTAMP_S": ("s", None),
}


def arrow_type(duck: Node) -> pa.DataType | None:
    """The Arrow type of a DuckDB type in a syntax tree (None for one filters do not model)."""
    import pyarrow as pa

    kind = duck.get("id")
    if kind in _SIMPLE_TYPES:
        return getattr(pa, _SIMPLE_TYPES[kind])()
    if kind in _TIMESTAMPS:
        return pa.timestamp(*_TIMESTAMPS[kind])
    if kind == "DECIMAL":
        info = duck.get("type_info") or {}
        width, scale = info.get("width", 18), info.get("scale", 3)
        return pa.decimal128(width, scale)
    return None
