"""Reading a Delta table outside workbench the way another tool would, with deletion vectors
applied."""

from __future__ import annotations

from typing import Any

import pyarrow as pa


def delta_rows(table: Any) -> pa.Table:
    """A ``deltalake.DeltaTable``'s rows through a reader that applies deletion vectors when
    the table has them (``to_pyarrow_table`` refuses such tables)."""
    from deltalake import QueryBuilder

    if "deletionVectors" not in (table.protocol().reader_features or ()):
        return table.to_pyarrow_table()
    rows = pa.table(QueryBuilder().register("t", table).execute("SELECT * FROM t").read_all())
    plain = [  # its string views as plain strings, which every pyarrow kernel takes
        pa.field(f.name, pa.string() if pa.types.is_string_view(f.type) else f.type)
        for f in rows.schema
    ]
    return rows.cast(pa.schema(plain))
