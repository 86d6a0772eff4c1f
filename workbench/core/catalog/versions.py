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
from typing import TYPE_CHECKING, Any

from workbench.core.base.arguments import choice
from workbench.core.base.errors import (
    InvalidArgumentError,
)
from workbench.core.base.types import LifecycleState, TableProperty
from workbench.core.catalog.content_types import CONTENT_TYPES_PROPERTY
from workbench.core.catalog.properties import DESCRIPTION_PROPERTY, SCHEMALESS_PROPERTY

if TYPE_CHECKING:
    pass

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


def version_arguments(
    table_properties: Mapping[Any, Any] | None,
    table_version_properties: Mapping[Any, Any] | None,
    lifecycle_state: Any,
) -> tuple[dict[str, str], dict[str, str], LifecycleState | None]:
    """The property and lifecycle arguments of a call that creates or changes a version,
    checked: the table's properties and the version's own, encoded, and the state."""
    from workbench.core.catalog.properties import encode_properties

    _reserved(table_properties)
    _reserved(table_version_properties)
    return (
        encode_properties(table_properties),
        encode_properties(table_version_properties),
        _lifecycle(lifecycle_state),
    )


def _lifecycle(value: Any) -> LifecycleState | None:
    """A lifecycle state argument, checked."""
    return None if value is None else choice(LifecycleState, value, "lifecycle_state")


def _reserved(properties: Mapping[Any, Any] | None) -> None:
    """Refuse user properties that would overwrite what versions record themselves."""
    for key in properties or {}:
        name = key.value if isinstance(key, TableProperty) else key
        if name in _VERSION_ONLY:
            raise InvalidArgumentError(
                f"Table property {name!r} is kept by workbench itself; use lifecycle_state= and "
                "table_properties= instead."
            )
