"""Data files as Delta actions: Parquet written in a table's declared types, and add/remove
actions with statistics taken from the files' footers (shared by every engine)."""

from __future__ import annotations

import datetime
import json
import math
import uuid
from collections.abc import Iterable, Iterator, Sequence
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

from workbench.core.base.json_text import standard_json
from workbench.core.delta.vector_descriptor import Descriptor
from workbench.core.schema.conform import conform
from workbench.core.storage.known import storage_for

if TYPE_CHECKING:
    import pyarrow as pa
    import pyarrow.fs as pafs
    import pyarrow.parquet as pq

    from workbench.core.schema.table_schema import Schema
    from workbench.core.storage.store import Storage

ROWS_PER_FILE = 4_000_000  # the local engine splits bigger writes into several files
ROWS_PER_PARALLEL_PART = 250_000  # writes at least this big are split to use every core
# A dictionary stops paying past a few thousand distinct values; pyarrow's 1 MB default builds
# one for every high-cardinality column before giving up (1M-row writes: 280 -> 180 ms).
DICTIONARY_PAGE_LIMIT = 64 * 1024
# Row groups of about this much Arrow data, within ROW_GROUP_ROWS: a reader looking a few rows
# up by a sorted or clustered column reads the row group holding them, not pyarrow's default of
# a million rows (tens of MiB), while a wide table's footer keeps few entries per row.
ROW_GROUP_BYTES = 1024**2
ROW_GROUP_ROWS = (16 * 1024, 128 * 1024)
DICTIONARY_SAMPLE_ROWS = 4096  # the first rows, whose repeats decide a column's dictionary
# A Bloom filter in every row group of a text or binary column too varied for a dictionary: an
# equality or IN lookup (a user id, an email) skips the row groups it rules out, which min/max
# statistics cannot for such values (DuckDB and DataFusion read them). About 5% more bytes.
BLOOM_FILTER_FPP = 0.05
# pyarrow encodes 1024 values at a time by default; in small row groups that costs a tenth
# more than these bigger batches (pages may exceed their size by up to a batch)
WRITE_BATCH_ROWS = 8 * 1024


@dataclass(frozen=True)
class WrittenFile:
    """A Parquet file an engine wrote into a table folder, described for its add action."""

    uri: str  # absolute path or URI
    size: int
    stats: str  # Delta statistics JSON: row count, per-column min/max and null counts

    @property
    def rows(self) -> int:
        """Rows in the file."""
        return int(json.loads(self.stats)["numRecords"])


@dataclass
class Rewrite:
    """Files an engine wrote into a table folder and the table files they replace."""

    written: list[WrittenFile] = field(default_factory=list)
    removed: list[DataFile] = field(default_factory=list)
    updated: int = 0  # rows of the removed files that took new values (MERGE)
    vectored: list[Vectored] = field(default_factory=list)  # files kept, with more rows deleted

    def rows_replaced(self) -> int:
        """Rows readers saw that this rewrite takes away: those of the files it removes and
        those its new deletion vectors delete."""
        removed = sum(f.live_rows for f in self.removed)
        return removed + sum(
            v.file.live_rows - (v.file.rows - v.vector.cardinality) for v in self.vectored
        )

    def made(self) -> list[WrittenFile]:
        """Every file the rewrite wrote, data and deletion vectors (deleted if it fails)."""
        return [*self.written, *(v.vector_file for v in self.vectored if v.vector_file)]


@dataclass(frozen=True)
class Vectored:
    """A table file that stays, with a new deletion vector deleting more of its rows."""

    file: DataFile
    vector: Descriptor
    vector_file: WrittenFile | None  # None for a vector kept inline in the log


def filesystem_of(uri: str, storage: Storage | None = None) -> tuple[pafs.FileSystem, str]:
    """The pyarrow filesystem holding a path or URI (through ``storage`` when given: Ray tasks
    and Spark executors get it passed, as they do not share this process's catalogs)."""
    return (storage or storage_for(uri)).locate(uri)


def new_batch() -> str:
    """An id shared by the files of one write, so a failed write's files can be found."""
    return uuid.uuid4().hex[:12]


def write_part(
    data: pa.Table,
    schema: Schema,
    folder: str,
    index: int = 0,
    batch: str | None = None,
    storage: Storage | None = None,
) -> WrittenFile:
    """Write ``data`` as one new Parquet file in ``schema``'s types (absent columns filled with
    their defaults) into a table folder, with plain Arrow types and no workbench metadata.
    ``index`` numbers the parts of one write in write order; ``batch`` names the write."""
    part = OpenPart(schema, folder, index, batch, storage)
    with part.failing_whole():
        part.write(data)
        return part.close()


