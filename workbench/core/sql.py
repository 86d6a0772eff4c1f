"""SQL over catalog tables named ``namespace.table``, on an in-process DuckDB.

DuckDB runs standard SQL over Arrow data without copying it: each referenced table is exposed as
a lazy pyarrow dataset at the catalog state the query should see (the open transaction's
snapshot, or ``as_of`` a past point), so projections and filters are pushed down to Parquet.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from workbench.core.catalog import get_catalog
from workbench.core.datasets import from_pyarrow, parse_dataset_type
from workbench.core.errors import InvalidArgumentError
from workbench.core.types import DatasetType

_QUALIFIED = re.compile(r"\b([A-Za-z0-9][A-Za-z0-9_-]*)\.([A-Za-z0-9][A-Za-z0-9_-]*)\b")
_STRINGS = re.compile(r"'(?:[^']|'')*'")


def referenced_tables(
    query: str, catalog: str | None = None, as_of: Any = None
) -> list[tuple[str, str]]:
    """The ``namespace.table`` names in ``query`` (outside string literals) that exist."""
    found: list[tuple[str, str]] = []

    def collect(namespace: str, name: str) -> str:
        found.append((namespace, name))
        return f"{namespace}.{name}"

    qualified_names(query, collect, catalog, as_of)
    return list(dict.fromkeys(found))


def qualified_names(
    query: str,
    replace: Callable[[str, str], str],
    catalog: str | None = None,
    as_of: Any = None,
) -> str:
    """``query`` with each existing ``namespace.table`` (outside strings) replaced."""
    from workbench.core.context import view

    seen = view(get_catalog(catalog), as_of)

    def substitute(match: re.Match[str]) -> str:
        ns, name = match.group(1), match.group(2)
        return replace(ns, name) if seen.entry(ns, name) is not None else match.group(0)

    parts = _STRINGS.split(query)
    literals = _STRINGS.findall(query)
    out = [_QUALIFIED.sub(substitute, parts[0])]
    for literal, part in zip(literals, parts[1:], strict=True):
        out += [literal, _QUALIFIED.sub(substitute, part)]
    return "".join(out)


def sql(
    query: str,
    engine: str = "local",
    as_of: Any = None,
    read_as: DatasetType | str = DatasetType.PANDAS,
    catalog: str | None = None,
) -> Any:
    """Run ``query`` over catalog tables referenced as ``namespace.table``; return ``read_as``."""

    read_as = parse_dataset_type(read_as)
    if engine == "spark":
        from workbench.engines.spark.sql import run_sql

        frame = run_sql(query, as_of, catalog)
        return frame if read_as is DatasetType.SPARK else from_pyarrow(frame.toArrow(), read_as)
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
