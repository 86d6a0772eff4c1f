"""MERGE and DELETE on Ray with the source kept in the object store: no task and no driver
holds the whole source. The driver learns each block's row count and key range, then:

- merge-on-read MERGE: a task per source block finds the table rows holding its keys (in the
  files whose statistics allow them), returns them as deletion-vector positions, and writes the
  block's rows (updated rows completed with the old rows' other columns, then new rows) as one
  file;
- copy-on-write MERGE and DELETE: a task per table file that can hold source keys rewrites it
  (or, merge-on-read DELETE, returns the rows to mark) with only the blocks whose key ranges
  overlap it; a task per block then writes its rows no file held.

Only counts, positions and file descriptions reach the driver. Row-level logic is the local
engine's (``engines.local.rewrite``)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from workbench.core.data.arrow_merge import delete_rows, key_range, match_rows, merge_rows
from workbench.core.delta.commits import vectors_enabled
from workbench.core.delta.data_files import DataFile, Rewrite, WrittenFile, discard_batch, new_batch
from workbench.core.delta.data_files import write_part as write_file
from workbench.core.delta.deletion_vectors import deserialize
from workbench.core.delta.marking import discarded_on_failure, mark_more_deleted
from workbench.core.delta.reading import live_file_rows, plain_schema
from workbench.core.delta.snapshot import candidate_files
from workbench.core.schema.conform import conform
from workbench.core.schema.table_schema import Schema
from workbench.engines.ray.tasks import Task

if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa

    from workbench.core.catalog.locations import OpenTable
    from workbench.core.storage.store import Storage

POSITION = "__wb_position"


@dataclass(frozen=True)
class _Block:
    """A source block in the object store, with its row count and key range."""

    ref: Any
    index: int
    rows: int
    low: dict[str, Any]
    high: dict[str, Any]

    def may_hold_keys_of(self, f: DataFile) -> bool:
        """Whether file ``f``'s statistics allow one of the block's keys."""
        return bool(candidate_files([f], self.low, self.high))


@dataclass(frozen=True)
class _Target:
    """What every task needs about the table: its folder, stored schema and storage, and the
    batch naming the files this change writes."""

    folder: str
    stored: pa.Schema
    storage: Storage
    batch: str


def merge_blocks(
    table: OpenTable, blocks: list[Any], schema: Schema, present: Schema, keys: list[str]
) -> Rewrite:
    """Upsert source ``blocks`` (unique keys; the ``present`` columns of ``schema``)."""
    source = _described(blocks, present, keys)
    rewrite = Rewrite()
    if not source:
        return rewrite
    target = _Target(table.uri, plain_schema(table), table.loc.catalog.storage, new_batch())
    with _cleaned_on_failure(rewrite, target):
        if vectors_enabled(table.properties):
            _merge_on_read(table, source, schema, present, keys, target, rewrite)
        else:
            _merge_by_rewrite(table, source, schema, present, keys, target, rewrite)
    return rewrite


def delete_keys(table: OpenTable, blocks: list[Any], keys: list[str]) -> Rewrite:
    """Delete the rows holding the keys of source ``blocks`` (key columns only)."""
    import ray

    key_schema = Schema(f for f in table.schema if f.name in keys)
    source = _described(blocks, key_schema, keys)
    rewrite = Rewrite()
    target = _Target(table.uri, plain_schema(table), table.loc.catalog.storage, new_batch())
    files = _touched_files(table, source)
    if not files:
        return rewrite
    with _cleaned_on_failure(rewrite, target):
        if vectors_enabled(table.properties):
            found = ray.get(
                [_match_file.remote(f, key_schema, keys, refs, target) for f, refs in files]
            )
            for (f, _), matched in zip(files, found, strict=True):
                if len(deleted := deserialize(matched)):
                    mark_more_deleted(table, f, deleted, rewrite)
            return rewrite
        results = ray.get(
            [
                _delete_from_file.remote(f, table.schema, key_schema, keys, refs, target)
                for f, refs in files
            ]
        )
        for (f, _), (changed, written) in zip(files, results, strict=True):
            if changed:
                rewrite.removed.append(f)
                rewrite.written += [written] if written is not None else []
    return rewrite


def _merge_on_read(
    table: OpenTable,
    source: list[_Block],
    schema: Schema,
    present: Schema,
    keys: list[str],
    target: _Target,
    rewrite: Rewrite,
) -> None:
    """A task per block marks the rows its keys replace and writes the block's new rows."""
    import ray

    results = ray.get(
        [
            _merge_block.remote(
                b.ref,
                b.index,
                candidate_files(table.files, b.low, b.high),
                present,
                schema,
                keys,
                target,
            )
            for b in source
        ]
    )
    deleted: dict[str, tuple[DataFile, Any]] = {}
    for matches, updated, written in results:
        rewrite.updated += updated
        rewrite.written += [written] if written is not None else []
        for f, vector in matches:
            rows = deserialize(vector)
            earlier = deleted.get(f.path)
            deleted[f.path] = (f, rows if earlier is None else earlier[1] | rows)
    for f, rows in deleted.values():
        mark_more_deleted(table, f, rows, rewrite)


