"""Shape incoming data to a table schema: cast columns, fill missing ones with defaults or nulls."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from workbench.core.base.errors import SchemaValidationError
from workbench.core.schema.table_schema import Field, Schema

if TYPE_CHECKING:
    import pyarrow as pa


@dataclass(frozen=True)
class ColumnPlan:
    """One column of conformed data: the data's column cast to the field's type (``present``),
    or the field's default (null when it has none)."""

    field: Field
    present: bool


def column_plan(schema: Schema, names: Iterable[str], fill_missing: bool) -> list[ColumnPlan]:
    """The columns of data with ``names`` conformed to ``schema``, in schema order: every
    engine applies this plan with its own expressions, so all conform alike."""
    available = set(names)
    return [
        ColumnPlan(f, f.name in available) for f in schema if f.name in available or fill_missing
    ]


def conform(
    data: pa.Table, schema: Schema, fill_missing: bool, table: str, past: bool = False
) -> pa.Table:
    """Cast ``data`` to ``schema`` (in schema order); add absent columns when ``fill_missing``
    (with their future defaults, or with ``past`` for rows already written: past defaults)."""
    import pyarrow as pa

    plan = column_plan(schema, data.column_names, fill_missing)
    columns = [
        _cast(data.column(c.field.name), c.field, table)
        if c.present
        else default_column(c.field, data.num_rows, past)
        for c in plan
    ]
    fields = [c.field.to_arrow() for c in plan]
    # One contiguous batch: deltalake's writer interleaves multiple batches, losing row order.
    return pa.Table.from_arrays(columns, schema=pa.schema(fields)).combine_chunks()


def default_column(f: Field, length: int, past: bool = False) -> pa.Array:
    """A column of ``f.future_default`` (or nulls) for rows written without the field; with
    ``past``, of ``f.past_default`` for rows written before the field existed."""
    import pyarrow as pa

    value = f.past_default if past else f.future_default
    if value is None:
        if not (past or f.nullable) and length:
            raise SchemaValidationError(
                f"Field {f.name!r} is required but not present and no future_default is set; "
                "add the column to the data, or give the field a future_default."
            )
        return pa.nulls(length, f.type)
    return pa.repeat(pa.scalar(value, f.type), length)


def _cast(column: pa.ChunkedArray, f: Field, table: str) -> pa.ChunkedArray:
    import pyarrow as pa

    if column.type == f.type:
        return column
    if isinstance(column.type, pa.BaseExtensionType):  # stored as its storage type
        column = pa.chunked_array([c.storage for c in column.chunks], column.type.storage_type)
    try:
        return column.cast(f.type)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
        fix = "Cast or clean the column first."
        if pa.types.is_timestamp(f.type) and pa.types.is_timestamp(column.type):
            fix = (
                "Delta Lake stores microseconds; round the column first, e.g. "
                f"df[{f.name!r}] = df[{f.name!r}].dt.floor('us')."
            )
        raise SchemaValidationError(
            f"Column {f.name!r} of table {table!r} is {f.type}; the data's {column.type} values "
            f"do not convert without loss ({e}). {fix}"
        ) from e
