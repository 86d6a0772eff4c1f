"""Delta Lake commits written directly: one newline-delimited JSON file per version, published
with a put-if-absent, so a version is written exactly once and a retry of the same commit finds
its own file.

Workbench writes each table's commit itself (protocol and metadata for a new or changed table,
add and remove actions for files, an app-transaction id and commit info) because no deltalake
call stages files and changes the schema in one commit. Readers (deltalake, Spark, Daft,
polars, DuckDB) read these commits like any other.
"""

from __future__ import annotations

import json
import math
import time
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from workbench.core.base.json_text import standard_json
from workbench.core.schema.table_schema import SCHEMA_ID_PROPERTY

if TYPE_CHECKING:
    from workbench.core.delta.data_files import DataFile, WrittenFile
    from workbench.core.delta.vector_descriptor import Descriptor
    from workbench.core.schema.table_schema import Schema
    from workbench.core.storage.store import Storage

APP_ID = "workbench"  # the app-transaction id of catalog commits (its version: the log sequence)
TXN_TAG = "workbench.txn"  # commit-info key of the transaction that made a Delta commit
DELETION_VECTORS_PROPERTY = "delta.enableDeletionVectors"
CHANGE_DATA_PROPERTY = "delta.enableChangeDataFeed"  # commits carry change data files
# Share of a file's rows deleted past which merge-on-read rewrites the file instead.
PURGE_SHARE_PROPERTY = "workbench.deletionVectors.purgeShare"
DEFAULT_PURGE_SHARE = 0.5
READER_VERSION = 1
WRITER_VERSION = 2
CHANGE_DATA_WRITER_VERSION = 4  # the first writer version with change data files


def now_ms() -> int:
    """Wall-clock milliseconds, as Delta actions record times."""
    return time.time_ns() // 1_000_000


def commit_key(table_key: str, version: int) -> str:
    """The key of a table's commit file for ``version`` (``table_key`` "": the storage's root
    is the table)."""
    name = f"_delta_log/{version:020d}.json"
    return f"{table_key}/{name}" if table_key else name


def schema_string(schema: Schema) -> str:
    """A schema as Delta's ``schemaString`` (workbench's field metadata included)."""
    from deltalake import Schema as DeltaSchema

    return DeltaSchema.from_arrow(schema.arrow).to_json()


def metadata_action(
    schema: Schema, configuration: dict[str, str], table_id: str | None = None
) -> dict[str, Any]:
    """A ``metaData`` action: the table's schema and properties (with the schema's version)."""
    return {
        "metaData": {
            "id": table_id or str(uuid.uuid4()),
            "name": None,
            "description": None,
            "format": {"provider": "parquet", "options": {}},
            "schemaString": schema_string(schema),
            "partitionColumns": [],
            "configuration": {**configuration, SCHEMA_ID_PROPERTY: str(schema.id)},
            "createdTime": now_ms(),
        }
    }


def protocol_action(schema: Schema, configuration: dict[str, str] | None = None) -> dict[str, Any]:
    """The protocol a table of ``schema`` and ``configuration`` needs: reader 1, writer 2
    (plain Parquet; writer 4 with change data files), or reader 3 / writer 7 naming the
    features it uses: ``timestampNtz`` when a column holds timestamps without a time zone,
    ``deletionVectors`` when they are on (and the writer feature ``changeDataFeed``)."""
    features = []
    if any(_naive_timestamps(f.type) for f in schema):
        features.append("timestampNtz")
    if vectors_enabled(configuration or {}):
        features.append("deletionVectors")
    change_data = change_data_enabled(configuration or {})
    if features:
        return {
            "protocol": {
                "minReaderVersion": 3,
                "minWriterVersion": 7,
                "readerFeatures": features,
                "writerFeatures": [*features, *(["changeDataFeed"] if change_data else [])],
            }
        }
    writer = CHANGE_DATA_WRITER_VERSION if change_data else WRITER_VERSION
    return {"protocol": {"minReaderVersion": READER_VERSION, "minWriterVersion": writer}}


def new_table_configuration(schema: Schema, configuration: dict[str, str]) -> dict[str, str]:
    """A new table's configuration: a table with merge keys (where MERGE and DELETE happen)
    takes deletion vectors unless its properties say ``delta.enableDeletionVectors: false``."""
    if schema.merge_keys and DELETION_VECTORS_PROPERTY not in configuration:
        return {**configuration, DELETION_VECTORS_PROPERTY: "true"}
    return configuration


