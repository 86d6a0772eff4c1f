"""The Ray engine: Ray starts only when something asks for it (see ``runtime``).

Reads are lazy Ray Datasets with one read task per data file. Writes run the Dataset and let
each Ray task write its blocks as Parquet in the table's declared types; the driver only
collects the file descriptions and commits them. MERGE and DELETE keep the source in the
object store; a task per file that can hold its keys finds the matching rows, and either
returns them as a deletion vector (merge-on-read tables; the source is then written as new
files) or rewrites the file, with the same row-level logic as the local engine.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from workbench.core.base.types import DatasetType
from workbench.core.data.engine import Engine
from workbench.core.delta.commits import vectors_enabled
from workbench.core.delta.data_files import (
    Rewrite,
    WrittenFile,
    discard,
    discard_batch,
    new_batch,
    write_part,
)
from workbench.core.delta.deletion_vectors import deserialize
from workbench.core.delta.marking import discarded_on_failure, mark_more_deleted
from workbench.core.delta.snapshot import DataFile, candidate_files, plain_schema
from workbench.core.schema.conform import conform
from workbench.core.schema.merge_keys import unique_keys
from workbench.core.schema.merge_order import Ranking, refuse_ordered_duplicates
from workbench.core.schema.table_schema import Schema
from workbench.core.storage.store import storage_for
from workbench.engines.daft.engine import leading_files
from workbench.engines.local.rewrite import delete_rows, key_range, match_rows, merge_rows
from workbench.engines.ray import runtime

if TYPE_CHECKING:
    import pyarrow as pa
    import ray.data

    from workbench.core.catalog.tables import OpenTable
    from workbench.core.inference.model import Model
    from workbench.core.inference.plan import PredictPlan
    from workbench.core.storage.store import Storage

POSITION = "__wb_position"


class RayEngine(Engine):
    """Ray Data on a local Ray instance or a cluster."""

    name = "ray"
    applies_deletion_vectors = True  # reads filter each file; MERGE and DELETE write vectors
    clustered = True
    data_modules: ClassVar[tuple[str, ...]] = ("ray",)
    dataset_types: ClassVar[tuple[DatasetType, ...]] = (DatasetType.RAY_DATASET,)

    def __init__(self, settings: Mapping[str, Any] | None = None):
        super().__init__(settings)
        runtime.ensure_ray()

    @classmethod
    def check_settings(cls, settings: Mapping[str, Any]) -> dict[str, Any]:
        return runtime.check(settings)

    def read(
        self,
        table: OpenTable,
        read_as: DatasetType,
        columns: list[str] | None,
        limit: int | None,
        path_column: str | None = None,
    ) -> ray.data.Dataset:
        import pyarrow as pa
        import ray.data

        from workbench.engines.ray.datasource import TableFiles

        files = leading_files(table.files, limit)
        if not files:
            empty = plain_schema(table).empty_table()
            empty = empty.select(columns) if columns else empty
            if path_column:
                empty = empty.append_column(path_column, pa.array([], pa.string()))
            frame = ray.data.from_arrow(empty)
        else:
            storage = table.loc.catalog.storage
            frame = ray.data.read_datasource(
                TableFiles(files, table.uri, plain_schema(table), columns, storage, path_column)
            )
        return frame.limit(limit) if limit is not None else frame

    def source(self, data: ray.data.Dataset) -> ray.data.Dataset:
        """``data`` with Arrow blocks: pandas blocks (``from_pandas``, pandas batches) are
        converted in Ray tasks as local pandas data is, so their schema is Arrow's."""
        import pyarrow as pa

        if isinstance(_schema_of(data).base_schema, pa.Schema):
            return data
        return data.map_batches(_arrow_block, batch_format=None, batch_size=None)

    def schema(self, source: ray.data.Dataset) -> pa.Schema:
        return _schema_of(source).base_schema

    def cast_exact(
        self, source: ray.data.Dataset, targets: Mapping[str, pa.DataType]
    ) -> tuple[ray.data.Dataset, list[str]]:
        """Each block is checked in its own task (one flag per column comes back); the cast
        runs lazily in the tasks that write."""
        checks = source.map_batches(
            _inexact_block, batch_format="pyarrow", batch_size=None, fn_kwargs={"targets": targets}
        ).take_all()
        exact = {n: t for n, t in targets.items() if not any(c[n] for c in checks)}
        if not exact:
            return source, []
        cast = source.map_batches(
            _cast_block, batch_format="pyarrow", batch_size=None, fn_kwargs={"targets": exact}
        )
        return cast, list(exact)

    def keyed(
        self,
        source: ray.data.Dataset,
        keys: list[str],
        table: str,
        dedupe: str | None,
        order: Ranking = (),
    ) -> ray.data.Dataset:
        """Keys are checked on the driver (only the key columns travel); the blocks stay in
        the object store and, when de-duplicating, are filtered there."""
        import pyarrow as pa
        import ray
        import ray.data

        blocks = source.to_arrow_refs()
        parts = ray.get([_numbered_keys.remote(ref, keys, i) for i, ref in enumerate(blocks)])
        numbered = pa.concat_tables(parts) if parts else pa.table({})
        if not numbered.num_rows:
            return source
        kept = unique_keys(numbered, keys, table, dedupe)
        if kept.num_rows != numbered.num_rows:
            refuse_ordered_duplicates(order, self.name, table)
        if kept.num_rows == numbered.num_rows:
            return ray.data.from_arrow_refs(blocks)
        by_block = kept.group_by("__wb_block").aggregate([(POSITION, "list")]).to_pylist()
        rows = {r["__wb_block"]: r[f"{POSITION}_list"] for r in by_block}
        filtered = [_take.remote(ref, rows.get(i, [])) for i, ref in enumerate(blocks)]
        return ray.data.from_arrow_refs(filtered)

    def write_files(
        self, source: ray.data.Dataset, schema: Schema, folder: str
    ) -> list[WrittenFile]:
        batch = new_batch()
        try:
            records = source.map_batches(
                _write_block,
                batch_format="pyarrow",
                batch_size=None,
                fn_kwargs={
                    "schema": schema,
                    "folder": folder,
                    "batch": batch,
                    "storage": storage_for(folder),
                },
            ).take_all()
        except BaseException:
            discard_batch(folder, batch)
            raise
        return sorted((WrittenFile(*json.loads(r["file"])) for r in records), key=lambda f: f.uri)

    def merge(
        self, table: OpenTable, source: ray.data.Dataset, schema: Schema, keys: list[str]
    ) -> Rewrite:
        import numpy as np
        import ray

        present = Schema(f for f in schema if f.name in source.columns())
        blocks = source.to_arrow_refs()
        rows = sum(ray.get([_count.remote(ref) for ref in blocks]))
        rewrite = Rewrite()
        if not rows:
            return rewrite
        candidates = self._candidates(table, blocks, present, keys)
        if vectors_enabled(table.properties):
            if present.names == schema.names:
                return self._merge_on_read(table, blocks, rows, schema, keys, candidates)
            return self._partial_merge_on_read(
                table, blocks, rows, schema, present, keys, candidates
            )
        batch = new_batch()
        try:
            results = ray.get(
                [
                    _merge_file.remote(
                        f,
                        plain_schema(table),
                        schema,
                        present,
                        keys,
                        blocks,
                        table.uri,
                        batch,
                        table.loc.catalog.storage,
                    )
                    for f in candidates
                ]
            )
            found = np.zeros(rows, dtype=bool)
            for f, (written, seen) in zip(candidates, results, strict=True):
                if written is not None or seen.any():
                    rewrite.removed.append(f)
                    rewrite.updated += int(seen.sum())
                    rewrite.written += [written] if written is not None else []
                    found |= seen
            inserted = ray.get(
                _write_unmatched.remote(
                    blocks, found, present, schema, table.uri, batch, table.loc.catalog.storage
                )
            )
            rewrite.written += [inserted] if inserted is not None else []
        except BaseException:
            discard(rewrite.written)
            discard_batch(table.uri, batch)
            raise
        return rewrite

    def delete(self, table: OpenTable, source: ray.data.Dataset, keys: list[str]) -> Rewrite:
        import ray

        key_schema = Schema(f for f in table.schema if f.name in keys)
        blocks = source.select_columns(keys).to_arrow_refs()
        if not sum(ray.get([_count.remote(ref) for ref in blocks])):
            return Rewrite()
        candidates = self._candidates(table, blocks, key_schema, keys)
        if vectors_enabled(table.properties):
            rewrite = Rewrite()
            with discarded_on_failure(rewrite):
                self._mark_matches(table, blocks, keys, candidates, rewrite)
            return rewrite
        batch = new_batch()
        rewrite = Rewrite()
        try:
            results = ray.get(
                [
                    _delete_from_file.remote(
                        f,
                        plain_schema(table),
                        table.schema,
                        key_schema,
                        keys,
                        blocks,
                        table.uri,
                        batch,
                        table.loc.catalog.storage,
                    )
                    for f in candidates
                ]
            )
            for f, (changed, written) in zip(candidates, results, strict=True):
                if changed:
                    rewrite.removed.append(f)
                    rewrite.written += [written] if written is not None else []
        except BaseException:
            discard_batch(table.uri, batch)
            raise
        return rewrite

    def _merge_on_read(
        self,
        table: OpenTable,
        blocks: list[Any],
        rows: int,
        schema: Schema,
        keys: list[str],
        candidates: list[DataFile],
    ) -> Rewrite:
        """MERGE by deletion vectors: the matched rows are marked where they are and Ray tasks
        write the source blocks (updated and new rows) as new files."""
        import ray.data

        rewrite = Rewrite()
        with discarded_on_failure(rewrite):
            found = self._mark_matches(table, blocks, keys, candidates, rewrite, rows)
            rewrite.updated = int(found.sum())
            rewrite.written += self.write_files(ray.data.from_arrow_refs(blocks), schema, table.uri)
        return rewrite

    @staticmethod
    def _partial_merge_on_read(
        table: OpenTable,
        blocks: list[Any],
        rows: int,
        schema: Schema,
        present: Schema,
        keys: list[str],
        candidates: list[DataFile],
    ) -> Rewrite:
        """MERGE by deletion vectors of a source lacking some columns: a task per touched file
        marks its matched rows and writes their new values (the missing columns from the old
        rows); one more task writes the source rows no file held."""
        import numpy as np
        import ray

        missing = Schema(f for f in schema if f.name not in present.names)
        storage, stored = table.loc.catalog.storage, plain_schema(table)
        batch = new_batch()
        rewrite = Rewrite()
        try:
            with discarded_on_failure(rewrite):
                results = ray.get(
                    [
                        _merge_matched.remote(
                            f,
                            stored,
                            present,
                            missing,
                            schema,
                            keys,
                            blocks,
                            table.uri,
                            batch,
                            storage,
                        )
                        for f in candidates
                    ]
                )
                found = np.zeros(rows, dtype=bool)
                for f, (matched, seen, written) in zip(candidates, results, strict=True):
                    if written is None:
                        continue
                    found |= seen
                    rewrite.updated += int(seen.sum())
                    rewrite.written.append(written)
                    mark_more_deleted(table, f, deserialize(matched), rewrite)
                inserted = ray.get(
                    _write_unmatched.remote(
                        blocks, found, present, schema, table.uri, batch, storage
                    )
                )
                rewrite.written += [inserted] if inserted is not None else []
        except BaseException:
            discard_batch(table.uri, batch)
            raise
        return rewrite

    @staticmethod
    def _mark_matches(
        table: OpenTable,
        blocks: list[Any],
        keys: list[str],
        candidates: list[DataFile],
        rewrite: Rewrite,
        rows: int = 0,
    ) -> Any:
        """Mark in ``rewrite`` the live rows of ``candidates`` holding a key of the source
        ``blocks`` (a task per file finds them; each returns a vector, not rows); which of the
        ``rows`` source rows matched."""
        import numpy as np
        import ray

        key_schema = Schema(f for f in table.schema if f.name in keys)
        storage = table.loc.catalog.storage
        stored = plain_schema(table)
        matches = ray.get(
            [
                _match_file.remote(f, stored, key_schema, keys, blocks, table.uri, storage)
                for f in candidates
            ]
        )
        found = np.zeros(rows, dtype=bool)
        for f, (matched, seen) in zip(candidates, matches, strict=True):
            deleted = deserialize(matched)
            if not len(deleted):
                continue
            if rows:
                found |= seen
            mark_more_deleted(table, f, deleted, rewrite)
        return found

    @staticmethod
    def _candidates(
        table: OpenTable, blocks: list[Any], schema: Schema, keys: list[str]
    ) -> list[DataFile]:
        import ray

        bounds = [b for b in ray.get([_key_range.remote(r, schema, keys) for r in blocks]) if b]
        if not bounds:
            return []
        low = {k: min(b[0][k] for b in bounds) for k in keys}
        high = {k: max(b[1][k] for b in bounds) for k in keys}
        return candidate_files(table.files, low, high)

    def predict(
        self, source: ray.data.Dataset, model: Model, plan: PredictPlan
    ) -> Iterator[pa.Table]:
        from workbench.engines.ray.predict import predict_dataset

        return predict_dataset(source, model, plan)

    def to_arrow(self, data: ray.data.Dataset) -> pa.Table:
        import pyarrow as pa
        import ray

        tables = ray.get(data.to_arrow_refs())
        return pa.concat_tables(tables) if tables else data.schema().base_schema.empty_table()

    def from_arrow(self, table: pa.Table) -> ray.data.Dataset:
        import ray.data

        return ray.data.from_arrow(table)


