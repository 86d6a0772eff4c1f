"""Table versions as DuckDB relations read by DuckDB's own Parquet reader, on one sandboxed
database per process.

The database may read files only under the local catalog roots it was opened for (it is
opened again, wider, when a query needs another root), reaches no network and no Python
variable, and keeps Parquet footers between queries (files never change once written). A
version's files become ``read_parquet`` over exactly the files given (the candidates file
skipping left), their columns matched by name (older files lack later columns: nulls), cast
where a file holds a narrower type. Rows that deletion vectors delete are left out by an anti
join on (file, row position) against the decoded positions, so only the columns a query needs
are read. Object-store tables are handed over as pyarrow datasets (DuckDB here has no object
store access).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from workbench.core.base.caches import BoundedCache, process_cache
from workbench.core.base.identifiers import quote_identifier
from workbench.core.delta.deleted_positions import deleted_positions
from workbench.core.delta.reading import ordered_dataset, plain_schema
from workbench.core.filters.duck import (
    DATABASE_LOCK,
    close_database,
    duck_type,
    duck_types,
    no_rows,
    open_first_for,
    process_database,
)
from workbench.core.storage.store import is_local, local_path

if TYPE_CHECKING:
    import duckdb
    import pyarrow as pa

    from workbench.core.catalog.catalogs import Catalog
    from workbench.core.catalog.locations import OpenTable

FILE_INDEX = "__wb_file"  # a row's file, as its place in the scan's list
ROW_NUMBER = "__wb_row"  # a row's position in its file (what a deletion vector counts)
_VIRTUAL = {"file_row_number", "file_index", "filename", FILE_INDEX, ROW_NUMBER}

_NO_LIMIT = 2**63 - 1

# rows per Arrow batch of a result: DuckDB's row-group size. Smaller batches than its default
# (a million rows) let its threads convert a result in parallel: a 200,000-row range read
# took 9.3 ms against 11.4-12.6 in DuckDB, and a 5M-row read took no longer
RESULT_BATCH_ROWS = 122_880

# a popped catalog's folders must not stay readable, nor its footers kept: open anew
process_cache("local.duck_database", close_database, forget=lambda identity: close_database())


def _local_roots(catalogs: Iterable[Catalog]) -> frozenset[str]:
    """The root folders of the local ones of ``catalogs`` (what the database may read)."""
    roots = (c.storage.root for c in catalogs)
    return frozenset(local_path(r).rstrip("/") + "/" for r in roots if is_local(r))


def _registered_roots() -> frozenset[str]:
    """The root folders of the local catalogs registered now."""
    from workbench.core.catalog.registry import registered_now

    return _local_roots(registered_now())


open_first_for(_registered_roots)


@dataclass
class Scans:
    """What a query's relations registered on the database, to drop after it."""

    connection: Any
    views: list[str] = field(default_factory=list)
    registered: list[str] = field(default_factory=list)

    def drop(self) -> None:
        for name in self.views:
            self.connection.execute(f"DROP VIEW IF EXISTS {name}")
        for name in self.registered:
            self.connection.unregister(name)


@contextlib.contextmanager
def database(tables: Mapping[str, OpenTable]) -> Iterator[Scans]:
    """The process's database, for this thread alone, able to read the files of ``tables``;
    what the block registers on ``Scans`` is dropped when it ends."""
    folders = _local_roots(t.loc.catalog for t in tables.values())
    with DATABASE_LOCK:
        scans = Scans(process_database(folders))
        try:
            yield scans
        finally:
            scans.drop()


def add_view(scans: Scans, name: str, relation: str) -> None:
    """A temporary view ``name`` of ``relation`` (a table version's ``scan``), dropped when the
    block ends."""
    scans.connection.execute(f"CREATE OR REPLACE TEMP VIEW {name} AS {relation}")
    scans.views.append(name)