def vectors_enabled(configuration: dict[str, str]) -> bool:
    """True when a table's configuration turns deletion vectors on."""
    return configuration.get(DELETION_VECTORS_PROPERTY, "false").lower() == "true"


def change_data_enabled(configuration: dict[str, str]) -> bool:
    """True when a table's configuration asks its commits to carry change data files."""
    return configuration.get(CHANGE_DATA_PROPERTY, "false").lower() == "true"


def purge_share(configuration: dict[str, str]) -> float:
    """The deleted share of a file past which merge-on-read rewrites it without those rows."""
    return float(configuration.get(PURGE_SHARE_PROPERTY, DEFAULT_PURGE_SHARE))


def _naive_timestamps(t: Any) -> bool:
    import pyarrow.types as pt

    if pt.is_timestamp(t):
        return t.tz is None
    return any(_naive_timestamps(t.field(i).type) for i in range(t.num_fields))


def add_action(
    relative_path: str, written: WrittenFile, modified_ms: int, data_change: bool = True
) -> dict[str, Any]:
    """An ``add`` action for a file in the table folder (``data_change`` False: its rows were
    in the table already, as a compaction's are)."""
    return {
        "add": {
            "path": relative_path,
            "partitionValues": {},
            "size": written.size,
            "modificationTime": modified_ms,
            "dataChange": data_change,
            "stats": written.stats,
        }
    }


def remove_action(file: DataFile, data_change: bool = True) -> dict[str, Any]:
    """A ``remove`` action for a file of the table's current version (with its deletion
    vector: a file and its vector are removed together)."""
    remove = {
        "path": file.path,
        "deletionTimestamp": now_ms(),
        "dataChange": data_change,
        "extendedFileMetadata": True,
        "partitionValues": {},
        "size": file.size,
    }
    if file.deletion_vector is not None:
        remove["deletionVector"] = file.deletion_vector.to_action()
    return {"remove": remove}


def kept_add_action(file: DataFile, vector: Descriptor | None) -> dict[str, Any]:
    """The ``add`` action of a table file added again as it is, with deletion vector
    ``vector``: its statistics stay (not tight with a vector: deleted rows still count)."""

    def plain(bounds: dict[str, Any]) -> dict[str, Any]:  # values JSON keeps exactly
        return {k: v for k, v in bounds.items() if _exact_in_json(v)}

    stats = {"numRecords": file.rows, "minValues": plain(file.low), "maxValues": plain(file.high)}
    add = {
        "path": file.path,
        "partitionValues": {},
        "size": file.size,
        "modificationTime": file.modified,
        "dataChange": True,
    }
    if vector is not None:
        stats["tightBounds"] = False
        add["deletionVector"] = vector.to_action()
    add["stats"] = standard_json(stats)
    return {"add": add}


def _exact_in_json(bound: Any) -> bool:
    """True for a statistics bound JSON keeps exactly (a non-finite float bounds nothing a
    Delta reader can use: it is left out, as a missing bound)."""
    if isinstance(bound, float):
        return math.isfinite(bound)
    return isinstance(bound, (bool, int, str))


@dataclass
class TableActions:
    """The Delta actions of one table change, staged until the catalog commits them."""

    protocol: dict[str, Any] | None = None
    metadata: dict[str, Any] | None = None
    adds: dict[str, dict[str, Any]] = field(default_factory=dict)  # path -> add action
    removes: dict[str, dict[str, Any]] = field(default_factory=dict)  # path -> remove action
    cdc: list[dict[str, Any]] = field(default_factory=list)  # change data files (Delta's CDF)

    @property
    def empty(self) -> bool:
        """True when there is nothing to commit."""
        return not (self.protocol or self.metadata or self.adds or self.removes)

    def to_json(self) -> str:
        """The actions as JSON, as the catalog log records them."""
        recorded = {
            "protocol": self.protocol,
            "metadata": self.metadata,
            "adds": list(self.adds.values()),
            "removes": list(self.removes.values()),
        }
        if self.cdc:
            recorded["cdc"] = self.cdc
        return standard_json(recorded)

    @classmethod
    def from_json(cls, text: str) -> TableActions:
        """Actions recorded by ``to_json``."""
        data = json.loads(text)
        return cls(
            data["protocol"],
            data["metadata"],
            {a["add"]["path"]: a for a in data["adds"]},
            {r["remove"]["path"]: r for r in data["removes"]},
            data.get("cdc", []),
        )

    @classmethod
    def in_turn(cls, changes: Iterable[TableActions]) -> TableActions:
        """Changes applied one after another, as one change (a file added by one and removed
        by a later one is neither added nor kept)."""
        combined = cls()
        for later in changes:
            for path in later.removes:
                combined.adds.pop(path, None)
            combined.removes.update(later.removes)
            combined.adds.update(later.adds)
            combined.protocol = later.protocol or combined.protocol
            combined.metadata = later.metadata or combined.metadata
        return combined

    @classmethod
    def from_commit(cls, data: bytes | None) -> TableActions:
        """The actions a table's own Delta commit file holds (none for None)."""
        actions = cls()
        for line in (data or b"").decode().splitlines():
            action = json.loads(line)
            if "add" in action:
                actions.adds[action["add"]["path"]] = action
            elif "remove" in action:
                actions.removes[action["remove"]["path"]] = action
            elif "cdc" in action:
                actions.cdc.append(action)
            elif "metaData" in action:
                actions.metadata = action
            elif "protocol" in action:
                actions.protocol = action
        return actions

    def lines(self) -> list[dict[str, Any]]:
        """The actions in commit order: protocol, metadata, removes, adds, change data files."""
        head = [a for a in (self.protocol, self.metadata) if a]
        return [*head, *self.removes.values(), *self.adds.values(), *self.cdc]


