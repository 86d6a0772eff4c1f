"""SQL over catalog tables named ``namespace.table``, on any engine that runs SQL.

Each ``namespace.table`` (or ``catalog.namespace.table``) in the query, outside string
literals, quoted text and comments, is replaced by a plain view name before the engine parses
the query, so every valid name works unquoted, reserved words (``default``, ``order``) and
hyphens included. The views read the tables at the catalog state the query should see: the open
transaction's snapshot, or ``as_of`` a past point.
"""

from __future__ import annotations

import re
from typing import Any

from workbench.core.base.errors import InvalidArgumentError, TableNotFoundError
from workbench.core.base.types import DEFAULT_ENGINE, DatasetType
from workbench.core.catalog.locations import OpenTable, locate
from workbench.core.catalog.registry import list_catalogs
from workbench.core.catalog.scope import get_catalog
from workbench.core.data.datasets import from_pyarrow, parse_dataset_type
from workbench.core.data.engine import get_engine, require_vectors_applied
from workbench.core.transactions.table_versions import open_table

_PART = r'(?:"([^"]+)"|`([^`]+)`|([A-Za-z0-9][A-Za-z0-9_-]*))'
_QUALIFIED = re.compile(rf"(?<![\w.\"`]){_PART}\s*\.\s*{_PART}(?:\s*\.\s*{_PART})?(?![\w\"`])")
# Text where names are not looked for: string literals, quoted identifiers, comments.
_SKIPPED = re.compile(r"'(?:[^']|'')*'|--[^\n]*|/\*.*?\*/", re.DOTALL)


def _name(match: re.Match[str], part: int) -> str | None:
    groups = match.groups()[3 * part : 3 * part + 3]
    return next((g for g in groups if g is not None), None)


def bind_tables(
    query: str, catalog: str | None = None, as_of: Any = None
) -> tuple[str, dict[str, OpenTable]]:
    """``query`` with each existing table name replaced by a view name, and the table version
    each view reads."""
    from workbench.core.transactions.context import view

    default = get_catalog(catalog)
    views = {None: view(default, as_of)}  # resolves as_of now, even for a query of no tables
    catalogs = list_catalogs()
    tables: dict[str, OpenTable] = {}
    names: dict[tuple[str, str, str], str] = {}

    def substitute(match: re.Match[str]) -> str:
        first, second, third = (_name(match, i) for i in range(3))
        if third is not None:
            if first not in catalogs:
                return match.group(0)
            cat, ns, table = first, second, third
        else:
            cat, ns, table = catalog, first, second
        if cat not in views:
            views[cat] = view(get_catalog(cat), as_of)
        if views[cat].entry(ns, table) is None:
            _refuse_missing_table(match, views[cat].catalog_name, ns, table, as_of)
            return match.group(0)
        key = (cat or "", ns, table)
        if key not in names:
            names[key] = f"__wb_t{len(names)}"
            tables[names[key]] = open_table(locate(table, ns, cat), as_of=as_of)
        return names[key]

    pieces, start = [], 0
    for skipped in _SKIPPED.finditer(query):
        pieces += [_QUALIFIED.sub(substitute, query[start : skipped.start()]), skipped.group(0)]
        start = skipped.end()
    pieces.append(_QUALIFIED.sub(substitute, query[start:]))
    return "".join(pieces), tables


_TABLE_PLACE = re.compile(r"\b(?:from|join)\s*$", re.IGNORECASE)
# Schemas of the SQL engines themselves, which a query may name after FROM.
_SYSTEM_SCHEMAS = {"information_schema", "pg_catalog", "main", "temp", "system"}


def _refuse_missing_table(
    match: re.Match[str], catalog: str, namespace: str, table: str, as_of: Any
) -> None:
    """Raise ``TableNotFoundError`` for ``namespace.table`` after FROM or JOIN that is no
    catalog table (other dotted names, such as ``alias.column``, are left to the engine)."""
    if namespace.lower() in _SYSTEM_SCHEMAS or not _TABLE_PLACE.search(
        match.string[: match.start()]
    ):
        return
    when = "" if as_of is None else f" as of {as_of!r}"
    raise TableNotFoundError(
        f"The query reads table {namespace}.{table}, which does not exist in catalog "
        f"{catalog!r}{when}; see dc.list_tables(namespace) for its tables."
    )


def sql(
    query: str,
    engine: str = DEFAULT_ENGINE,
    as_of: Any = None,
    read_as: DatasetType | str = DatasetType.PANDAS,
    catalog: str | None = None,
) -> Any:
    """Run ``query`` over catalog tables referenced as ``namespace.table`` on ``engine``
    (``local``: DuckDB, ``spark``, ``daft``); return ``read_as``."""
    if not isinstance(query, str) or not query.strip():
        raise InvalidArgumentError(
            f"dc.sql takes the text of a query, e.g. dc.sql('SELECT * FROM default.t'); got "
            f"{query!r}."
        )
    read_as = parse_dataset_type(read_as)
    runner = get_engine(engine)
    bound, tables = bind_tables(query, catalog, as_of)
    for opened in tables.values():
        require_vectors_applied(runner, opened, "run SQL over")
    result = runner.sql(bound, tables)
    if read_as is runner.sql_result_type:
        return result
    return from_pyarrow(runner.to_arrow(result), read_as)
