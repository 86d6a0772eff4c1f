"""Whole-number floats back into integer columns: pandas turns an int column holding a None
into float64, and a write of such data should not widen the table's integer column."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pyarrow as pa

    from workbench.core.data.engine import Engine
    from workbench.core.schema.table_schema import Schema


def restore_integers(
    engine: Engine, source: Any, incoming: pa.Schema, schema: Schema
) -> tuple[Any, pa.Schema]:
    """The source with each float column that ``schema`` types as an integer cast back to that
    integer type, when every value converts exactly (nulls stay null), and its schema; other
    columns, and floats with a fraction or out of range, are left for the usual widening
    rules. The engine checks and casts where its data is (a cluster's data stays there)."""
    import pyarrow as pa

    targets = {
        f.name: schema.field(f.name).type
        for f in incoming
        if pa.types.is_floating(f.type)
        and f.name in schema.names
        and pa.types.is_integer(schema.field(f.name).type)
    }
    if not targets:
        return source, incoming
    source, cast = engine.cast_exact(source, targets)
    if not cast:
        return source, incoming
    fields = [f.with_type(targets[f.name]) if f.name in cast else f for f in incoming]
    return source, pa.schema(fields, metadata=incoming.metadata)
