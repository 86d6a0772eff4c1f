"""A table's Delta state at one version as a value (``Snapshot``: version, schema, properties,
data files, protocol), how a Delta table or a later commit's actions make one, and choosing
among its files by statistics or rows."""

from __future__ import annotations

import datetime
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

from workbench.core.delta.data_files import DataFile, in_write_order
from workbench.core.delta.deletion_vectors import vectors_in_log
from workbench.core.schema.table_schema import Schema, stored_schema

if TYPE_CHECKING:
    import pyarrow as pa
    from deltalake import DeltaTable

    from workbench.core.delta.commits import TableActions


@dataclass(frozen=True)
class Snapshot:
    """A table's Delta state at one version: what every reader and writer of it starts from."""

    version: int
    schema: Schema
    properties: dict[str, str]
    files: list[DataFile]  # in write order
    reader_version: int = 1
    table_id: str = ""  # the Delta table's id: its metaData action keeps it across versions
    reader_features: tuple[str, ...] = ()

    @classmethod
    def empty(cls) -> Snapshot:
        """A table before its first commit (its first actions give it a schema)."""
        return cls(-1, Schema([]), {}, [])

    @classmethod
    def of_delta(cls, delta: DeltaTable, uri: str) -> Snapshot:
        """The version a ``DeltaTable`` handle reads (its files under ``uri``)."""
        import pyarrow as pa

        configuration = dict(delta.metadata().configuration)
        return cls(
            delta.version(),
            stored_schema(pa.schema(delta.schema().to_arrow()), configuration),
            configuration,
            data_files_of(delta, uri),
            delta.protocol().min_reader_version,
            delta.metadata().id,
            tuple(delta.protocol().reader_features or ()),
        )

    def with_actions(self, actions: TableActions, version: int, uri: str) -> Snapshot:
        """The state after ``actions`` (files added and removed, metadata and protocol
        changed) as ``version``; added files are under ``uri``."""
        files = {f.path: f for f in self.files}
        for path in actions.removes:
            files.pop(path, None)
        for path, add in actions.adds.items():
            files[path] = DataFile.from_add(add["add"], uri)
        changed: dict[str, Any] = {}
        if actions.metadata:
            meta = actions.metadata["metaData"]
            schema, properties = metadata_schema(actions.metadata)
            changed.update(properties=properties, table_id=meta["id"], schema=schema)
        if actions.protocol:
            protocol = actions.protocol["protocol"]
            changed.update(
                reader_version=protocol["minReaderVersion"],
                reader_features=tuple(protocol.get("readerFeatures") or ()),
            )
        return replace(self, version=version, files=in_write_order(list(files.values())), **changed)


def metadata_schema(metadata: dict[str, Any]) -> tuple[Schema, dict[str, str]]:
    """The schema and properties a ``metaData`` action gives a table."""
    import pyarrow as pa
    from deltalake import Schema as DeltaSchema

    meta = metadata["metaData"]
    properties = dict(meta["configuration"])
    arrow = pa.schema(DeltaSchema.from_json(meta["schemaString"]).to_arrow())
    return stored_schema(arrow, properties), properties


def data_files_of(delta: DeltaTable, table_uri: str) -> list[DataFile]:
    """The files of a Delta table version in write order, with statistics."""
    import pyarrow as pa

    actions = pa.RecordBatchReader.from_stream(delta.get_add_actions(flatten=True)).read_all()
    if not actions.num_rows:
        return []
    stats = {
        name: _plain_values(actions.column(name))
        for name in actions.column_names
        if name.startswith(("min.", "max.", "null_count."))
    }
    base = table_uri.rstrip("/")
    vectors = {}
    if "deletionVectors" in (delta.protocol().reader_features or ()):
        vectors = vectors_in_log(table_uri, delta.version())

    def bound(prefix: str, i: int) -> dict[str, Any]:
        return {
            n[len(prefix) :]: v[i]
            for n, v in stats.items()
            if n.startswith(prefix) and v[i] is not None
        }

    return in_write_order(
        [
            DataFile(
                path,
                f"{base}/{unquote(path)}",
                size,
                rows or 0,
                modified,
                bound("min.", i),
                bound("max.", i),
                vectors.get(path),
                bound("null_count.", i),
            )
            for i, (path, size, rows, modified) in enumerate(
                zip(
                    actions.column("path").to_pylist(),
                    actions.column("size_bytes").to_pylist(),
                    actions.column("num_records").to_pylist(),
                    _ticks(actions.column("modification_time")),
                    strict=True,
                )
            )
        ]
    )


def _plain_values(column: pa.ChunkedArray) -> list[Any]:
    """A statistics column as Python values; times as ISO text, as the log writes them (a
    zoned time made a Python object costs an import of pandas)."""
    import pyarrow as pa

    kind = column.type
    if not pa.types.is_timestamp(kind):
        return column.to_pylist()
    if kind.tz not in (None, "UTC", "+00:00", "Etc/UTC"):
        return column.cast(pa.string()).to_pylist()  # pyarrow.compute: spelt in that zone
    return [
        None if t is None else _time_text(t, kind.unit, kind.tz is not None) for t in _ticks(column)
    ]


def _ticks(column: pa.ChunkedArray) -> list[int | None]:
    """A time column's values as integers in its unit (a view: no compute function)."""
    import pyarrow as pa

    return [t for chunk in column.chunks for t in chunk.view(pa.int64()).to_pylist()]


_TICK_DIGITS = {"s": 0, "ms": 3, "us": 6, "ns": 9}
_EPOCH = datetime.datetime(1970, 1, 1)


def _time_text(ticks: int, unit: str, zoned: bool) -> str:
    """A time since the epoch in ``unit`` as pyarrow spells it cast to text (``Z`` when
    zoned), without loading pyarrow's compute functions (a third of a cold query's imports)."""
    digits = _TICK_DIGITS[unit]
    seconds, fraction = divmod(ticks, 10**digits)
    t = _EPOCH + datetime.timedelta(seconds=seconds)
    text = f"{t.year:04d}-{t.month:02d}-{t.day:02d} {t.hour:02d}:{t.minute:02d}:{t.second:02d}"
    if digits:
        text += "." + str(fraction).zfill(digits)
    return text + ("Z" if zoned else "")


def candidate_files(
    files: list[DataFile], low: dict[str, Any], high: dict[str, Any]
) -> list[DataFile]:
    """Files whose statistics allow a key within [low, high] on every key column; files without
    usable statistics are always candidates."""
    return [f for f in files if all(_may_overlap(f, k, low[k], high[k]) for k in low)]


def _may_overlap(f: DataFile, key: str, low: Any, high: Any) -> bool:
    file_low, file_high = f.low.get(key), f.upper(key)
    try:
        if file_low is not None and file_low > high:
            return False
        return not (file_high is not None and file_high < low)
    except TypeError:  # statistics of another representation (e.g. naive vs aware times)
        return True


def leading_files(files: list[DataFile], limit: int | None) -> list[DataFile]:
    """The first files in write order that hold at least ``limit`` rows (all without one)."""
    if limit is None:
        return files
    chosen, rows = [], 0
    for f in files:
        if rows >= limit:
            break
        chosen.append(f)
        rows += f.live_rows
    return chosen
