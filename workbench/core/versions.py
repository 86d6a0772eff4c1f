"""DeltaCAT table versions on Delta Lake: every version of a table is a Delta table of its own.

Version ``1`` (the one every table starts with) lives in the table's folder
``<namespace>/<table>/``, so a table that never gets a second version is an ordinary Delta
table there. Any other version ``v`` lives in ``<namespace>/<table>/_versions/<v>/`` (Delta
readers and vacuum skip folders whose names start with ``_``) and the catalog records it under
the name ``<table>/_versions/<v>``. Version names are a number with an optional ``prefix.``
(``2``, ``v.3``); they only move forward. Reads and writes that name no version use the newest
``ACTIVE`` one, the table's current version.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from workbench.core.content_types import CONTENT_TYPES_PROPERTY
from workbench.core.errors import (
    InvalidArgumentError,
    TableNotFoundError,
    TableVersionAlreadyExistsError,
    TableVersionNotFoundError,
)
from workbench.core.manifest import SCHEMALESS_PROPERTY
from workbench.core.properties import DESCRIPTION_PROPERTY
from workbench.core.types import LifecycleState, TableProperty, TableWriteMode

if TYPE_CHECKING:
    from workbench.core.tables import Location
    from workbench.core.transaction import Transaction

FIRST_VERSION = "1"
VERSIONS_FOLDER = "_versions"
LIFECYCLE_PROPERTY = "workbench.lifecycleState"
# Table-level properties (DeltaCAT's ``table.properties``) where they differ from the version's.
TABLE_PROPERTIES_PROPERTY = "workbench.tableProperties"
_VERSION_NAME = re.compile(r"(?:[A-Za-z0-9][A-Za-z0-9_-]*\.)?([0-9]{1,18})")


def check_version_name(value: object) -> str:
    """A version name as given (``"2"``, ``"v.3"``; an int is taken as its digits)."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        value = str(value)
    if not isinstance(value, str) or not _VERSION_NAME.fullmatch(value):
        raise InvalidArgumentError(
            f"Invalid table version {value}: a table version is a number, optionally after a "
            "prefix and a dot, e.g. table_version='2' or table_version='v.2'."
        )
    return value


def version_number(name: str) -> int:
    """The number that orders a version name (``v.3`` -> 3)."""
    return int(name.rsplit(".", 1)[-1])


def key_name(table: str, version: str) -> str:
    """The name the catalog records a table version under."""
    return table if version == FIRST_VERSION else f"{table}/{VERSIONS_FOLDER}/{version}"


def split_key(name: str) -> tuple[str, str]:
    """The table and version names of a catalog name (``t/_versions/2`` -> ``t``, ``2``)."""
    table, _, version = name.partition(f"/{VERSIONS_FOLDER}/")
    return table, version or FIRST_VERSION


def label(name: str) -> str:
    """A catalog name for people: ``t``, or ``t (version 2)`` for a later version."""
    table, version = split_key(name)
    return table if version == FIRST_VERSION else f"{table} (version {version})"


def is_version_key(name: str) -> bool:
    """True for the catalog names of versions other than the first."""
    return f"/{VERSIONS_FOLDER}/" in name


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


def lifecycle_of(configuration: Mapping[str, str]) -> LifecycleState:
    """A version's lifecycle state, as its Delta configuration records it."""
    return LifecycleState(configuration.get(LIFECYCLE_PROPERTY, LifecycleState.ACTIVE.value))


def table_configuration(configuration: Mapping[str, str]) -> dict[str, str]:
    """The table-level properties recorded with a version (its own when none are)."""
    recorded = configuration.get(TABLE_PROPERTIES_PROPERTY)
    if recorded is not None:
        return json.loads(recorded)
    return {k: v for k, v in configuration.items() if k not in _VERSION_ONLY}


# Recorded per version, never inherited: its state, the table's properties, being schemaless.
_VERSION_ONLY = (
    LIFECYCLE_PROPERTY,
    TABLE_PROPERTIES_PROPERTY,
    SCHEMALESS_PROPERTY,
    CONTENT_TYPES_PROPERTY,
    DESCRIPTION_PROPERTY,
)


def version_configuration(
    table_level: Mapping[str, str],
    own: Mapping[str, str],
    lifecycle: LifecycleState | None,
) -> dict[str, str]:
    """A new version's configuration: the table's properties overlaid with the version's own,
    its lifecycle state, and the table's properties when they differ from the result."""
    configuration = {**table_level, **own}
    if lifecycle not in (None, LifecycleState.ACTIVE):
        configuration[LIFECYCLE_PROPERTY] = LifecycleState(lifecycle).value
    if table_configuration(configuration) != dict(table_level):
        configuration[TABLE_PROPERTIES_PROPERTY] = json.dumps(dict(table_level), sort_keys=True)
    return configuration


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
    from workbench.core.tables import committed_table

    change = seen.changes.get((loc.namespace, loc.name))
    if change is not None:
        return change.table.properties
    return committed_table(loc, seen.state.tables[(loc.namespace, loc.name)]).properties


def version_arguments(
    table_properties: Mapping[Any, Any] | None,
    table_version_properties: Mapping[Any, Any] | None,
    lifecycle_state: Any,
) -> tuple[dict[str, str], dict[str, str], LifecycleState | None]:
    """The property and lifecycle arguments of a call that creates or changes a version,
    checked: the table's properties and the version's own, encoded, and the state."""
    from workbench.core.properties import encode_properties

    _reserved(table_properties)
    _reserved(table_version_properties)
    return (
        encode_properties(table_properties),
        encode_properties(table_version_properties),
        _lifecycle(lifecycle_state),
    )


def _lifecycle(value: Any) -> LifecycleState | None:
    """A lifecycle state argument, checked."""
    if value is None:
        return None
    try:
        return LifecycleState(value)
    except ValueError:
        raise InvalidArgumentError(
            f"lifecycle_state={value!r} is not a dc.LifecycleState "
            f"({', '.join(s.name for s in LifecycleState)})."
        ) from None


def _reserved(properties: Mapping[Any, Any] | None) -> None:
    """Refuse user properties that would overwrite what versions record themselves."""
    for key in properties or {}:
        name = key.value if isinstance(key, TableProperty) else key
        if name in _VERSION_ONLY:
            raise InvalidArgumentError(
                f"Table property {name!r} is kept by workbench itself; use lifecycle_state= and "
                "table_properties= instead."
            )