class OpenPart:
    """A Parquet file being written into a table folder, one table of rows at a time (each
    conformed to ``schema``; the layout decided on the first), so a writer holds one table's
    rows, never the file's."""

    def __init__(
        self,
        schema: Schema,
        folder: str,
        index: int = 0,
        batch: str | None = None,
        storage: Storage | None = None,
    ):
        import pyarrow as pa

        self.schema, self.folder = schema, folder
        self.plain = pa.schema([pa.field(f.name, f.type, f.arrow.nullable) for f in schema])
        name = f"part-{index:05d}-{batch or new_batch()}-{uuid.uuid4().hex[:12]}.snappy.parquet"
        self.uri = f"{folder.rstrip('/')}/{name}"
        self.storage = storage or storage_for(self.uri)
        self._opened = ExitStack()  # the output stream, entered on the first rows
        self._out: Any = None
        self._writer: Any = None
        self._row_group = 0  # rows a row group holds, decided on the first table
        self._pending: list[pa.Table] = []  # rows short of a whole row group, not yet written
        self._wrote_rows = False

    @property
    def size(self) -> int:
        """Bytes written so far (row groups not yet flushed left out)."""
        return self._out.tell() if self._out is not None else 0

    def write(self, data: pa.Table) -> None:
        """Append ``data``'s rows to the file."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        data = conform(data, self.schema, fill_missing=True, table=self.folder.rsplit("/", 1)[-1])
        plain_data = pa.Table.from_arrays(data.columns, schema=self.plain)
        if self._writer is None:
            layout = parquet_layout(plain_data)
            self._row_group = layout.pop("row_group_size")
            self._out = self._opened.enter_context(self.storage.open_output(self.uri))
            self._writer = pq.ParquetWriter(
                self._out,
                self.plain,
                compression="snappy",
                dictionary_pagesize_limit=DICTIONARY_PAGE_LIMIT,
                **layout,
            )
        self._pending.append(plain_data)
        pending = sum(t.num_rows for t in self._pending)
        if pending >= self._row_group:  # whole row groups out; the rest waits for more rows
            rows = pa.concat_tables(self._pending)
            whole = pending - pending % self._row_group
            self._writer.write_table(rows.slice(0, whole), row_group_size=self._row_group)
            self._wrote_rows = True
            rest = pa.array(range(whole, pending), pa.int64())
            self._pending = [rows.take(rest)]  # a copy: the written rows' buffers go

    def close(self) -> WrittenFile:
        """Finish the file; what its add action needs."""
        import pyarrow as pa

        if self._writer is None:
            self.write(self.plain.empty_table())
        last = pa.concat_tables(self._pending)
        if last.num_rows or not self._wrote_rows:  # an empty part still has its row group
            self._writer.write_table(last, row_group_size=self._row_group)
        self._pending = []
        self._writer.close()
        size = self._out.tell()
        self._opened.close()
        return WrittenFile(self.uri, size, footer_stats(self._writer.writer.metadata))

    @contextmanager
    def failing_whole(self) -> Iterator[None]:
        """A block that writes the part: a failure removes what it wrote of it."""
        try:
            yield
        except BaseException as e:
            if self._writer is not None:  # closed now, not by the collector on a closed stream
                with suppress(Exception):
                    self._writer.close()
            self._opened.__exit__(type(e), e, e.__traceback__)  # an upload stores nothing
            fs, path = self.storage.locate(self.uri)
            with suppress(FileNotFoundError):
                fs.delete_file(path)  # a part written half-way
            raise


def write_streamed(
    tables: Iterable[pa.Table],
    schema: Schema,
    folder: str,
    storage: Storage,
    part_bytes: int,
) -> list[WrittenFile]:
    """``tables`` written one after another, in order, as parts of about ``part_bytes`` each:
    one table's rows held at a time (a compaction of many files never holds them all). If any
    part fails, the parts written are deleted."""
    batch, written = new_batch(), []
    part: OpenPart | None = None
    try:
        for data in tables:
            if part is None:
                part = OpenPart(schema, folder, len(written), batch, storage)
            with part.failing_whole():
                part.write(data)
            if part.size >= part_bytes:
                written.append(part.close())
                part = None
        if part is not None or not written:
            part = part or OpenPart(schema, folder, len(written), batch, storage)
            with part.failing_whole():
                written.append(part.close())
    except BaseException:
        discard_batch(folder, batch, storage)
        raise
    return written


def write_parts(
    data: pa.Table,
    schema: Schema,
    folder: str,
    storage: Storage | None = None,
    starts: Sequence[int] | None = None,
) -> list[WrittenFile]:
    """Write ``data`` as parts of at most ``ROWS_PER_FILE`` rows (or starting at the rows
    ``starts`` gives, the first 0), in order; a big write is split into one part per core (each
    at least ``ROWS_PER_PARALLEL_PART`` rows) written at once. If any part fails, the parts
    written are deleted. ``storage``: the catalog's (by default the one ``storage_for`` finds
    here, before the parts go to other threads)."""
    import math
    import os
    from concurrent.futures import ThreadPoolExecutor

    storage = storage or storage_for(folder)
    workers = min(os.cpu_count() or 1, max(data.num_rows // ROWS_PER_PARALLEL_PART, 1))
    if starts is None:
        size = min(ROWS_PER_FILE, max(math.ceil(data.num_rows / workers), 1))
        starts = range(0, data.num_rows, size)
    if len(starts) <= 1:
        return [write_part(data, schema, folder, storage=storage)]
    ends = [*starts[1:], data.num_rows]
    batch = new_batch()
    with ThreadPoolExecutor(workers) as pool:  # pyarrow writes without holding the GIL
        futures = [
            pool.submit(
                write_part, data.slice(start, end - start), schema, folder, index, batch, storage
            )
            for index, (start, end) in enumerate(zip(starts, ends, strict=True))
        ]
    try:
        return [f.result() for f in futures]
    except BaseException:
        discard_batch(folder, batch, storage)
        raise


def parquet_layout(data: pa.Table) -> dict[str, Any]:
    """pyarrow's ``write_table`` options laying ``data`` out for readers that skip: row groups
    of about ``ROW_GROUP_BYTES``, a page index (per-page statistics), dictionaries only for
    the columns whose first rows repeat their values within ``DICTIONARY_PAGE_LIMIT`` (a
    dictionary tried and dropped in every small row group would cost more than the writing of
    the row groups), Bloom filters for the text and binary columns without one, and integer
    columns that step by little stored as their steps."""
    low, high = ROW_GROUP_ROWS
    per_row = max(data.nbytes // max(data.num_rows, 1), 1)
    rows = max(low, min(high, ROW_GROUP_BYTES // per_row))
    first = data.slice(0, DICTIONARY_SAMPLE_ROWS)
    repeats = {f.name: _repeats(c) for f, c in zip(first.schema, first.columns, strict=True)}
    dictionary = [leaf for f in first.schema if repeats[f.name] for leaf in _leaves(f.name, f.type)]
    bloom = {
        f.name: {"ndv": rows, "fpp": BLOOM_FILTER_FPP}
        for f in first.schema
        if not repeats[f.name] and _looked_up(f.type)
    }
    deltas = {
        f.name: "DELTA_BINARY_PACKED"
        for f, column in zip(first.schema, first.columns, strict=True)
        if not repeats[f.name] and _steps_small(column)
    }
    return {
        "row_group_size": rows,
        "write_page_index": True,
        "use_dictionary": dictionary,
        "column_encoding": deltas,
        "bloom_filter_options": bloom,
        "write_batch_size": WRITE_BATCH_ROWS,
    }


def written_row_bytes(sample: pa.Table) -> float:
    """The bytes a row of ``sample`` takes on disk as workbench lays it out (written to
    memory): rows reordered (clustered) compress otherwise than the files they came from, so
    files cut by this come out at the size asked for."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if sample.num_rows == 0:
        return 1.0
    out = pa.BufferOutputStream()
    pq.write_table(sample, out, **parquet_layout(sample))
    return max(out.getvalue().size / sample.num_rows, 1e-3)


