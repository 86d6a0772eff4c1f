"""MERGE and DELETE by merge key as file rewrites, in the table's declared types.

Only the files that can hold a matching key are read: candidates come from each key's min/max
statistics, then an exact match by key. Each file with a match is rewritten (rows keep their
order; updated rows stay in place) and replaced in one Delta commit of remove and add actions.
Writing the files here, rather than through deltalake's merge, keeps every file in the table's
declared types (deltalake's merge writes ``string_view`` columns that Daft cannot read).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

from workbench.core.conform import default_column
from workbench.core.files import write_part

if TYPE_CHECKING:
    import pyarrow as pa

    from workbench.core.schema import Schema
    from workbench.core.tables import OpenTable

# Writers may truncate long string statistics (Delta allows it), so a long maximum is not an
# upper bound; strings at least this long are treated as unbounded above.
TRUNCATED_STRING_STATS = 32


@dataclass(frozen=True)
class TableFile:
    """One data file of a table version, with its row count and its merge keys' ranges."""

    path: str  # relative and URL-encoded, as in the Delta log
    absolute: str
    size: int
    rows: int
    low: dict[str, Any]
    high: dict[str, Any]


@dataclass
class Rewrite:
    """Files a keyed rewrite replaces and writes, and the rows it matched."""

    removed: list[TableFile] = field(default_factory=list)
    written: list[str] = field(default_factory=list)  # absolute paths
    matched: int = 0  # target rows whose key was in the source

    def discard(self) -> None:
        """Delete the files written so far (the rewrite will not be committed)."""
        for path in self.written:
            with suppress(FileNotFoundError):
                os.remove(path)
        self.written.clear()


def table_files(opened: OpenTable, keys: list[str]) -> list[TableFile]:
    """The files of the opened version with row counts and each key's min/max statistics."""
    import pyarrow as pa

    actions = pa.table(opened.delta.get_add_actions(flatten=True))

    def column(name: str) -> list[Any]:
        if name in actions.column_names:
            return actions.column(name).to_pylist()
        return [None] * actions.num_rows

    lows = {k: column(f"min.{k}") for k in keys}
    highs = {k: column(f"max.{k}") for k in keys}
    return [
        TableFile(
            path,
            os.path.normpath(os.path.join(opened.uri, unquote(path))),
            size,
            rows or 0,
            {k: lows[k][i] for k in keys},
            {k: highs[k][i] for k in keys},
        )
        for i, (path, size, rows) in enumerate(
            zip(column("path"), column("size_bytes"), column("num_records"), strict=True)
        )
    ]


def candidate_files(
    files: list[TableFile], low: dict[str, Any], high: dict[str, Any]
) -> list[TableFile]:
    """Files whose statistics allow a key within the source's [low, high] range on every key;
    files without usable statistics are always candidates."""
    return [f for f in files if all(_may_overlap(f, k, low[k], high[k]) for k in low)]


def _may_overlap(f: TableFile, key: str, low: Any, high: Any) -> bool:
    file_low, file_high = f.low.get(key), f.high.get(key)
    if isinstance(file_high, str) and len(file_high) >= TRUNCATED_STRING_STATS:
        file_high = None
    try:
        if file_low is not None and file_low > high:
            return False
        return not (file_high is not None and file_high < low)
    except TypeError:  # statistics of another representation (e.g. naive vs aware times)
        return True


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


def _read(f: TableFile, schema: Schema) -> pa.Table:
    """A table file in the table's current schema (columns added later read as nulls)."""
    import pyarrow as pa
    import pyarrow.dataset as pads

    plain = pa.schema([pa.field(c.name, c.type) for c in schema])
    return pads.dataset(f.absolute, schema=plain, format="parquet").to_table()


def merge(opened: OpenTable, source: pa.Table, schema: Schema, keys: list[str]) -> Rewrite:
    """Upsert ``source`` (unique, non-null keys; a subset of ``schema``'s columns in its types)
    by key: matched rows take the source's values for the source's columns, the rest are
    inserted with defaults for the columns they lack."""

    rewrite = Rewrite()
    if source.num_rows:
        with _discarded_on_failure(rewrite):
            _merge_into(rewrite, opened, source, schema, keys)
    return rewrite


def _merge_into(
    rewrite: Rewrite, opened: OpenTable, source: pa.Table, schema: Schema, keys: list[str]
) -> None:
    import pyarrow as pa
    import pyarrow.compute as pc

    low, high = key_range(source, keys)
    found = pa.array([False] * source.num_rows)
    updates = [c for c in source.column_names if c not in keys]
    for f in candidate_files(table_files(opened, keys), low, high):
        current = _read(f, schema)
        index = match_rows(current, source, keys)
        hits = pc.is_valid(index)
        if not pc.any(hits).as_py():
            continue
        rows = pc.take(source, index)
        columns = [
            pc.if_else(hits, rows.column(c.name), current.column(c.name))
            if c.name in updates
            else current.column(c.name)
            for c in schema
        ]
        _replace(rewrite, opened, f, pa.Table.from_arrays(columns, names=schema.names), schema)
        rewrite.matched += pc.sum(hits.cast(pa.int64())).as_py()
        seen = pc.is_in(pa.array(range(source.num_rows), pa.int64()), value_set=index.drop_null())
        found = pc.or_(found, seen)
    inserted = source.filter(pc.invert(found))
    if inserted.num_rows:
        columns = [
            inserted.column(c.name)
            if c.name in inserted.column_names
            else default_column(c, inserted.num_rows)
            for c in schema
        ]
        data = pa.Table.from_arrays(columns, names=schema.names)
        rewrite.written.append(write_part(data, schema, opened.uri))


def delete(opened: OpenTable, source: pa.Table, schema: Schema, keys: list[str]) -> Rewrite:
    """Delete the rows whose keys are in ``source`` (unique, non-null keys)."""
    import pyarrow.compute as pc

    rewrite = Rewrite()
    if not source.num_rows:
        return rewrite
    low, high = key_range(source, keys)
    with _discarded_on_failure(rewrite):
        for f in candidate_files(table_files(opened, keys), low, high):
            current = _read(f, schema)
            hits = pc.is_valid(match_rows(current, source, keys))
            matched = pc.sum(hits.cast("int64")).as_py() or 0
            if matched:
                _replace(rewrite, opened, f, current.filter(pc.invert(hits)), schema)
                rewrite.matched += matched
    return rewrite


@contextmanager
def _discarded_on_failure(rewrite: Rewrite) -> Iterator[None]:
    try:
        yield
    except BaseException:
        rewrite.discard()
        raise


def _replace(
    rewrite: Rewrite, opened: OpenTable, old: TableFile, data: pa.Table, schema: Schema
) -> None:
    """Swap a file for its rewritten rows (none: the file is only removed)."""
    rewrite.removed.append(old)
    if data.num_rows:
        rewrite.written.append(write_part(data, schema, opened.uri))
