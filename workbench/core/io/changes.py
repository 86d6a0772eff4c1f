"""``changes``: the rows a table's commits changed, derived from the catalog log's adds,
removes and deletion vectors (a change costs its files, not the table); and the changes of
every table over a range of catalog transactions.

``table_changes`` gives the feed as a pyarrow Table and needs nothing but core, so an engine's
worker (a Spark data source's, say) can call it as it is."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from functools import cached_property, partial
from typing import TYPE_CHECKING, Any

from workbench.core.base.arguments import flag, whole_number
from workbench.core.base.errors import (
    ChangesUnavailableError,
    DeletionVectorError,
    InvalidArgumentError,
    TableNotFoundError,
    TableVersionNotFoundError,
    TimeTravelError,
)
from workbench.core.base.types import DatasetType
from workbench.core.catalog.locations import Location, locate, locate_key
from workbench.core.catalog.registry import catalog_name
from workbench.core.catalog.scope import branch_scope, get_catalog
from workbench.core.data.datasets import from_pyarrow, parse_dataset_type
from workbench.core.delta.change_data import (
    CHANGE_TYPE,
    ChangedTable,
    commit_changes,
    needed_files,
    net_changes,
    with_change_type,
)
from workbench.core.delta.commits import TableActions, commit_key
from workbench.core.delta.snapshot import metadata_schema
from workbench.core.io.consumers import claim_changes, consumer_name
from workbench.core.transactions.catalog_log import log_of
from workbench.core.transactions.context import view
from workbench.core.transactions.opening import table_uri
from workbench.core.transactions.table_versions import for_read
from workbench.core.transactions.time_travel import as_of_instant, resolve_sequence, tags_of

if TYPE_CHECKING:
    import pyarrow as pa

    from workbench.core.catalog.catalogs import Catalog
    from workbench.core.schema.table_schema import Schema
    from workbench.core.transactions.catalog_state import TableEntry

COMMIT_VERSION = "_commit_version"
COMMIT_TIMESTAMP = "_commit_timestamp"
TRANSACTION_ID = "_transaction_id"
MAX_THREADS = 8  # commits whose changes are read at once
COMMIT_COLUMNS = (CHANGE_TYPE, COMMIT_VERSION, COMMIT_TIMESTAMP, TRANSACTION_ID)


@dataclass
class Commit:
    """One version of a table as the catalog log recorded it: its transaction and actions
    (decoded when first asked for: a feed of a few versions of a long history decodes few)."""

    version: int
    transaction_id: str
    end_time: int  # ns: when the catalog transaction committed
    recorded: str | None  # the actions as the log's JSON (None: a log of schema version 1)
    read_from_table: Callable[[int], TableActions]  # the actions from the table's Delta log

    @cached_property
    def actions(self) -> TableActions:
        if self.recorded is None:
            return self.read_from_table(self.version)
        return TableActions.from_json(self.recorded)

    @property
    def may_change_schema(self) -> bool:
        """False when the commit surely holds no metadata action."""
        return self.recorded is None or '"metaData"' in self.recorded

    @property
    def timestamp_us(self) -> int:
        """The commit's time in µs, at the ms the table's Delta commit records."""
        return self.end_time // 1_000_000 * 1000


def changes(
    table: str,
    start: Any = None,
    end: Any = None,
    namespace: str | None = None,
    catalog: str | None = None,
    *,
    read_as: DatasetType | str | None = None,
    net: bool = False,
    branch: str | None = None,
    columns: Sequence[str] | None = None,
    consumer: str | None = None,
) -> Any:
    """The rows a table's commits from ``start`` to ``end`` changed, as ``read_as`` (default
    Daft, as ``dc.read``): the table's columns (in the schema of ``end``; columns older rows
    lack are null) plus ``_change_type`` (insert, update_preimage, update_postimage, delete),
    ``_commit_version``, ``_commit_timestamp`` and ``_transaction_id``. Compaction and
    ``optimize`` change no rows, so they add none. A merge key's deleted and inserted rows of
    one commit are an update; without merge keys, rows deleted and inserted alike cancel.

    ``start`` and ``end`` are inclusive table (Delta) versions (default: the first and the
    newest), or points in time: a datetime (or ISO text), a catalog transaction id or a tag. A
    point as ``start`` means the first version committed at or after it (a transaction's own
    version included; a tag names the state its transaction left, so the changes after it),
    as ``end`` the last version committed at or before it. ``net=True``
    gives one change per merge key over the whole range (an insert then updates: one insert of
    the last values; an insert then a delete: nothing; updates: the first pre-image and the last
    post-image), each row with the commit columns of the change it comes from; without merge
    keys, rows deleted and inserted alike over the range cancel. ``columns`` chooses table
    columns (the commit columns always come). ``branch``: as ``dc.read``. Raises
    ``ChangesUnavailableError`` for versions whose files ``dc.vacuum`` removed.

    ``consumer="features"`` reads what that named consumer has not consumed yet (every version
    after its cursor); inside ``dc.transaction()`` the cursor advances when the transaction
    commits, atomically with what it wrote, so each change is processed exactly once across
    crashes and reruns. Outside a transaction it only looks."""
    read_as = parse_dataset_type(DatasetType.DAFT if read_as is None else read_as)
    feed = table_changes(
        table,
        start,
        end,
        namespace,
        catalog,
        net=net,
        branch=branch,
        columns=columns,
        consumer=consumer,
    )
    return from_pyarrow(feed, read_as)


def table_changes(
    table: str,
    start: Any = None,
    end: Any = None,
    namespace: str | None = None,
    catalog: str | None = None,
    *,
    net: bool = False,
    branch: str | None = None,
    columns: Sequence[str] | None = None,
    change_files: bool = True,
    consumer: str | None = None,
) -> pa.Table:
    """``changes`` as a pyarrow Table (what an engine's worker calls). ``change_files=False``
    computes every commit's changes from its actions even where it carries change data
    files."""
    flag("net", net)
    flag("change_files", change_files)
    consumer = None if consumer is None else consumer_name(consumer)
    with branch_scope(branch, catalog):
        loc = locate(table, namespace, catalog)
    seen = view(loc.catalog)
    loc = for_read(seen, loc, None)
    entry = seen.state.tables.get((loc.namespace, loc.name))
    if entry is None:
        raise TableNotFoundError(
            f"Table does not exist: {loc.qualified!r} is not in catalog {loc.catalog_name!r}; "
            "list tables with dc.list_tables(...)."
        )
    history = table_history(loc, entry)
    if consumer is not None:
        if start is not None or end is not None:
            raise InvalidArgumentError(
                f"consumer={consumer!r} reads from where the consumer left off to the newest "
                "version; leave start and end out (or drop consumer= to choose a range)."
            )
        first = claim_changes(loc, entry.incarnation, history[-1].version, consumer)
        chosen = [c for c in history if c.version >= first]
        return _feed(loc, entry, history, chosen, net, columns, change_files)
    first = history[0].version if start is None else _version(loc, history, start, "start")
    last = history[-1].version if end is None else _version(loc, history, end, "end")
    if last < first:
        raise InvalidArgumentError(
            f"The change feed of {loc.qualified!r} was asked for end={end!r} (version {last}) "
            f"before start={start!r} (version {first}); give an end at or after the start."
        )
    chosen = [c for c in history if first <= c.version <= last]
    return _feed(loc, entry, history, chosen, net, columns, change_files)


def table_history(loc: Location, entry: TableEntry) -> list[Commit]:
    """Every version of a table incarnation the catalog log recorded, up to ``entry``'s, in
    order (a branch's versions beyond its base exist only as its log's actions)."""
    log = log_of(loc.catalog)
    history = []
    from_table = partial(_delta_actions, loc, entry)
    for version in sorted(set(log.recorded_versions(entry.incarnation))):
        if version > entry.version:
            break
        row, actions = log.actions_for(entry.incarnation, version) or (None, None)
        if row is not None:
            time, transaction = row["end_time"], row["transaction_id"]
            history.append(Commit(version, transaction, time, actions, from_table))
    return history


def _delta_actions(loc: Location, entry: TableEntry, version: int) -> TableActions:
    """A version's actions as the table's own Delta commit holds them."""
    storage = loc.catalog.storage
    uri = table_uri(loc.catalog, loc.namespace, loc.name, entry)
    return TableActions.from_commit(storage.get(commit_key(storage.key_of(uri), version)))


def _version(loc: Location, history: list[Commit], value: Any, argument: str) -> int:
    """The table version ``start`` or ``end`` names (see ``changes``)."""
    if isinstance(value, int) and not isinstance(value, bool):
        version = whole_number(argument, value)
        if version > history[-1].version:
            raise TableVersionNotFoundError(
                f"Table {loc.qualified!r} has no version {version} ({argument}={value}); its "
                f"versions are {history[0].version} to {history[-1].version}."
            )
        return version
    instant = _instant(loc.catalog, value, argument)
    if argument == "start" and _is_tag(loc.catalog, value):
        instant += 1  # a tag names the state its transaction left: changes come after it
    if argument == "start":
        later = [c.version for c in history if c.end_time >= instant]
        return later[0] if later else history[-1].version + 1
    earlier = [c.version for c in history if c.end_time <= instant]
    if not earlier:
        raise TableVersionNotFoundError(
            f"{argument}={value!r} is before table {loc.qualified!r} existed (its first version "
            f"was committed at {datetime.fromtimestamp(history[0].end_time / 1e9)}); give a "
            "later point."
        )
    return earlier[-1]


def _is_tag(catalog: Catalog, point: Any) -> bool:
    """True when ``point`` is a tag of the catalog's line (or of ``main`` before a branch)."""
    lines = [catalog] if catalog.record is None else [catalog, catalog.trunk]
    return isinstance(point, str) and any(point in tags_of(line) for line in lines)


def _instant(catalog: Catalog, point: Any, argument: str) -> int:
    """The moment (ns) a point names: a time itself, or when the transaction a transaction id
    or tag names committed (on the catalog's line, or ``main`` before a branch started)."""
    moment = as_of_instant(catalog, point, argument)
    if moment is not None:
        return moment
    lines = [catalog] if catalog.record is None else [catalog, catalog.trunk]
    for line in lines:
        try:
            sequence = resolve_sequence(line, point, argument)
        except TimeTravelError:
            continue
        for row in log_of(line).rows:
            if row["sequence"] == sequence:
                return int(row["end_time"])
    raise TimeTravelError(f"{argument}={point!r} names no transaction of catalog {catalog.root!r}.")


def _schema_at(history: list[Commit], version: int) -> Schema:
    """The table's schema at ``version``: that of the newest metadata action up to it."""
    for commit in reversed(history):
        if commit.version <= version and commit.may_change_schema and commit.actions.metadata:
            return metadata_schema(commit.actions.metadata)[0]
    raise TableVersionNotFoundError(f"No schema is recorded up to table version {version}.")


def _feed(
    loc: Location,
    entry: TableEntry,
    history: list[Commit],
    chosen: list[Commit],
    net: bool,
    columns: Sequence[str] | None,
    change_files: bool,
) -> pa.Table:
    """The changes of the commits ``chosen`` (in the schema of the last of them)."""
    import pyarrow as pa

    schema = _schema_at(history, chosen[-1].version if chosen else history[-1].version)
    names = _columns(loc, schema, columns)
    plain = pa.schema([pa.field(f.name, f.type) for f in schema])
    uri = table_uri(loc.catalog, loc.namespace, loc.name, entry)
    table = ChangedTable(uri, loc.catalog.storage, plain, tuple(schema.merge_keys))

    def one(commit: Commit) -> pa.Table:
        return stamped(commit_changes(table, commit.actions, change_files), commit)

    try:
        parts = _in_parallel(one, chosen)
    except (FileNotFoundError, DeletionVectorError) as e:
        unavailable = _unavailable(loc, table, history, chosen, change_files)
        if unavailable is None:
            raise
        raise unavailable from e
    feed = pa.concat_tables(parts) if parts else stamped(with_change_type(plain).empty_table())
    if net:
        feed = net_changes(feed, table.keys, plain.names)
    return feed.select([*names, *COMMIT_COLUMNS])


def _in_parallel(fn: Callable[[Commit], pa.Table], commits: list[Commit]) -> list[pa.Table]:
    """``fn`` of each commit, in order: several at once when there are several (their files
    are read while others are decoded)."""
    if len(commits) < 2:
        return [fn(c) for c in commits]
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(min(len(commits), os.cpu_count() or 1, MAX_THREADS)) as pool:
        return list(pool.map(fn, commits))


def _columns(loc: Location, schema: Schema, columns: Sequence[str] | None) -> list[str]:
    """The table columns the feed keeps: all, or ``columns`` (checked)."""
    if columns is None:
        return schema.names
    chosen = [columns] if isinstance(columns, str) else list(columns)
    unknown = [c for c in chosen if not isinstance(c, str) or c not in schema.names]
    if unknown:
        raise InvalidArgumentError(
            f"Table {loc.qualified!r} has no column(s) {unknown}; its columns are {schema.names}."
        )
    return chosen


def stamped(rows: pa.Table, commit: Commit | None = None) -> pa.Table:
    """A commit's changes with its version, time and transaction, each column one chunk (so
    every column of a feed is chunked alike: Spark's ``createDataFrame`` keeps only the rows of
    the first chunk of a table whose columns were chunked differently, as seen with PySpark 4)."""
    import pyarrow as pa

    rows, n = rows.combine_chunks(), rows.num_rows
    stamps = {
        COMMIT_VERSION: pa.array([commit.version if commit else 0] * n, pa.int64()),
        COMMIT_TIMESTAMP: pa.array(
            [commit.timestamp_us if commit else 0] * n, pa.timestamp("us", tz="UTC")
        ),
        TRANSACTION_ID: pa.array([commit.transaction_id if commit else ""] * n, pa.string()),
    }
    for name, values in stamps.items():
        rows = rows.append_column(name, values)
    return rows


def _unavailable(
    loc: Location,
    table: ChangedTable,
    history: list[Commit],
    chosen: list[Commit],
    change_files: bool,
) -> ChangesUnavailableError | None:
    """The error for a range some of whose files ``dc.vacuum`` removed, naming the oldest
    version changes are available from (None when every file is there after all)."""

    def readable(commits: Iterable[Commit]) -> bool:
        needed = set().union(*(needed_files(table, c.actions, change_files) for c in commits))
        try:
            table.storage.check_readable(*sorted(needed))
        except FileNotFoundError:
            return False
        return True

    if readable(chosen):
        return None
    low, high = 0, len(history)  # the oldest readable suffix of the history, by bisection
    while low < high:
        middle = (low + high) // 2
        if readable(history[middle:]):
            high = middle
        else:
            low = middle + 1
    oldest = (
        f"changes are available from version {history[low].version} on"
        if low < len(history)
        else f"only changes after version {history[-1].version} are available"
    )
    return ChangesUnavailableError(
        f"The changes of table {loc.qualified!r} from version {chosen[0].version} to "
        f"{chosen[-1].version} are no longer available: dc.vacuum removed files they were made "
        f"of. {oldest[0].upper()}{oldest[1:]}; ask for a later start."
    )


def catalog_changes(
    start: Any,
    end: Any = None,
    catalog: str | None = None,
    *,
    read_as: DatasetType | str | None = None,
    net: bool = False,
    branch: str | None = None,
) -> dict[str, Any]:
    """The changes of every table the catalog transactions from ``start`` to ``end`` changed,
    as a dict ``"namespace.table"`` -> feed (see ``changes``). ``start`` and ``end`` are
    inclusive catalog transaction sequences (ints, as ``dc.transactions()`` shows them; ``end``
    default the newest), or points (datetime, transaction id, tag) resolved as ``changes``
    resolves them. Tables dropped since are left out; on a branch, its own transactions."""
    read_as = parse_dataset_type(DatasetType.DAFT if read_as is None else read_as)
    flag("net", net)
    with branch_scope(branch, catalog):
        cat = get_catalog(catalog)
    log = log_of(cat)
    log.refresh()
    rows = log.rows
    if not rows:
        return {}
    first = _sequence(cat, rows, start, "start")
    last = rows[-1]["sequence"] if end is None else _sequence(cat, rows, end, "end")
    if last < first:
        raise InvalidArgumentError(
            f"end={end!r} (transaction {last}) is before start={start!r} (transaction {first}); "
            "give an end at or after the start."
        )
    seen = view(cat)
    versions: dict[tuple[str, str], list[int]] = {}
    for row in rows:
        key = (row["namespace"], row["table_name"])
        current = seen.state.tables.get(key)
        if (
            first <= row["sequence"] <= last
            and row["table_version"] is not None
            and current is not None
            and current.incarnation == row["incarnation"]
        ):
            versions.setdefault(key, []).append(row["table_version"])
    found = {}
    for (namespace, name), changed in sorted(versions.items()):
        loc = replace(locate_key(name, namespace, catalog_name(cat)), catalog=cat)
        entry = seen.state.tables[(namespace, name)]
        history = table_history(loc, entry)
        chosen = [c for c in history if c.version in set(changed)]
        feed = _feed(loc, entry, history, chosen, net, None, True)
        found[f"{namespace}.{name}"] = from_pyarrow(feed, read_as)
    return found


def _sequence(cat: Catalog, rows: list[dict[str, Any]], value: Any, argument: str) -> int:
    """The catalog transaction sequence ``start`` or ``end`` names."""
    if isinstance(value, int) and not isinstance(value, bool):
        return whole_number(argument, value)
    instant = _instant(cat, value, argument)
    if argument == "start":
        later = [r["sequence"] for r in rows if r["end_time"] >= instant]
        return later[0] if later else rows[-1]["sequence"] + 1
    earlier = [r["sequence"] for r in rows if r["end_time"] <= instant]
    return earlier[-1] if earlier else -1
