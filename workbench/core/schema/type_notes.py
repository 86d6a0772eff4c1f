"""Arrow types that Delta Lake stores as another type, noted so reads give the written type back.

Delta has one integer per width and signed only, microsecond timestamps in UTC, one date, one
string and one binary. A column written as, say, ``uint8``, ``uint64`` (as ``decimal(20,0)``),
``timestamp[s, tz=Europe/Paris]``, ``date64``, ``float16``, ``dictionary<string>``,
``fixed_size_binary[16]``, ``duration[ns]`` (as int64) or ``arrow.uuid`` is stored as the
nearest Delta type, and its
original type is noted in the Delta field metadata in a readable form
(``workbench.arrowType``). Reads cast back where every value fits. Offset widths
(``large_string``, ``string_view``, ``large_list``...) carry no meaning and are not noted.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pyarrow as pa

_TIMESTAMP = re.compile(r"timestamp\[(s|ms|us|ns)(?:, tz=(.+))?\]")
_FIXED_BINARY = re.compile(r"fixed_size_binary\[(\d+)\]")
_DURATION = re.compile(r"duration\[(s|ms|us|ns)\]")
_SIMPLE = ("uint8", "uint16", "uint32", "uint64", "halffloat", "date64[ms]")
_UUID = "extension<arrow.uuid>"
_DICTIONARY = "dictionary"


ARROW_TYPE_META = b"workbench.arrowType"  # field metadata: the Arrow type written


def note_for(original: pa.DataType, stored: pa.DataType) -> str | None:
    """The note to keep for a column of type ``original`` stored as ``stored`` (None if the
    stored type reads back as the original on its own)."""
    import pyarrow as pa
    import pyarrow.types as pt

    if isinstance(original, pa.BaseExtensionType):
        return _UUID if original.extension_name == "arrow.uuid" else None
    if pt.is_dictionary(original):
        return _DICTIONARY if pt.is_string(stored) else None
    if original == stored:
        return None
    text = str(original)
    if text in _SIMPLE or _FIXED_BINARY.fullmatch(text) or _DURATION.fullmatch(text):
        return text
    if pt.is_timestamp(original) and original.tz not in ("UTC", "+00:00"):
        return text
    if pt.is_timestamp(original) and original.unit != "us":
        return text
    return None


def noted_type(note: str) -> pa.DataType | None:
    """The Arrow type a note names (None for notes of another version of workbench)."""
    import pyarrow as pa

    simple = {
        "uint8": pa.uint8(),
        "uint16": pa.uint16(),
        "uint32": pa.uint32(),
        "uint64": pa.uint64(),
        "halffloat": pa.float16(),
        "date64[ms]": pa.date64(),
        _UUID: pa.uuid(),
        _DICTIONARY: pa.dictionary(pa.int32(), pa.string()),
    }
    if note in simple:
        return simple[note]
    if match := _TIMESTAMP.fullmatch(note):
        return pa.timestamp(match.group(1), match.group(2))
    if match := _FIXED_BINARY.fullmatch(note):
        return pa.binary(int(match.group(1)))
    if match := _DURATION.fullmatch(note):
        return pa.duration(match.group(1))
    return None


def restore(column: pa.ChunkedArray, note: str) -> pa.ChunkedArray:
    """``column`` in the noted type when every value fits it, else unchanged."""
    import pyarrow as pa

    target = noted_type(note)
    if target is None:
        return column
    try:
        if isinstance(target, pa.BaseExtensionType):
            storage = column.cast(target.storage_type)
            return pa.chunked_array(
                [pa.ExtensionArray.from_storage(target, c) for c in storage.chunks], target
            )
        return column.cast(target)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
        return column  # later writes hold values the noted type cannot


def with_written_types(table: pa.Table) -> pa.Table:
    """Columns whose written Arrow type Delta stores as another type, in the written type."""
    for i, f in enumerate(table.schema):
        note = (f.metadata or {}).get(ARROW_TYPE_META)
        if note is not None:
            column = restore(table.column(i), note.decode())
            table = table.set_column(i, f.with_type(column.type), column)
    return table
