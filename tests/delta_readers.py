"""Reading a Delta table outside workbench the way another tool would, with deletion vectors
applied."""

from __future__ import annotations

import glob
import json
import os
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


def duckdb_delta_scan(uri: str, order_by: str = "id") -> list[dict]:
    """A table's rows through DuckDB's ``delta`` extension (delta-kernel-rs), loaded from its
    PyPI wheel, ordered by ``order_by``."""
    import duckdb
    import duckdb_extension_delta

    package = os.path.dirname(duckdb_extension_delta.__file__)
    (extension,) = glob.glob(os.path.join(package, "extensions", "*", "delta.duckdb_extension"))
    con = duckdb.connect()
    con.execute(f"LOAD '{extension}'")
    return (
        con.execute(f"SELECT * FROM delta_scan('{uri}') ORDER BY {order_by}")
        .fetch_arrow_table()
        .to_pylist()
    )


def standard_json_log(folder: str | os.PathLike[str]) -> int:
    """Check that every commit of the Delta table in ``folder``, and every file statistics it
    holds, is standard JSON (no bare NaN or Infinity, which only Python reads); the number of
    actions checked."""
    checked = 0
    for commit in sorted(glob.glob(os.path.join(folder, "_delta_log", "*.json"))):
        with open(commit) as lines:
            for line in lines:
                action = json.loads(line, parse_constant=_not_standard)
                stats = action.get("add", {}).get("stats")
                if stats:
                    json.loads(stats, parse_constant=_not_standard)
                checked += 1
    return checked


def _not_standard(constant: str) -> Any:
    raise ValueError(f"{constant} is not standard JSON: Delta readers other than Python fail on it")
