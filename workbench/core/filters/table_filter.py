"""The ``filter=`` of a read, checked against the table before any file is opened: SQL text
(any DuckDB predicate over the table's columns) or a pyarrow expression."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from workbench.core.base.errors import InvalidFilterError, brief
from workbench.core.filters.arrow_expression import from_arrow, is_arrow_expression
from workbench.core.filters.binding import bind
from workbench.core.filters.duck import check_predicate
from workbench.core.filters.expression import (
    Column,
    Expr,
    columns_of,
    is_exact,
    nan_safe,
    without_not,
)
from workbench.core.filters.sql_text import to_sql
from workbench.core.filters.sql_tree import Node, expression, parse

if TYPE_CHECKING:
    import pyarrow as pa

FILTERED = "__wb_filter"  # the name the table goes by while a filter's text is checked


@dataclass(frozen=True)
class TableFilter:
    """A read's filter: its tree (what file skipping reads and engines render) and its DuckDB
    SQL text (the user's own text, when given as text)."""

    predicate: Expr
    sql: str
    text: str | None = None  # as the user wrote it; None when given as an expression

    @property
    def columns(self) -> set[str]:
        """The columns the filter reads."""
        return columns_of(self.predicate)

    @property
    def exact(self) -> bool:
        """True when the tree holds all of it (an engine can run it without the text)."""
        return is_exact(self.predicate)

    @property
    def engine_tree(self) -> Expr:
        """The tree as engines run it: NOTs pushed down, NaN rows kept where SQL keeps them
        (see ``nan_safe``); only for an ``exact`` filter."""
        return nan_safe(without_not(self.predicate))

    @property
    def duckdb_sql(self) -> str:
        """SQL for DuckDB to read files with: from the tree where it holds all (NaN-safe),
        else the user's text."""
        return to_sql(self.engine_tree) if self.exact else self.sql

    def __str__(self) -> str:
        return self.text if self.text is not None else self.sql


def table_filter(value: Any, schema: pa.Schema, table: str) -> TableFilter:
    """``value`` (SQL text or a pyarrow expression) as a filter of ``table``, whose files hold
    ``schema``; raises ``InvalidFilterError`` saying what is wrong with it."""
    if isinstance(value, str):
        return _from_text(value, schema, table)
    if is_arrow_expression(value):
        predicate = bind(from_arrow(value), schema, table)
        sql = to_sql(predicate)
        _check(sql, schema, table, str(value))
        return TableFilter(predicate, sql)
    raise InvalidFilterError(
        f"filter={brief(value, 80)} ({type(value).__name__}) is not a filter: pass SQL text "
        "such as filter=\"id = 5 AND ts >= '2026-01-01'\" or a pyarrow expression such as "
        "filter=pc.field('id') == 5."
    )


def _from_text(text: str, schema: pa.Schema, table: str) -> TableFilter:
    if not text.strip():
        raise InvalidFilterError(
            "filter='' is empty; pass a condition such as filter=\"id = 5\", or leave it out."
        )
    try:
        tree = parse(f"SELECT * FROM {FILTERED} WHERE (\n{text}\n)")
    except ValueError as e:
        raise InvalidFilterError(f"The filter {text!r} is not SQL a WHERE takes: {e}") from e
    where = _predicate_node(tree, text)
    _check(text, schema, table, text)
    predicate = bind(expression(where, _column), schema, table, lenient=True)
    return TableFilter(predicate, text, text)


def _predicate_node(tree: Node, text: str) -> Node:
    """The WHERE of ``SELECT * FROM <table> WHERE (<text>)``, refusing text that made it more
    than that (a second statement, a UNION, an ORDER BY) or that reads other tables."""
    statements = tree["statements"]
    node = statements[0]["node"] if len(statements) == 1 else {}
    plain = (
        node.get("type") == "SELECT_NODE"
        and not node.get("modifiers")
        and not node.get("group_expressions")
        and node.get("having") is None
        and node.get("qualify") is None
        and not (node.get("cte_map") or {}).get("map")
        and (node.get("from_table") or {}).get("table_name") == FILTERED
        and node.get("where_clause") is not None
    )
    if not plain:
        raise InvalidFilterError(
            f"The filter {text!r} is not one condition on the table's rows; write only what "
            "follows WHERE, e.g. filter=\"id = 5 AND name LIKE 'a%'\"."
        )
    if '"class": "SUBQUERY"' in _text_of(node["where_clause"]):
        raise InvalidFilterError(
            f"The filter {text!r} holds a subquery; a filter reads only its own table's columns "
            "(use dc.sql(...) to combine tables)."
        )
    return node["where_clause"]


def _text_of(node: Node) -> str:
    import json

    return json.dumps(node)


def _column(names: list[str]) -> Column:
    """A name in the filter's text as the table's column (or a field inside one)."""
    if len(names) > 1 and names[0] == FILTERED:
        names = names[1:]
    return Column(tuple(names))


def _check(sql: str, schema: pa.Schema, table: str, shown: str) -> None:
    """Raise ``InvalidFilterError`` when DuckDB cannot bind the filter over the table's
    columns (a missing column, types that do not meet, an unknown function)."""
    import duckdb

    try:
        check_predicate(sql, schema)
    except duckdb.Error as e:
        message = str(e).split("\n")[0].replace(FILTERED, repr(table))
        raise InvalidFilterError(
            f"The filter {shown!r} cannot run on table {table!r}: {message}. Its columns are "
            f"{schema.names}."
        ) from e
