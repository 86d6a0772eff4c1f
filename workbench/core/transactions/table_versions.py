"""Which version of a table a call means, as a transaction (or a view) sees the catalog: the
versions present and not dropped, the current one, the one a read or a write goes to, and
``open_table``, which opens the one a read means."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from workbench.core.base.errors import (
    TableNotFoundError,
    TableVersionAlreadyExistsError,
    TableVersionNotFoundError,
)
from workbench.core.base.types import LifecycleState, TableWriteMode
from workbench.core.catalog.versions import (
    FIRST_VERSION,
    VERSIONS_FOLDER,
    check_version_name,
    lifecycle_of,
    split_key,
    table_configuration,
    version_configuration,
    version_number,
)
from workbench.core.transactions.context import view
from workbench.core.transactions.opening import committed_table, open_in

if TYPE_CHECKING:
    from workbench.core.catalog.locations import Location, OpenTable
    from workbench.core.transactions.transaction import Transaction


def versions_in(seen: Transaction, namespace: str, table: str) -> list[str]:
    """The versions of a table a transaction (or view) sees, oldest first. Not recorded as
    reads: a writer takes the lease of the version it picks, and opening it records the read."""
    prefix = f"{table}/{VERSIONS_FOLDER}/"
    keys = {table, *seen.state.later_versions(namespace, table)}
    keys |= {n for (ns, n) in seen.changes if ns == namespace and n.startswith(prefix)}
    present = [k for k in keys if seen.entry(namespace, k, record=False) is not None]
    return sorted((split_key(k)[1] for k in present), key=version_number)


def live_versions(seen: Transaction, loc: Location, names: list[str]) -> list[str]:
    """The versions of ``names`` not dropped (whose lifecycle state is not DELETED), oldest
    first. A table always keeps one: dropping its last version drops the table."""
    if len(names) < 2:
        return names
    deleted = LifecycleState.DELETED
    return [n for n in names if lifecycle_of(_configuration(seen, loc.versioned(n))) is not deleted]


def dropped_version(loc: Location, name: str, live: list[str]) -> TableVersionNotFoundError:
    """The error for a call naming version ``name``, which was dropped."""
    return TableVersionNotFoundError(
        f"Table version {loc.qualified}.{name} was dropped (dc.drop_table(..., "
        f"table_version={name!r}) made it DELETED); its rows stay readable only through time "
        f"travel (as_of=...). The table's versions are {', '.join(live)}."
    )


@dataclass(frozen=True)
class Target:
    """The table version a call acts on: its location, and whether the call creates it (a new
    table, or a new version of an existing one, whose table-level properties it inherits)."""

    loc: Location
    creates: bool
    new_version_of_existing: bool = False


def active_version(seen: Transaction, loc: Location, names: list[str]) -> str | None:
    """The newest ACTIVE version of a table, if it has one."""
    for name in reversed(names):
        if lifecycle_of(_configuration(seen, loc.versioned(name))) is LifecycleState.ACTIVE:
            return name
    return None


def current_version(seen: Transaction, loc: Location, names: list[str]) -> str:
    """The version used when none is named: the newest ACTIVE one, else the newest."""
    return active_version(seen, loc, names) or names[-1]


def for_read(seen: Transaction, loc: Location, version: Any) -> Location:
    """The location of the version to read (or describe): the named one, else the current."""
    names = versions_in(seen, loc.namespace, loc.table_name)
    if not names:
        return loc  # opening it reports the missing table
    live = live_versions(seen, loc, names)
    if version is None:
        return loc.versioned(current_version(seen, loc, live))
    wanted = check_version_name(version)
    if wanted in names and wanted not in live:
        raise dropped_version(loc, wanted, live)
    if wanted not in live:
        raise TableVersionNotFoundError(
            f"Table version {loc.qualified}.{wanted} does not exist; the table's versions are "
            f"{', '.join(live)}."
        )
    return loc.versioned(wanted)


def for_write(
    seen: Transaction, loc: Location, version: Any, mode: TableWriteMode, creating: bool
) -> Target:
    """The version a write in ``mode`` goes to, checked as DeltaCAT checks it: only modes that
    create (``creating``) make a missing table or version, and CREATE never writes to one
    that exists. The table's existence is checked before anything about merge keys."""
    names = versions_in(seen, loc.namespace, loc.table_name)
    wanted = None if version is None else check_version_name(version)
    if not names:
        if not creating:
            raise TableNotFoundError(
                f"Table does not exist: cannot {mode.name} table {loc.qualified!r} in catalog "
                f"{loc.catalog_name!r}. Create it with mode=dc.TableWriteMode.CREATE (or AUTO)."
            )
        return Target(loc.versioned(wanted or FIRST_VERSION), creates=True)
    live = live_versions(seen, loc, names)
    if wanted is None:
        return Target(loc.versioned(current_version(seen, loc, live)), creates=False)
    if wanted in names and wanted not in live and mode is not TableWriteMode.CREATE:
        raise dropped_version(loc, wanted, live)
    if wanted in live:
        if mode is TableWriteMode.CREATE:
            raise TableVersionAlreadyExistsError(
                f"Table version {loc.qualified}.{wanted} already exists and write mode is CREATE; "
                "write to it with another mode, or create a newer version."
            )
        return Target(loc.versioned(wanted), creates=False)
    if not creating:
        raise TableVersionNotFoundError(
            f"Table version {loc.qualified}.{wanted} does not exist and write mode is "
            f"{mode.name}. Use mode CREATE or AUTO to create it, or leave table_version out "
            "to write to the current version."
        )
    if version_number(wanted) <= version_number(names[-1]):
        raise TableVersionAlreadyExistsError(
            f"Table version {loc.qualified}.{wanted} cannot be created: versions only move "
            f"forward and {loc.qualified} has had version {names[-1]}; use a higher number."
        )
    return Target(loc.versioned(wanted), creates=True, new_version_of_existing=True)


