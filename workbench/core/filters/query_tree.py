"""Which conditions of a SQL query hold for the rows a table is read for: the parts of each
SELECT's WHERE (and of an inner join's ON) that name the columns of one table alone, so file
skipping can leave out files no such row is in.

Each table the query reads is a base table of a SELECT's FROM, named by its view name (each
occurrence its own). A condition is taken for a table only where leaving rows out of its scan
cannot change the answer: not for the side of an outer join that may be filled with nulls
(nor the ON of a full join), not across a positional or ASOF join, not for a sampled table, and
never a condition that holds a subquery. Anything the tree does not read is left to the engine.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from workbench.core.filters.expression import Column, Expr, conjoin
from workbench.core.filters.sql_tree import Node, expression, parse

_BLOCKING_JOINS = {"POSITIONAL", "ASOF"}


@dataclass(frozen=True)
class _Source:
    """A table of a FROM: its view name (None for what is not a catalog table), the name its
    columns go by, and whether a WHERE may filter its scan."""

    view: str | None
    alias: str
    filterable: bool


def table_predicates(query: str, columns: Mapping[str, Sequence[str]]) -> dict[str, Expr]:
    """For each view name in ``columns`` (with its table's column names) that the query
    reads, the AND of the conditions that hold for every row it needs from it (in the view's
    own column names). Text that does not parse gives none."""
    try:
        tree = parse(query)
    except ValueError:
        return {}
    found: dict[str, list[Expr]] = {}
    for select in _selects(tree):
        for view, predicate in _pushed(select, columns):
            found.setdefault(view, []).append(predicate)
    counts: dict[str, int] = {}
    for select in _selects(tree):
        for source in _sources(select.get("from_table") or {}, False, columns):
            if source.view is not None:
                counts[source.view] = counts.get(source.view, 0) + 1
    out = {}
    for view, parts in found.items():
        joined = conjoin(parts)
        if joined is not None and counts.get(view) == 1:  # a view read once: its own filter
            out[view] = joined
    return out


def _selects(node: Any) -> Iterator[Node]:
    """Every SELECT in the tree: the query's own, those of subqueries, CTEs and unions."""
    if isinstance(node, dict):
        if node.get("type") == "SELECT_NODE":
            yield node
        for value in node.values():
            yield from _selects(value)
    elif isinstance(node, list):
        for value in node:
            yield from _selects(value)


def _pushed(select: Node, columns: Mapping[str, Sequence[str]]) -> Iterator[tuple[str, Expr]]:
    """(view, condition) pairs a SELECT's WHERE and inner-join ONs give its tables."""
    if select.get("sample"):
        return
    sources = list(_sources(select.get("from_table") or {}, False, columns))
    if not any(s.view for s in sources):
        return
    where = select.get("where_clause")
    filterable = [s for s in sources if s.filterable and s.view is not None]
    for condition in _conjuncts(where):
        yield from _assign(condition, sources, filterable, columns)
    for condition, allowed in _join_conditions(select.get("from_table") or {}, columns):
        yield from _assign(condition, sources, allowed, columns)


def _assign(
    condition: Node,
    sources: list[_Source],
    allowed: list[_Source],
    columns: Mapping[str, Sequence[str]],
) -> Iterator[tuple[str, Expr]]:
    """The condition for the one table of ``allowed`` all its columns belong to, if any."""
    if _has_subquery(condition):
        return
    owners: set[str | None] = set()
    refs = list(_column_refs(condition))
    for names in refs:
        owner, _ = _owner(names, sources, columns)
        owners.add(owner)
    if len(owners) != 1 or None in owners or not refs:
        return
    (view,) = owners
    if not any(s.view == view for s in allowed):
        return

    def resolve(names: list[str]) -> Column | None:
        owner, path = _owner(names, sources, columns)
        return Column(tuple(path)) if owner == view and path else None

    yield view, expression(condition, resolve)  # type: ignore[misc]


def _owner(
    names: list[str], sources: list[_Source], columns: Mapping[str, Sequence[str]]
) -> tuple[str | None, list[str]]:
    """The view a column reference reads (None when it is not one table's column) and the
    column path within it."""
    if len(names) > 1:
        named = [s for s in sources if s.alias == names[0]]
        if named:
            source = named[0]
            if source.view is None or names[1] not in columns[source.view]:
                return None, []
            return source.view, names[1:]
    having = [s for s in sources if s.view is not None and names[0] in columns[s.view]]
    if len(having) != 1:
        return None, []
    return having[0].view, names


def _sources(item: Node, nullable: bool, columns: Mapping[str, Sequence[str]]) -> Iterator[_Source]:
    """The tables of a FROM item; ``nullable``: under a side an outer join may null."""
    kind = item.get("type")
    if kind == "BASE_TABLE":
        name = item.get("table_name", "")
        plain = not item.get("schema_name") and not item.get("catalog_name")
        view = name if plain and name in columns else None
        filterable = not nullable and not item.get("sample") and item.get("at_clause") is None
        yield _Source(view, item.get("alias") or name, filterable)
    elif kind == "JOIN":
        join, ref = item.get("join_type"), item.get("ref_type")
        blocked = ref in _BLOCKING_JOINS
        left_null = nullable or blocked or join in ("RIGHT", "OUTER")
        right_null = nullable or blocked or join in ("LEFT", "OUTER", "SEMI", "ANTI", "MARK")
        yield from _sources(item["left"], left_null, columns)
        yield from _sources(item["right"], right_null, columns)
    elif item.get("alias"):
        yield _Source(None, item["alias"], False)  # a subquery, a function, values...


def _join_conditions(
    item: Node, columns: Mapping[str, Sequence[str]]
) -> Iterator[tuple[Node, list[_Source]]]:
    """The ON conditions of the FROM's joins, each with the tables whose scans it may
    filter: both sides of an inner or semi join, the side an outer or anti join does not keep
    whole."""
    if item.get("type") != "JOIN":
        return
    yield from _join_conditions(item["left"], columns)
    yield from _join_conditions(item["right"], columns)
    join, ref = item.get("join_type"), item.get("ref_type")
    if ref in _BLOCKING_JOINS or item.get("condition") is None:
        return
    left = [s for s in _sources(item["left"], False, columns) if s.view and s.filterable]
    right = [s for s in _sources(item["right"], False, columns) if s.view and s.filterable]
    allowed = {
        "INNER": left + right,
        "SEMI": left + right,  # a row of the left side kept only with a match
        "LEFT": right,
        "ANTI": right,
        "RIGHT": left,
    }.get(join, [])
    for condition in _conjuncts(item["condition"]):
        yield condition, allowed


def _conjuncts(node: Node | None) -> list[Node]:
    if node is None:
        return []
    if node.get("class") == "CONJUNCTION" and node.get("type") == "CONJUNCTION_AND":
        return [part for child in node["children"] for part in _conjuncts(child)]
    return [node]


def _column_refs(node: Any) -> Iterator[list[str]]:
    if isinstance(node, dict):
        if node.get("class") == "COLUMN_REF":
            yield node["column_names"]
        for value in node.values():
            yield from _column_refs(value)
    elif isinstance(node, list):
        for value in node:
            yield from _column_refs(value)


def _has_subquery(node: Any) -> bool:
    if isinstance(node, dict):
        return node.get("class") == "SUBQUERY" or any(_has_subquery(v) for v in node.values())
    if isinstance(node, list):
        return any(_has_subquery(v) for v in node)
    return False
