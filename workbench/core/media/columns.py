"""The columns of a media table, its merge key and the table property that marks it."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pyarrow as pa

    from workbench.core.schema.table_schema import Schema

URI_PROPERTY = "workbench.media.uriColumn"  # names the column holding each row's file URI
URI_COLUMN = "uri"
SHA256_COLUMN = "sha256"  # the hash of each file's bytes (dc.infer's input hash for the file)
KEY_COLUMN = "key"  # the file's path relative to the imported folder, '/'-separated
IMAGE, AUDIO, TEXT, OTHER = "image", "audio", "text", "other"
KINDS = (IMAGE, AUDIO, TEXT, OTHER)


def arrow_schema() -> pa.Schema:
    """The Arrow schema of a media table's own columns (predictions may add more)."""
    import pyarrow as pa

    return pa.schema(
        [
            pa.field(KEY_COLUMN, pa.string()),
            pa.field(URI_COLUMN, pa.string()),
            pa.field("kind", pa.string()),
            pa.field("content_type", pa.string()),
            pa.field("size", pa.int64()),
            pa.field(SHA256_COLUMN, pa.string()),
            pa.field("modified", pa.timestamp("us", tz="UTC")),
            pa.field("width", pa.int32()),
            pa.field("height", pa.int32()),
            pa.field("mode", pa.string()),
            pa.field("duration_s", pa.float64()),
            pa.field("sample_rate", pa.int32()),
            pa.field("channels", pa.int32()),
            pa.field("text_length", pa.int64()),
        ]
    )


def table_schema() -> Schema:
    """The workbench schema a new media table is created with (merge key ``key``)."""
    from workbench.core.schema.table_schema import Field, Schema

    return Schema.of([Field.of(f, is_merge_key=f.name == KEY_COLUMN) for f in arrow_schema()])
