"""SQL over table versions on an in-process DuckDB, sandboxed to the tables it is given.

Each table is registered as a lazy pyarrow dataset (projections and filters reach the Parquet
files). Only a single read-only statement runs, and the connection has no access to files or
the network, so a query can neither read nor write anything but the tables named in it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from workbench.core.base.errors import InvalidArgumentError, brief
from workbench.core.catalog.locations import reading, vacuumed
from workbench.core.delta.reading import ordered_dataset

if TYPE_CHECKING:
    import pyarrow as pa

    from workbench.core.catalog.locations import OpenTable

_READ_ONLY = ("SELECT", "EXPLAIN")  # statement types a query may be


def run(query: str, tables: Mapping[str, OpenTable]) -> pa.Table:
    """Run one read-only ``query`` where each name in ``tables`` is a view of a table version."""
    import duckdb

    connection = duckdb.connect(config={"enable_external_access": False})
    try:
        statements = _statements(connection, query)
        for name, opened in tables.items():
            with reading(opened):  # files with a vector are read now
                connection.register(name, ordered_dataset(opened))
        connection.execute("SET lock_configuration = true")
        return connection.execute(statements[0].query).fetch_arrow_table()
    except duckdb.Error as e:
        for opened in tables.values():  # a file that dc.vacuum removed, or a store refusing
            named = [f for f in opened.files if f.path.rsplit("/", 1)[-1] in str(e)]
            if named and _missing(opened, named[0].absolute):
                raise vacuumed(opened, brief(e, 300)) from e
        raise InvalidArgumentError(
            f"The SQL query failed: {brief(e, 300)}. Name catalog tables as namespace.table "
            "(e.g. SELECT * FROM default.users)."
        ) from e
    finally:
        connection.close()


def _missing(opened: OpenTable, uri: str) -> bool:
    """True when the file at ``uri`` is gone; raises ``StorageUnreachableError`` when the
    table's store cannot be reached or refuses the request."""
    try:
        opened.loc.catalog.storage.check_readable(uri)
    except FileNotFoundError:
        return True
    return False


def _statements(connection: object, query: str) -> list[object]:
    import duckdb

    statements = duckdb.extract_statements(query)
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
    return statements
