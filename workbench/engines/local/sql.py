"""SQL over table versions on this process's sandboxed DuckDB database (``duck_scans``): each
table name in the query names a scan of that version's files, read by DuckDB's own Parquet
reader, put in front of the query as a common table expression (a temporary view costs a
create, a bind and a drop a query, ~2 ms; only the forms that take no WITH clause, such as
SUMMARIZE and DESCRIBE, read views). Only a single read-only statement runs, and the database
reads no file but those under the catalogs' roots, so a query can neither write nor reach
anything else."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from workbench.core.base.errors import InvalidArgumentError, brief
from workbench.core.catalog.locations import reading, vacuumed
from workbench.core.io.duck_scans import add_view, database, gone_file, result, scan
from workbench.core.io.sql_errors import engine_error, with_added

if TYPE_CHECKING:
    import pyarrow as pa

    from workbench.core.catalog.locations import OpenTable

_READ_ONLY = ("SELECT", "EXPLAIN")  # statement types a query may be


def run(query: str, tables: Mapping[str, OpenTable], explain: bool = False) -> pa.Table:
    """Run one read-only ``query`` where each name in ``tables`` names a table version
    (``explain``: DuckDB's plan of it instead, as one text column ``plan``)."""
    import duckdb
    import pyarrow as pa

    statement = _statement(query)
    added: tuple[int, str] | None = None
    with database(tables) as scans:
        try:
            selects = {}
            for name, opened in tables.items():
                with reading(opened), opened.storage.access_errors():
                    selects[name] = scan(scans, name, opened)
            added = _scans_in_front(statement, selects)
            if added is None:
                for name, select in selects.items():
                    add_view(scans, name, select)
            ran = with_added(statement, added)
            if explain:
                plan = scans.connection.execute(f"EXPLAIN {ran}").fetchall()
                return pa.table({"plan": ["\n".join(row[1] for row in plan)]})
            with _storage_errors(tables):
                return result(scans.connection, ran)
        except duckdb.Error as e:
            _raise_vacuumed(tables, e)
            raise engine_error(str(e), query, statement, added) from e


# What a statement may start with: blanks and comments, then EXPLAIN (ANALYZE) before the query.
_BLANKS = re.compile(r"(?:\s+|--[^\n]*(?:\n|$)|/\*.*?\*/)*", re.DOTALL)
_EXPLAIN = re.compile(r"EXPLAIN(?:\s+ANALYZE)?\b", re.IGNORECASE)
_OWN_WITH = re.compile(r"WITH(?:\s+RECURSIVE)?\b", re.IGNORECASE)
# Query forms a WITH clause may precede, in parentheses or not (SUMMARIZE, DESCRIBE and SHOW
# take none, nor does DuckDB's parser take one before a parenthesized query of its own WITH).
_TAKES_WITH = re.compile(r"(?:\(\s*)*(?:SELECT|FROM|VALUES|TABLE|UNPIVOT)\b", re.IGNORECASE)


def _scans_in_front(statement: str, selects: Mapping[str, str]) -> tuple[int, str] | None:
    """Where in ``statement`` to put the text that defines each name of ``selects`` as its
    SELECT (a WITH clause, or the first items of the statement's own), and that text; None
    when the statement's form takes no WITH clause. Each name is used once (its own filter),
    so each expression is inlined where it is read, filters pushed into its scan."""
    if not selects:
        return 0, ""
    at = _BLANKS.match(statement).end()
    explain = _EXPLAIN.match(statement, at)
    if explain is not None:
        at = _BLANKS.match(statement, explain.end()).end()
    named = ", ".join(f"{name} AS NOT MATERIALIZED ({select})" for name, select in selects.items())
    own = _OWN_WITH.match(statement, at)
    if own is not None:
        return own.end(), f" {named},"
    if _TAKES_WITH.match(statement, at):
        return at, f"WITH {named} "
    return None


def _storage_errors(tables: Mapping[str, OpenTable]) -> Any:
    """The typed errors of the stores of object-store tables (read through pyarrow)."""
    import contextlib

    stack = contextlib.ExitStack()
    for opened in tables.values():
        stack.enter_context(opened.storage.access_errors())
    return stack


def _raise_vacuumed(tables: Mapping[str, OpenTable], error: Exception) -> None:
    """Raise ``vacuumed``'s error when ``error`` names a file of a table that is gone (a
    version ``dc.vacuum`` removed files of); a store refusing raises its typed error."""
    gone = gone_file(tables.values(), error)
    if gone is not None:
        raise vacuumed(gone, brief(error, 300)) from error


def _statement(query: str) -> str:
    """The one read-only statement ``query`` holds; raises ``InvalidArgumentError`` for more
    than one, or one that would change something."""
    import duckdb

    try:
        statements = duckdb.extract_statements(query)
    except duckdb.Error as e:
        raise engine_error(str(e), query) from e
    if len(statements) != 1:
        raise InvalidArgumentError(
            f"dc.sql runs exactly one query; this text holds {len(statements)} statements."
        )
    kind = statements[0].type.name
    if kind not in _READ_ONLY:
        raise InvalidArgumentError(
            f"dc.sql only reads: a {kind} statement is not allowed. Change tables with "
            "dc.write(...) (e.g. the result of a SELECT)."
        )
    return statements[0].query