def _steps_small(column: pa.ChunkedArray) -> bool:
    """Whether an integer-like column (ints, times, dates) steps from row to row by much less
    than its width, as ids and event times written in order do: stored as the differences
    (Parquet's DELTA_BINARY_PACKED, which every Delta reader decodes) it takes a fraction of
    its plain bytes and reads faster (20M ordered ids and times: the table 39% smaller)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    kind = column.type
    plain = pa.types.is_integer(kind) or pa.types.is_temporal(kind)
    if not plain or pa.types.is_interval(kind) or kind.bit_width not in (32, 64):
        return False
    values = column.drop_null().cast(pa.int64() if kind.bit_width == 64 else pa.int32())
    if len(values) < 2:
        return False
    values = values.combine_chunks()
    try:
        steps = pc.subtract_checked(values[1:], values[:-1])
        low, high = pc.min_max(steps).values()
        spread = pc.subtract_checked(high, low).as_py()
    except pa.ArrowInvalid:  # steps beyond the type: far from small
        return False
    return spread.bit_length() <= kind.bit_width // 4


def _looked_up(kind: pa.DataType) -> bool:
    """Whether a column of ``kind`` is one equality lookups go by and min/max seldom narrow:
    text and binary (ids, names, keys, uuids)."""
    import pyarrow.types as t

    checks = (t.is_string, t.is_large_string, t.is_binary, t.is_large_binary)
    return any(check(kind) for check in checks) or t.is_fixed_size_binary(kind)


def _repeats(column: pa.ChunkedArray) -> bool:
    """Whether a dictionary pays for a column: each value comes twice on average and the
    distinct ones fit a dictionary page (nested columns: as pyarrow decides, column by column)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if pa.types.is_nested(column.type):
        return True
    try:
        distinct = pc.count_distinct(column).as_py()
    except pa.ArrowNotImplementedError:  # no kernel for the type: as pyarrow decides
        return True
    width = column.nbytes / max(len(column), 1)
    valid = len(column) - column.null_count
    return 2 * distinct <= valid and distinct * width <= DICTIONARY_PAGE_LIMIT


