"""Completion candidates from the catalog: table and column names in SQL, and table, namespace,
branch, tag and catalog names in the string arguments of workbench calls. Every function here
returns candidates or None (not a place it completes); none raises or waits long.

Candidates match what was typed in any case and fuzzily, ranked prefix first (``ranked``), and
each says what it is in its kind: ``table``, ``column · int64 · shop.orders`` (a column's type
and table), ``namespace``, ``catalog``, ``branch``, ``tag``; JupyterLab's extension
(labextension/src/completion.ts) knows these kinds by their first word and keeps the order."""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from workbench.core.io.handle import TableHandle, TableMap, table
from workbench.core.io.url_names import SCHEME
from workbench.core.ops.branches import branch, drop_branch, use_branch
from workbench.core.ops.names import CatalogNames
from workbench.core.ops.publish import merge_branch
from workbench.frontend import names
from workbench.frontend.python_text import CallString, call_string
from workbench.frontend.sql_text import SqlPlace, sql_place

TABLE, NAMESPACE, CATALOG, BRANCH, TAG, POINT, SQL, COLUMN = (
    "table",
    "namespace",
    "catalog",
    "branch",
    "tag",
    "point",
    "sql",
    "column",
)
# What a parameter of a workbench function names, by the parameter's name.
PARAMETER_KINDS = {
    "table": TABLE,
    "into": TABLE,
    "namespace": NAMESPACE,
    "catalog": CATALOG,
    "branch": BRANCH,
    "as_of": TAG,
    "since": TAG,
    "before": POINT,
    "after": POINT,
    "query": SQL,
}
# Functions whose ``name`` parameter names a branch or a table.
NAME_KINDS: dict[Any, str] = {
    branch: BRANCH,
    use_branch: BRANCH,
    drop_branch: BRANCH,
    merge_branch: BRANCH,
    table: TABLE,
}


@dataclass(frozen=True)
class Completions:
    """Candidates replacing ``fragment``, the text just before the cursor, in order; each with
    its kind (``table``, ``column``, ...)."""

    fragment: str
    items: tuple[tuple[str, str], ...] = ()


_PART_START = re.compile(r"(?:^|[./_:])(?=[^./_:])")  # where a name's parts start


def _rank(typed: str, candidate: str) -> int | None:
    """How well ``candidate`` matches ``typed``, case aside: 0 it starts with it, 1 one of its
    parts (after ``.``, ``/``, ``_``) does, 2 it holds it, 3 it holds its characters in order
    (2 and 3 for two letters or more, 3 for a word typed without ``.`` or ``/``: ``shop.o`` is
    not ``shop.stock``); None it does not match."""
    wanted, text = typed.casefold(), candidate.casefold()
    if text.startswith(wanted):
        return 0
    if any(text.startswith(wanted, m.end()) for m in _PART_START.finditer(text)):
        return 1
    if len(wanted) < 2:  # one letter anywhere matches too much
        return None
    if wanted in text:
        return 2
    if "." in wanted or "/" in wanted:
        return None
    rest = iter(text)
    return 3 if all(char in rest for char in wanted) else None


