"""What a report says changed in a table over a window, including a window that opens before
the table existed (the table is then compared with nothing: every row and column is new)."""

from __future__ import annotations

from typing import Any

from workbench.core.io.diff import TableDiff, diff
from workbench.core.ops.tables import get_table, table_exists


def change_since(table: str, namespace: str | None, since: Any, as_of: Any = None) -> TableDiff:
    """``dc.diff`` of the table from ``since`` to ``as_of`` (None: the report's pin); when the
    table did not exist at ``since``, its change from before its creation, so a window that
    opens earlier profiles the table from the start instead of failing."""
    if table_exists(table, namespace, as_of=since):
        return diff(table, namespace, before=since, after=as_of)
    info = get_table(table, namespace, as_of=as_of)
    columns = info.schema.arrow.names if info.schema is not None else []
    return TableDiff(
        table=f"{info.namespace}.{info.name}",
        before="before its creation",
        after=f"version {info.version}",
        added=info.row_count,
        removed=0,
        changed=0,
        schema_changes=[f"+{name}" for name in columns],
        keyed=bool(info.merge_keys),
    )
