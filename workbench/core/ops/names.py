"""Every name a catalog holds (namespaces, tables, branches, tags) and the columns of its tables,
for completion and the catalog sidebar: cached per catalog line and state, so asking again costs
nothing until a commit (in this process, or seen at the next check) changes the state."""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from workbench.core.base.caches import drop_where, process_cache
from workbench.core.base.errors import WorkbenchError
from workbench.core.catalog.branch_records import records
from workbench.core.catalog.locations import locate_in
from workbench.core.catalog.registry import MAIN, catalog_name
from workbench.core.catalog.scope import current_branch, main_catalog
from workbench.core.catalog.versions import split_key
from workbench.core.storage.identity import identity_root
from workbench.core.transactions.catalog_log import log_of
from workbench.core.transactions.table_versions import open_table
from workbench.core.transactions.time_travel import tags_of
from workbench.core.transactions.transaction import on_commit

# How long a listing is used without asking storage whether the catalog changed (commits made
# in this process clear it at once; other processes' commits show within this time).
RECHECK_S = 1.0
MAX_CACHED_TABLES = 4096  # table outlines kept, least recently used dropped first


@dataclass(frozen=True)
class Column:
    """A column of a table: name, Arrow type as text, and whether it is a merge key."""

    name: str
    type: str
    key: bool = False


@dataclass(frozen=True)
class CatalogNames:
    """The names one catalog line (``catalog`` on ``branch``) shows at state ``sequence``."""

    catalog: str
    branch: str
    sequence: int
    namespaces: tuple[str, ...]
    tables: tuple[str, ...]  # "namespace.table", sorted
    branches: tuple[str, ...]  # main first, then the others oldest first
    tags: tuple[str, ...]
    # "ns.t" -> its log entries (name, Delta version, incarnation): they change when it does
    stamps: Mapping[str, tuple] = field(default_factory=dict, repr=False, compare=False)


@dataclass(frozen=True)
class TableOutline:
    """A table's columns, and its live rows and bytes from its Delta log (no data file read)."""

    columns: tuple[Column, ...]
    rows: int
    size_bytes: int


@dataclass
class _Cached:
    names: CatalogNames
    checked: float  # time.monotonic() of the last check against storage


_lock = threading.Lock()
_listings: dict[tuple[str, str], _Cached] = {}  # (catalog identity, branch) -> listing
_outlines: OrderedDict[tuple, TableOutline] = OrderedDict()


def catalog_names(catalog: str | None = None, branch: str | None = None) -> CatalogNames:
    """The names of ``catalog`` (default: the default one) as ``branch`` (default: the one in
    use) shows them; reads storage at most once per ``RECHECK_S`` while nothing commits here."""
    trunk = main_catalog(catalog)
    branch = branch or current_branch(trunk)
    key = (trunk.identity, branch)
    cached = _listings.get(key)
    now = time.monotonic()
    if cached is not None and now - cached.checked < RECHECK_S:
        return cached.names
    line = trunk.on_branch(branch)
    state = log_of(line).refresh()
    stamps: dict[str, list] = {}
    for (ns, name), entry in state.tables.items():
        stamps.setdefault(f"{ns}.{split_key(name)[0]}", []).append(
            (name, entry.version, entry.incarnation)
        )
    names = CatalogNames(
        catalog=catalog_name(trunk),
        branch=branch,
        sequence=state.sequence,
        namespaces=tuple(sorted(state.namespaces)),
        tables=tuple(sorted(stamps)),
        branches=(MAIN, *(r.name for r in records(trunk.storage))),  # not in the log: read too
        tags=tuple(tags_of(line)),
        stamps={table: tuple(sorted(entries)) for table, entries in stamps.items()},
    )
    with _lock:
        _listings[key] = _Cached(names, now)
    return names


def table_columns(
    table: str, namespace: str | None = None, catalog: str | None = None, branch: str | None = None
) -> tuple[Column, ...]:
    """The columns of a table (``"ns.t"`` or ``t`` with ``namespace``) at the state
    ``catalog_names`` shows."""
    return table_outline(table, namespace, catalog, branch).columns


def table_outline(
    table: str, namespace: str | None = None, catalog: str | None = None, branch: str | None = None
) -> TableOutline:
    """A table's columns, rows and bytes at the state ``catalog_names`` shows, cached until the
    table itself changes (a commit to another table reads nothing again)."""
    names = catalog_names(catalog, branch)
    trunk = main_catalog(catalog)
    loc = locate_in(trunk, table, namespace)
    stamp = names.stamps.get(f"{loc.namespace}.{loc.table_name}")
    key = (trunk.identity, names.branch, loc.namespace, loc.table_name, stamp)
    with _lock:
        found = _outlines.get(key)
        if found is not None:
            _outlines.move_to_end(key)
            return found
    opened = open_table(locate_in(trunk.on_branch(names.branch), table, namespace))
    keys = set(opened.schema.merge_keys)
    found = TableOutline(
        columns=tuple(Column(f.name, str(f.type), f.name in keys) for f in opened.schema),
        rows=opened.live_rows,
        size_bytes=opened.size_bytes,
    )
    with _lock:
        _outlines[key] = found
        while len(_outlines) > MAX_CACHED_TABLES:
            _outlines.popitem(last=False)
    return found


def line_outlines(
    catalog: str | None = None, branch: str | None = None, namespaces: Iterable[str] | None = None
) -> dict[str, TableOutline]:
    """The outline of every table ``catalog_names`` lists (in ``namespaces``, else all;
    ``"ns.t"`` -> outline); a table that cannot be opened now is left out."""
    wanted = None if namespaces is None else set(namespaces)
    found = {}
    for table in catalog_names(catalog, branch).tables:
        if wanted is not None and table.split(".", 1)[0] not in wanted:
            continue
        try:
            found[table] = table_outline(table, None, catalog, branch)
        except WorkbenchError:
            continue
    return found


def forget_names() -> None:
    """Drop every cached listing and column list (the next call reads storage)."""
    with _lock:
        _listings.clear()
        _outlines.clear()


def _forget_root(root: str) -> None:
    """Drop the listings of every catalog on ``root`` (whatever its options: the same tables)."""
    with _lock:
        drop_where(_listings, lambda key: identity_root(key[0]) == root)


def _forget_catalog(identity: str) -> None:
    with _lock:
        for cache in (_listings, _outlines):
            drop_where(cache, lambda key: key[0] == identity)


process_cache("ops.names", forget_names, forget=_forget_catalog)
# a commit here clears its root's listings (any line: publishing a branch changes main)
on_commit(lambda txn, rows: _forget_root(txn.catalog.root))
