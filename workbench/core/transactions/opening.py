"""Opening a table version as the catalog log records it: the folder of the incarnation an
entry names, the versions readable, and the table as a transaction (or a view) shows it."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any, Protocol

from workbench.core.base.arguments import whole_number
from workbench.core.base.errors import TableNotFoundError, TableVersionNotFoundError
from workbench.core.catalog.branch_records import BRANCH_TABLE_MARKER, created_table_key
from workbench.core.catalog.folders import dropped_key, dropped_path, folder_identity, live_path
from workbench.core.catalog.locations import Location, OpenTable, empty_table, from_delta
from workbench.core.delta.commits import TableActions, commit_key
from workbench.core.storage.store import is_local
from workbench.core.transactions.catalog_log import log_of
from workbench.core.transactions.snapshot_cache import advanced, keep, recall
from workbench.core.transactions.time_travel import View, before_history_note

MAX_FOLDED_VERSIONS = 10_000  # beyond, the Delta log's checkpoints are the cheaper way in

if TYPE_CHECKING:
    from workbench.core.catalog.catalogs import Catalog
    from workbench.core.transactions.catalog_log import TransactionLog
    from workbench.core.transactions.catalog_state import TableEntry
    from workbench.core.transactions.table_change import TableChange


class Seen(View, Protocol):
    """A transaction or a view as opening a table reads it: its entries and staged changes."""

    changes: dict[tuple[str, str], TableChange]

    def entry(self, namespace: str, name: str, record: bool = True) -> TableEntry | None: ...


def table_uri(catalog: Catalog, namespace: str, name: str, entry: TableEntry) -> str:
    """Folder of the table incarnation ``entry`` refers to: the live folder for the table
    ``main`` shows now; else the branch's own folder for a table a branch created and has not
    published; else the dropped folder (if its drop has been applied)."""
    current = log_of(catalog.trunk).state.tables.get((namespace, name))
    if current is not None and current.incarnation == entry.incarnation:
        return live_path(catalog, namespace, name)
    created = created_on_branch(catalog, entry.incarnation)
    if created is not None:
        return created
    if catalog.storage.exists(commit_key(dropped_key(entry.incarnation), 0)):
        return dropped_path(catalog, entry.incarnation)
    return live_path(catalog, namespace, name)


def created_on_branch(catalog: Catalog, incarnation: str) -> str | None:
    """The folder of a table incarnation a branch created, while it is still the branch's
    (publishing moves it to the live folder); None otherwise."""
    if catalog.record is None or log_of(catalog).delta_limit(incarnation) != -1:
        return None
    key = created_table_key(catalog.record, incarnation)
    if not catalog.storage.exists(f"{key}/{BRANCH_TABLE_MARKER}"):
        return None
    return catalog.uri(*key.split("/"))


def open_in(seen: Seen, loc: Location, version: int | None = None, as_of: Any = None) -> OpenTable:
    """Open a table version as a transaction (or view) ``seen`` shows it."""
    entry = seen.entry(loc.namespace, loc.name)
    if entry is None:
        when = "" if as_of is None else f" as of {as_of!r}"
        when += before_history_note(seen, as_of)
        raise TableNotFoundError(
            f"Table does not exist: {loc.qualified!r} is not in catalog "
            f"{loc.catalog_name!r}{when}; list tables with dc.list_tables(...) or create it with "
            "dc.write(...)."
        )
    if version is not None:
        _check_version(loc, entry, whole_number("version", version))
    change = seen.changes.get((loc.namespace, loc.name))
    if change is not None and version in (None, entry.version):
        return change.table
    return committed_table(loc, entry, version)


def committed_table(loc: Location, entry: TableEntry, version: int | None = None) -> OpenTable:
    """A table at a version the catalog log recorded (its newest by default). Versions the log
    committed but the table's Delta log does not hold yet are built from the log's actions."""
    uri = table_uri(loc.catalog, loc.namespace, loc.name, entry)
    options = loc.catalog.storage.delta_options
    wanted = entry.version if version is None else version
    log = log_of(loc.catalog)
    recalled = recall(uri, entry.incarnation, wanted, log)
    recalled = recalled or _from_log(loc, uri, entry, wanted, log)
    if recalled is not None:
        return replace(recalled, loc=loc)
    from deltalake.exceptions import DeltaError  # only now: a recalled version needs no Delta
    from deltalake.exceptions import TableNotFoundError as DeltaTableNotFound

    from workbench.core.delta.table_cache import at_version, head_version

    limit = log.delta_limit(entry.incarnation)  # a branch's versions are not in Delta
    readable = wanted if limit is None else min(wanted, limit)
    try:
        head = (
            min(head_version(uri, entry.incarnation, options, readable), readable)
            if readable >= 0
            else -1
        )
        if head >= 0:
            _check_incarnation(loc, uri, entry)
        table = (
            from_delta(
                loc, uri, entry.incarnation, at_version(uri, entry.incarnation, head, options)
            )
            if head >= 0
            else empty_table(loc, uri, entry.incarnation)
        )
    except (DeltaError, DeltaTableNotFound, FileNotFoundError) as e:
        raise TableVersionNotFoundError(
            f"Version {wanted} of table {loc.qualified!r} can no longer be read: dc.vacuum removed "
            f"the files it needs ({e})."
        ) from e
    for pending in range(head + 1, wanted + 1):
        _, actions = log.actions_for(entry.incarnation, pending) or (None, None)
        if actions is None:
            raise TableVersionNotFoundError(
                f"Version {pending} of table {loc.qualified!r} is in neither its Delta log nor the "
                "catalog log; the table folder was changed outside workbench."
            )
        table = table.with_actions(TableActions.from_json(actions), pending)
    keep(table, log.catalog.line_key)
    return table


def _check_incarnation(loc: Location, uri: str, entry: TableEntry) -> None:
    """Raise unless the folder about to be read holds the table incarnation asked for (another
    one takes the live folder once vacuum removed the dropped one asked for)."""
    key = uri[len(loc.catalog.root.rstrip("/")) + 1 :]
    identity = folder_identity(loc.catalog, key)
    if identity is not None and identity[1] and entry.incarnation not in identity:
        raise TableVersionNotFoundError(
            f"Table {loc.qualified!r} as asked for was dropped and its files removed by "
            "dc.vacuum; the folder now holds a table made later under the same name. Read a "
            "later point, or the table as it is now."
        )


def _from_log(
    loc: Location, uri: str, entry: TableEntry, version: int, log: TransactionLog
) -> OpenTable | None:
    """On an object store, a table version built from every action the catalog log recorded
    for it, when the log has read them all (time travel does): cheaper than the table's Delta
    log, which costs a listing and a request per commit since its last checkpoint. None
    otherwise, or when the table has too many versions for that to pay."""
    if (
        is_local(loc.catalog.root)
        or version > MAX_FOLDED_VERSIONS
        or log.actions_for(entry.incarnation, 0, known_only=True) is None
    ):
        return None
    return advanced(empty_table(loc, uri, entry.incarnation), version, log)


def _check_version(loc: Location, entry: TableEntry, version: int) -> None:
    """Only versions a committed catalog transaction recorded (or the one in view) are readable;
    other Delta versions hold rows of failed or unfinished transactions."""
    recorded = log_of(loc.catalog).recorded_versions(entry.incarnation)
    readable = sorted({v for v in recorded if v <= entry.version} | {entry.version})
    if version not in readable:
        shown = ", ".join(map(str, readable[-10:]))
        raise TableVersionNotFoundError(
            f"Table {loc.qualified!r} has no version {version}; its readable versions are "
            f"{'..., ' if len(readable) > 10 else ''}{shown} (see dc.transactions(table=...))."
        )
