"""``spark.readStream.format("workbench")`` and ``df.writeStream.format("workbench")``: the
stream reader and writer Spark's Python workers run (``stream_start`` checks and wires them on
the driver).

Sink: each micro-batch's tasks write their rows as parts of the table (as the batch writer
does: no rows pass through one process); its commit adds the parts in one catalog transaction
keyed ``(app, batch id)`` (``dc.write(..., idempotency=...)``), so a batch Spark runs again after
a crash, its commit already made, is skipped and every row lands once. The app is the
``idempotencyApp`` option, else one derived from the query's checkpoint location: a restarted
query (the same checkpoint) keeps it. Spark's ``complete`` output mode replaces the table's rows
each batch.

Source: offsets are table (Delta) versions, ``{"version": v, "incarnation": ...}``: a batch
reads the versions after its start up to its end. By default a stream starts with the table as
it is (a first batch of its rows, as Delta's source does), then reads each later version's new
rows, a task per added file; a version that updated or deleted rows stops the stream
(``ChangeCommitError``) unless ``skipChangeCommits`` passes over such versions, or
``readChangeFeed`` streams the change feed (every change, with ``_change_type``,
``_commit_version`` and ``_commit_timestamp``). ``startingVersion`` starts at a version (its rows
and later ones') instead of the table as it is, or at ``latest`` (later versions only).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pyspark.sql.datasource import (
    DataSourceStreamArrowWriter,
    DataSourceStreamReader,
    InputPartition,
    WriterCommitMessage,
)
from pyspark.sql.streaming.datasource import SupportsTriggerAvailableNow

from workbench.core.base.errors import (
    ChangeCommitError,
    InvalidArgumentError,
    TableNotFoundError,
    TableVersionNotFoundError,
)
from workbench.engines.spark.datasource import (
    Catalogs,
    _plan,
    _use_catalogs,
    commit_parts,
    open_requested,
    write_task_parts,
)
from workbench.engines.spark.source_options import LATEST, NAME, SourceOptions

if TYPE_CHECKING:
    import pyarrow as pa

    from workbench.core.catalog.locations import OpenTable
    from workbench.core.io.changes import Commit
    from workbench.core.io.version_files import VersionFiles

Offset = dict[str, Any]


def app_id(request: SourceOptions) -> str:
    """The idempotency app of a stream write: ``idempotencyApp``, else derived from the
    checkpoint location and the table (stable across restarts of the same query)."""
    if request.app_id is not None:
        return request.app_id
    if request.checkpoint is None:
        raise InvalidArgumentError(
            f"A stream to format({NAME!r}) needs its checkpoint location to know a micro-batch "
            "it already committed: .option('checkpointLocation', folder), or name its app with "
            ".option('idempotencyApp', name)."
        )
    where = request.checkpoint
    if "://" not in where and not where.startswith("file:"):
        where = os.path.abspath(where)
    digest = hashlib.sha256(f"{where}\n{request.root}\n{request.catalog}".encode()).hexdigest()
    return f"spark-stream:{request.namespace or ''}.{request.table}:{digest[:16]}"


def change_columns() -> list[pa.Field]:
    """The columns a change-feed stream adds to the table's, as ``dc.changes`` gives them."""
    import pyarrow as pa

    from workbench.core.delta.change_data import with_change_type
    from workbench.core.io.changes import stamped

    return list(stamped(with_change_type(pa.schema([])).empty_table()).schema)


# ------------------------------------------------------------------------------------ the sink
@dataclass
class _Parts(WriterCommitMessage):
    files: list[Any]  # the WrittenFiles one task wrote
    schema: Any  # the table Schema they were written in (planned when the query started)


