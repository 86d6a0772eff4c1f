"""Merge-key checks: keys present, never null, unique (or de-duplicated on request)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from workbench.core.base.errors import InvalidArgumentError, MergeKeyError
from workbench.core.base.types import NullOrder, SortOrder
from workbench.core.schema.merge_order import MergeOrder, Ranking, winners

if TYPE_CHECKING:
    import pyarrow as pa

    from workbench.core.schema.table_schema import Schema

DEDUPE_CHOICES = (None, "first", "last")


def check_dedupe(dedupe: str | None) -> None:
    """Raise ``InvalidArgumentError`` for an unknown ``dedupe`` choice."""
    if dedupe not in DEDUPE_CHOICES:
        raise InvalidArgumentError(
            f"dedupe={dedupe!r} is not supported; use None (duplicates are an error), 'first' "
            "or 'last' (keep that row of each duplicated key)."
        )


def require_key_columns(columns: list[str], keys: list[str], table: str, action: str) -> None:
    """Raise ``MergeKeyError`` unless every merge-key column is among ``columns``."""
    missing = [k for k in keys if k not in columns]
    if missing:
        raise MergeKeyError(
            f"{action} on table {table!r} needs its merge key column(s) {missing} in the data; "
            f"the data has {columns}."
        )


def unique_keys(
    data: pa.Table, keys: list[str], table: str, dedupe: str | None, order: Ranking = ()
) -> pa.Table:
    """Return ``data`` with non-null, unique merge keys, de-duplicating if asked to, or by the
    merge ``order`` when the schema has one."""
    data = plain_keys(data, keys)
    for key in keys:
        nulls = data.column(key).null_count
        if nulls:
            raise null_keys_error(nulls, key, table)
    distinct = distinct_count(data, keys)
    if distinct == data.num_rows:
        return data
    if order:
        return winners(data, keys, order, dedupe)
    if dedupe is None:
        raise repeated_keys_error(data.num_rows - distinct, keys, table)
    return data.take(kept_rows(data, keys, dedupe))


def plain_keys(data: pa.Table, keys: list[str]) -> pa.Table:
    """``data`` with key columns of an extension type (a uuid) as their storage, which Arrow's
    kernels compare and group."""
    import pyarrow as pa

    for key in keys:
        column = data.column(key)
        if isinstance(column.type, pa.BaseExtensionType):
            plain = pa.chunked_array([c.storage for c in column.chunks], column.type.storage_type)
            data = data.set_column(data.schema.get_field_index(key), key, plain)
    return data


def kept_rows(data: pa.Table, keys: list[str], dedupe: str) -> pa.Array:
    """The positions of the rows ``dedupe`` keeps (the first or last of each key), in order."""
    import pyarrow as pa

    position = "__workbench_row"
    numbered = data.select(keys).append_column(position, pa.array(range(data.num_rows), pa.int64()))
    agg = "max" if dedupe == "last" else "min"
    return numbered.group_by(keys).aggregate([(position, agg)]).column(f"{position}_{agg}").sort()


def null_keys_error(nulls: int, key: str, table: str) -> MergeKeyError:
    """The error for ``nulls`` rows without a value in merge key ``key``."""
    return MergeKeyError(
        f"{nulls} row(s) written to table {table!r} have a null merge key {key!r}; drop "
        "those rows or fill the key before writing."
    )


def repeated_keys_error(repeated: int, keys: list[str], table: str) -> MergeKeyError:
    """The error for ``repeated`` rows whose merge key an earlier row already has."""
    return MergeKeyError(
        f"{repeated} row(s) written to table {table!r} repeat a merge key {keys}; remove the "
        "duplicates or pass dedupe='last' (or 'first') to keep one row per key."
    )


def distinct_count(data: pa.Table, keys: list[str]) -> int:
    """Number of distinct (non-null) key tuples. For one numeric key, keys already in strictly
    increasing or decreasing order (generated ids) are distinct without more work; otherwise
    sorting beats hashing (1M int64 keys: 18 ms sorted, 45-200 ms hashed)."""
    import numpy as np
    import pyarrow.compute as pc
    import pyarrow.types as pt

    if len(keys) > 1:
        return data.select(keys).group_by(keys).aggregate([]).num_rows
    column = data.column(keys[0])
    if column.num_chunks and (pt.is_integer(column.type) or pt.is_temporal(column.type)):
        values = column.to_numpy()
        if (values[1:] > values[:-1]).all() or (values[1:] < values[:-1]).all():
            return len(values)
        ordered = np.sort(values)
        return int(np.count_nonzero(ordered[1:] != ordered[:-1])) + min(len(ordered), 1)
    return len(pc.unique(column))


def ranking(schema: Schema) -> Ranking:
    """The fields that rank rows sharing a key: the merge-order fields, or else the event-time
    fields as descending orders."""
    ordered = [(f.name, f.merge_order) for f in schema if f.merge_order is not None]
    if ordered:
        return ordered
    latest = MergeOrder(SortOrder.DESCENDING, NullOrder.AT_END)
    return [(f.name, latest) for f in schema if f.is_event_time]