def _leaves(name: str, kind: pa.DataType) -> list[str]:
    """The Parquet column paths of a field (``use_dictionary`` names leaves)."""
    import pyarrow as pa

    if pa.types.is_struct(kind):
        return [leaf for f in kind for leaf in _leaves(f"{name}.{f.name}", f.type)]
    if pa.types.is_map(kind):
        pair = f"{name}.key_value"
        return _leaves(f"{pair}.key", kind.key_type) + _leaves(f"{pair}.value", kind.item_type)
    lists = (pa.types.is_list, pa.types.is_large_list, pa.types.is_fixed_size_list)
    if any(is_list(kind) for is_list in lists):
        return _leaves(f"{name}.list.element", kind.value_type)
    return [name]


def describe_file(uri: str, storage: Storage | None = None) -> WrittenFile:
    """A file another writer (e.g. Spark) put into a table folder, read from its footer."""
    import pyarrow.parquet as pq

    fs, path = filesystem_of(uri, storage)
    with fs.open_input_file(path) as source:
        meta = pq.ParquetFile(source).metadata
        size = source.size()
    return WrittenFile(uri, size, footer_stats(meta))


def _json_value(value: Any) -> Any:
    if isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, datetime.datetime):
        return value.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
    if isinstance(value, datetime.date):
        return value.isoformat()
    return None


def _bounds_order(statistics: Any) -> bool:
    """False when a row group's bounds are NaN (some writers record one): such bounds order
    nothing, so the column's bounds across groups are not known."""
    return not any(isinstance(v, float) and math.isnan(v) for v in (statistics.min, statistics.max))


def footer_stats(meta: pq.FileMetaData) -> str:
    """Delta ``stats`` JSON (row count, per-column min/max and null counts) from a footer."""
    minimum, maximum, nulls = _bounds(meta, range(meta.num_row_groups))
    return standard_json(
        {
            "numRecords": meta.num_rows,
            "minValues": minimum,
            "maxValues": maximum,
            "nullCount": nulls,
        }
    )


def row_group_files(meta: pq.FileMetaData, f: DataFile) -> list[DataFile]:
    """Each row group of file ``f`` (whose footer is ``meta``) as a file of its own, with its
    row count and bounds, so file skipping can judge the groups one by one."""
    found = []
    for g in range(meta.num_row_groups):
        low, high, nulls = _bounds(meta, [g])
        rows = meta.row_group(g).num_rows
        found.append(replace(f, rows=rows, low=low, high=high, deletion_vector=None, nulls=nulls))
    return found