class StreamWriter(DataSourceStreamArrowWriter):
    """Tasks write a micro-batch's rows as parts of the table; ``commit`` adds them in one
    catalog transaction keyed by the batch id, ``abort`` deletes them."""

    def __init__(
        self,
        request: SourceOptions,
        schema: Any,
        overwrite: bool,
        catalogs: Catalogs,
        default: str | None,
    ):
        from workbench.core.ops.tables import table_exists
        from workbench.engines.spark.files import arrow_schema

        if request.write_mode is not None:
            raise InvalidArgumentError(
                f"writeMode {request.write_mode!r} runs on the driver of a session workbench "
                "started (workbench.engines.spark.session.spark_session, or any dc call on "
                "Spark); this writer only appends or replaces, so nothing was written."
            )
        self.request, self.overwrite = request, overwrite
        self.catalogs, self.default = catalogs, default
        self.app = app_id(request)
        _use_catalogs(catalogs, default, request)
        if not table_exists(request.table, request.namespace, request.catalog):
            raise TableNotFoundError(
                f"Table {request.table!r} does not exist; a stream to format({NAME!r}) started "
                "from a session workbench started creates it, or create it first with "
                "dc.create_table(..., schema=...)."
            )
        self.incoming = arrow_schema(schema)
        self.plan = _plan(request, self.incoming, overwrite, "")

    def write(self, batches: Iterator[Any]) -> WriterCommitMessage:
        from workbench.core.delta.data_files import new_batch

        return _Parts(write_task_parts(batches, self.plan, new_batch()), self.plan.schema)

    def commit(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        """Add the batch's parts as one catalog transaction keyed ``(app, batchId)``: skipped,
        its parts deleted, when that key committed already."""
        from workbench.core.delta.data_files import discard

        files = _files(messages)
        if not files and not self.overwrite:
            return  # nothing to add: the next batch's key follows on
        written_as = next((m.schema for m in messages if isinstance(m, _Parts)), None)
        plan = self.plan
        result = commit_parts(
            files,
            self.incoming,
            written_as or plan.schema,
            plan.table,
            self.request,
            plan.storage,
            "replace" if self.overwrite else "append",
            idempotency=(self.app, batchId),
        )
        if result.skipped:  # a batch run again after its commit: its new parts go
            discard(files, plan.storage)

    def abort(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        """Delete the parts the batch's finished tasks wrote (a failed task deleted its own)."""
        from workbench.core.delta.data_files import discard

        discard(_files(messages), self.plan.storage)


def _files(messages: list[WriterCommitMessage | None]) -> list[Any]:
    return [f for m in messages if isinstance(m, _Parts) for f in m.files]


# ---------------------------------------------------------------------------------- the source
@dataclass
class _AddedFile(InputPartition):
    """A data file a version added (all its rows, as written), or one file of the table as the
    stream starts (its live rows)."""

    file: Any  # DataFile
    commit: Commit  # the version that added it (without its actions)


@dataclass
class _VersionChanges(InputPartition):
    """Every change one version made, read from the change feed."""

    version: int


class StreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """Offsets are table versions; a batch's partitions are the files its versions added (or
    the versions themselves, for the change feed). ``Trigger.AvailableNow`` reads up to the
    version current when the query starts (after the batch a restart runs again)."""

    def __init__(self, request: SourceOptions, catalogs: Catalogs, default: str | None):
        _use_catalogs(catalogs, default, request)
        self.request, self.catalogs, self.default = request, catalogs, default
        opened = open_requested(request)
        self.incarnation = opened.incarnation
        self.table_uri, self.storage = opened.uri, opened.storage
        self.arrow = opened.schema.arrow.remove_metadata()
        self.started_at = opened.version  # for startingVersion 'latest'
        self.target: int | None = None  # the last version Trigger.AvailableNow reads

    def _current(self) -> OpenTable:
        """The table as it is now; raises when it is no longer the incarnation streamed."""
        opened = open_requested(self.request)
        if opened.incarnation != self.incarnation:
            raise TableVersionNotFoundError(
                f"Table {opened.loc.qualified!r} was dropped or replaced by a new table of the "
                "same name since this stream started; its offsets name versions of the old "
                "one. Start the stream again with a new checkpoint location."
            )
        return opened

    def initialOffset(self) -> Offset:
        start = self.request.starting_version
        if start is None:  # the table as it is, then later versions
            return {"version": -1, "incarnation": self.incarnation, "snapshot": True}
        version = self.started_at if start == LATEST else int(start) - 1
        return {"version": version, "incarnation": self.incarnation}

    def prepareForTriggerAvailableNow(self) -> None:
        self.target = self._current().version

    def latestOffset(self, start: Offset | None = None, limit: Any = None) -> Offset:
        """The current version (never before ``start``: a startingVersion yet to come)."""
        version = self._current().version if self.target is None else self.target
        if start is not None and int(start["version"]) > version:
            return start
        return {"version": version, "incarnation": self.incarnation}

    def partitions(self, start: Offset, end: Offset) -> list[InputPartition]:
        from workbench.core.io.version_files import version_files

        self._check_offset(start)
        self._check_offset(end)
        first, last = int(start["version"]) + 1, int(end["version"])
        if first > last:
            return []
        opened = self._current()
        if start.get("snapshot"):
            at = open_requested(_at_version(self.request, last))
            moment = version_files(opened, last, last)[0].commit
            return [_AddedFile(f, moment) for f in at.files]
        found: list[InputPartition] = []
        for version in version_files(opened, first, last):
            if version.changes_rows:
                if self.request.change_feed:
                    found.append(_VersionChanges(version.version))
                    continue
                if self.request.skip_change_commits:
                    continue
                raise _change_commit(opened, version)
            found.extend(_AddedFile(f, version.commit) for f in version.added)
        return found

    def _check_offset(self, offset: Offset) -> None:
        if offset.get("incarnation") not in (None, self.incarnation):
            self._current()  # raises for a dropped and remade table
            raise TableVersionNotFoundError(
                "This stream's checkpoint holds offsets of another table; start it again with "
                "a new checkpoint location."
            )

    def read(self, partition: InputPartition) -> Iterator[Any]:
        from workbench.core.delta.reading import live_file_rows

        if isinstance(partition, _VersionChanges):
            yield from self._changes(partition.version).to_batches()
            return
        if not isinstance(partition, _AddedFile):
            return  # a batch without files: Spark reads it as one empty partition
        rows = live_file_rows(partition.file, self.table_uri, self.arrow, self.storage)
        if self.request.change_feed:
            rows = _as_inserts(rows, partition)
        yield from rows.to_batches()

    def _changes(self, version: int) -> pa.Table:
        """The change feed of one version, in the stream's columns."""
        from workbench.core.io.changes import table_changes

        request = self.request
        _use_catalogs(self.catalogs, self.default, request)
        changes = table_changes(
            request.table,
            version,
            version,
            request.namespace,
            request.catalog,
            branch=request.branch,
            columns=self.arrow.names,
        )
        return changes.select([*self.arrow.names, *(f.name for f in change_columns())])


def _at_version(request: SourceOptions, version: int) -> SourceOptions:
    from dataclasses import replace

    return replace(request, version=version)


def _as_inserts(rows: pa.Table, added: _AddedFile) -> pa.Table:
    """Rows a version added, with the change feed's columns."""
    import pyarrow as pa

    from workbench.core.delta.change_data import CHANGE_TYPE, INSERT
    from workbench.core.io.changes import stamped

    kinds = pa.array([INSERT] * rows.num_rows, pa.string())
    return stamped(rows.append_column(CHANGE_TYPE, kinds), added.commit)


def _change_commit(opened: OpenTable, version: VersionFiles) -> ChangeCommitError:
    return ChangeCommitError(
        f"Version {version.version} of table {opened.loc.qualified!r} updated or deleted rows "
        f"(transaction {version.commit.transaction_id}), and this stream reads only new rows. "
        "Stream every change with .option('readChangeFeed', 'true'), or pass over such "
        "versions with .option('skipChangeCommits', 'true')."
    )