def new_configuration(
    seen: Transaction,
    target: Target,
    table_properties: Mapping[str, str],
    version_properties: Mapping[str, str],
    lifecycle: LifecycleState | None,
) -> dict[str, str]:
    """The configuration of a version being created: a new version of an existing table
    inherits the table's properties as they are now (those recorded with its newest version),
    updated by ``table_properties``; the version's own properties go on top."""
    table_level = dict(table_properties)
    if target.new_version_of_existing:
        table_level = {**newest_table_configuration(seen, target.loc), **table_properties}
    return version_configuration(table_level, version_properties, lifecycle)


def newest_table_configuration(seen: Transaction, loc: Location) -> dict[str, str]:
    """The table-level properties of a table: those recorded with its newest version."""
    names = versions_in(seen, loc.namespace, loc.table_name)
    return table_configuration(_configuration(seen, loc.versioned(names[-1])))


def _configuration(seen: Transaction, loc: Location) -> Mapping[str, str]:
    """A present version's Delta configuration, not recorded as a read (see ``versions_in``)."""
    change = seen.changes.get((loc.namespace, loc.name))
    if change is not None:
        return change.table.properties
    return committed_table(loc, seen.state.tables[(loc.namespace, loc.name)]).properties


def open_table(
    loc: Location, version: int | None = None, as_of: Any = None, table_version: Any = None
) -> OpenTable:
    """Open a table as the catalog shows it (or at Delta ``version``, or ``as_of`` a past point),
    inside a transaction with its own changes: its version ``table_version``, else its current
    one."""
    return open_seen(view(loc.catalog, as_of), loc, version, as_of, table_version)


def open_seen(
    seen: Transaction,
    loc: Location,
    version: int | None = None,
    as_of: Any = None,
    table_version: Any = None,
) -> OpenTable:
    """``open_table`` as ``seen`` (a view already resolved: a query of many tables asks the
    catalog's log once) shows the table."""
    return open_in(seen, for_read(seen, loc, table_version), version, as_of)