def _bounds(meta: pq.FileMetaData, groups: Iterable[int]) -> tuple[dict, dict, dict]:
    """Per-column minimum, maximum and null count over row ``groups`` of a footer, as Delta
    statistics write them; a column some group lacks statistics for is left out."""
    minimum: dict[str, Any] = {}
    maximum: dict[str, Any] = {}
    nulls: dict[str, int] = {}
    chosen = list(groups)
    for c in range(meta.num_columns):
        name = meta.schema.column(c).path
        if "." in name:  # nested leaves are not described
            continue
        stats = [meta.row_group(g).column(c).statistics for g in chosen]
        if not stats or any(s is None for s in stats):
            continue
        nulls[name] = sum(s.null_count for s in stats)
        if all(s.has_min_max and _bounds_order(s) for s in stats):
            low = _json_value(min(s.min for s in stats))
            high = _json_value(max(s.max for s in stats))
            if low is not None and high is not None:
                minimum[name], maximum[name] = low, high
    return minimum, maximum, nulls


def discard_batch(folder: str, batch: str, storage: Storage | None = None) -> None:
    """Delete the files a failed write of ``batch`` left in a table folder (``storage``: the
    catalog's, where a worker has no catalogs to find it by)."""
    import pyarrow.fs as pafs

    storage = storage or storage_for(folder)
    fs, path = storage.locate(folder)
    selector = pafs.FileSelector(path, allow_not_found=True)
    for info in fs.get_file_info(selector):
        if f"-{batch}-" in info.base_name:
            storage.remove(f"{folder.rstrip('/')}/{info.base_name}")


def discard(files: list[WrittenFile], storage: Storage | None = None) -> None:
    """Delete files written for a change that will not be committed (``storage``: as for
    ``discard_batch``)."""
    for f in files:
        (storage or storage_for(f.uri)).remove(f.uri)


# Writers may truncate long string statistics (Delta allows it), so a long maximum is not an
# upper bound; strings at least this long are treated as unbounded above.
TRUNCATED_STRING_STATS = 32


@dataclass(frozen=True)
class DataFile:
    """One data file of a table version, with its row count and per-column min/max."""

    path: str  # relative and URL-encoded, as in the Delta log
    absolute: str  # path or URI to open
    size: int
    rows: int
    modified: int  # ms since the epoch; files of later commits are newer
    low: dict[str, Any]
    high: dict[str, Any]
    deletion_vector: Descriptor | None = None  # rows of the file deleted since it was written
    nulls: dict[str, Any] = field(default_factory=dict)  # null count per column, where known

    @property
    def identity(self) -> tuple[str, str | None]:
        """What tells a table's file entries apart: its path and its deletion vector."""
        vector = self.deletion_vector
        return self.path, None if vector is None else f"{vector.path_or_inline}@{vector.offset}"

    @property
    def live_rows(self) -> int:
        """Rows a reader sees: those written, less those its deletion vector deletes."""
        return self.rows - (self.deletion_vector.cardinality if self.deletion_vector else 0)

    def upper(self, column: str) -> Any:
        """The column's maximum when it is a true upper bound (None if unknown)."""
        high = self.high.get(column)
        if isinstance(high, str) and len(high) >= TRUNCATED_STRING_STATS:
            return None
        return high

    @classmethod
    def from_written(cls, written: WrittenFile, folder: str) -> DataFile:
        """A file just written into ``folder``, before any Delta log names it."""
        stats = json.loads(written.stats)
        path = written.uri[len(folder.rstrip("/")) + 1 :]
        low, high = stats.get("minValues", {}), stats.get("maxValues", {})
        nulls = stats.get("nullCount", {})
        return cls(path, written.uri, written.size, stats["numRecords"], 0, low, high, None, nulls)

    @classmethod
    def from_add(cls, add: dict[str, Any], table_uri: str) -> DataFile:
        """A file of an ``add`` action (its statistics JSON decoded; times stay text)."""
        stats = json.loads(add.get("stats") or "{}")
        return cls(
            add["path"],
            f"{table_uri.rstrip('/')}/{unquote(add['path'])}",
            add["size"],
            stats.get("numRecords", 0),
            add.get("modificationTime", 0),
            stats.get("minValues", {}),
            stats.get("maxValues", {}),
            Descriptor.from_action(add["deletionVector"]) if add.get("deletionVector") else None,
            stats.get("nullCount", {}),
        )


def in_write_order(files: list[DataFile]) -> list[DataFile]:
    """Files oldest commit first, and within a commit by name (writers number their parts)."""
    return sorted(files, key=lambda f: (f.modified, f.path))
