"""SQL over table versions on this process's sandboxed DuckDB database (``duck_scans``): each
table name in the query is a view of that version's files, read by DuckDB's own Parquet
reader. Only a single read-only statement runs, and the database reads no file but those under
the catalogs' roots, so a query can neither write nor reach anything else."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from workbench.core.base.errors import InvalidArgumentError, brief
from workbench.core.catalog.locations import reading, vacuumed
from workbench.core.io.duck_scans import add_view, database, gone_file, result
from workbench.core.io.sql_errors import engine_error

if TYPE_CHECKING:
    import pyarrow as pa

    from workbench.core.catalog.locations import OpenTable

_READ_ONLY = ("SELECT", "EXPLAIN")  # statement types a query may be


def run(query: str, tables: Mapping[str, OpenTable], explain: bool = False) -> pa.Table:
    """Run one read-only ``query`` where each name in ``tables`` is a view of a table version
    (``explain``: DuckDB's plan of it instead, as one text column ``plan``)."""
    import duckdb
    import pyarrow as pa

    statement = _statement(query)
    with database(tables) as scans:
        try:
            for name, opened in tables.items():
                with reading(opened), opened.storage.access_errors():
                    add_view(scans, name, opened)
            if explain:
                plan = scans.connection.execute(f"EXPLAIN {statement}").fetchall()
                return pa.table({"plan": ["\n".join(row[1] for row in plan)]})
            with _storage_errors(tables):
                return result(scans.connection, statement)
        except duckdb.Error as e:
            _raise_vacuumed(tables, e)
            raise engine_error(str(e), query, statement) from e


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