class _Task:
    """A module-level function run as a Ray task (``_task.remote(...)``), declared with Ray on
    first use."""

    def __init__(self, function: Any):
        self.function = function
        self._task: Any = None

    def remote(self, *args: Any) -> Any:
        import ray

        if self._task is None:
            self._task = ray.remote(self.function)
        return self._task.remote(*args)


def _source(blocks: list[Any], schema: Schema) -> pa.Table:
    """The source blocks (object references passed inside a list) as one table in ``schema``."""
    import pyarrow as pa
    import ray

    return conform(pa.concat_tables(ray.get(blocks)), schema, fill_missing=False, table="source")


def _schema_of(data: ray.data.Dataset) -> Any:
    """The Dataset's schema; ``SchemaValidationError`` when Ray has none (an empty dataset
    made from pandas keeps no columns)."""
    from workbench.core.base.errors import SchemaValidationError

    schema = data.schema()
    if schema is None:
        raise SchemaValidationError(
            "The Ray Dataset has no schema: Ray keeps none for an empty dataset made from "
            "pandas. Write ray.data.from_arrow(table) of an empty Arrow table (it keeps its "
            "columns), or skip the write."
        )
    return schema


def _arrow_block(block: Any) -> pa.Table:
    """A block as Arrow (a pandas block converted with its dtypes noted, as local data is)."""
    import pyarrow as pa

    from workbench.core.data.pandas_io import arrow_from_pandas

    return block if isinstance(block, pa.Table) else arrow_from_pandas(block)


