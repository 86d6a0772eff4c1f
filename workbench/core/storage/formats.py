"""Reading and writing data files in each supported content type."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from workbench.core.base.arguments import choice
from workbench.core.base.errors import InvalidArgumentError
from workbench.core.base.types import ContentType

if TYPE_CHECKING:
    import pyarrow as pa
    import pyarrow.fs as pafs


def content_type_of(value: Any) -> ContentType:
    """A content type given as enum, name or MIME string (any case), or file extension."""
    if value == "application/x-ndjson":  # how workbench 0.1 named JSON lines
        return ContentType.JSON
    by_extension = {ct.extension: ct for ct in ContentType}
    if isinstance(value, str) and value in by_extension:
        return by_extension[value]
    return choice(ContentType, value, "content_type")


def write_file(table: pa.Table, fs: pafs.FileSystem, path: str, content_type: ContentType) -> None:
    """Write ``table`` to ``path`` on ``fs`` in ``content_type``."""
    with fs.open_output_stream(path) as sink:
        _WRITERS[content_type](table, sink)


def read_file(fs: pafs.FileSystem, path: str, content_type: ContentType) -> pa.Table:
    """Read a data file of ``content_type`` into a pyarrow Table."""
    with fs.open_input_file(path) as source:
        return _READERS[content_type](source)


def _write_parquet(table: pa.Table, sink: Any) -> None:
    import pyarrow.parquet as pq

    pq.write_table(table, sink)


def _writes_delimited(delimiter: str, quoting: str = "needed") -> Any:
    def write(table: pa.Table, sink: Any) -> None:
        import pyarrow.csv as pcsv

        quoted = quoting != "none"
        if not quoted:  # pyarrow quotes the header whatever the style: write it plainly
            sink.write((delimiter.join(table.column_names) + "\n").encode())
        options = pcsv.WriteOptions(
            include_header=quoted, delimiter=delimiter, quoting_style=quoting
        )
        pcsv.write_csv(table, sink, options)

    return write


def _write_json(table: pa.Table, sink: Any) -> None:
    for row in table.to_pylist():
        sink.write((json.dumps(row, default=str) + "\n").encode())


def _write_feather(table: pa.Table, sink: Any) -> None:
    import pyarrow.feather as feather

    feather.write_feather(table, sink)


def _write_orc(table: pa.Table, sink: Any) -> None:
    import pyarrow.orc as orc

    orc.write_table(table, sink)


def _write_avro(table: pa.Table, sink: Any) -> None:
    import fastavro

    schema = {
        "type": "record",
        "name": "row",
        "fields": [{"name": f.name, "type": ["null", _avro_type(f.type)]} for f in table.schema],
    }
    fastavro.writer(sink, fastavro.parse_schema(schema), table.to_pylist())


def _avro_type(t: pa.DataType) -> Any:
    import pyarrow.types as pt

    if pt.is_boolean(t):
        return "boolean"
    if pt.is_integer(t):
        return "long" if t.bit_width > 32 else "int"
    if pt.is_floating(t):
        return "double" if t.bit_width > 32 else "float"
    if pt.is_string(t) or pt.is_large_string(t) or pt.is_string_view(t):
        return "string"
    if pt.is_binary(t) or pt.is_large_binary(t):
        return "bytes"
    if pt.is_timestamp(t):
        return {"type": "long", "logicalType": "timestamp-micros"}
    if pt.is_date(t):
        return {"type": "int", "logicalType": "date"}
    raise InvalidArgumentError(f"Avro output does not support column type {t}; use PARQUET.")


def _read_parquet(source: Any) -> pa.Table:
    import pyarrow.parquet as pq

    return pq.read_table(source)


def _reads_delimited(delimiter: str, quoted: bool = True) -> Any:
    def read(source: Any) -> pa.Table:
        import pyarrow.csv as pcsv

        options = pcsv.ParseOptions(delimiter=delimiter, quote_char='"' if quoted else False)
        return pcsv.read_csv(source, parse_options=options)

    return read


def _read_json(source: Any) -> pa.Table:
    import pyarrow.json as pjson

    return pjson.read_json(source)


def _read_feather(source: Any) -> pa.Table:
    import pyarrow.feather as feather

    return feather.read_table(source)


def _read_orc(source: Any) -> pa.Table:
    import pyarrow.orc as orc

    return orc.read_table(source)


def _read_avro(source: Any) -> pa.Table:
    import fastavro
    import pyarrow as pa

    return pa.Table.from_pylist(list(fastavro.reader(source)))


_WRITERS = {
    ContentType.PARQUET: _write_parquet,
    ContentType.CSV: _writes_delimited(","),
    ContentType.TSV: _writes_delimited("\t"),
    ContentType.PSV: _writes_delimited("|"),
    ContentType.UNESCAPED_TSV: _writes_delimited("\t", quoting="none"),
    ContentType.JSON: _write_json,
    ContentType.FEATHER: _write_feather,
    ContentType.ORC: _write_orc,
    ContentType.AVRO: _write_avro,
}
_READERS = {
    ContentType.PARQUET: _read_parquet,
    ContentType.CSV: _reads_delimited(","),
    ContentType.TSV: _reads_delimited("\t"),
    ContentType.PSV: _reads_delimited("|"),
    ContentType.UNESCAPED_TSV: _reads_delimited("\t", quoted=False),
    ContentType.JSON: _read_json,
    ContentType.FEATHER: _read_feather,
    ContentType.ORC: _read_orc,
    ContentType.AVRO: _read_avro,
}
