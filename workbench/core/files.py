"""Data files as Delta actions: Parquet written in a table's declared types, and add/remove
actions with statistics read from the files' footers (the commit helpers every engine shares)."""

from __future__ import annotations

import datetime
import json
import os
import time
import uuid
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pyarrow as pa
    from deltalake.transaction import AddAction, RemoveAction

    from workbench.core.schema import Schema


def write_part(data: pa.Table, schema: Schema, table_path: str) -> str:
    """Write ``data`` (already in ``schema``'s types) as one new Parquet file in the table
    folder, with plain Arrow types and no workbench metadata; return its path."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    plain = pa.schema([pa.field(f.name, f.type, f.arrow.nullable) for f in schema])
    path = os.path.join(table_path, f"part-00000-{uuid.uuid4()}-c000.snappy.parquet")
    pq.write_table(pa.Table.from_arrays(data.columns, schema=plain), path, compression="snappy")
    return path


def _json_value(value: Any) -> Any:
    if isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if value == value and abs(value) != float("inf") else None
    if isinstance(value, datetime.datetime):
        return value.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
    if isinstance(value, datetime.date):
        return value.isoformat()
    return None


def parquet_stats(path: str) -> str:
    """Delta ``stats`` JSON (row count, per-column min/max and null counts) from a footer."""
    import pyarrow.parquet as pq

    meta = pq.ParquetFile(path).metadata
    minimum: dict[str, Any] = {}
    maximum: dict[str, Any] = {}
    nulls: dict[str, int] = {}
    for c in range(meta.num_columns):
        name = meta.schema.column(c).path
        if "." in name:  # nested leaves are not described
            continue
        groups = [meta.row_group(g).column(c).statistics for g in range(meta.num_row_groups)]
        if not groups or any(s is None for s in groups):
            continue
        nulls[name] = sum(s.null_count for s in groups)
        if all(s.has_min_max for s in groups):
            low = _json_value(min(s.min for s in groups))
            high = _json_value(max(s.max for s in groups))
            if low is not None and high is not None:
                minimum[name], maximum[name] = low, high
    return json.dumps(
        {
            "numRecords": meta.num_rows,
            "minValues": minimum,
            "maxValues": maximum,
            "nullCount": nulls,
        }
    )


def add_actions(table_path: str, files: list[str]) -> list[AddAction]:
    """Add actions for files under ``table_path`` (paths relative to it)."""
    from deltalake.transaction import AddAction

    now = int(time.time() * 1000)
    return [
        AddAction(
            os.path.relpath(f, table_path), os.path.getsize(f), {}, now, True, parquet_stats(f)
        )
        for f in files
    ]


def remove_actions(paths_and_sizes: list[tuple[str, int]]) -> list[RemoveAction]:
    """Remove actions for table files (relative paths) that a rewrite replaces."""
    from deltalake.transaction import RemoveAction

    now = int(time.time() * 1000)
    return [RemoveAction(path, True, now, size) for path, size in paths_and_sizes]
