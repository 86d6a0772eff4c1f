"""The rows one Delta commit changed, from its actions: rows of files it adds are inserted, rows
of files it removes deleted, and rows a grown deletion vector newly deletes deleted (read by row
group, never the whole file); then a deleted and an inserted row with the same merge key become
an update, and identical ones cancel (a rewrite carries unchanged rows over). Also the change
data files (``_change_data/``, ``cdc`` actions) Delta's change data feed asks a commit to carry
when ``delta.enableChangeDataFeed`` is on, and net changes over many commits."""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from workbench.core.base.identifiers import quote_identifier
from workbench.core.delta.commits import commit_key
from workbench.core.delta.data_files import DataFile
from workbench.core.delta.deleted_positions import deleted_positions
from workbench.core.delta.deletion_vectors import vector_uri
from workbench.core.delta.reading import live_file_rows
from workbench.core.filters.duck import scratch

if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa

    from workbench.core.delta.commits import TableActions
    from workbench.core.storage.store import Storage

CHANGE_DATA_FOLDER = "_change_data"
CHANGE_TYPE = "_change_type"
INSERT, DELETE = "insert", "delete"
PREIMAGE, POSTIMAGE = "update_preimage", "update_postimage"


@dataclass(frozen=True)
class ChangedTable:
    """Where a table's files are and the schema its changed rows are read in (the newest of
    the range: older files' missing columns read as nulls)."""

    uri: str
    storage: Storage
    schema: pa.Schema  # plain Arrow types, as the files store them
    keys: tuple[str, ...]  # merge keys: rows with the same key pair into updates

    def file(self, action: dict[str, Any]) -> DataFile:
        """The data file an ``add`` or ``remove`` action names."""
        return DataFile.from_add(action, self.uri)


def needed_files(table: ChangedTable, actions: TableActions, change_files: bool = True) -> set[str]:
    """The files reading a commit's changes needs (data, deletion vector or change data files),
    to check before reading that ``vacuum`` left them."""
    if change_files and actions.cdc:
        return {table.file(c["cdc"]).absolute for c in actions.cdc}
    needed = set()
    for action in [*_data_changes(actions.adds), *_data_changes(actions.removes)]:
        f = table.file(action)
        needed.add(f.absolute)
        if f.deletion_vector is not None and not f.deletion_vector.inline:
            needed.add(vector_uri(table.uri, f.deletion_vector))
    return needed


