"""``diff``: what changed in a table between two points, by merge key where the table has keys."""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from workbench.core.base.errors import InvalidArgumentError, TableVersionNotFoundError
from workbench.core.base.identifiers import quote_identifier
from workbench.core.base.names import MAIN
from workbench.core.base.types import DEFAULT_ENGINE
from workbench.core.catalog.branch_records import read_record
from workbench.core.catalog.descriptions import html_table
from workbench.core.catalog.locations import Location, OpenTable, locate
from workbench.core.catalog.registry import catalog_name
from workbench.core.catalog.scope import main_catalog
from workbench.core.data.engine import get_engine
from workbench.core.transactions.table_versions import open_table
from workbench.core.transactions.time_travel import check_unit


@dataclass(frozen=True)
class TableDiff:
    """Rows added, removed and changed (matched by merge key) and schema changes."""

    table: str
    before: str
    after: str
    added: int
    removed: int
    changed: int
    schema_changes: list[str] = field(default_factory=list)
    keyed: bool = True

    def _summary(self) -> dict[str, Any]:
        return {
            "table": self.table,
            "from": self.before,
            "to": self.after,
            "rows added": self.added,
            "rows removed": self.removed,
            "rows changed": self.changed if self.keyed else "n/a (no merge keys)",
            "schema changes": ", ".join(self.schema_changes) or "-",
        }

    def __str__(self) -> str:
        return "\n".join(f"{k}: {v}" for k, v in self._summary().items())

    def _repr_html_(self) -> str:
        return html_table(self._summary(), "wb-diff")


VERSION_LIMIT = 10**12  # ints below are Delta versions, above are ns timestamps


def _is_version(point: Any) -> bool:
    return (
        isinstance(point, numbers.Integral)
        and not isinstance(point, bool)
        and (point < VERSION_LIMIT)
    )


def _branch_of(loc: Location, point: Any) -> Location | None:
    """The table's location on the branch ``point`` names (``main`` or a branch of the
    catalog), or None when ``point`` names no branch."""
    if not isinstance(point, str):
        return None
    trunk = loc.catalog.trunk
    if point == MAIN:
        return replace(loc, catalog=trunk)
    record = read_record(trunk.storage, point)
    return None if record is None else replace(loc, catalog=trunk.on_record(record))


def _open_at(loc: Location, point: Any, argument: str) -> OpenTable:
    """A table at a Delta version (int below 10**12), on a branch (its name), at an ``as_of``
    point, or now (None); ``argument`` names the point in errors."""
    on_branch = _branch_of(loc, point)
    if on_branch is not None:
        return open_table(on_branch)
    if _is_version(point):
        try:
            return open_table(loc, version=point)
        except TableVersionNotFoundError:
            reading = (
                f"{argument}={point} is no Delta version of table {loc.qualified!r}; as "
                "nanoseconds since the epoch it is"
            )
            check_unit(loc.catalog, point, argument, reading)
            raise
    return open_table(loc, as_of=point)


def _describe_point(opened: OpenTable, spec: Any) -> str:
    line = opened.loc.catalog  # the branch ``spec`` named, or the branch read now
    if spec == line.branch or (spec is None and line.record is not None):
        return f"branch {line.branch} (version {opened.version})"
    shown = spec is None or _is_version(spec)
    return f"version {opened.version}" + ("" if shown else f" ({spec})")


def _names_branch_not_namespace(loc: Location, namespace: Any) -> bool:
    """True when a ``namespace`` argument names a branch and no namespace: the first of two
    branches given positionally."""
    from workbench.core.transactions.context import view

    if _branch_of(loc, namespace) is None:
        return False
    return not view(loc.catalog).has_namespace(namespace)


def _compared(columns: Sequence[str], common: list[str], keys: list[str]) -> list[str]:
    """The asked-for columns to compare, checked to exist at both points."""
    if isinstance(columns, str) or not all(isinstance(c, str) for c in columns):
        raise InvalidArgumentError(f"columns={columns!r} must be a list of column names")
    missing = [c for c in columns if c not in common]
    if missing or not columns:
        raise InvalidArgumentError(
            f"columns={list(columns)!r}: {missing or 'none given'} not in the table at both "
            f"points; compare some of {common}"
        )
    return [c for c in columns if c not in keys]


