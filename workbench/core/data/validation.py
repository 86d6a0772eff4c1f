"""Reader validation: keep every table readable by the dataset types it promises to support."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from workbench.core.base.errors import TableValidationError
from workbench.core.base.types import SCHEMA_CONTENT_TYPES, ContentType, DatasetType

if TYPE_CHECKING:
    import pyarrow as pa

# Arrow types a reader cannot load, by dataset type.
_UNREADABLE = {
    DatasetType.DAFT: ("decimal256",),
    DatasetType.POLARS: ("decimal256",),
    DatasetType.RAY_DATASET: ("decimal256",),
}


def _type_kinds(t: pa.DataType) -> Iterable[str]:
    import pyarrow.types as pt

    if pt.is_decimal256(t):
        yield "decimal256"
    for i in range(t.num_fields):
        yield from _type_kinds(t.field(i).type)


def validate_readable(schema: pa.Schema, readers: list[DatasetType], table: str) -> None:
    """Raise ``TableValidationError`` if a column type is unreadable by a supported reader."""
    for f in schema:
        kinds = set(_type_kinds(f.type))
        blocked = [r.name for r in readers if kinds & set(_UNREADABLE.get(r, ()))]
        if blocked:
            raise TableValidationError(
                f"Column {f.name!r} of table {table!r} has type {f.type}, which the supported "
                f"reader types {blocked} cannot read. Cast it (e.g. decimal256 -> decimal128), or "
                "create the table with table_properties={dc.TableProperty.SUPPORTED_READER_TYPES: "
                "[...]} listing only readers that can read it."
            )


def validate_content_type(
    content_type: ContentType, readers: list[DatasetType], table: str
) -> None:
    """Raise ``TableValidationError`` if a supported reader cannot read files of this type."""
    blocked = [r.name for r in readers if content_type not in r.readable_content_types()]
    if blocked:
        raise TableValidationError(
            f"Files of type {content_type.name} written to table {table!r} could not be read by "
            f"its supported reader types {blocked}. Write another content type, or limit "
            "dc.TableProperty.SUPPORTED_READER_TYPES to readers of "
            f"{content_type.name} (see dc.DatasetType.readable_content_types())."
        )


def validate_content_type_has_schema(content_type: ContentType, table: str) -> None:
    """Raise ``TableValidationError`` for a schemaless (text) content type written to a table
    with a schema: its rows must match the schema, and text files carry none."""
    if content_type in SCHEMA_CONTENT_TYPES:
        return
    text = ", ".join(sorted(ct.value for ct in ContentType if ct not in SCHEMA_CONTENT_TYPES))
    raise TableValidationError(
        f"Content type '{content_type.value}' cannot be written to a table with a schema: "
        f"table '{table}' has a schema, and '{content_type.value}' is a schemaless content type "
        f"(as are {text}). Write it to a schemaless table (create one with schema=None), or "
        f"write '{ContentType.PARQUET.value}' to this table."
    )
