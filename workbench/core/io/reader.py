"""``read``: a table (or one of its versions) as any dataset type, through the engine that
produces it."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from workbench.core.base.arguments import optional_whole_number
from workbench.core.base.errors import (
    InvalidArgumentError,
    TableValidationError,
)
from workbench.core.base.types import DatasetType
from workbench.core.catalog.locations import OpenTable, locate, reading
from workbench.core.catalog.scope import branch_scope, get_catalog
from workbench.core.data.datasets import from_pyarrow, parse_dataset_type
from workbench.core.data.engine import engine_for_dataset_type, require_vectors_applied
from workbench.core.data.manifest import manifest_view, manifest_view_columns
from workbench.core.data.read_options import read_request
from workbench.core.delta.reading import plain_schema
from workbench.core.filters.duck import filter_rows
from workbench.core.filters.expression import Literal
from workbench.core.filters.table_filter import TableFilter, table_filter
from workbench.core.io.scan_plan import narrowed
from workbench.core.transactions.read_ahead import read_ahead_of_check
from workbench.core.transactions.table_versions import open_table


def read(
    table: str,
    namespace: str | None = None,
    catalog: str | None = None,
    read_as: DatasetType | str = DatasetType.DAFT,
    columns: Sequence[str] | None = None,
    version: int | None = None,
    as_of: Any = None,
    limit: int | None = None,
    *,
    table_version: str | None = None,
    file_path_column: str | None = None,
    table_type: DatasetType | str | None = None,
    branch: str | None = None,
    filter: Any = None,
    **read_options: Any,
) -> Any:
    """Read a table as ``read_as``: as the catalog shows it, at a Delta ``version``, or ``as_of``
    a past moment, transaction id or tag; its current version, or ``table_version`` (each
    table version is a Delta table of its own); ``limit`` reads only the first rows. Lazy dataset
    types (Daft, Ray, Spark) read nothing until used. Schemaless tables give their manifest.

    ``filter`` keeps the rows it holds for: SQL text (what follows WHERE, e.g. ``"id = 5"``)
    or a pyarrow expression (``pc.field("id") == 5``), with SQL's meaning whichever the
    engine. Only the files the log's statistics say may hold such rows are opened.

    ``branch`` reads the table as that branch shows it (default: the current branch, see
    ``dc.branch``). ``file_path_column`` adds a column naming each row's data file.
    DeltaCAT's ``table_type`` and reader options (``max_parallelism``, ``pre_buffer``, ...)
    are accepted; ``include_columns``/``column_names`` choose columns, an empty
    ``partition_filter`` no rows, and options a Delta table cannot honour are refused; an
    unknown keyword is an error."""
    read_as = parse_dataset_type(read_as)
    if table_type is not None:
        parse_dataset_type(table_type)
    request = read_request(columns, read_options, read_as)
    columns = request.columns
    limit = optional_whole_number("limit", limit)
    if file_path_column is not None and (
        not isinstance(file_path_column, str) or not file_path_column
    ):
        raise InvalidArgumentError(
            f"file_path_column={file_path_column!r} must be a column name (a non-empty str)."
        )

    def run() -> Any:
        with branch_scope(branch, catalog):
            loc = locate(table, namespace, catalog)
        opened = open_table(loc, version, as_of, table_version)
        return _read(opened, read_as, columns, limit, file_path_column, filter, request.no_rows)

    if version is not None or as_of is not None:
        return run()
    return read_ahead_of_check(get_catalog(catalog), run)


def _read(
    opened: OpenTable,
    read_as: DatasetType,
    columns: Any,
    limit: int | None,
    file_path_column: str | None,
    filter: Any,
    no_rows: bool,
) -> Any:
    """``read`` of the table version ``opened``, its arguments checked."""
    names = manifest_view_columns(opened.schema.names) if opened.schemaless else opened.schema.names
    if columns is not None:
        columns = _check_columns(opened, names, columns, file_path_column)
    if file_path_column in names:
        raise InvalidArgumentError(
            f"file_path_column={file_path_column!r} is already a column of "
            f"{opened.loc.qualified!r}; choose another name."
        )
    asked_rows = filter is not None or no_rows
    if read_as is DatasetType.PYARROW_PARQUET and (
        columns is not None or limit is not None or asked_rows
    ):
        raise InvalidArgumentError(
            "read_as=PYARROW_PARQUET gives the table's files as they are; columns=, limit= and "
            "filter= do not apply (pass columns to ParquetFile.read(columns=...) instead)."
        )
    if opened.schemaless:
        if read_as is DatasetType.PYARROW_PARQUET:
            raise TableValidationError(
                f"Table {opened.loc.qualified!r} is schemaless; read its manifest as another type "
                "and load the files with dc.from_manifest_table(...)."
            )
        manifest = manifest_view(opened, columns)
        if asked_rows:
            manifest = filter_rows(manifest, _row_filter(opened, filter, no_rows, manifest))
        return from_pyarrow(manifest, read_as)
    engine = engine_for_dataset_type(read_as)
    require_vectors_applied(engine, opened, "read")
    row_filter = None
    if asked_rows:
        row_filter = _row_filter(opened, filter, no_rows)
        opened, _ = narrowed(opened, row_filter.predicate)
    with reading(opened), opened.loc.catalog.storage.access_errors():
        return engine.read(opened, read_as, columns, limit, file_path_column, row_filter)


def _row_filter(opened: OpenTable, value: Any, no_rows: bool, manifest: Any = None) -> TableFilter:
    """The read's filter on the table's rows (or a schemaless table's ``manifest``); with
    ``no_rows`` (an empty ``partition_filter``) one that holds for none."""
    import pyarrow as pa

    schema = plain_schema(opened) if manifest is None else manifest.schema
    given = None if value is None else table_filter(value, schema, opened.loc.qualified)
    if not no_rows:
        return given  # type: ignore[return-value]
    return TableFilter(Literal(False, pa.bool_()), "FALSE")


def _check_columns(
    opened: OpenTable, names: list[str], columns: Any, path_column: str | None
) -> list[str]:
    """The columns asked for, among ``names`` (the path column, which the read adds, left
    out)."""
    if isinstance(columns, str):
        columns = [columns]
    elif isinstance(columns, Iterable):
        columns = list(columns)
    if not isinstance(columns, list) or not all(isinstance(c, str) for c in columns):
        raise InvalidArgumentError(
            f"columns={columns!r} must be a column name or a list of names, e.g. "
            "columns=['id', 'name']."
        )
    columns = [c for c in columns if c != path_column]
    unknown = [c for c in columns if c not in names]
    if unknown:
        raise InvalidArgumentError(
            f"Table {opened.loc.qualified!r} has no column(s) {unknown}; its columns are {names}."
        )
    if len(set(columns)) != len(columns):
        raise InvalidArgumentError(f"columns={columns} names a column twice; list each once.")
    return columns
