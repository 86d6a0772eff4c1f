"""SQL over catalog tables named ``namespace.table``, on an in-process DuckDB.

DuckDB runs standard SQL over Arrow data without copying it: each referenced table is exposed as
a lazy pyarrow dataset at the catalog state the query should see (the open transaction's
snapshot, or ``as_of`` a past point), so projections and filters are pushed down to Parquet.
"""

from __future__ import annotations

import re
from typing import Any

from workbench.core.catalog import get_catalog
from workbench.core.datasets import from_pyarrow
from workbench.core.errors import InvalidArgumentError, WorkbenchError
from workbench.core.types import DatasetType

_QUALIFIED = re.compile(r"\b([A-Za-z0-9][A-Za-z0-9_-]*)\.([A-Za-z0-9][A-Za-z0-9_-]*)\b")
_STRINGS = re.compile(r"'(?:[^']|'')*'")


def referenced_tables(
    query: str, catalog: str | None = None, as_of: Any = None
) -> list[tuple[str, str]]:
    """The ``namespace.table`` names in ``query`` that exist in the catalog."""
    from workbench.core.transaction import view

    seen = view(get_catalog(catalog), as_of)
    found = []
    for ns, name in _QUALIFIED.findall(_STRINGS.sub("''", query)):
        if (ns, name) not in found and seen.entry(ns, name) is not None:
            found.append((ns, name))
    return found


def sql(
    query: str,
    engine: str = "local",
    as_of: Any = None,
    read_as: DatasetType | str = DatasetType.PANDAS,
    catalog: str | None = None,
) -> Any:
    """Run ``query`` over catalog tables referenced as ``namespace.table``; return ``read_as``."""
    from workbench.core.reader import parse_dataset_type

    read_as = parse_dataset_type(read_as)
    if engine == "spark":
        raise WorkbenchError(
            "engine='spark' needs the Spark engine (workbench.engines.spark), which is not part "
            "of this version yet; use engine='local'."
        )
    if engine != "local":
        raise InvalidArgumentError(f"Unknown SQL engine {engine!r}; use 'local' or 'spark'.")
    result = _run_local(query, as_of, catalog)
    return from_pyarrow(result, read_as)


def _run_local(query: str, as_of: Any, catalog: str | None) -> Any:
    import duckdb

    from workbench.core.reader import ordered_dataset
    from workbench.core.tables import locate, open_table

    connection = duckdb.connect()
    try:
        for ns, name in referenced_tables(query, catalog, as_of):
            opened = open_table(locate(name, ns, catalog), as_of=as_of)
            view_name = f"__wb_{ns}_{name}".replace("-", "_")
            connection.register(view_name, ordered_dataset(opened))
            connection.execute(f'CREATE SCHEMA IF NOT EXISTS "{ns}"')
            connection.execute(
                f'CREATE OR REPLACE VIEW "{ns}"."{name}" AS SELECT * FROM {view_name}'
            )
        try:
            return connection.execute(query).fetch_arrow_table()
        except duckdb.Error as e:
            raise InvalidArgumentError(
                f"The SQL query failed: {e}. Name catalog tables as namespace.table "
                "(e.g. SELECT * FROM default.users)."
            ) from e
    finally:
        connection.close()
