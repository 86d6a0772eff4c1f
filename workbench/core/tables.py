"""Table addressing, opening and lifecycle: create, drop, exists, list, describe."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from workbench.core.catalog import DEFAULT_NAMESPACE, Catalog, catalog_name, get_catalog
from workbench.core.errors import (
    InvalidArgumentError,
    NamespaceNotFoundError,
    TableAlreadyExistsError,
    TableNotFoundError,
    TableVersionNotFoundError,
)
from workbench.core.models import TableInfo, TableRef
from workbench.core.names import validate_name
from workbench.core.schema import Schema, SchemaLike
from workbench.core.types import DatasetType, SchemaEvolutionMode, TableProperty

if TYPE_CHECKING:
    from deltalake import DeltaTable

SCHEMALESS_PROPERTY = "workbench.schemaless"


@dataclass(frozen=True)
class Location:
    """Where a table lives: its catalog, namespace and name, validated."""

    catalog: Catalog
    catalog_name: str
    namespace: str
    name: str

    @property
    def uri(self) -> str:
        """URI or path of the Delta table folder."""
        return self.catalog.uri(self.namespace, self.name)

    @property
    def ref(self) -> TableRef:
        """The public reference to this table."""
        return TableRef(self.name, self.namespace, self.catalog_name)

    @property
    def qualified(self) -> str:
        """``namespace.table`` for messages."""
        return f"{self.namespace}.{self.name}"


def locate(table: str, namespace: str | None = None, catalog: str | None = None) -> Location:
    """Validate names and resolve the catalog of a table."""
    cat = get_catalog(catalog)
    return Location(
        cat,
        catalog_name(cat),
        validate_name("namespace", namespace or DEFAULT_NAMESPACE),
        validate_name("table", table),
    )


def _is_dir(catalog: Catalog, *parts: str) -> bool:
    import pyarrow.fs as pafs

    info = catalog.filesystem.get_file_info(catalog.fs_path(*parts))
    return info.type == pafs.FileType.Directory


def namespace_dir_exists(catalog: Catalog, namespace: str) -> bool:
    """True when the namespace folder exists."""
    return _is_dir(catalog, namespace)


def table_dir_exists(loc: Location) -> bool:
    """True when a Delta table exists at the location."""
    return _is_dir(loc.catalog, loc.namespace, loc.name, "_delta_log")


def require_namespace(loc: Location) -> None:
    """Raise ``NamespaceNotFoundError`` unless the table's namespace exists."""
    if not namespace_dir_exists(loc.catalog, loc.namespace):
        raise NamespaceNotFoundError(
            f"Namespace {loc.namespace!r} does not exist in catalog {loc.catalog_name!r}; create "
            "it with dc.create_namespace(...) or pass auto_create_namespace=True."
        )


@dataclass
class OpenTable:
    """A Delta table opened at one version, with workbench's view of its metadata."""

    loc: Location
    delta: DeltaTable
    schema: Schema
    properties: dict[str, str]

    @property
    def version(self) -> int:
        """The Delta version this handle reads."""
        return self.delta.version()

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


def open_table(loc: Location, version: int | None = None) -> OpenTable:
    """Open the table at ``version`` (latest by default)."""
    import pyarrow as pa
    from deltalake import DeltaTable
    from deltalake.exceptions import DeltaError
    from deltalake.exceptions import TableNotFoundError as DeltaNotFound

    options = loc.catalog.properties.storage_options or None
    if version is not None and (not isinstance(version, int) or version < 0):
        raise TableVersionNotFoundError(
            f"Table versions are whole numbers from 0; {version!r} is not one (see dc.get_table)."
        )
    try:
        delta = DeltaTable(loc.uri, version=version, storage_options=options)
    except DeltaNotFound:
        raise TableNotFoundError(
            f"Table {loc.qualified!r} does not exist in catalog {loc.catalog_name!r}; list tables "
            "with dc.list_tables(...) or create it with dc.write(...)."
        ) from None
    except DeltaError:
        latest = DeltaTable(loc.uri, storage_options=options).version()
        raise TableVersionNotFoundError(
            f"Table {loc.qualified!r} has versions 0 to {latest}; {version!r} is not one of them."
        ) from None
    schema = Schema.of(pa.schema(delta.schema().to_arrow()))
    return OpenTable(loc, delta, schema, dict(delta.metadata().configuration))


def decode_reader_types(properties: Mapping[str, str]) -> list[DatasetType]:
    """Supported reader types stored in table properties (all types when unset)."""
    value = properties.get(TableProperty.SUPPORTED_READER_TYPES.value)
    if not value:
        return list(DatasetType)
    return [DatasetType[name] for name in json.loads(value)]


def encode_properties(table_properties: Mapping[Any, Any] | None) -> dict[str, str]:
    """Serialise user table properties to Delta configuration strings."""
    encoded: dict[str, str] = {}
    for key, value in (table_properties or {}).items():
        name = key.value if isinstance(key, TableProperty) else str(key)
        if name == TableProperty.SUPPORTED_READER_TYPES.value:
            try:
                types = [DatasetType(t) for t in value]
            except (TypeError, ValueError) as e:
                raise InvalidArgumentError(
                    f"SUPPORTED_READER_TYPES must be a list of dc.DatasetType, got {value!r}."
                ) from e
            encoded[name] = json.dumps([t.name for t in types])
        elif name == TableProperty.SCHEMA_EVOLUTION_MODE.value:
            try:
                encoded[name] = SchemaEvolutionMode(value).value
            except ValueError as e:
                raise InvalidArgumentError(
                    f"SCHEMA_EVOLUTION_MODE must be a dc.SchemaEvolutionMode, got {value!r}."
                ) from e
        else:
            encoded[name] = str(value)
    return encoded


