"""SQL over catalog tables named ``namespace.table``, on any engine that runs SQL.

Each ``namespace.table`` (or ``catalog.namespace.table``) in the query, outside string
literals, quoted text and comments, is replaced by a plain name before the engine parses the
query (a view's, or on DuckDB a WITH clause's), so every valid name works unquoted, reserved
words (``default``, ``order``) and hyphens included. The names read the tables at the catalog
state the query should see: the open transaction's snapshot, or ``as_of`` a past point.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from workbench.core.base.errors import (
    InvalidArgumentError,
    InvalidFilterError,
    SqlQueryError,
    TableNotFoundError,
)
from workbench.core.base.types import DEFAULT_ENGINE, DatasetType
from workbench.core.catalog.locations import OpenTable, locate
from workbench.core.catalog.registry import list_catalogs
from workbench.core.catalog.scope import get_catalog
from workbench.core.data.datasets import from_pyarrow, parse_dataset_type
from workbench.core.data.engine import get_engine, require_vectors_applied
from workbench.core.delta.reading import plain_schema
from workbench.core.filters.binding import bind
from workbench.core.filters.query_tree import table_predicates
from workbench.core.io.scan_plan import QueryPlan, TableScan, narrowed
from workbench.core.io.sql_errors import in_user_terms
from workbench.core.transactions.read_ahead import read_ahead_of_check
from workbench.core.transactions.table_versions import open_seen

_PART = r'(?:"([^"]+)"|`([^`]+)`|([A-Za-z0-9][A-Za-z0-9_-]*))'
_QUALIFIED = re.compile(rf"(?<![\w.\"`]){_PART}\s*\.\s*{_PART}(?:\s*\.\s*{_PART})?(?![\w\"`])")
# Text where names are not looked for: string literals, quoted identifiers, comments.
_SKIPPED = re.compile(r"'(?:[^']|'')*'|--[^\n]*|/\*.*?\*/", re.DOTALL)


def _name(match: re.Match[str], part: int) -> str | None:
    groups = match.groups()[3 * part : 3 * part + 3]
    return next((g for g in groups if g is not None), None)


@dataclass(frozen=True)
class BoundQuery:
    """A query with each table name replaced by a view name (``text``, what the engine runs),
    the table version each view reads, and where each name was, to say the engine's errors in
    the user's ``original`` text."""

    text: str
    original: str
    tables: dict[str, OpenTable]
    places: tuple[tuple[int, int, int, int], ...]  # each name's (start, end) in text, in original

    def original_offset(self, offset: int) -> int:
        """The offset in ``original`` of ``offset`` in ``text`` (a place in a view name: the
        start of the table name it replaced)."""
        shift = 0
        for start, end, original_start, original_end in self.places:
            if offset < start:
                break
            if offset < end:
                return original_start
            shift = original_end - end
        return offset + shift

    def in_user_names(self, message: str) -> str:
        """``message`` with the view names given back as the tables' names."""
        shown = {name: opened.loc.qualified for name, opened in self.tables.items()}
        return _VIEW_NAME.sub(lambda m: shown.get(m.group(0), m.group(0)), message)


def bind_tables(query: str, catalog: str | None = None, as_of: Any = None) -> BoundQuery:
    """``query`` with each place that names an existing table replaced by a view name of its
    own, and the table version each view reads."""
    from workbench.core.transactions.context import view

    default = get_catalog(catalog)
    views = {catalog: view(default, as_of)}  # resolves as_of now, even for a query of no tables
    catalogs = list_catalogs()
    tables: dict[str, OpenTable] = {}
    opened: dict[tuple[str, str, str], OpenTable] = {}
    replaced: list[tuple[int, int, str]] = []  # (start, end) in query of each name, its view

    def substitute(match: re.Match[str], offset: int) -> str:
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
        if key not in opened:  # as the view seen: the catalog's log read once a query
            opened[key] = open_seen(views[cat], locate(table, ns, cat), as_of=as_of)
        name = f"{VIEW_PREFIX}{len(tables)}"  # each place its own view: its own filter
        tables[name] = opened[key]
        replaced.append((offset + match.start(), offset + match.end(), name))
        return name

    def bound(text: str, offset: int) -> str:
        return _QUALIFIED.sub(lambda match: substitute(match, offset), text)

    pieces, start = [], 0
    for skipped in _SKIPPED.finditer(query):
        pieces += [bound(query[start : skipped.start()], start), skipped.group(0)]
        start = skipped.end()
    pieces.append(bound(query[start:], start))
    places, shift = [], 0
    for original_start, original_end, name in replaced:
        start = original_start + shift
        places.append((start, start + len(name), original_start, original_end))
        shift += len(name) - (original_end - original_start)
    return BoundQuery("".join(pieces), query, tables, tuple(places))


VIEW_PREFIX = "__wb_t"
_VIEW_NAME = re.compile(rf"{VIEW_PREFIX}\d+")

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
    explain: bool = False,
) -> Any:
    """Run ``query`` over catalog tables referenced as ``namespace.table`` on ``engine``
    (``local``: DuckDB, ``spark``, ``daft``); return ``read_as``. Each table is read through
    the files its conditions in the query could match (the log's statistics decide before any
    file is opened); ``explain=True`` returns a ``QueryPlan`` of what the query would read
    instead of running it."""
    if not isinstance(query, str) or not query.strip():
        raise InvalidArgumentError(
            f"dc.sql takes the text of a query, e.g. dc.sql('SELECT * FROM default.t'); got "
            f"{query!r}."
        )
    if not isinstance(explain, bool):
        raise InvalidArgumentError(f"explain={explain!r} must be True or False.")
    read_as = parse_dataset_type(read_as)
    runner = get_engine(engine)

    def run() -> Any:
        return _run(query, runner, catalog, as_of, explain)

    result = run() if as_of is not None else read_ahead_of_check(get_catalog(catalog), run)
    if explain or read_as is runner.sql_result_type:
        return result
    return from_pyarrow(runner.to_arrow(result), read_as)


def _run(query: str, runner: Any, catalog: str | None, as_of: Any, explain: bool) -> Any:
    """``query``'s result on ``runner`` (its own type), or its ``QueryPlan``."""
    bound = bind_tables(query, catalog, as_of)
    for opened in bound.tables.values():
        require_vectors_applied(runner, opened, "run SQL over")
    tables, scans = _skipping(bound.text, bound.tables)
    try:
        if explain:
            plan = runner.sql_plan(bound.text, tables)
            return QueryPlan(query, runner.name, scans, bound.in_user_names(plan))
        return runner.sql(bound.text, tables)
    except SqlQueryError as e:
        raise in_user_terms(e, bound, catalog) from e.__cause__
    except InvalidArgumentError as e:
        raise type(e)(bound.in_user_names(str(e))) from e.__cause__


def _skipping(
    query: str, tables: dict[str, OpenTable]
) -> tuple[dict[str, OpenTable], list[TableScan]]:
    """Each view's table read through the files the query's conditions on it could match."""
    columns = {name: opened.schema.names for name, opened in tables.items()}
    conditions = table_predicates(query, columns)
    narrowed_tables, scans = {}, []
    for name, opened in tables.items():
        condition = conditions.get(name)
        if condition is not None:
            try:
                condition = bind(
                    condition, plain_schema(opened), opened.loc.qualified, lenient=True
                )
            except InvalidFilterError:  # the engine will say what is wrong with it
                condition = None
        narrowed_tables[name], scan = narrowed(opened, condition)
        scans.append(scan)
    return narrowed_tables, scans
