"""Schemaless tables: a Delta table of file records (a manifest) instead of rows."""

from __future__ import annotations

import time
import uuid
from typing import TYPE_CHECKING, Any

from workbench.core.catalog import get_catalog
from workbench.core.datasets import from_pyarrow, to_pyarrow
from workbench.core.errors import (
    InvalidArgumentError,
    SchemaValidationError,
    TableVersionNotFoundError,
)
from workbench.core.formats import content_type_of, read_file, write_file
from workbench.core.read_options import check_read_options
from workbench.core.storage import storage_for
from workbench.core.types import ContentType, DatasetType

if TYPE_CHECKING:
    import pyarrow as pa

    from workbench.core.tables import OpenTable

DATA_DIR = "_data"
SCHEMALESS_PROPERTY = "workbench.schemaless"  # table property marking a schemaless table


def manifest_schema() -> pa.Schema:
    """Columns of a schemaless table's manifest: one row per written file."""
    import pyarrow as pa

    return pa.schema(
        [
            ("path", pa.string()),
            ("content_type", pa.string()),
            ("record_count", pa.int64()),
            ("size_bytes", pa.int64()),
            ("written_at", pa.timestamp("us", tz="UTC")),
        ]
    )


def write_data_file(opened: OpenTable, data: pa.Table, content_type: ContentType) -> pa.Table:
    """Write ``data`` as one file under the table folder; return its manifest row."""
    import pyarrow as pa

    cat = opened.loc.catalog
    relative = f"{DATA_DIR}/{uuid.uuid4().hex}.{content_type.extension}"
    path = cat.fs_path(opened.loc.namespace, opened.loc.name, relative)
    cat.filesystem.create_dir(path.rsplit("/", 1)[0], recursive=True)
    write_file(data, cat.filesystem, path, content_type)
    size = cat.filesystem.get_file_info(path).size
    return pa.table(
        {
            "path": [relative],
            "content_type": [content_type.value],
            "record_count": [data.num_rows],
            "size_bytes": [size],
            "written_at": pa.array([time.time_ns() // 1000], pa.timestamp("us", tz="UTC")),
        },
        schema=manifest_schema(),
    )


def resolve_paths(opened: OpenTable, manifest: pa.Table) -> pa.Table:
    """Make the manifest's relative paths absolute, so the files can be read from anywhere."""
    import pyarrow as pa

    base = opened.uri.rstrip("/") + "/"
    paths = pa.array([base + p for p in manifest.column("path").to_pylist()], pa.string())
    return manifest.set_column(manifest.schema.get_field_index("path"), "path", paths)


def from_manifest_table(
    manifest_table: Any,
    read_as: DatasetType = DatasetType.DAFT,
    schema: Any = None,
    catalog: str | None = None,
    **read_options: Any,
) -> Any:
    """Read every file a schemaless table's manifest lists into one dataset, cast to
    ``schema`` (a ``dc.Schema`` or pyarrow schema) when given. The manifest's paths are absolute,
    so ``catalog`` (DeltaCAT's argument) and DeltaCAT's read options change nothing."""
    import pyarrow as pa

    check_read_options(read_options)
    if catalog is not None:
        get_catalog(catalog)  # an unknown name is still an error
    listed = to_pyarrow(manifest_table)
    missing = sorted({"path", "content_type"} - set(listed.column_names))
    if missing:
        raise InvalidArgumentError(
            f"A manifest needs the columns 'path' and 'content_type' (it lacks {missing}); pass "
            "what dc.read returns for a schemaless table."
        )
    tables = []
    for row in listed.select(["path", "content_type"]).to_pylist():
        path = row["path"]
        fs, fs_path = storage_for(path).locate(path)
        try:
            tables.append(read_file(fs, fs_path, content_type_of(row["content_type"])))
        except FileNotFoundError as e:
            raise TableVersionNotFoundError(
                f"The manifest lists {path!r}, which no longer exists (dc.vacuum removes files "
                "of versions outside the retention period); read a newer version."
            ) from e
    combined = pa.concat_tables(tables, promote_options="permissive") if tables else pa.table({})
    if schema is not None:
        combined = _cast_to(combined, getattr(schema, "arrow", schema))
    return from_pyarrow(combined, read_as)


def _cast_to(data: pa.Table, schema: pa.Schema) -> pa.Table:
    """The files' rows in ``schema``: its columns, in its order and types."""
    missing = [f.name for f in schema if f.name not in data.column_names]
    if missing:
        raise SchemaValidationError(
            f"The manifest's files have no column(s) {missing} of the schema given; their "
            f"columns are {data.column_names}."
        )
    try:
        return data.select(schema.names).cast(schema)
    except (ValueError, TypeError, NotImplementedError) as e:
        raise SchemaValidationError(f"The manifest's files do not fit the schema given: {e}") from e