def _data_changes(actions: dict[str, dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """The ``add`` or ``remove`` bodies of actions that change data (not a compaction's)."""
    for action in actions.values():
        body = action.get("add") or action.get("remove")
        if body.get("dataChange", True):
            yield body


def commit_changes(
    table: ChangedTable, actions: TableActions, change_files: bool = True
) -> pa.Table:
    """The rows one commit changed, in the table's schema plus ``_change_type``: read from its
    change data files when it has them (and ``change_files``), else computed from its adds,
    removes and deletion vectors."""
    if change_files and actions.cdc:
        return _read_change_files(table, actions)
    added = {a["path"]: a for a in _data_changes(actions.adds)}
    removed = {r["path"]: r for r in _data_changes(actions.removes)}
    inserted, deleted = [], []
    for path, add in added.items():
        new = table.file(add)
        old = table.file(removed[path]) if path in removed else None
        if old is None:
            inserted.append(_live_rows(table, new))
        else:  # the file stays; its vector now deletes more of its rows
            deleted.append(_newly_deleted(table, old, new))
    for path, remove in removed.items():
        if path not in added:
            deleted.append(_live_rows(table, table.file(remove)))
    return paired(_concat(table, deleted), _concat(table, inserted), table.keys)


def _concat(table: ChangedTable, parts: list[pa.Table]) -> pa.Table:
    import pyarrow as pa

    return pa.concat_tables(parts) if parts else table.schema.empty_table()


def _live_rows(table: ChangedTable, f: DataFile) -> pa.Table:
    """The rows of a file its deletion vector leaves, in the table's schema."""
    return live_file_rows(f, table.uri, table.schema, table.storage)


def _fragment(table: ChangedTable, f: DataFile) -> Any:
    import pyarrow.dataset as pads

    storage = table.storage
    return pads.ParquetFileFormat().make_fragment(
        storage.fs_path(f.absolute), storage.filesystem, file_size=f.size or None
    )


def _newly_deleted(table: ChangedTable, old: DataFile, new: DataFile) -> pa.Table:
    """The rows of a file its new deletion vector deletes and its old one did not: only the row
    groups holding them are read."""
    import numpy as np

    after = deleted_positions(table.uri, new.deletion_vector, table.storage)  # type: ignore[arg-type]
    before = (
        deleted_positions(table.uri, old.deletion_vector, table.storage)
        if old.deletion_vector is not None
        else np.empty(0, np.int64)
    )
    positions = np.setdiff1d(after, before, assume_unique=True)
    if not len(positions):
        return table.schema.empty_table()
    with table.storage.access_errors():
        return _conformed(table, _rows_at(table, new, positions))


def _rows_at(table: ChangedTable, f: DataFile, positions: np.ndarray) -> pa.Table:
    """The rows at ``positions`` (increasing) of a data file, as the file stores them, reading
    only the row groups that hold them."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    storage = table.storage
    parquet = pq.ParquetFile(storage.filesystem.open_input_file(storage.fs_path(f.absolute)))
    meta = parquet.metadata
    sizes = [meta.row_group(g).num_rows for g in range(meta.num_row_groups)]
    starts = np.cumsum([0, *sizes])
    group_of = np.searchsorted(starts, positions, side="right") - 1
    groups = np.unique(group_of)
    columns = [c for c in table.schema.names if c in parquet.schema_arrow.names]
    rows = parquet.read_row_groups(groups.tolist(), columns=columns)
    offsets = np.cumsum([0] + [sizes[g] for g in groups])  # where each group starts in ``rows``
    local = positions - starts[group_of] + offsets[np.searchsorted(groups, group_of)]
    return rows.take(pa.array(local, pa.int64()))


def _conformed(table: ChangedTable, rows: pa.Table) -> pa.Table:
    """Rows read from a file in the table's schema: its types, and nulls for the columns the
    file was written without."""
    import pyarrow as pa

    names = rows.column_names
    columns = [
        rows.column(f.name).cast(f.type) if f.name in names else pa.nulls(len(rows), f.type)
        for f in table.schema
    ]
    return pa.Table.from_arrays(columns, schema=table.schema)


def _read_change_files(table: ChangedTable, actions: TableActions) -> pa.Table:
    """The rows of a commit's change data files, in the table's schema plus ``_change_type``."""
    import pyarrow as pa

    schema = with_change_type(table.schema)
    parts = []
    with table.storage.access_errors():
        for action in actions.cdc:
            parts.append(_fragment(table, table.file(action["cdc"])).to_table(schema=schema))
    return pa.concat_tables(parts) if parts else schema.empty_table()


def with_change_type(schema: pa.Schema) -> pa.Schema:
    """``schema`` with the ``_change_type`` column after the table's."""
    import pyarrow as pa

    return schema.append(pa.field(CHANGE_TYPE, pa.string()))


def paired(
    deleted: pa.Table, inserted: pa.Table, keys: tuple[str, ...], compared: list[str] | None = None
) -> pa.Table:
    """Deleted and inserted rows as changes: with merge keys, a deleted and an inserted row with
    the same key are an update (pre- then post-image) unless identical, when they cancel;
    without keys identical rows cancel, as many times as they appear on both sides. The rest
    stay deletes and inserts. Rows are compared on ``compared`` (default: every column)."""
    import numpy as np

    if not deleted.num_rows or not inserted.num_rows:
        return _labelled([(deleted, DELETE), (inserted, INSERT)])
    compared = compared or deleted.column_names
    left, right, same = _matches(deleted, inserted, list(keys) or compared, compared)
    updates = ~same
    gone = np.setdiff1d(np.arange(deleted.num_rows), left)
    new = np.setdiff1d(np.arange(inserted.num_rows), right)
    return _labelled(
        [
            (deleted.take(gone), DELETE),
            (deleted.take(left[updates]), PREIMAGE),
            (inserted.take(right[updates]), POSTIMAGE),
            (inserted.take(new), INSERT),
        ]
    )


def _labelled(parts: list[tuple[pa.Table, str]]) -> pa.Table:
    """Tables of one schema with each row's ``_change_type`` (any they had replaced), one after
    another."""
    import pyarrow as pa

    tables = []
    for rows, kind in parts:
        if CHANGE_TYPE in rows.column_names:
            rows = rows.drop_columns(CHANGE_TYPE)
        kinds = pa.array([kind] * rows.num_rows, pa.string())
        tables.append(rows.append_column(CHANGE_TYPE, kinds))
    return pa.concat_tables(tables)


def _equal(columns: list[str], left: str, right: str) -> str:
    """SQL: the rows ``left`` and ``right`` hold the same values in ``columns`` (nulls equal)."""
    pairs = (f"{left}.{c} IS NOT DISTINCT FROM {right}.{c}" for c in map(_quoted, columns))
    return " AND ".join(pairs)


def _quoted(name: str) -> str:
    return quote_identifier(name, '"')


def _query(sql: str, **tables: pa.Table) -> pa.Table:
    """``sql`` run on the process's scratch DuckDB over ``tables`` (in types DuckDB compares,
    each with a ``__i`` column of positions)."""
    with scratch() as duck:
        for name, rows in tables.items():
            duck.register(name, _numbered(rows))
        try:
            return duck.execute(sql).to_arrow_table()
        finally:
            for name in tables:
                duck.unregister(name)


def _matches(
    deleted: pa.Table, inserted: pa.Table, on: list[str], compared: list[str]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Row pairs (positions in ``deleted`` and in ``inserted``) with the same values in ``on``
    (the n-th row of a value with the n-th), and whether each pair is equal in ``compared``."""
    rank = ", ".join(map(_quoted, on))
    numbered = "SELECT *, row_number() OVER (PARTITION BY {rank} ORDER BY __i) AS __r FROM {t}"
    found = _query(
        f"SELECT d.__i AS l, n.__i AS r, ({_equal(compared, 'd', 'n')}) AS s "
        f"FROM ({numbered.format(rank=rank, t='__deleted')}) d "
        f"JOIN ({numbered.format(rank=rank, t='__inserted')}) n "
        f"ON {_equal(on, 'd', 'n')} AND d.__r = n.__r",
        __deleted=deleted,
        __inserted=inserted,
    )
    return _ints(found, "l"), _ints(found, "r"), _ints(found, "s").astype(bool)


def _ints(found: pa.Table, column: str) -> np.ndarray:
    import numpy as np

    return found.column(column).to_numpy(zero_copy_only=False).astype(np.int64)


def _numbered(rows: pa.Table) -> pa.Table:
    """``rows`` in types DuckDB compares (extension types as their storage) with a ``__i``
    column of positions."""
    import pyarrow as pa

    columns = [
        c.cast(c.type.storage_type) if isinstance(c.type, pa.ExtensionType) else c
        for c in rows.columns
    ]
    plain = pa.Table.from_arrays(columns, names=rows.column_names)
    return plain.append_column("__i", pa.array(range(rows.num_rows), pa.int64()))


def net_changes(feed: pa.Table, keys: tuple[str, ...], compared: list[str]) -> pa.Table:
    """Changes over many commits (``feed``, in commit order) as their net effect: per merge key,
    the row as it was before the first change against the row after the last: an insert, a
    delete, an update pair, or nothing when they are equal or the key came and went; without
    keys, deleted and inserted rows identical in ``compared`` cancel. Each row keeps the other
    columns of the change it comes from (its commit)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if not feed.num_rows:
        return feed
    removing = pc.is_in(feed.column(CHANGE_TYPE), pa.array([DELETE, PREIMAGE]))
    if not keys:
        return paired(feed.filter(removing), feed.filter(pc.invert(removing)), (), compared)
    group = ", ".join(map(_quoted, keys))
    ends = _query(
        f"WITH e AS (SELECT min(__i) AS f, max(__i) AS l FROM __feed GROUP BY {group}) "
        f"SELECT e.f, e.l, ({_equal(compared, 'a', 'b')}) AS s FROM e "
        "JOIN __feed a ON a.__i = e.f JOIN __feed b ON b.__i = e.l ORDER BY e.f",
        __feed=feed.select(compared),
    )
    first, last, same = _ints(ends, "f"), _ints(ends, "l"), _ints(ends, "s").astype(bool)
    removes = removing.to_numpy(zero_copy_only=False)
    before, after = removes[first], ~removes[last]  # the key's row existed before, and after
    updated = before & after & ~same
    return _labelled(
        [
            (feed.take(first[before & ~after]), DELETE),
            (feed.take(first[updated]), PREIMAGE),
            (feed.take(last[updated]), POSTIMAGE),
            (feed.take(last[~before & after]), INSERT),
        ]
    )


def change_files_of(storage: Storage, table_key: str, versions: Iterable[int]) -> set[str]:
    """The change data files (relative paths) the commits ``versions`` of a table carry: what
    ``vacuum`` keeps while it keeps those versions (Delta's own vacuum takes them for unused)."""
    import json

    keys = [commit_key(table_key, v) for v in sorted(versions)]
    names = set()
    for data in storage.get_keys(keys):
        for line in (data or b"").decode().splitlines():
            if line.startswith('{"cdc"'):
                names.add(json.loads(line)["cdc"]["path"])
    return names


def change_file_action(table: ChangedTable, changes: pa.Table) -> tuple[dict[str, Any], str, int]:
    """Write one commit's changes as a change data file of the table folder; its ``cdc``
    action, its URI and its size."""
    import io

    import pyarrow.parquet as pq

    relative = f"{CHANGE_DATA_FOLDER}/cdc-{uuid.uuid4().hex}.snappy.parquet"
    buffer = io.BytesIO()
    pq.write_table(changes, buffer, compression="snappy")
    data = buffer.getvalue()
    uri = f"{table.uri.rstrip('/')}/{relative}"
    table.storage.put(table.storage.key_of(uri), data)
    body = {"path": relative, "partitionValues": {}, "size": len(data), "dataChange": False}
    return {"cdc": body}, uri, len(data)