def _merge_by_rewrite(
    table: OpenTable,
    source: list[_Block],
    schema: Schema,
    present: Schema,
    keys: list[str],
    target: _Target,
    rewrite: Rewrite,
) -> None:
    """A task per touched file rewrites it with the overlapping blocks merged in; a task per
    block then writes the rows no file held."""
    import numpy as np
    import ray

    files = _touched_files(table, source)
    results = ray.get(
        [_merge_file.remote(f, schema, present, keys, refs, target) for f, refs in files]
    )
    found = {b.index: np.zeros(b.rows, dtype=bool) for b in source}
    for (f, _), (written, seen) in zip(files, results, strict=True):
        if written is not None or seen.any():
            rewrite.removed.append(f)
            rewrite.updated += int(seen.sum())
            rewrite.written += [written] if written is not None else []
            start = 0
            for b in (b for b in source if b.may_hold_keys_of(f)):
                found[b.index] |= seen[start : start + b.rows]
                start += b.rows
    inserted = ray.get(
        [
            _write_unmatched.remote(b.ref, b.index, found[b.index], present, schema, target)
            for b in source
            if not found[b.index].all()
        ]
    )
    rewrite.written += [w for w in inserted if w is not None]


def _touched_files(table: OpenTable, source: list[_Block]) -> list[tuple[DataFile, list[Any]]]:
    """The table files that can hold a source key, each with the blocks that may hold its
    keys (references inside a list, so a task fetches them itself)."""
    pairs = []
    for f in table.files:
        refs = [b.ref for b in source if b.may_hold_keys_of(f)]
        if refs:
            pairs.append((f, refs))
    return pairs


def _described(blocks: list[Any], schema: Schema, keys: list[str]) -> list[_Block]:
    """The non-empty blocks with their row counts and key ranges (computed in their tasks)."""
    import ray

    summaries = ray.get([_summary.remote(ref, schema, keys) for ref in blocks])
    return [
        _Block(ref, i, rows, low, high)
        for i, (ref, (rows, low, high)) in enumerate(zip(blocks, summaries, strict=True))
        if rows
    ]


@contextmanager
def _cleaned_on_failure(rewrite: Rewrite, target: _Target) -> Iterator[None]:
    """Delete what a failed change wrote: the files it reported, and any file of its batch a
    task wrote before another one failed."""
    try:
        with discarded_on_failure(rewrite):
            yield
    except BaseException:
        discard_batch(target.folder, target.batch)
        raise


# ------------------------------------------------------------------------------------- tasks
def _summary_impl(block: pa.Table, schema: Schema, keys: list[str]) -> tuple[int, Any, Any]:
    if not block.num_rows:
        return 0, None, None
    return (block.num_rows, *key_range(conform(block.select(keys), schema, False, "source"), keys))


def _source(blocks: list[Any], schema: Schema) -> pa.Table:
    """Source blocks (references passed inside a list) as one table in ``schema``."""
    import pyarrow as pa
    import ray

    return conform(pa.concat_tables(ray.get(blocks)), schema, fill_missing=False, table="source")


def _matches(
    f: DataFile, columns: list[str], keys: list[str], source: pa.Table, target: _Target
) -> tuple[pa.Table, Any, np.ndarray]:
    """The live rows of file ``f`` (``columns`` and their positions) whose keys are in
    ``source``, the source row each matched, and which source rows matched one."""
    import numpy as np
    import pyarrow.compute as pc

    rows = live_file_rows(f, target.folder, target.stored, target.storage, columns, POSITION)
    index = match_rows(rows.select(keys), source.select(keys), keys)
    taken = index.drop_null()
    seen = np.zeros(source.num_rows, dtype=bool)
    seen[taken.to_numpy()] = True
    return rows.filter(pc.is_valid(index)), taken, seen