def ranked(typed: str, candidates: Iterable[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
    """The (text, kind) candidates that match ``typed`` (see ``_rank``), best first, each rank
    in the order given."""
    scored = [(rank, c) for c in candidates if (rank := _rank(typed, c[0])) is not None]
    return tuple(c for _, c in sorted(scored, key=lambda pair: pair[0]))


def _starting(fragment: str, candidates: Iterable[str], kind: str) -> tuple[tuple[str, str], ...]:
    """``candidates`` of one ``kind`` that match ``fragment``, best first."""
    return ranked(fragment, ((c, kind) for c in candidates))


def complete_sql(
    text: str, cursor: int, catalog: str | None = None, branch_name: str | None = None
) -> Completions:
    """Candidates at ``cursor`` in SQL ``text`` over ``catalog`` (default: the default one)."""
    place = sql_place(text, cursor)
    if place.kind == TABLE:
        return Completions(place.fragment, _tables(place.fragment, catalog, branch_name))
    if place.kind == COLUMN:
        return Completions(place.fragment, _columns(place, catalog, branch_name))
    return Completions(place.fragment)


def _tables(fragment: str, catalog: str | None, branch_name: str | None) -> tuple:
    """``ns.t`` names of the catalog, and ``cat.ns.t`` of another catalog once its name and a
    dot are typed; quoted part by part (``"ns"."t"``) when the fragment quotes a part."""
    quote = next((q for q in '"`' if q in fragment), None)
    if quote is None:
        return _plain_tables(fragment, catalog, branch_name)
    plain = fragment.replace(quote, "")
    found = _plain_tables(plain, catalog, branch_name)
    return tuple((_quoted(name, quote), kind) for name, kind in found)


def _quoted(qualified: str, quote: str) -> str:
    """``a.b`` as ``"a"."b"`` (names hold no quotes)."""
    return ".".join(f"{quote}{part}{quote}" for part in qualified.split("."))


def _plain_tables(fragment: str, catalog: str | None, branch_name: str | None) -> tuple:
    listing = names.listing(catalog, branch_name)
    found = _starting(fragment, listing.tables if listing else (), TABLE)
    first, dot, _ = fragment.partition(".")
    if dot and first in names.catalogs() and not (listing and first in listing.namespaces):
        other = names.listing(first, None)
        found += _starting(
            fragment, (f"{first}.{t}" for t in (other.tables if other else ())), TABLE
        )
    return found


def _columns(place: SqlPlace, catalog: str | None, branch_name: str | None) -> tuple:
    """Columns of the table the qualifier names, or of every table the statement names."""
    if place.qualifier is not None:
        named = place.tables.get(place.qualifier) or _unique_table(
            place.qualifier, catalog, branch_name
        )
        wanted = [named] if named else []
    else:
        wanted = list(dict.fromkeys(place.tables.values()))
    seen: dict[str, str] = {}
    for qualified in wanted:
        table_catalog, table_name = _split_catalog(qualified, catalog)
        for column in names.columns(table_name, table_catalog, branch_name):
            seen.setdefault(column.name, f"{COLUMN} · {column.type} · {qualified}")
    return ranked(place.fragment, seen.items())


def _unique_table(short: str, catalog: str | None, branch_name: str | None) -> str | None:
    """``ns.t`` for a qualifier that is a table's name (``orders.`` when only ``shop.orders``
    has that name), or the qualifier itself when it is a ``ns.t``."""
    listing = names.listing(catalog, branch_name)
    tables = listing.tables if listing else ()
    if short in tables:
        return short
    found = [t for t in tables if t.rsplit(".", 1)[-1] == short]
    return found[0] if len(found) == 1 else None


def _split_catalog(qualified: str, catalog: str | None) -> tuple[str | None, str]:
    """(catalog, ``ns.t``) of a table name written ``ns.t`` or ``cat.ns.t``."""
    parts = qualified.split(".")
    if len(parts) == 3:
        return parts[0], ".".join(parts[1:])
    return catalog, qualified


def complete_call(code: str, resolve: Callable[[str], Any]) -> Completions | None:
    """Candidates when the end of ``code`` is in a string argument of a workbench function
    (``resolve`` turns a callee's dotted name into the object it names, or None)."""
    place = call_string(code)
    if place is None:
        return None
    function = resolve(place.callee)
    kind = _argument_kind(function, place) if function is not None else None
    if kind is None:
        return None
    catalog = place.given.get("catalog") or _handle_attribute(function, "catalog")
    branch_name = place.given.get("branch") or _handle_attribute(function, "branch")
    if kind == SQL:
        return complete_sql(place.typed, len(place.typed), catalog, branch_name)
    if kind == CATALOG:
        return Completions(place.typed, _starting(place.typed, names.catalogs(), CATALOG))
    listing = names.listing(catalog, branch_name)
    return Completions(place.typed, _named(kind, place.typed, listing))


_SUBSCRIPT = re.compile(r"""([A-Za-z_][\w.]*)\s*\[\s*(['"])([^'"\\\n]*)$""")


def complete_key(code: str, resolve: Callable[[str], Any]) -> Completions | None:
    """Candidates when the end of ``code`` is in a string key of ``dc.tables[...]`` (a
    ``TableMap``): its catalog's tables."""
    match = _SUBSCRIPT.search(code)
    found = resolve(match.group(1)) if match else None
    if not isinstance(found, TableMap):
        return None
    typed = match.group(3)  # type: ignore[union-attr]
    listing = names.listing(found.catalog)
    return Completions(typed, _starting(typed, listing.tables if listing else (), TABLE))


def _named(kind: str, typed: str, listing: CatalogNames | None) -> tuple:
    if listing is None:
        return ()
    if typed.startswith(SCHEME) and kind in (TABLE, NAMESPACE):  # dc://catalog/namespace[/table]
        found = listing.tables if kind == TABLE else listing.namespaces
        urls = (f"{SCHEME}{listing.catalog}/{name.replace('.', '/')}" for name in found)
        return _starting(typed, urls, kind)
    if kind == TABLE:
        return _starting(typed, listing.tables, TABLE)
    if kind == NAMESPACE:
        return _starting(typed, listing.namespaces, NAMESPACE)
    if kind == BRANCH:
        return _starting(typed, listing.branches, BRANCH)
    if kind == TAG:
        return _starting(typed, listing.tags, TAG)
    return _starting(typed, listing.branches, BRANCH) + _starting(typed, listing.tags, TAG)


def _argument_kind(function: Any, place: CallString) -> str | None:
    """What the argument the cursor is in names, from the function's parameter names."""
    target = getattr(function, "__func__", function)
    module = getattr(target, "__module__", "") or ""
    if not module.startswith("workbench"):
        return None
    try:
        parameters = list(inspect.signature(function).parameters.values())
    except (TypeError, ValueError):
        return None
    if place.keyword is not None:
        name = place.keyword
    else:
        positional = [
            p for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        ]
        if place.index >= len(positional):
            return None
        name = positional[place.index].name
    if name == "name":
        return NAME_KINDS.get(target)
    return PARAMETER_KINDS.get(name)


def _handle_attribute(function: Any, attribute: str) -> str | None:
    """A bound handle method's catalog or branch (``t.diff("`` lists ``t``'s branches)."""
    owner = getattr(function, "__self__", None)
    return getattr(owner, attribute, None) if isinstance(owner, TableHandle) else None


__all__ = ["SCHEME", "Completions", "complete_call", "complete_key", "complete_sql", "ranked"]
