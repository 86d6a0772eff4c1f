"""``read``: a table (or one of its versions) as any dataset type, in write order."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from workbench.core.arguments import optional_whole_number
from workbench.core.datasets import from_pyarrow, parse_dataset_type
from workbench.core.errors import (
    InvalidArgumentError,
    TableValidationError,
    TableVersionNotFoundError,
)
from workbench.core.manifest import resolve_paths
from workbench.core.schema import ARROW_TYPE_META
from workbench.core.tables import OpenTable, describe, locate, open_table
from workbench.core.type_notes import restore
from workbench.core.types import DatasetType

if TYPE_CHECKING:
    import pyarrow as pa
    import pyarrow.dataset as pads


def read(
    table: str,
    namespace: str | None = None,
    catalog: str | None = None,
    read_as: DatasetType | str = DatasetType.DAFT,
    columns: Sequence[str] | None = None,
    version: int | None = None,
    as_of: Any = None,
    limit: int | None = None,
) -> Any:
    """Read a table as ``read_as``: as the catalog shows it, at a Delta ``version``, or ``as_of``
    a past moment, transaction id or tag; ``limit`` reads only the first rows. Schemaless tables
    give their file manifest."""
    read_as = parse_dataset_type(read_as)
    limit = optional_whole_number("limit", limit)
    opened = open_table(locate(table, namespace, catalog), version, as_of)
    if columns is not None:
        columns = _check_columns(opened, columns)
    if read_as is DatasetType.PYARROW_PARQUET and (columns is not None or limit is not None):
        raise InvalidArgumentError(
            "read_as=PYARROW_PARQUET gives the table's files as they are; columns= and limit= "
            "do not apply (pass columns to ParquetFile.read(columns=...) instead)."
        )
    if opened.schemaless:
        if read_as is DatasetType.PYARROW_PARQUET:
            raise TableValidationError(
                f"Table {opened.loc.qualified!r} is schemaless; read its manifest as another type "
                "and load the files with dc.from_manifest_table(...)."
            )
        manifest = resolve_paths(opened, ordered_dataset(opened).to_table())
        return from_pyarrow(manifest.select(columns) if columns else manifest, read_as)
    if read_as is DatasetType.PYARROW_PARQUET:
        return parquet_files(opened)
    if read_as is DatasetType.SPARK:
        from workbench.engines.spark.read import read_table

        frame = read_table(opened)
        frame = frame.select(*columns) if columns else frame
        return frame.limit(limit) if limit is not None else frame
    try:
        dataset = ordered_dataset(opened)
        if limit is None or limit >= describe(opened).row_count:
            data = dataset.to_table(columns=columns)
        else:
            data = dataset.head(limit, columns=columns)
    except FileNotFoundError as e:
        raise TableVersionNotFoundError(
            f"Version {opened.version} of table {opened.loc.qualified!r} can no longer be read: "
            f"dc.vacuum removed files it needs ({e})."
        ) from e
    return from_pyarrow(with_written_types(data), read_as)


def with_written_types(table: pa.Table) -> pa.Table:
    """Columns whose written Arrow type Delta stores as another type, in the written type."""
    for i, f in enumerate(table.schema):
        note = (f.metadata or {}).get(ARROW_TYPE_META)
        if note is not None:
            column = restore(table.column(i), note.decode())
            table = table.set_column(i, f.with_type(column.type), column)
    return table


def _check_columns(opened: OpenTable, columns: Any) -> list[str]:
    if isinstance(columns, str):
        columns = [columns]
    elif isinstance(columns, Iterable):
        columns = list(columns)
    if not isinstance(columns, list) or not all(isinstance(c, str) for c in columns):
        raise InvalidArgumentError(
            f"columns={columns!r} must be a column name or a list of names, e.g. "
            "columns=['id', 'name']."
        )
    names = opened.schema.names
    unknown = [c for c in columns if c not in names]
    if unknown:
        raise InvalidArgumentError(
            f"Table {opened.loc.qualified!r} has no column(s) {unknown}; its columns are {names}."
        )
    if len(set(columns)) != len(columns):
        raise InvalidArgumentError(f"columns={columns} names a column twice; list each once.")
    return columns


def ordered_dataset(opened: OpenTable) -> pads.Dataset:
    """The table's files as a pyarrow dataset, oldest commit first so rows keep write order."""
    import pyarrow as pa
    import pyarrow.dataset as pads

    dataset = opened.delta.to_pyarrow_dataset()
    fragments = list(dataset.get_fragments())
    if len(fragments) < 2:
        return dataset
    actions = pa.table(opened.delta.get_add_actions(flatten=False))
    written = dict(
        zip(
            actions.column("path").to_pylist(),
            actions.column("modification_time").cast(pa.int64()).to_pylist(),
            strict=True,
        )
    )
    # Oldest commit first; within a commit, files are numbered in write order (part-00000...).
    fragments.sort(key=lambda f: (written.get(f.path, 0), f.path))
    return pads.FileSystemDataset(fragments, dataset.schema, dataset.format, dataset.filesystem)


def parquet_files(opened: OpenTable) -> list[Any]:
    """The table's Parquet files as lazy ``pyarrow.parquet.ParquetFile`` objects, in write order."""
    import pyarrow.parquet as pq

    dataset = ordered_dataset(opened)
    return [
        pq.ParquetFile(dataset.filesystem.open_input_file(f.path)) for f in dataset.get_fragments()
    ]