def _vector_of(rows: pa.Table) -> bytes:
    """The positions of ``rows`` as a serialized deletion vector."""
    from pyroaring import BitMap64

    from workbench.core.delta.deletion_vectors import serialize

    return serialize(BitMap64(rows.column(POSITION).to_numpy()))


def _merge_block_impl(
    block: pa.Table,
    index: int,
    files: list[DataFile],
    present: Schema,
    schema: Schema,
    keys: list[str],
    target: _Target,
) -> tuple[list[tuple[DataFile, bytes]], int, WrittenFile | None]:
    """Merge-on-read for one block: the rows of ``files`` its keys replace (as vectors), how
    many, and the block's rows written as one file (an updated row takes the columns the
    source lacks from the row it replaces; a new row takes their defaults)."""
    import numpy as np
    import pyarrow as pa

    source = conform(block, present, fill_missing=False, table="source")
    missing = [f.name for f in schema if f.name not in present.names]
    found = np.zeros(source.num_rows, dtype=bool)
    matches, updated = [], []
    for f in files:
        old, taken, seen = _matches(f, [*keys, *missing], keys, source, target)
        if not len(taken):
            continue
        found |= seen
        matches.append((f, _vector_of(old)))
        if missing:
            completed = source.take(taken)
            for name in missing:
                completed = completed.append_column(name, old.column(name))
            updated.append(conform(completed, schema, fill_missing=False, table="source"))
    rows = source
    if missing:
        fresh = conform(source.filter(pa.array(~found)), schema, True, "source")
        rows = pa.concat_tables([*updated, fresh])
    written = write_file(rows, schema, target.folder, index, target.batch, target.storage)
    return matches, int(found.sum()), written


def _match_file_impl(
    f: DataFile, key_schema: Schema, keys: list[str], blocks: list[Any], target: _Target
) -> bytes:
    """The live rows of ``f`` whose keys the blocks hold, as a serialized vector."""
    old, _, _ = _matches(f, keys, keys, _source(blocks, key_schema), target)
    return _vector_of(old)


def _merge_file_impl(
    f: DataFile,
    schema: Schema,
    present: Schema,
    keys: list[str],
    blocks: list[Any],
    target: _Target,
) -> tuple[WrittenFile | None, np.ndarray]:
    """File ``f`` rewritten with the blocks merged in (None when no key matched, or no row is
    left), and which rows of the blocks (in order) it held."""
    import pyarrow.compute as pc

    current = live_file_rows(f, target.folder, target.stored, target.storage)
    merged, seen = merge_rows(current, _source(blocks, present), schema, keys)
    matched = pc.fill_null(seen, False).to_numpy(zero_copy_only=False)
    if merged is None or not merged.num_rows:
        return None, matched
    return write_file(merged, schema, target.folder, 0, target.batch, target.storage), matched


def _write_unmatched_impl(
    block: pa.Table, index: int, found: np.ndarray, present: Schema, schema: Schema, target: _Target
) -> WrittenFile | None:
    """The block's rows no table file held, written as a new file."""
    import pyarrow as pa

    inserted = conform(block, present, fill_missing=False, table="source").filter(pa.array(~found))
    if not inserted.num_rows:
        return None
    return write_file(inserted, schema, target.folder, index, target.batch, target.storage)


def _delete_from_file_impl(
    f: DataFile,
    schema: Schema,
    key_schema: Schema,
    keys: list[str],
    blocks: list[Any],
    target: _Target,
) -> tuple[bool, WrittenFile | None]:
    """File ``f`` rewritten without the rows holding the blocks' keys: whether any did, and
    the new file (None when no row is left)."""
    current = live_file_rows(f, target.folder, target.stored, target.storage)
    kept = delete_rows(current, _source(blocks, key_schema), keys)
    if kept is None:
        return False, None
    if not kept.num_rows:
        return True, None
    return True, write_file(kept, schema, target.folder, 0, target.batch, target.storage)


_summary = Task(_summary_impl)
_merge_block = Task(_merge_block_impl)
_match_file = Task(_match_file_impl)
_merge_file = Task(_merge_file_impl)
_write_unmatched = Task(_write_unmatched_impl)
_delete_from_file = Task(_delete_from_file_impl)
