"""The rows a ``dc.infer`` call predicts: the rows in scope (``where``) whose inputs or model
version changed since their outputs were made (all of them with ``force``), as work rows of
merge keys, one column per model input and an input hash.

They are chosen here from one scan, or, on an engine with workers, by a task per table file
that writes its work rows into the staging folder, so the rows never reach this process."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from workbench.core.data.predict_plan import HASH_COLUMN, hash_column, input_column, model_column
from workbench.core.delta.data_files import DataFile, write_part
from workbench.core.delta.reading import live_file_rows, live_table, ordered_dataset
from workbench.core.inference.provenance import input_hashes, stale
from workbench.core.media.columns import SHA256_COLUMN
from workbench.core.schema.table_schema import Schema
from workbench.core.schema.type_notes import with_written_types

if TYPE_CHECKING:
    import pyarrow as pa
    import pyarrow.dataset as pads

    from workbench.core.catalog.locations import OpenTable
    from workbench.core.data.engine import Engine
    from workbench.core.delta.data_files import WrittenFile
    from workbench.core.inference.model import Model
    from workbench.core.storage.store import Storage

HEAD_ROWS = 4096  # work rows read back here, enough to type a model by its first batch


@dataclass(frozen=True)
class Scope:
    """What choosing the work reads and compares."""

    keys: list[str]
    bindings: dict[str, str]  # model input -> source column
    hashed: dict[str, str]  # model input -> the column its hash is taken of
    columns: list[str]  # source columns read, in table order
    provenance: list[str]  # the model's version and input-hash columns
    version: str
    force: bool
    # the separate target table whose provenance decides, when it has this model's outputs
    elsewhere: OpenTable | None

    def work_schema(self, source: OpenTable) -> pa.Schema:
        """The work rows' schema: merge keys, one column per input, the input hash."""
        import pyarrow as pa

        read = with_written_types(source.schema.arrow.empty_table().select(self.columns)).schema
        inputs = [pa.field(input_column(i), read.field(c).type) for i, c in self.bindings.items()]
        keys = [read.field(k) for k in self.keys]
        return pa.schema([*keys, *inputs, pa.field(HASH_COLUMN, pa.string())])


@dataclass
class Work:
    """The work rows (an Arrow table here, or the engine's dataset over staged files), how
    many, and how many rows were in scope."""

    rows: Any
    count: int
    in_scope: int
    schema: pa.Schema
    head: pa.Table  # the first rows, enough for a first batch

    def key_types(self, keys: list[str]) -> dict[str, pa.DataType]:
        """The work rows' types of the merge keys."""
        return {k: self.schema.field(k).type for k in keys}


def scope_of(
    model: Model,
    source: OpenTable,
    target: OpenTable | None,
    keys: list[str],
    bindings: dict[str, str],
    fetch: tuple[str, ...],
    force: bool,
) -> Scope:
    """What to read of ``source`` and where the earlier outputs' provenance is."""
    content = SHA256_COLUMN if SHA256_COLUMN in source.schema.names else None
    hashed = {i: (content if i in fetch and content else c) for i, c in bindings.items()}
    same = target is not None and target.loc.qualified == source.loc.qualified
    provenance = [model_column(model), hash_column(model)]
    wanted = {*keys, *bindings.values(), *hashed.values()}
    if same and not force and all(c in source.schema.names for c in provenance):
        wanted.update(provenance)
    elsewhere = None
    if not (same or force or target is None) and all(c in target.schema.names for c in provenance):
        elsewhere = target
    columns = [c for c in source.schema.names if c in wanted]
    return Scope(keys, bindings, hashed, columns, provenance, model.version, force, elsewhere)


def select_here(source: OpenTable, scope: Scope, where: pads.Expression | None) -> Work:
    """The work, chosen in this process from one scan of the source."""
    data = with_written_types(ordered_dataset(source).to_table(columns=scope.columns, filter=where))
    done = None
    if scope.elsewhere is not None:
        columns = [*scope.keys, *scope.provenance]
        done = with_written_types(live_table(scope.elsewhere, columns=columns))
    rows = work_rows(data, scope, done)
    return Work(rows, rows.num_rows, data.num_rows, rows.schema, rows.slice(0, HEAD_ROWS))


def select_on_engine(
    runner: Engine,
    source: OpenTable,
    scope: Scope,
    where: pads.Expression | None,
    folder: str,
) -> Work:
    """The work, chosen by the engine's workers, a task per table file; each writes its work
    rows into ``folder`` and reports only counts and files (``scope.elsewhere`` must be
    None: the target's provenance is not joined there)."""
    import pyarrow.parquet as pq

    schema = scope.work_schema(source)
    storage = source.loc.catalog.storage
    chooser = _FileWork(scope, source.uri, source.schema.arrow, storage, where, schema, folder)
    found = runner.map_files(source.files, chooser)
    files = [f for _, written in found for f in written]
    in_scope = sum(count for count, _ in found)
    staged = [DataFile.from_written(f, folder) for f in files]
    count = sum(f.rows for f in staged)
    if not staged:
        return Work(None, 0, in_scope, schema, schema.empty_table())
    fs, path = storage.locate(staged[0].absolute)
    with fs.open_input_file(path) as first:
        head = pq.ParquetFile(first).read_row_group(0).slice(0, HEAD_ROWS).cast(schema)
    rows = runner.read_staged(staged, folder, schema, storage)
    return Work(rows, count, in_scope, schema, head)


@dataclass(frozen=True)
class _FileWork:
    """Chooses the work rows of one table file and writes them (run in an engine's task)."""

    scope: Scope
    table_uri: str
    stored: pa.Schema
    storage: Storage
    where: pads.Expression | None
    schema: pa.Schema
    folder: str

    def __call__(self, f: DataFile) -> tuple[int, list[WrittenFile]]:
        scope = self.scope
        columns = None if self.where is not None else scope.columns
        rows = live_file_rows(f, self.table_uri, self.stored, self.storage, columns)
        if self.where is not None:  # it may name any column, so the file was read whole
            rows = rows.filter(self.where).select(scope.columns)
        work = work_rows(with_written_types(rows), scope)
        if not work.num_rows:
            return rows.num_rows, []
        declared = Schema.of(self.schema)
        return rows.num_rows, [write_part(work, declared, self.folder, storage=self.storage)]


def work_rows(data: pa.Table, scope: Scope, done: pa.Table | None = None) -> pa.Table:
    """The rows of ``data`` (the scope's columns) that need the model, as work rows; ``done``:
    keys and provenance of a separate target table."""
    import pyarrow as pa

    if done is not None:  # a join keeps no row order: hashes come after it
        data = data.join(done, keys=scope.keys, join_type="left outer")
    hashes = input_hashes(data, scope.hashed)
    versions = previous = None
    if not scope.force and scope.provenance[0] in data.column_names:
        versions, previous = data.column(scope.provenance[0]), data.column(scope.provenance[1])
    mask = stale(hashes, versions, previous, scope.version)
    rows = pa.table(
        [
            *[data.column(k) for k in scope.keys],
            *[data.column(c) for c in scope.bindings.values()],
            hashes,
        ],
        names=[*scope.keys, *[input_column(i) for i in scope.bindings], HASH_COLUMN],
    )
    return rows.filter(mask)
