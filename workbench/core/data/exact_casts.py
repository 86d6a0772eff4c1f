"""Data back into a table column's narrower type where every value fits it: pandas turns an
int column holding a None into float64, and Spark has no fixed-size binary, yet a write of such
data should not widen the table's integer, fixed_size_binary(n) or uuid column."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from workbench.core.schema.arrow_types import fixed_width
from workbench.core.schema.evolution import compared_type

if TYPE_CHECKING:
    import pyarrow as pa

    from workbench.core.data.engine import Engine
    from workbench.core.schema.table_schema import Field, Schema


def restore_exact_types(
    engine: Engine, source: Any, incoming: pa.Schema, schema: Schema
) -> tuple[Any, pa.Schema]:
    """The source with each float column that ``schema`` types as an integer cast back to that
    integer type, and each binary column it types as fixed_size_binary(n) or uuid cast to
    fixed_size_binary(n), when every value converts exactly (nulls stay null), and its schema;
    other columns, and values that do not convert, are left for the usual widening rules. The
    engine checks and casts where its data is (a cluster's data stays there)."""
    import pyarrow as pa

    targets = {}
    for f in incoming:
        target = _target(f.type, schema.field(f.name)) if f.name in schema.names else None
        if target is not None:
            targets[f.name] = target
    if not targets:
        return source, incoming
    source, cast = engine.cast_exact(source, targets)
    if not cast:
        return source, incoming
    fields = [f.with_type(targets[f.name]) if f.name in cast else f for f in incoming]
    return source, pa.schema(fields, metadata=incoming.metadata)


def _target(data: pa.DataType, column: Field) -> pa.DataType | None:
    """The type data of type ``data`` is cast to, value by value, for ``column`` (or None)."""
    import pyarrow as pa
    import pyarrow.types as pt

    if pt.is_floating(data) and pt.is_integer(column.type):
        return column.type
    width = fixed_width(compared_type(column))
    if width is not None and (pt.is_binary(data) or pt.is_large_binary(data)):
        return pa.binary(width)
    return None
