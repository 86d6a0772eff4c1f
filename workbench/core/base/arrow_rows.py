"""Rows (dicts of plain values) as an Arrow table of a given schema, built straight from
buffers: pyarrow's conversion of Python objects imports pandas to look for its types, which a
commit should not pay for (a pyarrow-only write never loads pandas), and its JSON reader costs
half a millisecond a call, a tenth of a small commit."""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pyarrow as pa


def arrow_rows(rows: Sequence[dict[str, Any]], schema: pa.Schema) -> pa.Table:
    """``rows`` in ``schema`` (its columns in order; a missing value is null). The schema's
    columns are strings or 64-bit integers, the types of the logs workbench writes."""
    import pyarrow as pa

    columns = [_column([r.get(f.name) for r in rows], f.type) for f in schema]
    return pa.Table.from_arrays(columns, schema=schema)


def _column(values: list[Any], type: pa.DataType) -> pa.Array:
    import pyarrow as pa

    validity = _validity(values)
    if type == pa.string():
        data = [v.encode() if v is not None else b"" for v in values]
        offsets = array("i", [0])
        for chunk in data:
            offsets.append(offsets[-1] + len(chunk))
        buffers = [validity, pa.py_buffer(offsets), pa.py_buffer(b"".join(data))]
    elif type == pa.int64():
        buffers = [validity, pa.py_buffer(array("q", [v or 0 for v in values]))]
    else:
        raise TypeError(f"arrow_rows builds string and int64 columns, not {type}")
    return pa.Array.from_buffers(type, len(values), buffers)


def _validity(values: list[Any]) -> pa.Buffer | None:
    """The validity bitmap of ``values`` (None when none is null)."""
    import pyarrow as pa

    if all(v is not None for v in values):
        return None
    bits = bytearray((len(values) + 7) // 8)
    for i, value in enumerate(values):
        if value is not None:
            bits[i // 8] |= 1 << (i % 8)
    return pa.py_buffer(bytes(bits))
