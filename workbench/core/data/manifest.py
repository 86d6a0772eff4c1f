"""Schemaless tables: a Delta table of file records (a manifest) instead of rows."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from workbench.core.base.errors import (
    InvalidArgumentError,
    NonRetryableDownloadTableError,
    SchemaValidationError,
    TableVersionNotFoundError,
)
from workbench.core.base.types import ContentType, DatasetType
from workbench.core.catalog.scope import get_catalog
from workbench.core.data.datasets import from_pyarrow, parse_dataset_type, to_pyarrow
from workbench.core.data.read_options import read_request
from workbench.core.delta.reading import live_table
from workbench.core.storage.formats import content_type_of, read_file, write_file
from workbench.core.storage.known import storage_for

if TYPE_CHECKING:
    import pyarrow as pa
    import pyarrow.fs as pafs

    from workbench.core.catalog.catalogs import Catalog
    from workbench.core.catalog.locations import OpenTable

T = TypeVar("T")
DATA_DIR = "_data"
# Stored manifest columns that reads show under DeltaCAT's names.
_SHOWN_AS = {
    "content_type": "meta_content_type",
    "record_count": "meta_record_count",
    "size_bytes": "meta_content_length",
    "source_size_bytes": "meta_source_content_length",
}
# Columns of DeltaCAT's manifest that reads add to the stored ones.
_ADDED = (
    "previous_stream_position",
    "author_name",
    "author_version",
    "mandatory",
    "meta_content_encoding",
)
AUTHOR = "workbench.write"


def manifest_schema() -> pa.Schema:
    """Columns of a schemaless table's manifest: one row per written file, with the stream
    position of the write that added it (its Delta version plus one: DeltaCAT counts from 1)
    and the in-memory size of the data written (tables made before they existed lack them)."""
    import pyarrow as pa

    return pa.schema(
        [
            ("path", pa.string()),
            ("content_type", pa.string()),
            ("record_count", pa.int64()),
            ("size_bytes", pa.int64()),
            ("written_at", pa.timestamp("us", tz="UTC")),
            ("stream_position", pa.int64()),
            ("source_size_bytes", pa.int64()),
        ]
    )


def write_data_file(
    opened: OpenTable, data: pa.Table, content_type: ContentType, delta_version: int
) -> pa.Table:
    """Write ``data`` as one file under the table folder; return its manifest row for the
    commit that makes ``delta_version`` of the table."""
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
            "stream_position": [delta_version + 1],
            "source_size_bytes": [data.nbytes],
        },
        schema=manifest_schema(),
    )


def manifest_columns(stored: list[str]) -> list[str]:
    """The names reads give a manifest's stored columns (DeltaCAT's: ``meta_record_count``...)."""
    return [_SHOWN_AS.get(name, name) for name in stored]


def manifest_view_columns(stored: list[str]) -> list[str]:
    """The columns a read of a manifest with ``stored`` columns gives."""
    shown = manifest_columns(stored)
    missing = [c for c in ("stream_position", "meta_source_content_length") if c not in shown]
    return [*shown, *missing, *_ADDED]


def _with_deltacat_columns(shown: pa.Table) -> pa.Table:
    """The manifest with DeltaCAT's other columns: the previous stream position (the table's
    Delta version before the write, plus one), the author, ``mandatory`` (every file is needed)
    and the content encoding (files are stored as written: ``identity``)."""
    from importlib.metadata import PackageNotFoundError, version

    import pyarrow as pa
    import pyarrow.compute as pc

    rows = shown.num_rows
    for name in ("stream_position", "meta_source_content_length"):
        if name not in shown.column_names:  # a manifest written before these were kept
            shown = shown.append_column(name, pa.nulls(rows, pa.int64()))
    try:
        author_version = version("workbench")
    except PackageNotFoundError:
        author_version = None
    added = {
        "previous_stream_position": pc.subtract(shown.column("stream_position"), 1),
        "author_name": pa.array([AUTHOR] * rows, pa.string()),
        "author_version": pa.array([author_version] * rows, pa.string()),
        "mandatory": pa.array([True] * rows, pa.bool_()),
        "meta_content_encoding": pa.array(["identity"] * rows, pa.string()),
    }
    for name, column in added.items():
        shown = shown.append_column(name, column)
    return shown


def manifest_view(opened: OpenTable, columns: list[str] | None = None) -> pa.Table:
    """A schemaless table's manifest as reads give it: DeltaCAT's column names, and file paths
    relative to the catalog root, as DeltaCAT gives them (``from_manifest_table`` resolves them
    against its catalog)."""
    import pyarrow as pa

    stored = live_table(opened)
    folder = opened.uri.removeprefix(opened.loc.catalog.root.rstrip("/") + "/")
    paths = pa.array([f"{folder}/{p}" for p in stored.column("path").to_pylist()], pa.string())
    shown = stored.set_column(stored.schema.get_field_index("path"), "path", paths)
    shown = _with_deltacat_columns(shown.rename_columns(manifest_columns(shown.column_names)))
    return shown.select(columns) if columns else shown


def from_manifest_table(
    manifest_table: Any,
    read_as: DatasetType | str = DatasetType.DAFT,
    schema: Any = None,
    catalog: str | None = None,
    **read_options: Any,
) -> Any:
    """Read every file a schemaless table's manifest lists into one dataset, in manifest order,
    cast to ``schema`` (a ``dc.Schema`` or pyarrow schema) when given. Relative paths (what
    ``dc.read`` gives) are under the root of ``catalog`` (default: the default catalog).

    ``read_as=PYARROW_PARQUET`` gives the listed files as lazy ``ParquetFile`` objects, and
    raises ``NonRetryableDownloadTableError`` if one of them is not Parquet. DeltaCAT's read
    options are taken as ``dc.read`` takes them (``include_columns`` choose columns)."""
    import pyarrow as pa

    read_as = parse_dataset_type(read_as)
    request = read_request(None, read_options, read_as)
    cat = get_catalog(catalog)
    listed = _listed_files(manifest_table, cat)
    if read_as is DatasetType.PYARROW_PARQUET:
        return _parquet_files(listed, schema, cat)
    arrow_schema = None if schema is None else getattr(schema, "arrow", schema)
    tables = []
    for path, content_type in listed:
        data = _load(path, cat, lambda fs, p, ct=content_type: read_file(fs, p, ct))
        tables.append(data if arrow_schema is None else _named(data, arrow_schema))
    combined = pa.concat_tables(tables, promote_options="permissive") if tables else pa.table({})
    if arrow_schema is not None:
        combined = _cast_to(combined, arrow_schema)
    if request.columns is not None:
        combined = combined.select(_listed_names(request.columns, combined.column_names))
    if request.no_rows:
        combined = combined.slice(0, 0)
    return from_pyarrow(combined, read_as)


def _listed_names(columns: Any, present: list[str]) -> list[str]:
    """The columns asked for, each one the files have."""
    names = [columns] if isinstance(columns, str) else list(columns)
    unknown = [n for n in names if n not in present]
    if unknown:
        raise InvalidArgumentError(
            f"The manifest's files have no column(s) {unknown}; their columns are {present}."
        )
    return names


def _listed_files(manifest_table: Any, cat: Catalog) -> list[tuple[str, ContentType]]:
    """(path, content type) of each file a manifest lists, in its order."""
    listed = to_pyarrow(manifest_table)
    listed = listed.rename_columns(manifest_columns(listed.column_names))
    missing = sorted({"path", "meta_content_type"} - set(listed.column_names))
    if missing:
        raise InvalidArgumentError(
            f"A manifest needs the columns 'path' and 'meta_content_type' (it lacks {missing}); "
            "pass what dc.read returns for a schemaless table."
        )
    return [
        (row["path"], content_type_of(row["meta_content_type"]))
        for row in listed.select(["path", "meta_content_type"]).to_pylist()
    ]


def _locate(path: str, cat: Catalog) -> tuple[pafs.FileSystem, str]:
    """Filesystem and path of a listed file; relative paths are under the catalog root."""
    if "://" in path or path.startswith("/"):
        return storage_for(path, cat.storage).locate(path)
    return cat.storage.locate(cat.uri(path))


def _load(path: str, cat: Catalog, load: Callable[[pafs.FileSystem, str], T]) -> T:
    """``load`` applied to one listed file, or a clear error if the file is gone."""
    fs, fs_path = _locate(path, cat)
    try:
        return load(fs, fs_path)
    except FileNotFoundError as e:
        raise TableVersionNotFoundError(
            f"The manifest lists {path!r}, which does not exist. Pass catalog= naming the "
            f"catalog the manifest was read from (relative paths were taken under {cat.root!r}); "
            "if that is right, dc.vacuum removed the file: read a newer version."
        ) from e


def _parquet_files(listed: list[tuple[str, ContentType]], schema: Any, cat: Catalog) -> Any:
    """The listed files as lazy ``ParquetFile`` objects (one, or a list), as read gives them."""
    import pyarrow.parquet as pq

    if schema is not None:
        raise InvalidArgumentError(
            "read_as=PYARROW_PARQUET gives the listed files as they are, so schema= does not "
            "apply; read as PYARROW to cast the rows to a schema."
        )
    others = sorted({ct.value for _, ct in listed if ct is not ContentType.PARQUET})
    if others:
        raise NonRetryableDownloadTableError(
            f"read_as=PYARROW_PARQUET supports only Parquet files, and the manifest lists files of "
            f"content type {others}; read them with another dataset type (e.g. PYARROW)."
        )
    files = [_load(p, cat, lambda fs, q: pq.ParquetFile(fs.open_input_file(q))) for p, _ in listed]
    return files[0] if len(files) == 1 else files


def _named(data: pa.Table, schema: pa.Schema) -> pa.Table:
    """A file's columns named by ``schema`` when it has positional names ("0", "1", ...:
    written from a numpy array) and as many columns as the schema."""
    positional = [str(i) for i in range(len(schema))]
    return data.rename_columns(schema.names) if data.column_names == positional else data


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
