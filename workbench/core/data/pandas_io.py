"""pandas to Arrow and back without losing what pandas knew about a column.

Delta stores a few physical types, so a pandas dtype that another type stores (nullable
``Int64``, ``boolean``, ``string``, ``category``, unsigned ints, zones, ns timestamps) is noted
in the column's Delta field metadata and applied again when the table is read as pandas.
Integers never pass through floats: an integer column with nulls and no note reads as a nullable
``Int*`` column. Named index levels are written as columns, as ``DataFrame.to_parquet`` does.
"""

from __future__ import annotations

import json
from contextlib import suppress
from typing import TYPE_CHECKING, Any

from workbench.core.base.errors import SchemaValidationError, brief
from workbench.core.schema.arrow_types import is_uuid
from workbench.core.schema.table_schema import PANDAS_DTYPE_META

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

# dtypes that reading the stored Arrow type gives back on its own: nothing to note
_NATURAL = {
    "str",
    "object",
    "bool",
    "int8",
    "int16",
    "int32",
    "int64",
    "float32",
    "float64",
    "datetime64[us]",
    "datetime64[us, UTC]",
}
MAX_NOTED_CATEGORIES = 1000


def arrow_from_pandas(frame: pd.DataFrame) -> pa.Table:
    """The frame as an Arrow table: named index levels as leading columns, pandas dtypes noted
    in field metadata."""
    import pyarrow as pa

    if frame.columns.nlevels > 1:
        raise SchemaValidationError(
            "The DataFrame has MultiIndex columns; flatten them to one name per column first, "
            "e.g. df.columns = ['_'.join(map(str, c)) for c in df.columns]."
        )
    frame = _with_index_columns(frame)
    duplicated = sorted({str(c) for c in frame.columns[frame.columns.duplicated()]})
    if duplicated:
        raise SchemaValidationError(
            f"The DataFrame has duplicate column names {duplicated} (index names count as "
            "columns); rename them so every column has its own name."
        )
    try:
        table = pa.Table.from_pandas(frame, preserve_index=False)
    except (pa.ArrowException, TypeError, ValueError, UnicodeError, OverflowError) as e:
        raise SchemaValidationError(
            f"Column {_unconvertible(frame)!r} cannot be converted to Arrow ({brief(e)}); give "
            "it a single type Arrow knows, e.g. df[col] = df[col].astype(str) for mixed values."
        ) from e
    fields = []
    for f, dtype in zip(table.schema, frame.dtypes, strict=True):
        note = dtype_note(dtype)
        fields.append(f.with_metadata({PANDAS_DTYPE_META: note.encode()}) if note else f)
    return pa.Table.from_arrays(table.columns, schema=pa.schema(fields))


def _unconvertible(frame: pd.DataFrame) -> Any:
    """The first column Arrow cannot convert (the whole frame failed to)."""
    import pyarrow as pa

    for name in frame.columns:
        try:
            pa.Array.from_pandas(frame[name])
        except Exception:
            return name
    return "?"


