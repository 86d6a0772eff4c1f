"""MERGE and DELETE by merge key on in-memory Arrow data, of the files holding the keys.

Only the files that can hold a matching key are read: candidates come from each key's min/max
statistics, then an exact match by key. Copy-on-write rewrites each file with a match (rows keep
their order; updated rows stay in place) in the table's declared types. Merge-on-read (tables
with deletion vectors on) reads only the candidates' key columns, marks the matched rows in each
file's deletion vector and writes the updated and new rows as one new file.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Any, NamedTuple

from workbench.core.data.key_index import INDEXES, find_in_column, indexable, worth_indexing
from workbench.core.delta.commits import vectors_enabled
from workbench.core.delta.data_files import DataFile, Rewrite, write_part, write_parts
from workbench.core.delta.deletion_vectors import read_vector, undeleted_mask
from workbench.core.delta.marking import discarded_on_failure, mark_deleted
from workbench.core.delta.reading import file_rows, live_table
from workbench.core.delta.snapshot import candidate_files
from workbench.core.schema.conform import conform

if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa
    from pyroaring import BitMap64

    from workbench.core.catalog.locations import OpenTable
    from workbench.core.schema.table_schema import Schema

# Matched rows fewer than a file's rows over this are checked against its vector one by one.
FEW_POSITIONS_SHARE = 64


def key_range(source: pa.Table, keys: list[str]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Each key's min and max in ``source`` (keys are never null there)."""
    import pyarrow.compute as pc

    bounds = {k: pc.min_max(source.column(k)) for k in keys}
    return (
        {k: b["min"].as_py() for k, b in bounds.items()},
        {k: b["max"].as_py() for k, b in bounds.items()},
    )


def match_rows(target: pa.Table, source: pa.Table, keys: list[str]) -> pa.Array:
    """For each target row, the index of the source row with the same key, or null."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if len(keys) == 1:
        return pc.index_in(target.column(keys[0]), value_set=source.column(keys[0]))
    position, found = "__workbench_target", "__workbench_source"
    left = target.select(keys).append_column(position, pa.array(range(target.num_rows), pa.int64()))
    right = source.select(keys).append_column(found, pa.array(range(source.num_rows), pa.int64()))
    joined = left.join(right, keys, join_type="left outer").sort_by(position)
    return joined.column(found).combine_chunks()


def _candidates(opened: OpenTable, source: pa.Table, keys: list[str]) -> list[DataFile]:
    low, high = key_range(source, keys)
    return candidate_files(opened.files, low, high)


def _read(opened: OpenTable, f: DataFile) -> pa.Table:
    """One table file in the table's current schema (columns added later read as nulls)."""
    return live_table(opened, [f], keep=False)  # a file the merge rewrites


def merge_rows(
    current: pa.Table, source: pa.Table, schema: Schema, keys: list[str]
) -> tuple[pa.Table | None, pa.Array]:
    """One file's rows with the source merged in (None when no key matches; updated rows stay
    in place), and which source rows matched."""
    import pyarrow as pa
    import pyarrow.compute as pc

    index = match_rows(current, source, keys)
    hits = pc.is_valid(index)
    seen = pc.is_in(pa.array(range(source.num_rows), pa.int64()), index.drop_null())
    if not pc.any(hits).as_py():
        return None, seen
    rows = pc.take(source, index)
    updates = {c for c in source.column_names if c not in keys}
    columns = [
        pc.if_else(hits, rows.column(c.name), current.column(c.name))
        if c.name in updates
        else current.column(c.name)
        for c in schema
    ]
    return pa.Table.from_arrays(columns, names=schema.names), seen


def delete_rows(current: pa.Table, source: pa.Table, keys: list[str]) -> pa.Table | None:
    """One file's rows without those whose keys are in the source (None when none match)."""
    import pyarrow.compute as pc

    hits = pc.is_valid(match_rows(current, source, keys))
    return current.filter(pc.invert(hits)) if pc.any(hits).as_py() else None


