"""``diff``: what changed in a table between two points, by merge key where the table has keys."""

from __future__ import annotations

import numbers
from dataclasses import dataclass, field
from html import escape
from typing import Any

from workbench.core.tables import OpenTable, locate, open_table


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
        rows = "".join(
            f"<tr><th style='text-align:left'>{escape(k)}</th><td>{escape(str(v))}</td></tr>"
            for k, v in self._summary().items()
        )
        return f"<table class='wb-diff'>{rows}</table>"


VERSION_LIMIT = 10**12  # ints below are Delta versions, above are ns timestamps


def _is_version(point: Any) -> bool:
    return (
        isinstance(point, numbers.Integral)
        and not isinstance(point, bool)
        and (point < VERSION_LIMIT)
    )


def _open_at(loc: Any, point: Any) -> OpenTable:
    """A table at a Delta version (int below 10**12), an ``as_of`` point, or now (None)."""
    if _is_version(point):
        return open_table(loc, version=point)
    return open_table(loc, as_of=point)


def _describe_point(opened: OpenTable, spec: Any) -> str:
    shown = spec is None or _is_version(spec)
    return f"version {opened.version}" + ("" if shown else f" ({spec})")


def diff(
    table: str,
    namespace: str | None = None,
    before: Any = None,
    after: Any = None,
    catalog: str | None = None,
) -> TableDiff:
    """Compare a table at ``before`` with ``after`` (default: now). A point is a Delta version
    (an int below 10**12) or an ``as_of`` value (ns, datetime, transaction id or tag)."""
    import duckdb

    from workbench.core.reader import ordered_dataset

    loc = locate(table, namespace, catalog)
    old, new = _open_at(loc, before), _open_at(loc, after)
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
    connection = duckdb.connect()
    try:
        connection.register("old", ordered_dataset(old))
        connection.register("new", ordered_dataset(new))
        cols = ", ".join(f'"{c}"' for c in common)
        if keys:
            on = " AND ".join(f'o."{k}" = n."{k}"' for k in keys)
            values = [c for c in common if c not in keys]
            distinct = " OR ".join(f'o."{c}" IS DISTINCT FROM n."{c}"' for c in values) or "FALSE"
            added, removed, changed = connection.execute(
                f"SELECT (SELECT count(*) FROM new n ANTI JOIN old o ON {on}),"
                f" (SELECT count(*) FROM old o ANTI JOIN new n ON {on}),"
                f" (SELECT count(*) FROM old o JOIN new n ON {on} WHERE {distinct})"
            ).fetchone()
        else:
            added, removed = connection.execute(
                f"SELECT (SELECT count(*) FROM (SELECT {cols} FROM new EXCEPT ALL "
                f"SELECT {cols} FROM old)), (SELECT count(*) FROM (SELECT {cols} FROM old "
                f"EXCEPT ALL SELECT {cols} FROM new))"
            ).fetchone()
            changed = 0
    finally:
        connection.close()
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