def _with_index_columns(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame with its named index levels as columns; an unnamed index is dropped."""
    names = list(frame.index.names)
    if all(n is None for n in names):
        return frame
    if any(n is None for n in names):
        raise SchemaValidationError(
            f"The DataFrame's index has named and unnamed levels {names}; name every level to "
            "write them as columns, or drop the index with df.reset_index(drop=True)."
        )
    clash = sorted({str(n) for n in names} & {str(c) for c in frame.columns})
    if clash:
        raise SchemaValidationError(
            f"Index level(s) {clash} have the same name as a column; rename one of them, or drop "
            "the index with df.reset_index(drop=True)."
        )
    return frame.reset_index()


def dtype_note(dtype: Any) -> str | None:
    """What to remember about a pandas dtype that the stored Arrow type would not give back."""
    import pandas as pd

    if isinstance(dtype, pd.CategoricalDtype):
        note: dict[str, Any] = {"dtype": "category", "ordered": bool(dtype.ordered)}
        categories = dtype.categories
        if len(categories) <= MAX_NOTED_CATEGORIES:
            # categories that are not plain values are rebuilt from the data instead
            with suppress(TypeError):
                note["categories"] = json.loads(json.dumps(categories.tolist()))
        return json.dumps(note)
    name = str(dtype)
    return None if name in _NATURAL else json.dumps({"dtype": name})


def pandas_from_arrow(table: pa.Table) -> pd.DataFrame:
    """The table as pandas, with noted dtypes applied and integers kept exact."""
    import pyarrow.types as pt

    special = {}
    for position, f in enumerate(table.schema):
        note = (f.metadata or {}).get(PANDAS_DTYPE_META)
        column = table.column(position)
        nullable_int = column.null_count and (pt.is_integer(f.type) or pt.is_boolean(f.type))
        if note is not None or nullable_int or is_uuid(f.type):
            special[position] = json.loads(note) if note is not None else None
    if not special:
        return table.to_pandas()
    plain = [i for i in range(table.num_columns) if i not in special]
    frame = table.select(plain).to_pandas()
    for position, note in special.items():
        frame.insert(position, table.field(position).name, _column(table.column(position), note))
    return frame


def numpy_from_arrow(table: pa.Table) -> Any:
    """The table as a 2-D numpy array; an object array when integers with nulls would
    otherwise become floats."""
    import pandas as pd

    frame = pandas_from_arrow(table)
    masked = [
        c
        for c, dtype in frame.dtypes.items()
        if isinstance(dtype, pd.api.extensions.ExtensionDtype)
        and getattr(dtype, "kind", "") in "iub"
        and frame[c].hasnans
    ]
    return frame.to_numpy(dtype=object) if masked else frame.to_numpy()


def _column(column: pa.ChunkedArray, note: dict[str, Any] | None) -> Any:
    """One column as a pandas array of the noted dtype (falling back to an exact default)."""
    import pyarrow as pa

    if note is not None and note["dtype"] == "category":
        return _categorical(column, note)
    try:
        if note is not None:
            return _as_dtype(column, note["dtype"])
    except (
        pa.ArrowInvalid,
        pa.ArrowNotImplementedError,
        TypeError,
        ValueError,
        NotImplementedError,
    ):
        pass  # later writes hold values the noted dtype cannot: read them exactly instead
    return _exact_default(column)


def _as_dtype(column: pa.ChunkedArray, name: str) -> Any:
    import numpy as np
    import pandas as pd
    import pyarrow as pa

    dtype = _pandas_dtype(name, column.type)
    if isinstance(dtype, np.dtype):
        if dtype.kind in "iub" and column.null_count:
            return _as_dtype(column, _nullable_name(dtype))
        return column.cast(pa.from_numpy_dtype(dtype)).to_pandas().array
    if isinstance(dtype, pd.DatetimeTZDtype):
        return column.cast(pa.timestamp(dtype.unit, dtype.tz)).to_pandas().array
    if isinstance(dtype, pd.ArrowDtype):
        return dtype.__from_arrow__(column.cast(dtype.pyarrow_dtype))
    numpy_dtype = getattr(dtype, "numpy_dtype", None)  # nullable Int*, UInt*, Float*, boolean
    if numpy_dtype is not None and np.dtype(numpy_dtype).kind in "iufb":
        column = column.cast(pa.from_numpy_dtype(numpy_dtype))
    return dtype.__from_arrow__(column)


def _pandas_dtype(name: str, arrow_type: pa.DataType) -> Any:
    """The pandas dtype called ``name``; an ArrowDtype whose name pandas cannot parse back (a
    decimal, struct, map...) is that of the column's Arrow type."""
    import pandas as pd

    try:
        return pd.api.types.pandas_dtype(name)
    except (TypeError, ValueError, NotImplementedError):
        if not name.endswith("[pyarrow]"):
            raise
        return pd.ArrowDtype(arrow_type)


def _nullable_name(dtype: Any) -> str:
    """The pandas nullable dtype holding the values of a numpy int, uint or bool dtype."""
    if dtype.kind == "b":
        return "boolean"
    return ("UInt" if dtype.kind == "u" else "Int") + str(dtype.itemsize * 8)


def _exact_default(column: pa.ChunkedArray) -> Any:
    """The default conversion, except integers and booleans with nulls stay exact and uuids
    are ``uuid.UUID`` objects (as pandas writes them), not bytes."""
    import pyarrow.types as pt

    if is_uuid(column.type):
        import numpy as np

        values = np.empty(len(column), dtype=object)
        values[:] = column.to_pylist()
        return values
    if column.null_count and pt.is_integer(column.type):
        import numpy as np

        return _as_dtype(column, _nullable_name(np.dtype(column.type.to_pandas_dtype())))
    if column.null_count and pt.is_boolean(column.type):
        return _as_dtype(column, "boolean")
    return column.to_pandas().array


def _categorical(column: pa.ChunkedArray, note: dict[str, Any]) -> Any:
    import pandas as pd

    values = pd.Series(_exact_default(column))
    noted = note.get("categories") or []
    extra = [v for v in values.dropna().unique().tolist() if v not in noted]
    with suppress(TypeError):  # values of mixed types keep their order of appearance
        extra.sort()
    return pd.Categorical(values, categories=noted + extra, ordered=note["ordered"])
