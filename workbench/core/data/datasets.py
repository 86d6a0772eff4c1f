"""Conversions between the dataset types workbench accepts and Arrow, its common currency."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from workbench.core.base.arguments import choice
from workbench.core.base.errors import (
    InvalidArgumentError,
    SchemaValidationError,
    UnsupportedDatasetError,
    WorkbenchError,
    brief,
)
from workbench.core.base.types import DatasetType
from workbench.core.data.engine import ENGINE_MODULES, engine_for_data, engine_for_dataset_type

if TYPE_CHECKING:
    import pyarrow as pa

_ACCEPTED = (
    "pandas.DataFrame/Series, pyarrow.Table/RecordBatch, polars.DataFrame/LazyFrame/Series, "
    "numpy.ndarray, "
    "daft.DataFrame, ray.data.Dataset, a pyspark DataFrame, a list of pyarrow.parquet.ParquetFile, "
    "or a dict of columns"
)


def _module(obj: Any) -> str:
    return type(obj).__module__.split(".")[0]


def to_pyarrow(data: Any, schema: Any = None) -> pa.Table:
    """Convert any supported dataset to a pyarrow Table (zero-copy where the library allows);
    column names must be unique. ``schema`` (a ``dc.Schema`` or pyarrow schema) names and
    types the columns of data that has neither of its own, such as a numpy array (a table's
    schema gives each column the type it was written as, e.g. ``uint8``)."""
    table = _converted(data)
    if schema is None or _module(data) != "numpy":
        return table
    arrow = getattr(schema, "arrow", schema)
    if len(arrow.names) != table.num_columns:
        raise InvalidArgumentError(
            f"schema= names {len(arrow.names)} columns, but the data has {table.num_columns}."
        )
    return _typed(table.rename_columns(arrow.names), arrow)


def _typed(table: pa.Table, schema: pa.Schema) -> pa.Table:
    """Each column cast to its type in ``schema`` (as written, where a note says), when every
    value converts exactly; other columns stay as they are."""
    import pyarrow as pa

    from workbench.core.schema.type_notes import ARROW_TYPE_META, noted_type

    for i, f in enumerate(schema):
        note = (f.metadata or {}).get(ARROW_TYPE_META)
        target = (noted_type(note.decode()) if note is not None else None) or f.type
        try:
            table = table.set_column(i, f.name, table.column(i).cast(target))
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
            continue
    return table


def _converted(data: Any) -> pa.Table:
    import pyarrow as pa

    try:
        table = _to_pyarrow(data)
    except WorkbenchError:
        raise
    except (pa.ArrowException, TypeError, ValueError, UnicodeError, OverflowError) as e:
        raise SchemaValidationError(
            f"The {type(data).__name__} cannot be converted to Arrow ({brief(e)}); give every "
            "column a single type Arrow knows (e.g. df['c'] = df['c'].astype(str) for a column "
            "of mixed values)."
        ) from e
    names = table.column_names
    if len(set(names)) != len(names):
        duplicated = sorted({n for n in names if names.count(n) > 1})
        raise SchemaValidationError(
            f"The data has duplicate column names {duplicated}; rename them so every column has "
            "its own name."
        )
    return table


def _to_pyarrow(data: Any) -> pa.Table:
    import pyarrow as pa

    if isinstance(data, pa.Table):
        return data
    if isinstance(data, pa.RecordBatch):
        return pa.Table.from_batches([data])
    if isinstance(data, pa.RecordBatchReader):
        return data.read_all()
    module, kind = _module(data), type(data).__name__
    if module in ("pandas", "polars") and kind == "Series":
        data, kind = data.to_frame(), "DataFrame"
    if module == "pandas" and kind == "DataFrame":
        from workbench.core.data.pandas_io import arrow_from_pandas

        return arrow_from_pandas(data)
    if module == "polars":
        frame = data.collect() if kind == "LazyFrame" else data
        objects = [name for name, dtype in frame.schema.items() if str(dtype) == "Object"]
        if objects:
            raise SchemaValidationError(
                f"Column(s) {objects} hold Python objects (polars Object), which have no Arrow "
                "type; convert them to strings, numbers or structs first."
            )
        return frame.to_arrow()
    if module == "numpy":
        return _numpy_to_arrow(data)
    if module in ENGINE_MODULES:  # a dataset of a compute engine (Daft, Ray, Spark)
        return engine_for_data(data).to_arrow(data)
    if isinstance(data, dict):
        return pa.table(data)
    if isinstance(data, (list, tuple)) and data and all(_is_parquet_file(f) for f in data):
        return _concat([f.read() for f in data])
    if _is_parquet_file(data):
        return data.read()
    if hasattr(data, "__arrow_c_stream__"):  # any other library that exports Arrow
        return pa.RecordBatchReader.from_stream(data).read_all()
    raise UnsupportedDatasetError(
        f"Cannot use a {type(data).__module__}.{type(data).__name__} as a dataset; pass one of "
        f"{_ACCEPTED}."
    )


def _is_parquet_file(obj: Any) -> bool:
    return type(obj).__name__ == "ParquetFile" and _module(obj) == "pyarrow"


def _concat(tables: list[pa.Table]) -> pa.Table:
    import pyarrow as pa

    return pa.concat_tables(tables, promote_options="permissive")


def _numpy_to_arrow(array: Any) -> pa.Table:
    import pyarrow as pa

    if array.dtype.names:
        return pa.table({name: array[name] for name in array.dtype.names})
    if array.ndim == 1:
        return pa.table({"0": array})
    if array.ndim == 2:
        return pa.table({str(i): _column(array[:, i]) for i in range(array.shape[1])})
    raise UnsupportedDatasetError(
        f"Cannot write a {array.ndim}-dimensional numpy array; pass a 1-D, 2-D or structured array."
    )


def _column(values: Any) -> pa.Array:
    import pyarrow as pa

    if values.dtype == object:  # None, NaN and pd.NA are nulls, as pandas reads them
        return pa.array(values, from_pandas=True)
    return pa.array(values)


def from_pyarrow(table: pa.Table, read_as: DatasetType | str = DatasetType.DAFT) -> Any:
    """Convert a pyarrow Table to the requested dataset type."""
    read_as = parse_dataset_type(read_as)
    if read_as is DatasetType.PYARROW:
        return table
    if read_as is DatasetType.PANDAS:
        from workbench.core.data.pandas_io import pandas_from_arrow

        return pandas_from_arrow(table)
    if read_as is DatasetType.NUMPY:
        from workbench.core.data.pandas_io import numpy_from_arrow

        return numpy_from_arrow(table)
    if read_as is DatasetType.POLARS:
        import polars as pl

        return pl.from_arrow(table)
    if read_as in (DatasetType.DAFT, DatasetType.RAY_DATASET, DatasetType.SPARK):
        return engine_for_dataset_type(read_as).from_arrow(table)
    raise UnsupportedDatasetError(
        f"Cannot convert an in-memory table to {read_as.name}; {read_as.name} is only produced by "
        "reading a table (dc.read)."
    )


def from_pandas(frame: Any, read_as: DatasetType | str = DatasetType.DAFT) -> Any:
    """Convert a pandas DataFrame to the requested dataset type (NUMPY: its ``.values``, one
    row per record, as DeltaCAT gives it)."""
    read_as = parse_dataset_type(read_as)
    if read_as is DatasetType.PANDAS:
        return frame
    if read_as is DatasetType.NUMPY:
        return frame.to_numpy()
    return from_pyarrow(to_pyarrow(frame), read_as)


def parse_dataset_type(read_as: DatasetType | str) -> DatasetType:
    """``read_as`` as a ``DatasetType`` (its value or name in any case also works)."""
    return choice(DatasetType, read_as, "read_as")


def to_pandas(data: Any, schema: Any = None) -> Any:
    """Convert any supported dataset to a pandas DataFrame; ``schema`` (a ``dc.Schema`` or
    pyarrow schema) names the columns of data that has no names of its own, such as a numpy
    array."""
    if _module(data) == "pandas":
        return data
    from workbench.core.data.pandas_io import pandas_from_arrow

    return pandas_from_arrow(to_pyarrow(data, schema))


def dataset_length(data: Any) -> int:
    """Number of rows in a dataset, without materialising lazy ones where avoidable."""
    module = _module(data)
    if module == "daft":
        return data.count_rows()
    if module == "ray" and hasattr(data, "count"):
        return data.count()
    if module == "polars" and type(data).__name__ == "LazyFrame":
        import polars as pl

        return data.select(pl.len()).collect().item()
    if isinstance(data, (list, tuple)) and data and all(_is_parquet_file(f) for f in data):
        return sum(f.metadata.num_rows for f in data)
    if _is_parquet_file(data):
        return data.metadata.num_rows
    if hasattr(data, "num_rows"):
        return data.num_rows
    if hasattr(data, "shape"):
        return int(data.shape[0])
    return to_pyarrow(data).num_rows


def dataset_schema(data: Any) -> pa.Schema:
    """Arrow schema of a dataset."""
    import pyarrow as pa

    if isinstance(data, (pa.Table, pa.RecordBatch)):
        return data.schema
    if isinstance(data, (list, tuple)) and data and all(_is_parquet_file(f) for f in data):
        return data[0].schema_arrow
    if _is_parquet_file(data):
        return data.schema_arrow
    if _module(data) == "daft":
        return pa.schema([(f.name, f.dtype.to_arrow_dtype()) for f in data.schema()])
    return to_pyarrow(data).schema
