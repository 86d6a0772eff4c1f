"""What a catalog holds at one point of its log: namespaces and each table's Delta version and
incarnation, built by applying log rows in order and saved now and then as JSON, so an open
reads the newest saved state and the rows after it rather than the whole log."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from workbench.core.base.errors import LogVersionError
from workbench.core.catalog.registry import DEFAULT_NAMESPACE
from workbench.core.catalog.versions import is_version_key, split_key
from workbench.core.transactions.idempotency import keys_of

LOG_SCHEMA_VERSION = 2
NAMESPACE_CREATED = "CREATE_NAMESPACE"
NAMESPACE_DROPPED = "DROP_NAMESPACE"


@dataclass(frozen=True)
class TableEntry:
    """A table as a catalog state records it: Delta version and incarnation."""

    version: int
    incarnation: str


@dataclass
class CatalogState:
    """Namespaces and table versions after the transaction with ``sequence`` committed."""

    sequence: int = -1
    end_time: int = 0
    # Every catalog starts with the namespace ``default`` (as in DeltaCAT); it can be dropped.
    namespaces: set[str] = field(default_factory=lambda: {DEFAULT_NAMESPACE})
    tables: dict[tuple[str, str], TableEntry] = field(default_factory=dict)
    # app id -> the newest version of it a committed transaction carried (idempotency keys)
    apps: dict[str, int] = field(default_factory=dict)
    # (namespace, table) -> names of its later versions; built on first use, reset by apply
    _later: dict[tuple[str, str], list[str]] | None = field(default=None, repr=False, compare=False)

    def later_versions(self, namespace: str, table: str) -> list[str]:
        """The names this state records a table's versions after the first under."""
        if self._later is None:
            self._later = {}
            for ns, name in self.tables:
                if is_version_key(name):
                    self._later.setdefault((ns, split_key(name)[0]), []).append(name)
        return self._later.get((namespace, table), [])

    def copy(self) -> CatalogState:
        """An independent copy."""
        return CatalogState(
            self.sequence, self.end_time, set(self.namespaces), dict(self.tables), dict(self.apps)
        )

    def apply(self, row: dict[str, Any]) -> None:
        """Apply one log row."""
        self.sequence, self.end_time = row["sequence"], row["end_time"]
        self._later = None
        for app, version in keys_of(row.get("details")).items():
            self.apps[app] = max(version, self.apps.get(app, version))
        if row["table_name"] is None:
            if row["operation"] == NAMESPACE_DROPPED:
                self.namespaces.discard(row["namespace"])
            else:
                self.namespaces.add(row["namespace"])
            return
        key = (row["namespace"], row["table_name"])
        if row["table_version"] is None:
            self.tables.pop(key, None)
        else:
            self.namespaces.add(row["namespace"])
            self.tables[key] = TableEntry(row["table_version"], row["incarnation"])

    def incarnation_versions(self) -> dict[str, int]:
        """Each table incarnation of this state and its version."""
        return {e.incarnation: e.version for e in self.tables.values()}

    def encode(self, log_version: int) -> bytes:
        """The state as JSON, as saved every ``STATE_EVERY`` commits."""
        return json.dumps(
            {
                "schema_version": LOG_SCHEMA_VERSION,
                "sequence": self.sequence,
                "end_time": self.end_time,
                "log_version": log_version,
                "namespaces": sorted(self.namespaces),
                "tables": [[ns, t, e.version, e.incarnation] for (ns, t), e in self.tables.items()],
                "apps": self.apps,
            }
        ).encode()

    @classmethod
    def decode(cls, data: bytes) -> tuple[CatalogState, int]:
        """A saved state and the log version it was taken at."""
        saved = json.loads(data)
        check_log_version(saved.get("schema_version", 1), "the saved catalog state")
        tables = {(ns, t): TableEntry(v, inc) for ns, t, v, inc in saved["tables"]}
        apps = {app: int(version) for app, version in saved.get("apps", {}).items()}
        return (
            cls(saved["sequence"], saved["end_time"], set(saved["namespaces"]), tables, apps),
            saved["log_version"],
        )


def check_log_version(found: int, what: str) -> None:
    """Refuse a log (or saved state) written with a newer log schema than this one reads."""
    if found > LOG_SCHEMA_VERSION:
        raise LogVersionError(
            f"{what[0].upper()}{what[1:]} was written by a newer workbench (log schema {found}; "
            f"this one reads up to {LOG_SCHEMA_VERSION}); upgrade workbench to open it."
        )
