"""Table addressing, opening and lifecycle: create, drop, exists, list, describe."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from workbench.core.base.errors import (
    InvalidNameError,
    NamespaceNotFoundError,
    TableVersionNotFoundError,
)
from workbench.core.base.names import split_qualified, validate_name
from workbench.core.base.types import (
    DatasetType,
    SchemaEvolutionMode,
    TableProperty,
)
from workbench.core.catalog.catalogs import Catalog
from workbench.core.catalog.descriptions import TableRef
from workbench.core.catalog.properties import (
    SCHEMALESS_PROPERTY,
    decode_reader_types,
)
from workbench.core.catalog.registry import DEFAULT_NAMESPACE, catalog_name
from workbench.core.catalog.scope import get_catalog
from workbench.core.catalog.versions import key_name, label, split_key
from workbench.core.delta.reading import check_files_readable
from workbench.core.delta.snapshot import Snapshot

if TYPE_CHECKING:
    from deltalake import DeltaTable

    from workbench.core.delta.commits import TableActions
    from workbench.core.delta.data_files import DataFile
    from workbench.core.filters.expression import Expr
    from workbench.core.schema.table_schema import Schema
    from workbench.core.storage.store import Storage


PATH_MAX = 4096  # Linux's limit on a path's length
# Longest path inside a table folder: a Spark part file in its staging folder, or a checkpoint.
LONGEST_FILE_SUFFIX = 128


@dataclass(frozen=True)
class Location:
    """Where a table version lives: its catalog, namespace and the name the catalog records
    it under (the table's name for version 1, see ``versions``), validated."""

    catalog: Catalog
    catalog_name: str
    namespace: str
    name: str

    @property
    def uri(self) -> str:
        """URI or path of the Delta table folder."""
        return self.catalog.uri(self.namespace, self.name)

    @property
    def table_name(self) -> str:
        """The table's name (without its version)."""
        return split_key(self.name)[0]

    @property
    def version_name(self) -> str:
        """The name of the table version (``1`` unless another was named)."""
        return split_key(self.name)[1]

    @property
    def ref(self) -> TableRef:
        """The public reference to this table."""
        return TableRef(self.table_name, self.namespace, self.catalog_name)

    @property
    def qualified(self) -> str:
        """``namespace.table`` for messages (with the version when it is not the first)."""
        return f"{self.namespace}.{label(self.name)}"

    def versioned(self, version: str) -> Location:
        """The location of another version of the same table."""
        return replace(self, name=key_name(self.table_name, version))


def locate(table: str, namespace: str | None = None, catalog: str | None = None) -> Location:
    """Validate names and resolve the catalog of a table (its version 1; see ``versions``)."""
    return locate_in(get_catalog(catalog), table, namespace)


def locate_in(cat: Catalog, table: str, namespace: str | None = None) -> Location:
    """Validate names and place a table in a catalog object (a line of it: main or a branch),
    registered or not; ``table`` may be ``namespace.table``."""
    table, namespace = split_qualified(table, namespace)
    loc = Location(
        cat,
        catalog_name(cat),
        namespace_name(cat, namespace),
        validate_name("table", table, cat.max_name_length),
    )
    if cat.is_local and len(os.fsencode(loc.uri)) + LONGEST_FILE_SUFFIX > PATH_MAX:
        raise InvalidNameError(
            f"The folder of table {loc.qualified[:40]}... would be {len(loc.uri)} characters "
            f"long; with the files inside it that passes the {PATH_MAX}-byte path limit. Use "
            "shorter names or a catalog root nearer the top of the filesystem."
        )
    return loc


def locate_key(key: str, namespace: str, catalog: str) -> Location:
    """The location of a table version from the name the catalog records it under."""
    table, version = split_key(key)
    return locate(table, namespace, catalog).versioned(version)


def namespace_name(catalog: Catalog, namespace: str | None) -> str:
    """The validated namespace name (None means the default namespace; "" is invalid)."""
    if namespace is None:
        return DEFAULT_NAMESPACE
    return validate_name("namespace", namespace, catalog.max_name_length)


def require_namespace(loc: Location, exists: bool) -> None:
    """Raise ``NamespaceNotFoundError`` unless the table's namespace exists."""
    if not exists:
        raise NamespaceNotFoundError(
            f"Namespace {loc.namespace!r} does not exist in catalog {loc.catalog_name!r}; create "
            "it with dc.create_namespace(...) or pass auto_create_namespace=True."
        )


@dataclass
class OpenTable:
    """A table at one version as the catalog shows it: where it is, which incarnation, and its
    Delta state (from the table's Delta log, plus actions the catalog committed that are not
    yet in it, plus, inside a transaction, the transaction's own staged changes)."""

    loc: Location
    uri: str
    incarnation: str
    snapshot: Snapshot
    narrowed_by: Expr | None = None  # the condition its files were chosen by, if any

    @property
    def version(self) -> int:
        return self.snapshot.version

    @property
    def schema(self) -> Schema:
        return self.snapshot.schema

    @property
    def properties(self) -> dict[str, str]:
        return self.snapshot.properties

    @property
    def files(self) -> list[DataFile]:
        return self.snapshot.files

    @property
    def live_rows(self) -> int:
        """Its rows, deleted ones left out (from the log: no data file read)."""
        return sum(f.live_rows for f in self.files)

    @property
    def size_bytes(self) -> int:
        """The bytes of its data files."""
        return sum(f.size for f in self.files)

    @property
    def reader_version(self) -> int:
        return self.snapshot.reader_version

    @property
    def table_id(self) -> str:
        return self.snapshot.table_id

    @property
    def reader_features(self) -> tuple[str, ...]:
        return self.snapshot.reader_features

    @property
    def storage(self) -> Storage:
        """The storage the table's files are on (its catalog's)."""
        return self.loc.catalog.storage

    @property
    def storage_options(self) -> dict[str, str] | None:
        """Options deltalake reaches the catalog's storage with (credentials, endpoint, the
        default retry and timeout limits on an object store)."""
        return self.storage.delta_options

    @property
    def schemaless(self) -> bool:
        """True for tables that record files as a manifest instead of rows."""
        return self.properties.get(SCHEMALESS_PROPERTY) == "true"

    @property
    def reader_types(self) -> list[DatasetType]:
        """Dataset types every write must stay readable by."""
        return decode_reader_types(self.properties)

    @property
    def evolution_mode(self) -> SchemaEvolutionMode:
        """How writes may change the schema."""
        value = self.properties.get(TableProperty.SCHEMA_EVOLUTION_MODE.value)
        return SchemaEvolutionMode(value) if value else SchemaEvolutionMode.AUTO

    def with_files(self, files: list[DataFile], narrowed_by: Expr | None = None) -> OpenTable:
        """The same version read through ``files`` only (those a filter could match;
        ``narrowed_by``: that filter, by which readers may also leave out row groups)."""
        return replace(self, snapshot=replace(self.snapshot, files=files), narrowed_by=narrowed_by)

    def with_actions(self, actions: TableActions, version: int) -> OpenTable:
        """The table after ``actions`` (files added and removed, metadata changed)."""
        return replace(self, snapshot=self.snapshot.with_actions(actions, version, self.uri))


def empty_table(loc: Location, uri: str, incarnation: str) -> OpenTable:
    """A table before its first commit (its staged actions give it a schema)."""
    return OpenTable(loc, uri, incarnation, Snapshot.empty())


def from_delta(loc: Location, uri: str, incarnation: str, delta: DeltaTable) -> OpenTable:
    """A table at the version a ``DeltaTable`` handle reads."""
    return OpenTable(loc, uri, incarnation, Snapshot.of_delta(delta, uri))


def vacuumed(opened: OpenTable, cause: Exception) -> TableVersionNotFoundError:
    """The error for a read of a table version whose files ``dc.vacuum`` removed."""
    return TableVersionNotFoundError(
        f"Version {opened.version} of table {opened.loc.qualified!r} can no longer be read: "
        f"dc.vacuum removed files it needs ({cause})."
    )


@contextmanager
def reading(opened: OpenTable) -> Iterator[None]:
    """A block that reads ``opened``: a file it finds gone raises ``vacuumed``'s error."""
    try:
        yield
    except FileNotFoundError as e:
        raise vacuumed(opened, e) from e


def check_readable(opened: OpenTable, files: list[DataFile] | None = None) -> None:
    """What a lazy read checks before an engine plans it: a file of ``files`` (default: the
    version's) or a vector they need that vacuum removed, or a store that refuses, fails now
    with workbench's typed error, not half-way in the engine's own words."""
    with reading(opened):
        check_files_readable(opened, opened.files if files is None else files)