def _inexact_block(block: pa.Table, targets: Mapping[str, pa.DataType]) -> pa.Table:
    """One row: for each column of ``targets``, whether a value of the block does not convert
    to its type exactly."""
    import pyarrow as pa

    from workbench.core.schema.integral_floats import exactly_cast

    _, cast = exactly_cast(block, targets)
    return pa.table({name: [name not in cast] for name in targets})


def _cast_block(block: pa.Table, targets: Mapping[str, pa.DataType]) -> pa.Table:
    from workbench.core.schema.integral_floats import exactly_cast

    return exactly_cast(block, targets)[0]


def _write_block(
    block: pa.Table, schema: Schema, folder: str, batch: str, storage: Storage
) -> pa.Table:
    import pyarrow as pa

    if not block.num_rows:
        return pa.table({"file": pa.array([], pa.string())})
    written = write_part(block, schema, folder, 0, batch, storage)
    return pa.table({"file": [json.dumps([written.uri, written.size, written.stats])]})


def _numbered_keys_impl(block: pa.Table, keys: list[str], index: int) -> pa.Table:
    import pyarrow as pa

    numbered = block.select(keys).append_column(
        POSITION, pa.array(range(block.num_rows), pa.int64())
    )
    return numbered.append_column("__wb_block", pa.array([index] * block.num_rows, pa.int64()))


