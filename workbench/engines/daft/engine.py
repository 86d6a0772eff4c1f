"""The Daft engine: in-process, lazy, no cluster to start.

Reads are lazy Daft DataFrames over the files of the resolved version (projections, filters
and limits are pushed into the scan). Writes run the DataFrame and hand each micropartition to
a sink that writes Parquet in the table's declared types; nothing is collected into one table.
MERGE and DELETE touch only the files that hold matching keys: merge-on-read tables mark the
matched rows in deletion vectors (found as the local engine finds them), others rewrite them.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from workbench.core.base.errors import MergeKeyError
from workbench.core.base.types import DatasetType
from workbench.core.catalog.locations import check_readable
from workbench.core.data.arrow_merge import mark_matches
from workbench.core.data.engine import Engine
from workbench.core.delta.commits import vectors_enabled
from workbench.core.delta.data_files import DataFile, Rewrite
from workbench.core.delta.marking import discarded_on_failure
from workbench.core.delta.snapshot import candidate_files, leading_files
from workbench.core.io.sql_errors import engine_error
from workbench.core.schema.merge_order import Ranking, refuse_ordered_duplicates
from workbench.core.schema.table_schema import Schema
from workbench.core.schema.type_notes import noted_type
from workbench.engines.daft.filters import where
from workbench.engines.daft.table_source import TableFiles
from workbench.engines.daft.write import conform, daft_type, io_config, write_frame

if TYPE_CHECKING:
    import daft
    import pyarrow as pa

    from workbench.core.catalog.locations import OpenTable
    from workbench.core.data.predict_plan import PredictPlan
    from workbench.core.delta.data_files import WrittenFile
    from workbench.core.filters.table_filter import TableFilter
    from workbench.core.inference.model import Model

FILE_COLUMN = "__wb_file"
ROW_COLUMN = "__wb_row"


def scan(
    table: OpenTable, files: list[DataFile], schema: Schema, path_column: str | None = None
) -> daft.DataFrame:
    """A lazy Daft DataFrame over ``files`` in ``schema`` (columns missing from older files
    are null; files with a deletion vector without the rows it deletes), in write order: one
    source over every file (never a concat of two: Daft 0.7 can drop a failed task's error
    inside one), which leaves out the files the filter Daft pushes into it cannot match, by the
    log's statistics, and reads the others with Daft's own Parquet reader."""
    import daft
    import pyarrow as pa

    storage = table.loc.catalog.storage
    check_readable(table, files)
    arrow = pa.schema([pa.field(f.name, f.type) for f in schema])
    if path_column:
        arrow = arrow.append(pa.field(path_column, pa.string()))
    if not files:
        return daft.from_arrow(arrow.empty_table())
    duckdb = table.with_files(files) if _duckdb_reads(table, schema) else None
    source = TableFiles(files, table.uri, arrow, storage, path_column, io_config(storage), duckdb)
    return source.read()


def _duckdb_reads(table: OpenTable, schema: Schema) -> bool:
    """Whether DuckDB can read the table's files in ``schema`` (its own, in a local folder)."""
    from workbench.core.io.duck_scans import reads_files

    return schema == table.schema and reads_files(table)


def with_written_types(frame: daft.DataFrame, schema: Schema) -> daft.DataFrame:
    """Columns Delta stores as another type cast back to the written type, lazily, where Daft
    has that type."""
    from daft import col

    for f in schema:
        written = noted_type(f.arrow_type) if f.arrow_type else None
        if written is None:
            continue
        try:
            frame = frame.with_column(f.name, col(f.name).cast(daft_type(written)))
        except Exception:  # Daft lacks the type (e.g. float16): keep the stored one
            continue
    return frame