def create_delta_table(loc: Location, schema: Schema, configuration: dict[str, str]) -> None:
    """Create an empty Delta table with workbench properties in its configuration."""
    from deltalake import DeltaTable

    DeltaTable.create(
        loc.uri,
        schema.arrow,
        configuration=configuration or None,
        storage_options=loc.catalog.properties.storage_options or None,
        raise_if_key_not_exists=False,
    )


def create_table(
    table: str,
    namespace: str | None = None,
    catalog: str | None = None,
    schema: SchemaLike | None = None,
    table_properties: Mapping[Any, Any] | None = None,
    auto_create_namespace: bool = False,
    fail_if_exists: bool = True,
) -> TableInfo:
    """Create an empty table; without a schema it is schemaless (it records written files)."""
    from workbench.core.manifest import manifest_schema
    from workbench.core.namespaces import ensure_namespace

    loc = locate(table, namespace, catalog)
    configuration = encode_properties(table_properties)
    if table_dir_exists(loc):
        if fail_if_exists:
            raise TableAlreadyExistsError(
                f"Table {loc.qualified!r} already exists; drop it first, or write to it with "
                "dc.write(..., mode=dc.TableWriteMode.REPLACE)."
            )
        return get_table(table, loc.namespace, catalog)
    if schema is None:
        configuration[SCHEMALESS_PROPERTY] = "true"
        table_schema = Schema.of(manifest_schema())
    else:
        from workbench.core.evolution import to_storage

        table_schema = to_storage(Schema.of(schema))
    created_namespace = ensure_namespace(loc, auto_create_namespace)
    try:
        create_delta_table(loc, table_schema, configuration)
    except BaseException:
        remove_created(loc, created_namespace)
        raise
    return get_table(table, loc.namespace, catalog)


def remove_created(loc: Location, namespace_too: bool) -> None:
    """Delete a table (and its namespace) created by a call that then failed."""
    fs = loc.catalog.filesystem
    if _is_dir(loc.catalog, loc.namespace, loc.name):
        fs.delete_dir(loc.catalog.fs_path(loc.namespace, loc.name))
    if namespace_too and namespace_dir_exists(loc.catalog, loc.namespace):
        fs.delete_dir(loc.catalog.fs_path(loc.namespace))


def drop_table(table: str, namespace: str | None = None, catalog: str | None = None) -> None:
    """Delete a table and its files."""
    loc = locate(table, namespace, catalog)
    if not table_dir_exists(loc):
        raise TableNotFoundError(
            f"Cannot drop table {loc.qualified!r}: it does not exist in catalog "
            f"{loc.catalog_name!r}."
        )
    loc.catalog.filesystem.delete_dir(loc.catalog.fs_path(loc.namespace, loc.name))


def table_exists(table: str, namespace: str | None = None, catalog: str | None = None) -> bool:
    """True when the table exists."""
    return table_dir_exists(locate(table, namespace, catalog))


def list_tables(namespace: str | None = None, catalog: str | None = None) -> list[TableRef]:
    """References to the tables of a namespace, sorted by name."""
    import pyarrow.fs as pafs

    cat = get_catalog(catalog)
    ns = validate_name("namespace", namespace or DEFAULT_NAMESPACE)
    if not namespace_dir_exists(cat, ns):
        raise NamespaceNotFoundError(
            f"Namespace {ns!r} does not exist in catalog {catalog_name(cat)!r}; see "
            "dc.list_namespaces()."
        )
    fs = cat.filesystem
    children = fs.get_file_info(pafs.FileSelector(cat.fs_path(ns)))
    names = sorted(c.base_name for c in children if c.type == pafs.FileType.Directory)
    logs = fs.get_file_info([cat.fs_path(ns, n, "_delta_log") for n in names])
    return [
        TableRef(n, ns, catalog_name(cat))
        for n, log in zip(names, logs, strict=True)
        if log.type == pafs.FileType.Directory
    ]


def describe(opened: OpenTable) -> TableInfo:
    """Build the public description of an opened table."""
    import pyarrow as pa

    actions = pa.table(opened.delta.get_add_actions(flatten=True))
    counts = actions.column("num_records").to_pylist() if actions.num_rows else []
    sizes = actions.column("size_bytes").to_pylist() if actions.num_rows else []
    loc = opened.loc
    return TableInfo(
        name=loc.name,
        namespace=loc.namespace,
        catalog=loc.catalog_name,
        schema=opened.schema,
        version=opened.version,
        row_count=int(sum(c or 0 for c in counts)),
        file_count=len(sizes),
        size_bytes=int(sum(sizes)),
        schemaless=opened.schemaless,
        properties=opened.properties,
    )


def get_table(
    table: str,
    namespace: str | None = None,
    catalog: str | None = None,
    version: int | None = None,
) -> TableInfo:
    """Describe a table: schema, merge keys, version, row/file counts, bytes, properties."""
    return describe(open_table(locate(table, namespace, catalog), version))
