"""Plain result objects of the API: namespaces, table references and descriptions, write results."""

from __future__ import annotations

from dataclasses import dataclass, field
from html import escape
from typing import Any

from workbench.core.base.names import MAIN
from workbench.core.base.types import ContentType, LifecycleState, TableProperty
from workbench.core.catalog.properties import DEFAULTS, decode_properties
from workbench.core.schema.table_schema import Schema


def html_table(rows: dict[str, Any], css_class: str | None = None) -> str:
    """A result's facts as a two-column HTML table (name, value), for ``_repr_html_``."""
    body = "".join(
        f"<tr><th style='text-align:left'>{escape(k)}</th><td>{escape(str(v))}</td></tr>"
        for k, v in rows.items()
    )
    classes = f" class='{css_class}'" if css_class else ""
    return f"<table{classes}>{body}</table>"


@dataclass(frozen=True)
class Namespace:
    """A namespace: a named group of tables in a catalog."""

    name: str
    catalog: str

    @property
    def url(self) -> str:
        """The ``dc://`` URL of the namespace."""
        return f"dc://{self.catalog}/{self.name}"


@dataclass(frozen=True)
class TableRef:
    """A table's address: catalog, namespace and name."""

    name: str
    namespace: str
    catalog: str

    @property
    def url(self) -> str:
        """The ``dc://`` URL of the table."""
        return f"dc://{self.catalog}/{self.namespace}/{self.name}"


@dataclass(frozen=True)
class Table(TableRef):
    """A table as ``dc.list`` shows it, like the ``Table`` entries of DeltaCAT's listings."""

    @property
    def table_name(self) -> str:
        """The table's name (DeltaCAT's attribute)."""
        return self.name


@dataclass(frozen=True)
class TableVersionView:
    """One table version as DeltaCAT's ``TableVersion`` shows it: name, schema (None when
    schemaless), lifecycle state and decoded properties."""

    table_version: str
    schema: Schema | None
    state: LifecycleState
    properties: dict[TableProperty, Any]
    content_types: list[ContentType] | None = None
    description: str | None = None

    def read_table_property(self, key: TableProperty) -> Any:
        """A property's value, or its default when the version was not given it."""
        return self.properties.get(key, DEFAULTS.get(key))


@dataclass(frozen=True)
class TableView:
    """A table as DeltaCAT's ``Table`` shows it: its names, table-level properties and the
    versions reads pick by default."""

    namespace: str
    table_name: str
    properties: dict[TableProperty, Any]
    latest_table_version: str
    latest_active_table_version: str | None
    description: str | None = None

    def read_table_property(self, key: TableProperty) -> Any:
        """A property's value, or its default when the table was not given it."""
        return self.properties.get(key, DEFAULTS.get(key))


@dataclass(frozen=True)
class TableInfo:
    """A table's description at one version: schema, keys, size and properties."""

    name: str
    namespace: str
    catalog: str
    schema: Schema
    version: int
    row_count: int
    file_count: int
    size_bytes: int
    schemaless: bool
    properties: dict[str, str] = field(default_factory=dict)
    # the Delta table's folder: read it there at ``version`` from other tools ("" for a version
    # only a branch's log holds, which no Delta reader can show: publish it, or dc.read it)
    uri: str = ""
    version_name: str = "1"  # the DeltaCAT table version described (each is a Delta table)
    lifecycle_state: LifecycleState = LifecycleState.ACTIVE
    version_names: tuple[str, ...] = ("1",)  # every version of the table, oldest first
    active_version: str | None = "1"  # the version reads use when none is named
    # table-level properties when they differ from this version's (DeltaCAT's table.properties)
    table_properties: dict[str, str] | None = None
    content_types: tuple[ContentType, ...] | None = None  # accepted by a schemaless version
    description: str | None = None
    branch: str = MAIN  # the branch it was described on

    @property
    def merge_keys(self) -> list[str]:
        """Names of the merge-key columns."""
        return self.schema.merge_keys

    @property
    def url(self) -> str:
        """The ``dc://`` URL of the table."""
        return f"dc://{self.catalog}/{self.namespace}/{self.name}"

    @property
    def table(self) -> TableView:
        """The table as DeltaCAT's ``TableDefinition.table`` shows it."""
        configuration = self.properties if self.table_properties is None else self.table_properties
        return TableView(
            self.namespace,
            self.name,
            decode_properties(configuration),
            self.version_names[-1],
            self.active_version,
        )

    @property
    def table_version(self) -> TableVersionView:
        """This version as DeltaCAT's ``TableDefinition.table_version`` shows it."""
        return TableVersionView(
            self.version_name,
            None if self.schemaless else self.schema,
            self.lifecycle_state,
            decode_properties(self.properties),
            None if self.content_types is None else list(self.content_types),
            self.description,
        )

    def _summary(self) -> dict[str, Any]:
        return {
            "table": f"{self.namespace}.{self.name}",
            "catalog": self.catalog,
            "version": self.version,
            "rows": self.row_count,
            "files": self.file_count,
            "bytes": self.size_bytes,
            "merge keys": ", ".join(self.merge_keys) or "-",
            "schemaless": self.schemaless,
        }

    def __str__(self) -> str:
        lines = [f"{k}: {v}" for k, v in self._summary().items()]
        return "\n".join(lines) + "\n" + repr(self.schema)

    def _repr_html_(self) -> str:
        return html_table(self._summary()) + self.schema._repr_html_()


@dataclass(frozen=True)
class WriteResult:
    """What a write did: the table, the mode used, the new version and rows changed."""

    table: TableRef
    mode: str
    version: int
    rows_added: int
    rows_removed: int = 0
    rows_updated: int = 0
    schema_changes: tuple[str, ...] = ()
    skipped: bool = False  # its idempotency key was committed before: nothing was written

    def __len__(self) -> int:
        """1: DeltaCAT's write returns a list of the deltas it made, one per write, and a
        ``WriteResult`` also stands for that one-item list (``len(r) == 1``, ``r[0] is r``)."""
        return 1

    def __getitem__(self, index: int) -> WriteResult:
        """The result itself at index 0 (or -1), as the only item of that list."""
        return (self,)[index]

    def _summary(self) -> dict[str, Any]:
        return {
            "table": f"{self.table.namespace}.{self.table.name}",
            "mode": self.mode,
            "version": self.version,
            "rows added": self.rows_added,
            "rows updated": self.rows_updated,
            "rows removed": self.rows_removed,
            "schema changes": ", ".join(self.schema_changes) or "-",
            **({"skipped": "yes: its idempotency key was committed"} if self.skipped else {}),
        }

    def __str__(self) -> str:
        return ", ".join(f"{k}={v}" for k, v in self._summary().items())

    def _repr_html_(self) -> str:
        return html_table(self._summary())