def commit_file(
    actions: TableActions,
    transaction_id: str,
    sequence: int,
    operation: str,
    extra: dict[str, Any] | None = None,
    apps: dict[str, int] | None = None,
    timestamp_ms: int | None = None,
) -> bytes:
    """The bytes of a table commit for a catalog transaction (``sequence`` is its log
    sequence, recorded as Delta app-transaction version; ``extra`` goes into commit info;
    ``apps``: the transaction's idempotency keys, each a ``txn`` action of its own;
    ``timestamp_ms``: the catalog commit's time, so Delta readers date it as the catalog does)."""
    info = {
        "commitInfo": {
            "timestamp": timestamp_ms or now_ms(),
            "operation": operation,
            "operationParameters": {},
            "engineInfo": "workbench",
            TXN_TAG: transaction_id,
            "workbench.operation": operation,
            "workbench.sequence": sequence,
            **(extra or {}),
        }
    }
    keys = {APP_ID: sequence, **(apps or {})}
    txns = [
        {"txn": {"appId": app, "version": version, "lastUpdated": now_ms()}}
        for app, version in keys.items()
    ]
    return commit_lines([info, *txns, *actions.lines()])


def append_commit(actions: list[dict[str, Any]], extra: dict[str, Any]) -> bytes:
    """The bytes of a blind-append commit of ``actions`` (the append-only logs' commits);
    ``extra`` goes into commit info."""
    info = {
        "commitInfo": {
            "timestamp": now_ms(),
            "operation": "WRITE",
            "operationParameters": {"mode": "Append"},
            "engineInfo": "workbench",
            **extra,
        }
    }
    return commit_lines([info, *actions])


def commit_lines(actions: list[dict[str, Any]]) -> bytes:
    """The bytes of a commit file: one action per line, standard JSON (a bare ``NaN`` or
    ``Infinity`` would make the table unreadable to every Delta reader)."""
    return "".join(standard_json(a) + "\n" for a in actions).encode()


def write_commit(storage: Storage, table_key: str, version: int, content: bytes) -> bool:
    """Publish a table commit; False if that version exists already."""
    return storage.put_if_absent(commit_key(table_key, version), content)


def read_commit_info(storage: Storage, table_key: str, version: int) -> dict[str, Any] | None:
    """The commit info of a table version (None if the version does not exist)."""
    data = storage.get(commit_key(table_key, version))
    if data is None:
        return None
    for line in data.splitlines():  # up to the commit info only: a bulk load adds thousands
        action = json.loads(line)
        if "commitInfo" in action:
            return action["commitInfo"]
    return {}


@dataclass(frozen=True)
class CommitContents:
    """What a commit file says: its commit info, the paths it adds, and whether it does
    anything but add files (removes, a schema or protocol change)."""

    info: dict[str, Any]
    added: list[str]
    only_adds: bool

    @property
    def operation(self) -> str:
        return str(self.info.get("operation", ""))


def commit_contents(data: bytes | None) -> CommitContents:
    """The contents of a commit file's bytes (an empty commit for None)."""
    info: dict[str, Any] = {}
    added: list[str] = []
    only_adds = True
    for line in (data or b"").decode().splitlines():
        action = json.loads(line)
        info = action.get("commitInfo", info)
        if "add" in action:
            added.append(action["add"]["path"])
        only_adds = only_adds and set(action) <= {"add", "commitInfo"}
    return CommitContents(info, added, only_adds)