class DaftEngine(Engine):
    """Daft in this process."""

    name = "daft"
    applies_deletion_vectors = True  # scans filter files with vectors; MERGE, DELETE mark them
    data_modules: ClassVar[tuple[str, ...]] = ("daft",)
    dataset_types: ClassVar[tuple[DatasetType, ...]] = (DatasetType.DAFT,)
    sql_result_type = DatasetType.DAFT

    def __init__(self, settings: Mapping[str, Any] | None = None):
        super().__init__(settings)
        _pin_native_runner()

    def read(
        self,
        table: OpenTable,
        read_as: DatasetType,
        columns: list[str] | None,
        limit: int | None,
        path_column: str | None = None,
        row_filter: TableFilter | None = None,
    ) -> daft.DataFrame:
        files = table.files if row_filter is not None else leading_files(table.files, limit)
        frame = scan(table, files, table.schema, path_column)
        if row_filter is not None:
            frame = where(frame, row_filter)
        frame = with_written_types(frame, table.schema)
        if columns:
            frame = frame.select(*columns, *([path_column] if path_column else []))
        return frame.limit(limit) if limit is not None else frame

    def source(self, data: daft.DataFrame) -> daft.DataFrame:
        return data

    def schema(self, source: daft.DataFrame) -> pa.Schema:
        import pyarrow as pa

        return pa.schema([(f.name, f.dtype.to_arrow_dtype()) for f in source.schema()])

    def keyed(
        self,
        source: daft.DataFrame,
        keys: list[str],
        table: str,
        dedupe: str | None,
        order: Ranking = (),
    ) -> daft.DataFrame:
        from daft import col
        from daft.functions import monotonically_increasing_id

        _reject_null_keys(source, keys, table)
        counted = source.groupby(*keys).agg(col(keys[0]).count().alias("__wb_n"))
        if not counted.where(col("__wb_n") > 1).limit(1).count_rows():
            return source
        refuse_ordered_duplicates(order, self.name, table)
        if dedupe is None:
            raise MergeKeyError(
                f"Rows written to table {table!r} repeat a merge key {keys}; remove the "
                "duplicates or pass dedupe='last' (or 'first') to keep one row per key."
            )
        numbered = source.with_column(ROW_COLUMN, monotonically_increasing_id())
        pick = col(ROW_COLUMN).max() if dedupe == "last" else col(ROW_COLUMN).min()
        kept = numbered.groupby(*keys).agg(pick.alias(ROW_COLUMN)).select(ROW_COLUMN)
        return numbered.join(kept, on=ROW_COLUMN, how="semi").exclude(ROW_COLUMN)

    def write_files(self, source: daft.DataFrame, schema: Schema, folder: str) -> list[WrittenFile]:
        return write_frame(source, schema, folder)

    def merge(
        self, table: OpenTable, source: daft.DataFrame, schema: Schema, keys: list[str]
    ) -> Rewrite:
        from daft import col, lit
        from daft.functions import when

        source = conform(source, schema, fill_missing=False)
        if vectors_enabled(table.properties):
            return self._merge_on_read(table, source, schema, keys)
        touched = _files_with_keys(table, source, keys)
        if not touched:
            return Rewrite(self.write_files(source, schema, table.uri))
        theirs = {c: f"__wb_s_{c}" for c in source.column_names if c not in keys}
        incoming = source.select(
            *[col(k) for k in keys], *[col(c).alias(n) for c, n in theirs.items()]
        ).with_column("__wb_in_source", lit(True))
        current = scan(table, touched, schema).with_column("__wb_in_table", lit(True))
        joined = current.join(incoming, on=keys, how="outer")
        in_source = col("__wb_in_source").not_null()
        in_table = col("__wb_in_table").not_null()
        columns = []
        for f in schema:
            if f.name in keys:
                value = col(f.name)
            elif f.name in theirs:
                value = when(in_source, col(theirs[f.name])).otherwise(col(f.name))
            else:
                default = lit(f.future_default).cast(daft_type(f.type))
                value = when(in_table, col(f.name)).otherwise(default)
            columns.append(value.alias(f.name))
        written = self.write_files(joined.select(*columns), schema, table.uri)
        inserted = sum(f.rows for f in written) - sum(f.rows for f in touched)
        return Rewrite(written, touched, updated=source.count_rows() - inserted)

    def delete(self, table: OpenTable, source: daft.DataFrame, keys: list[str]) -> Rewrite:
        source = conform(source.select(*keys), table.schema, fill_missing=False).distinct()
        _reject_null_keys(source, keys, table.loc.qualified)
        if vectors_enabled(table.properties):
            rewrite = Rewrite()
            with discarded_on_failure(rewrite):
                mark_matches(table, source.to_arrow(), keys, rewrite)
            return rewrite
        touched = _files_with_keys(table, source, keys)
        if not touched:
            return Rewrite()
        kept = scan(table, touched, table.schema).join(source, on=keys, how="anti")
        return Rewrite(self.write_files(kept, table.schema, table.uri), touched)

    def _merge_on_read(
        self, table: OpenTable, source: daft.DataFrame, schema: Schema, keys: list[str]
    ) -> Rewrite:
        """MERGE by deletion vectors: the source's keys (Daft runs in this process) find and
        mark the matched rows as the local engine does; Daft writes a source that has every
        column, and a partial one (whose updated rows take the missing columns from the old
        rows) is merged by the local engine's merge-on-read."""
        from workbench.core.data import arrow_merge as local
        from workbench.core.schema.conform import conform as conform_arrow

        if not set(schema.names) <= set(source.column_names):
            rows = source.to_arrow()
            present = Schema(f for f in schema if f.name in rows.column_names)
            rows = conform_arrow(rows, present, False, table.loc.qualified)
            return local.merge(table, rows, schema, keys)
        source = source.collect()  # computed once, for its keys and its rows
        rewrite = Rewrite()
        with discarded_on_failure(rewrite):
            found = mark_matches(table, source.select(*keys).to_arrow(), keys, rewrite)
            rewrite.updated = int(found.sum())
            rewrite.written += self.write_files(source, schema, table.uri)
        return rewrite

    def predict(
        self, source: daft.DataFrame, model: Model, plan: PredictPlan
    ) -> Iterator[pa.Table]:
        from workbench.engines.daft.predict import predict_frame

        return predict_frame(source, model, plan)

    def sql(self, query: str, tables: Mapping[str, OpenTable]) -> daft.DataFrame:
        import daft

        frames = {name: self.read(t, DatasetType.DAFT, None, None) for name, t in tables.items()}
        try:
            return daft.sql(query, register_globals=False, **frames)
        except Exception as e:  # Daft's InvalidSQLException is not importable (Rust-made)
            if type(e).__name__ != "InvalidSQLException":
                raise
            raise engine_error(str(e), query) from e

    def to_arrow(self, data: daft.DataFrame) -> pa.Table:
        return data.to_arrow()

    def from_arrow(self, table: pa.Table) -> daft.DataFrame:
        import daft

        return daft.from_arrow(table)