def diff(
    table: str,
    namespace: str | None = None,
    before: Any = None,
    after: Any = None,
    catalog: str | None = None,
    columns: Sequence[str] | None = None,
) -> TableDiff:
    """Compare a table at ``before`` with ``after`` (default: now). A point is a Delta version
    (an int below 10**12), a branch name (its latest state: ``dc.diff(t, "main", "exp")``
    shows what branch ``exp`` would publish), or an ``as_of`` value (ns, datetime,
    transaction id or tag). ``columns`` limits the comparison to those columns (e.g. one
    model's outputs)."""
    loc = locate(table, None, catalog)
    if before is not None and after is None and _names_branch_not_namespace(loc, namespace):
        namespace, before, after = None, namespace, before  # dc.diff(table, "main", "exp")
    loc = locate(table, namespace, catalog)
    old, new = _open_at(loc, before, "before"), _open_at(loc, after, "after")
    old_types = {f.name: f.type for f in old.schema}
    new_types = {f.name: f.type for f in new.schema}
    changes = [f"+{c}" for c in new_types if c not in old_types]
    changes += [f"-{c}" for c in old_types if c not in new_types]
    changes += [
        f"~{c}: {old_types[c]} -> {new_types[c]}"
        for c in new_types
        if c in old_types and old_types[c] != new_types[c]
    ]
    keys = new.schema.merge_keys
    common = [c for c in new_types if c in old_types]
    if columns is not None:
        common = [c for c in common if c in keys] + _compared(columns, common, keys)
    quoted = {c: quote_identifier(c, '"') for c in common}
    cols = ", ".join(quoted.values())
    if keys:
        on = " AND ".join(f"o.{quoted[k]} = n.{quoted[k]}" for k in keys)
        values = [c for c in common if c not in keys]
        distinct = " OR ".join(f"o.{quoted[c]} IS DISTINCT FROM n.{quoted[c]}" for c in values)
        distinct = distinct or "FALSE"
        query = (
            f"SELECT (SELECT count(*) FROM new n ANTI JOIN old o ON {on}),"
            f" (SELECT count(*) FROM old o ANTI JOIN new n ON {on}),"
            f" (SELECT count(*) FROM old o JOIN new n ON {on} WHERE {distinct})"
        )
    else:
        query = (
            f"SELECT (SELECT count(*) FROM (SELECT {cols} FROM new EXCEPT ALL "
            f"SELECT {cols} FROM old)), (SELECT count(*) FROM (SELECT {cols} FROM old "
            f"EXCEPT ALL SELECT {cols} FROM new)), 0"
        )
    old, new = _without_shared_files(old, new)
    counts = get_engine(DEFAULT_ENGINE).sql(query, {"old": old, "new": new})
    added, removed, changed = (counts.column(i)[0].as_py() for i in range(3))
    return TableDiff(
        table=loc.qualified,
        before=_describe_point(old, before),
        after=_describe_point(new, after),
        added=int(added),
        removed=int(removed),
        changed=int(changed),
        schema_changes=changes,
        keyed=bool(keys),
    )


def _without_shared_files(old: OpenTable, new: OpenTable) -> tuple[OpenTable, OpenTable]:
    """Both points without the files they share (the same file with the same deletion
    vector: the same rows on both sides), so a diff reads what changed, not the table. The
    counts stay: shared rows cancel in a multiset difference, and a key of a shared row is
    in no other row of either point (keys are unique at a point)."""
    shared = {f.identity for f in old.files} & {f.identity for f in new.files}
    if not shared:
        return old, new
    return tuple(  # type: ignore[return-value]
        t.with_files([f for f in t.files if f.identity not in shared]) for t in (old, new)
    )


@dataclass(frozen=True)
class BranchDiff:
    """What publishing a branch would change on ``main``: one ``TableDiff`` per table the
    branch changed (a table only one side has compares with an empty table)."""

    branch: str
    tables: list[TableDiff] = field(default_factory=list)

    COLUMNS = ("table", "from", "to", "rows added", "rows removed", "rows changed", "schema")

    def _rows(self) -> list[list[str]]:
        return [[str(v) for v in d._summary().values()] for d in self.tables]

    def __str__(self) -> str:
        if not self.tables:
            return f"Branch {self.branch!r} changed no table."
        lines = [" | ".join(self.COLUMNS)]
        return "\n".join(lines + [" | ".join(row) for row in self._rows()])

    def _repr_html_(self) -> str:
        from html import escape

        head = "".join(f"<th>{escape(c)}</th>" for c in self.COLUMNS)
        body = "".join(
            "<tr>" + "".join(f"<td>{escape(v)}</td>" for v in row) + "</tr>" for row in self._rows()
        )
        caption = f"<caption>branch {escape(self.branch)} against main</caption>"
        return f"<table class='wb-branch-diff'>{caption}<tr>{head}</tr>{body}</table>"


def diff_branch(name: str, catalog: str | None = None) -> BranchDiff:
    """Compare every table branch ``name`` changed with ``main``, table by table: what
    ``dc.merge_branch`` would publish (tables created or dropped on one side show all their
    rows as added or removed)."""
    from workbench.core.ops.branches import changed_tables
    from workbench.core.transactions.context import view

    trunk = main_catalog(catalog)
    on_branch = trunk.on_branch(name)
    if on_branch.record is None:
        raise InvalidArgumentError("diff_branch compares a branch with main; name a branch.")
    found = []
    for namespace, table in changed_tables(on_branch):
        sides = [view(line).entry(namespace, table, record=False) for line in (trunk, on_branch)]
        if None not in sides:
            found.append(diff(table, namespace, MAIN, name, catalog_name(trunk)))
        else:
            found.append(_one_sided(trunk, on_branch, namespace, table, sides[1] is None))
    return BranchDiff(name, found)


def _one_sided(main: Any, branch: Any, namespace: str, table: str, dropped: bool) -> TableDiff:
    """The diff of a table only one side has: every row added (created on the branch) or
    removed (dropped there)."""
    line = main if dropped else branch
    loc = replace(locate(table, namespace, catalog_name(main)), catalog=line)
    opened = open_table(loc)
    rows = sum(f.live_rows for f in opened.files)
    columns = [f"{'-' if dropped else '+'}{c}" for c in opened.schema.names]
    return TableDiff(
        table=loc.qualified,
        before=f"branch main (version {opened.version})" if dropped else "absent on main",
        after=f"dropped on branch {branch.branch}" if dropped else f"branch {branch.branch}",
        added=0 if dropped else rows,
        removed=rows if dropped else 0,
        changed=0,
        schema_changes=columns,
        keyed=bool(opened.schema.merge_keys),
    )