def _take_impl(block: pa.Table, rows: list[int]) -> pa.Table:
    return block.take(sorted(rows))


def _count_impl(block: pa.Table) -> int:
    return block.num_rows


def _key_range_impl(block: pa.Table, schema: Schema, keys: list[str]) -> Any:
    if not block.num_rows:
        return None
    return key_range(conform(block.select(keys), schema, False, "source"), keys)


def _matches(
    f: DataFile,
    stored: pa.Schema,
    columns: list[str],
    keys: list[str],
    source: pa.Table,
    folder: str,
    storage: Storage,
) -> tuple[pa.Table, Any, Any]:
    """The live rows of file ``f`` (``columns`` and their positions) whose keys are in
    ``source``, the source row each matched, and which source rows matched one."""
    import numpy as np
    import pyarrow.compute as pc

    from workbench.core.delta.snapshot import live_file_rows

    rows = live_file_rows(f, folder, stored, storage, columns, POSITION)
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


def _match_file_impl(
    f: DataFile,
    stored: pa.Schema,
    key_schema: Schema,
    keys: list[str],
    blocks: list[pa.Table],
    folder: str,
    storage: Storage,
) -> tuple[bytes, Any]:
    """The live rows of file ``f`` whose keys are in the source blocks, as a serialized vector,
    and which source rows matched one."""
    source = _source(blocks, key_schema)
    old, _, seen = _matches(f, stored, keys, keys, source, folder, storage)
    return _vector_of(old), seen