def merge(opened: OpenTable, source: pa.Table, schema: Schema, keys: list[str]) -> Rewrite:
    """Upsert ``source`` (unique, non-null keys; a subset of ``schema``'s columns in its types)
    by key: matched rows take the source's values for the source's columns, the rest are
    inserted (``write_part`` fills the columns they lack with defaults)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    rewrite = Rewrite()
    if not source.num_rows:
        return rewrite
    if vectors_enabled(opened.properties):
        return _merge_on_read(opened, source, schema, keys)
    found = pa.array([False] * source.num_rows)
    with discarded_on_failure(rewrite):
        for f in _candidates(opened, source, keys):
            merged, seen = merge_rows(_read(opened, f), source, schema, keys)
            if merged is not None:
                rewrite.updated += pc.sum(seen.cast(pa.int64())).as_py()
                _replace(rewrite, opened, f, merged, schema)
                found = pc.or_(found, seen)
        inserted = source.filter(pc.invert(found))
        if inserted.num_rows:
            index = len(rewrite.written)
            rewrite.written.append(
                write_part(inserted, schema, opened.uri, index, storage=opened.storage)
            )
    return rewrite


def delete(opened: OpenTable, source: pa.Table, keys: list[str]) -> Rewrite:
    """Delete the rows whose keys are in ``source`` (unique, non-null keys)."""
    rewrite = Rewrite()
    if not source.num_rows:
        return rewrite
    if vectors_enabled(opened.properties):
        return _delete_on_read(opened, source, keys)
    with discarded_on_failure(rewrite):
        for f in _candidates(opened, source, keys):
            kept = delete_rows(_read(opened, f), source, keys)
            if kept is not None:
                _replace(rewrite, opened, f, kept, opened.schema)
    return rewrite


def _replace(
    rewrite: Rewrite, opened: OpenTable, old: DataFile, data: pa.Table, schema: Schema
) -> None:
    """Swap a file for its rewritten rows (none: the file is only removed)."""
    rewrite.removed.append(old)
    if data.num_rows:
        index = len(rewrite.written)
        rewrite.written.append(write_part(data, schema, opened.uri, index, storage=opened.storage))


def _matches(opened: OpenTable, f: DataFile, source: pa.Table, keys: list[str]) -> MatchedRows:
    """The rows of file ``f`` (by position) whose keys are in ``source``, from the file's key
    index (single integer keys) or its key columns; rows its deletion vector already deletes
    never match (the vector is read only when a key matched)."""
    import numpy as np
    import pyarrow.compute as pc

    if _indexed(opened, keys):
        wanted = source.column(keys[0]).to_numpy(zero_copy_only=False)
        column = partial(_key_column, opened, f, keys[0])
        store = opened.storage.identity
        if INDEXES.has(store, f.absolute, f.size) or worth_indexing(f.rows, len(wanted)):
            positions, sources = INDEXES.get(store, f.absolute, f.size, column).find(wanted)
        else:
            values = column().to_numpy(zero_copy_only=False)
            positions, sources = find_in_column(values, wanted)
    else:
        found = match_rows(file_rows(opened, f, keys), source, keys)
        positions = np.flatnonzero(pc.is_valid(found).to_numpy(zero_copy_only=False))
        sources = found.to_numpy(zero_copy_only=False)[positions].astype(np.int64)
    deleted = None
    if f.deletion_vector and len(positions):  # a file no key matched needs no vector read
        deleted = read_vector(opened.uri, f.deletion_vector, opened.storage)
        live = _not_deleted(positions, deleted, f.rows)
        positions, sources = positions[live], sources[live]
    return MatchedRows(positions, sources, deleted)


def _not_deleted(positions: np.ndarray, deleted: BitMap64, rows: int) -> np.ndarray:
    """Which of a file's row ``positions`` the vector ``deleted`` leaves: a lookup each for a
    few (a small MERGE into a file whose vector has grown), a mask over the file for many."""
    import numpy as np

    if len(positions) * FEW_POSITIONS_SHARE < rows:
        found = (p not in deleted for p in positions.tolist())
        return np.fromiter(found, dtype=bool, count=len(positions))
    return undeleted_mask(rows, deleted)[positions]


def _indexed(opened: OpenTable, keys: list[str]) -> bool:
    """True when files are matched through key indexes (a single integer key)."""
    return len(keys) == 1 and indexable(opened.schema.field(keys[0]).base.type)


def _key_column(opened: OpenTable, f: DataFile, key: str) -> pa.ChunkedArray:
    return file_rows(opened, f, [key]).column(0)


def _index_side_by_side(
    opened: OpenTable, files: list[DataFile], source: pa.Table, keys: list[str]
) -> None:
    """Make the key indexes matching ``files`` will use at once, side by side (a first
    change to a table reads each big file's keys once, all files together)."""
    if not _indexed(opened, keys):
        return
    wanted = source.num_rows
    INDEXES.prepare(
        opened.storage.identity,
        [
            (f.absolute, f.size, partial(_key_column, opened, f, keys[0]))
            for f in files
            if worth_indexing(f.rows, wanted)
        ],
    )


class MatchedRows(NamedTuple):
    """Rows of one file matched by key: their positions, the matching source rows, and the rows
    the file's deletion vector deleted before (None without one, or when no key matched)."""

    positions: np.ndarray
    sources: np.ndarray
    deleted: BitMap64 | None


def _mark(opened: OpenTable, f: DataFile, matched: MatchedRows, rewrite: Rewrite) -> None:
    """File ``f`` with its matched rows deleted too (a vector, a purge or its removal)."""
    from pyroaring import BitMap64

    rows = BitMap64(matched.positions.tolist())
    if matched.deleted is not None:
        rows |= matched.deleted
    mark_deleted(opened, f, rows, rewrite)


def _merge_on_read(opened: OpenTable, source: pa.Table, schema: Schema, keys: list[str]) -> Rewrite:
    """MERGE by deletion vectors: matched rows are deleted where they are and written again,
    with the new rows, in one new file."""
    import numpy as np
    import pyarrow as pa

    rewrite = Rewrite()
    found = np.zeros(source.num_rows, dtype=bool)
    partial = set(schema.names) - set(source.column_names)
    updated: list[pa.Table] = []
    with discarded_on_failure(rewrite):
        candidates = _candidates(opened, source, keys)
        _index_side_by_side(opened, candidates, source, keys)
        for f in candidates:
            matched = _matches(opened, f, source, keys)
            if not len(matched.positions):
                continue
            found[matched.sources] = True
            rows = source.take(pa.array(matched.sources))
            if partial:  # columns the source lacks keep the file's values
                old = file_rows(opened, f, sorted(partial)).take(pa.array(matched.positions))
                rows = pa.Table.from_arrays(
                    [
                        rows.column(n) if n in source.column_names else old.column(n)
                        for n in schema.names
                    ],
                    names=schema.names,
                )
            updated.append(rows)
            _mark(opened, f, matched, rewrite)
        rewrite.updated = int(found.sum())
        new_rows = source.filter(pa.array(~found))
        if new_rows.num_rows:  # with the defaults of the columns they lack, as inserts get
            updated.append(conform(new_rows, schema, True, opened.loc.qualified))
        if updated:
            merged = pa.concat_tables(updated, promote_options="default")
            rewrite.written += write_parts(merged, schema, opened.uri, opened.storage)
    return rewrite


def _delete_on_read(opened: OpenTable, source: pa.Table, keys: list[str]) -> Rewrite:
    """DELETE by deletion vectors: only the vectors of files holding the keys change."""
    rewrite = Rewrite()
    with discarded_on_failure(rewrite):
        mark_matches(opened, source, keys, rewrite)
    return rewrite


def mark_matches(opened: OpenTable, source: pa.Table, keys: list[str], rewrite: Rewrite) -> Any:
    """Mark in ``rewrite`` every live row holding a key of ``source`` (its key columns) as
    deleted; which source rows matched one (a boolean array). Engines that run in this process
    use it for their merge-on-read changes too."""
    import numpy as np

    found = np.zeros(source.num_rows, dtype=bool)
    candidates = _candidates(opened, source, keys)
    _index_side_by_side(opened, candidates, source, keys)
    for f in candidates:
        matched = _matches(opened, f, source, keys)
        if len(matched.positions):
            found[matched.sources] = True
            _mark(opened, f, matched, rewrite)
    return found