def _pin_native_runner() -> None:
    """Run Daft in this process. Left to itself, Daft's first query picks its Ray runner when
    Ray is up (say after an ``engine="ray"`` call), moving Daft work onto the small local Ray;
    a runner the user chose before (``daft.set_runner_ray(...)``) is kept."""
    import daft
    from daft.exceptions import DaftCoreException

    with contextlib.suppress(DaftCoreException):  # a runner is set already: keep it
        daft.set_runner_native()


def _reject_null_keys(source: daft.DataFrame, keys: list[str], table: str) -> None:
    from daft import col

    null_key = col(keys[0]).is_null()
    for k in keys[1:]:
        null_key = null_key | col(k).is_null()
    if source.where(null_key).limit(1).count_rows():
        raise MergeKeyError(
            f"Rows written to table {table!r} have a null merge key {keys}; drop those rows or "
            "fill the key before writing."
        )


def _files_with_keys(table: OpenTable, source: daft.DataFrame, keys: list[str]) -> list[DataFile]:
    """The table files holding any of the source's keys: candidates by the keys' min/max
    statistics, then an exact semi-join over the candidates only."""
    from daft import col

    bounds = source.agg(
        *[col(k).min().alias(f"lo{i}") for i, k in enumerate(keys)],
        *[col(k).max().alias(f"hi{i}") for i, k in enumerate(keys)],
    ).to_pydict()
    if not bounds["lo0"] or bounds["lo0"][0] is None:
        return []
    low = {k: bounds[f"lo{i}"][0] for i, k in enumerate(keys)}
    high = {k: bounds[f"hi{i}"][0] for i, k in enumerate(keys)}
    candidates = {f.absolute: f for f in candidate_files(table.files, low, high)}
    if not candidates:
        return []
    current = scan(table, list(candidates.values()), table.schema, FILE_COLUMN)
    hits = (
        current.select(*keys, FILE_COLUMN)
        .join(source.select(*keys).distinct(), on=keys, how="semi")
        .select(FILE_COLUMN)
        .distinct()
        .to_pydict()[FILE_COLUMN]
    )
    return [candidates[path] for path in _match_paths(hits, candidates)]


def _match_paths(hits: list[str], candidates: Mapping[str, Any]) -> list[str]:
    """Candidate paths for the file paths Daft reports (it may add a ``file://`` scheme)."""
    found = []
    for hit in hits:
        path = hit.removeprefix("file://")
        if path in candidates:
            found.append(path)
        elif hit in candidates:
            found.append(hit)
    return found