def scan(scans: Scans, name: str, opened: OpenTable, positions: bool = False) -> str:
    """A SELECT of the table version's live rows (``name`` prefixes what it registers);
    ``positions``: with ``FILE_INDEX`` and ``ROW_NUMBER`` columns, to put rows in write order
    (local files only, see ``reads_files``)."""
    con = scans.connection
    schema = plain_schema(opened)
    if not opened.files:
        return no_rows(con, schema)
    if not reads_files(opened):
        con.register(f"{name}_d", ordered_dataset(opened, predicate=opened.narrowed_by))
        scans.registered.append(f"{name}_d")
        # a LIMIT keeps DuckDB from pushing filters into the Arrow scan, where pyarrow would
        # evaluate them with its own meaning (NaN above no number); columns still go down
        return f"SELECT * FROM {name}_d LIMIT {_NO_LIMIT}"
    paths = [opened.storage.fs_path(f.absolute) for f in opened.files]
    vectored = any(f.deletion_vector is not None for f in opened.files)
    unify = "" if _one_schema(con, paths, opened.storage.identity) else ", union_by_name = true"
    source = (
        f"read_parquet({_text_list(paths)}{unify}"
        f"{', file_row_number = true' if vectored or positions else ''})"
    )
    columns = _columns(con, schema, source, opened.storage.identity)
    extra = f", file_index AS {FILE_INDEX}, file_row_number AS {ROW_NUMBER}"
    if not vectored:
        return f"SELECT {columns}{extra if positions else ''} FROM {source}"
    con.register(f"{name}_x", _deleted(opened))
    scans.registered.append(f"{name}_x")
    kept = f", __wb_s.{FILE_INDEX}, __wb_s.{ROW_NUMBER}" if positions else ""
    return (
        f"SELECT {columns}{kept}"
        f" FROM (SELECT *{extra} FROM {source}) AS __wb_s ANTI JOIN {name}_x AS __wb_x"
        f" ON __wb_s.{FILE_INDEX} = __wb_x.i AND __wb_s.{ROW_NUMBER} = __wb_x.pos"
    )


def rows_where(
    opened: OpenTable, names: list[str], where: str, limit: int | None, positions: bool
) -> pa.Table:
    """The rows of ``opened``'s files (local, see ``reads_files``) for which the DuckDB
    predicate ``where`` holds, in write order: ``names`` columns, the first ``limit``, and
    with ``positions`` each row's ``FILE_INDEX`` too. Only the columns named and those
    ``where`` reads are decoded; row groups the footers (statistics, Bloom filters) rule out
    are not read. A file gone raises ``FileNotFoundError``."""
    import duckdb

    vectored = any(f.deletion_vector is not None for f in opened.files)
    listed = ", ".join(quote_identifier(n, '"') for n in names)
    order = f" ORDER BY {FILE_INDEX}, {ROW_NUMBER}" if vectored else ""  # an anti join reorders
    first = "" if limit is None else f" LIMIT {int(limit)}"
    with database({"": opened}) as scans:
        try:
            relation = scan(scans, "__wb_read", opened, positions=vectored or positions)
            query = (
                f"SELECT {listed}{', ' + FILE_INDEX if positions else ''} FROM ({relation}) "
                f"WHERE (\n{where}\n){order}{first}"
            )
            return result(scans.connection, query)
        except duckdb.Error as e:
            if gone_file([opened], e) is not None:
                raise FileNotFoundError(str(e).split("\n")[0]) from e  # read as vacuumed
            raise


def result(connection: duckdb.DuckDBPyConnection, query: str) -> pa.Table:
    """``query``'s rows as one Arrow table, in order. Through a relation: DuckDB then
    materializes Arrow batches (``RESULT_BATCH_ROWS`` each) in parallel while it scans, about
    a third faster than converting an executed result (a 200,000-row range read: 11 ms against
    16). A relation's errors say where only in DuckDB's rendering of the query, or not at
    all: a query that does not bind is bound again as a statement (cheap), and one that fails
    at a place while it runs runs again so, for an error that points into the query's own
    text; other errors (a file gone, a store refusing, an interrupt) are raised as they are,
    not met twice."""
    import duckdb

    try:
        relation = connection.sql(query)
    except duckdb.Error:
        connection.execute(query)
        raise
    try:
        return relation.to_arrow_table(RESULT_BATCH_ROWS)
    except duckdb.Error as e:
        if "\nLINE " not in str(e) or isinstance(e, duckdb.InterruptException):
            raise
        return connection.execute(query).to_arrow_table()


def gone_file(tables: Iterable[OpenTable], error: Exception) -> OpenTable | None:
    """The table of ``tables`` whose file DuckDB's ``error`` names and that is gone (a version
    ``dc.vacuum`` removed files of); None when no such file is gone. A store that cannot be
    asked raises ``StorageUnreachableError``."""
    for opened in tables:
        named = [f for f in opened.files if f.path.rsplit("/", 1)[-1] in str(error)]
        if named:
            try:
                opened.storage.check_readable(named[0].absolute)
            except FileNotFoundError:
                return opened
    return None


