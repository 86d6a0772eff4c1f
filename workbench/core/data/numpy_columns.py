"""Numpy rows written to a table with a schema: an array has no column names, so its columns
are the table's first columns in order (as DeltaCAT lines them up)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from workbench.core.base.errors import SchemaValidationError
from workbench.core.data.datasets import to_pyarrow

if TYPE_CHECKING:
    import pyarrow as pa

    from workbench.core.schema.table_schema import Schema


def is_unnamed_array(data: Any) -> bool:
    """True for a numpy array whose columns have no names (not a structured array)."""
    return type(data).__module__.split(".")[0] == "numpy" and not data.dtype.names


def by_position(array: Any, schema: Schema, table: str) -> pa.Table:
    """A 1-D or 2-D array as a table whose columns take ``schema``'s names in order."""
    data = to_pyarrow(array)
    if data.num_columns > len(schema.names):
        raise SchemaValidationError(
            f"The numpy array has {data.num_columns} columns, but table {table!r} has "
            f"{len(schema.names)} ({', '.join(schema.names)}); an array's columns fill the "
            "table's first columns in order, so pass at most that many (or a DataFrame with "
            "named columns)."
        )
    return data.rename_columns(schema.names[: data.num_columns])
