"""Whole-number floats back into integer columns: pandas turns an int column holding a None
into float64, and a write of such data should not widen the table's integer column."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pyarrow as pa

    from workbench.core.engine import Engine
    from workbench.core.schema import Schema


def restore_integers(
    engine: Engine, source: Any, incoming: pa.Schema, schema: Schema
) -> tuple[Any, pa.Schema]:
    """The source with each float column that ``schema`` types as an integer cast back to that
    integer type, when every value converts exactly (nulls stay null); other columns, and
    floats with a fraction or out of range, are left for the usual widening rules. Only data
    of this process (not a clustered engine's) with such columns is converted through Arrow."""
    import pyarrow as pa

    if engine.clustered:
        return source, incoming
    candidates = [
        f.name
        for f in incoming
        if pa.types.is_floating(f.type)
        and f.name in schema.names
        and pa.types.is_integer(schema.field(f.name).type)
    ]
    if not candidates:
        return source, incoming
    table = engine.to_arrow(source)
    restored = table
    for name in candidates:
        target = schema.field(name).type
        try:  # a safe cast refuses fractions, NaN and values outside the integer's range
            column = table.column(name).cast(target)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            continue
        restored = restored.set_column(restored.schema.get_field_index(name), name, column)
    if restored is table:
        return source, incoming
    source = engine.source(engine.from_arrow(restored))
    return source, engine.schema(source)