def reads_files(opened: OpenTable) -> bool:
    """True when DuckDB reads the table's files itself: a local catalog, and no column of the
    table named as a column the scan adds."""
    names = set(opened.schema.names)
    return is_local(opened.loc.catalog.storage.root) and not names & _VIRTUAL


def _deleted(opened: OpenTable) -> pa.Table:
    """The (file's place in the scan, row position) pairs deletion vectors delete."""
    import numpy as np
    import pyarrow as pa

    files, positions = [], []
    for i, f in enumerate(opened.files):
        if f.deletion_vector is not None:
            deleted = deleted_positions(opened.uri, f.deletion_vector, opened.storage)
            files.append(np.full(len(deleted), i, dtype=np.uint64))
            positions.append(deleted)
    columns = [np.concatenate(files), np.concatenate(positions)]
    arrays = [
        pa.Array.from_buffers(kind, len(c), [None, pa.py_buffer(c)])
        for kind, c in zip((pa.uint64(), pa.int64()), columns, strict=True)
    ]
    return pa.Table.from_arrays(arrays, names=["i", "pos"])


# DuckDB's types of a list of files read by name (files never change: the same list, the same
# types), by the store and a digest of the list
_UNION_TYPES: BoundedCache[tuple[str, str], dict[str, str]] = BoundedCache(
    "local.duck_union_types", lambda types: 1, lambda: 4096
)


# a digest of each data file's Parquet schema (files never change), by store and path
_FILE_SCHEMAS: BoundedCache[tuple[str, str], str] = BoundedCache(
    "local.duck_file_schemas", lambda digest: 1, lambda: 100_000
)
_SCHEMA_FIELDS = (
    "name, type, type_length, repetition_type, num_children, converted_type, scale, precision,"
    " field_id, logical_type"
)


def _one_schema(con: Any, paths: list[str], store: str) -> bool:
    """True when every file of ``paths`` has the same Parquet schema. DuckDB then reads them
    all as it reads the first; unifying them by name instead costs a pass over every footer
    at each bind (a view's and its query's: about 3 ms for 80 files) and a little per scan."""
    import hashlib

    if len(paths) < 2:
        return True
    digests = {path: _FILE_SCHEMAS.get((store, path)) for path in paths}
    unknown = [path for path, digest in digests.items() if digest is None]
    if unknown:
        rows = con.execute(
            f"SELECT file_name, {_SCHEMA_FIELDS} FROM parquet_schema({_text_list(unknown)})"
            " ORDER BY file_name, column_id"
        ).fetchall()
        fields: dict[str, list[tuple]] = {path: [] for path in unknown}
        for row in rows:
            fields.get(row[0], []).append(row[1:])
        for path in unknown:
            if fields[path]:  # else DuckDB named it otherwise: unify, as for a stranger
                digests[path] = hashlib.sha1(repr(fields[path]).encode()).hexdigest()
                _FILE_SCHEMAS.keep((store, path), digests[path])
    return None not in digests.values() and len(set(digests.values())) <= 1


def _columns(con: Any, schema: pa.Schema, source: str, store: str) -> str:
    """The table's columns as a select list over ``source``: a column no file holds is a
    typed null, one a file holds in another type is cast to the table's."""
    import hashlib

    key = (store, hashlib.sha1(source.encode()).hexdigest())
    found = _UNION_TYPES.get(key)
    if found is None:
        described = con.execute(f"DESCRIBE SELECT * FROM {source}").fetchall()
        found = {row[0]: row[1] for row in described}
        _UNION_TYPES.keep(key, found)
    missing = [f for f in schema if f.name not in found]
    wanted = duck_types(con, schema) if missing else {f.name: duck_type(f.type) for f in schema}
    parts = []
    for f in schema:
        name = quote_identifier(f.name, '"')
        if f.name not in found:
            parts.append(f"CAST(NULL AS {wanted[f.name]}) AS {name}")
        elif wanted[f.name] is not None and found[f.name] != wanted[f.name]:
            parts.append(f"CAST({name} AS {wanted[f.name]}) AS {name}")
        else:
            parts.append(name)
    return ", ".join(parts)


def _text_list(items: list[str]) -> str:
    return "[" + ", ".join("'" + item.replace("'", "''") + "'" for item in items) + "]"