def _merge_matched_impl(
    f: DataFile,
    stored: pa.Schema,
    present: Schema,
    missing: Schema,
    schema: Schema,
    keys: list[str],
    blocks: list[pa.Table],
    folder: str,
    batch: str,
    storage: Storage,
) -> tuple[bytes, Any, WrittenFile | None]:
    """For a source lacking the ``missing`` columns: the live rows of ``f`` whose keys the
    source holds, as a serialized vector; the source's values for them with the missing
    columns taken from those rows, written as a new file (None if no row matched); and which
    source rows matched."""
    source = _source(blocks, present)
    columns = [*keys, *missing.names]
    old, taken, seen = _matches(f, stored, columns, keys, source, folder, storage)
    if not len(taken):
        return b"", seen, None
    updated = source.take(taken)
    for name in missing.names:
        updated = updated.append_column(name, old.column(name))
    written = write_part(updated, schema, folder, 0, batch, storage)
    return _vector_of(old), seen, written


def _merge_file_impl(
    f: DataFile,
    stored: pa.Schema,
    schema: Schema,
    present: Schema,
    keys: list[str],
    blocks: list[pa.Table],
    folder: str,
    batch: str,
    storage: Storage,
) -> tuple[WrittenFile | None, Any]:
    import pyarrow.compute as pc

    from workbench.core.delta.snapshot import live_file_rows

    source = _source(blocks, present)
    merged, seen = merge_rows(live_file_rows(f, folder, stored, storage), source, schema, keys)
    matched = pc.fill_null(seen, False).to_numpy(zero_copy_only=False)
    if merged is None:
        return None, matched
    written = write_part(merged, schema, folder, 0, batch, storage) if merged.num_rows else None
    return written, matched


def _write_unmatched_impl(
    blocks: list[pa.Table],
    found: Any,
    present: Schema,
    schema: Schema,
    folder: str,
    batch: str,
    storage: Storage,
) -> WrittenFile | None:
    import pyarrow as pa

    inserted = _source(blocks, present).filter(pa.array(~found))
    if not inserted.num_rows:
        return None
    return write_part(inserted, schema, folder, 1, batch, storage)


def _delete_from_file_impl(
    f: DataFile,
    stored: pa.Schema,
    schema: Schema,
    key_schema: Schema,
    keys: list[str],
    blocks: list[pa.Table],
    folder: str,
    batch: str,
    storage: Storage,
) -> tuple[bool, WrittenFile | None]:
    from workbench.core.delta.snapshot import live_file_rows

    source = _source(blocks, key_schema)
    kept = delete_rows(live_file_rows(f, folder, stored, storage), source, keys)
    if kept is None:
        return False, None
    return True, write_part(kept, schema, folder, 0, batch, storage) if kept.num_rows else None


_numbered_keys = _Task(_numbered_keys_impl)
_take = _Task(_take_impl)
_count = _Task(_count_impl)
_key_range = _Task(_key_range_impl)
_match_file = _Task(_match_file_impl)
_merge_file = _Task(_merge_file_impl)
_merge_matched = _Task(_merge_matched_impl)
_write_unmatched = _Task(_write_unmatched_impl)
_delete_from_file = _Task(_delete_from_file_impl)
