"""Table addressing, opening and lifecycle: create, drop, exists, list, describe."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from workbench.core.arguments import flag, whole_number
from workbench.core.catalog import DEFAULT_NAMESPACE, Catalog, catalog_name, get_catalog
from workbench.core.commit import stage_new_schemaless_table, stage_new_table
from workbench.core.content_types import (
    accepted_content_types,
    encode_content_types,
    parse_content_types,
)
from workbench.core.context import operation, view
from workbench.core.deltalog import TableActions
from workbench.core.errors import (
    InvalidNameError,
    NamespaceNotFoundError,
    TableAlreadyExistsError,
    TableNotFoundError,
    TableVersionAlreadyExistsError,
    TableVersionNotFoundError,
)
from workbench.core.evolution import to_storage
from workbench.core.layout import table_uri
from workbench.core.manifest import SCHEMALESS_PROPERTY
from workbench.core.models import TableInfo, TableRef
from workbench.core.names import validate_name
from workbench.core.properties import (
    check_read_optimization,
    decode_reader_types,
)
from workbench.core.remembered import recall, remember
from workbench.core.schema import Schema, SchemaLike, stored_schema
from workbench.core.snapshot import DataFile, data_files_of, in_write_order
from workbench.core.types import (
    ContentType,
    DatasetType,
    LifecycleState,
    SchemaEvolutionMode,
    TableProperty,
    TableWriteMode,
)
from workbench.core.versions import (
    active_version,
    check_version_name,
    for_read,
    for_write,
    key_name,
    label,
    lifecycle_of,
    live_versions,
    new_configuration,
    split_key,
    table_configuration,
    version_arguments,
    versions_in,
)

if TYPE_CHECKING:
    from deltalake import DeltaTable

    from workbench.core.transaction import Transaction
    from workbench.core.txlog import TableEntry

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
    cat = get_catalog(catalog)
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
    """A table at one version as the catalog shows it: its files, schema and properties. The
    files come from the table's Delta log, plus actions the catalog committed that are not yet
    in it, plus, inside a transaction, the transaction's own staged changes."""

    loc: Location
    uri: str
    incarnation: str
    version: int
    schema: Schema
    properties: dict[str, str]
    files: list[DataFile]
    reader_version: int = 1
    # the Delta table's id: its metaData action keeps it across versions
    table_id: str = ""
    reader_features: tuple[str, ...] = ()

    @property
    def storage_options(self) -> dict[str, str] | None:
        """Options for reaching the catalog's storage (credentials, endpoint)."""
        return self.loc.catalog.properties.storage_options or None

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

    def with_actions(self, actions: TableActions, version: int) -> OpenTable:
        """The table after ``actions`` (files added and removed, metadata changed)."""
        import pyarrow as pa
        from deltalake import Schema as DeltaSchema

        files = {f.path: f for f in self.files}
        for path in actions.removes:
            files.pop(path, None)
        for path, add in actions.adds.items():
            files[path] = DataFile.from_add(add["add"], self.uri)
        schema, properties, reader = self.schema, self.properties, self.reader_version
        table_id = self.table_id
        if actions.metadata:
            meta = actions.metadata["metaData"]
            properties, table_id = dict(meta["configuration"]), meta["id"]
            arrow = pa.schema(DeltaSchema.from_json(meta["schemaString"]).to_arrow())
            schema = stored_schema(arrow, properties)
        features = self.reader_features
        if actions.protocol:
            reader = actions.protocol["protocol"]["minReaderVersion"]
            features = tuple(actions.protocol["protocol"].get("readerFeatures") or ())
        return replace(
            self,
            version=version,
            schema=schema,
            properties=properties,
            files=in_write_order(list(files.values())),
            reader_version=reader,
            table_id=table_id,
            reader_features=features,
        )


def empty_table(loc: Location, uri: str, incarnation: str) -> OpenTable:
    """A table before its first commit (its staged actions give it a schema)."""
    return OpenTable(loc, uri, incarnation, -1, Schema([]), {}, [])


def from_delta(loc: Location, uri: str, incarnation: str, delta: DeltaTable) -> OpenTable:
    """A table at the version a ``DeltaTable`` handle reads."""
    import pyarrow as pa

    return OpenTable(
        loc,
        uri,
        incarnation,
        delta.version(),
        stored_schema(pa.schema(delta.schema().to_arrow()), delta.metadata().configuration),
        dict(delta.metadata().configuration),
        data_files_of(delta, uri),
        delta.protocol().min_reader_version,
        delta.metadata().id,
        tuple(delta.protocol().reader_features or ()),
    )


def open_table(
    loc: Location, version: int | None = None, as_of: Any = None, table_version: Any = None
) -> OpenTable:
    """Open a table as the catalog shows it (or at Delta ``version``, or ``as_of`` a past point),
    inside a transaction with its own changes: its version ``table_version``, else its current
    one."""
    seen = view(loc.catalog, as_of)
    return open_in(seen, for_read(seen, loc, table_version), version, as_of)


def open_in(
    seen: Transaction, loc: Location, version: int | None = None, as_of: Any = None
) -> OpenTable:
    """Open a table version as a transaction (or view) ``seen`` shows it."""
    entry = seen.entry(loc.namespace, loc.name)
    if entry is None:
        from workbench.core.timetravel import before_history_note

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
    from deltalake.exceptions import DeltaError
    from deltalake.exceptions import TableNotFoundError as DeltaTableNotFound

    from workbench.core.handles import at_version, head_version
    from workbench.core.txlog import log_of

    uri = table_uri(loc.catalog, loc.namespace, loc.name, entry)
    options = loc.catalog.properties.storage_options or None
    wanted = entry.version if version is None else version
    log = log_of(loc.catalog)
    recalled = recall(uri, entry.incarnation, wanted, log)
    if recalled is not None:
        return replace(recalled, loc=loc)
    try:
        head = min(head_version(uri, entry.incarnation, options, wanted), wanted)
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
    remember(table)
    return table


def vacuumed(opened: OpenTable, cause: Exception) -> TableVersionNotFoundError:
    """The error for a read of a table version whose files ``dc.vacuum`` removed."""
    return TableVersionNotFoundError(
        f"Version {opened.version} of table {opened.loc.qualified!r} can no longer be read: "
        f"dc.vacuum removed files it needs ({cause})."
    )


def _check_version(loc: Location, entry: TableEntry, version: int) -> None:
    """Only versions a committed catalog transaction recorded (or the one in view) are readable;
    other Delta versions hold rows of failed or unfinished transactions."""
    from workbench.core.txlog import log_of

    recorded = log_of(loc.catalog).recorded_versions(entry.incarnation)
    readable = sorted({v for v in recorded if v <= entry.version} | {entry.version})
    if version not in readable:
        shown = ", ".join(map(str, readable[-10:]))
        raise TableVersionNotFoundError(
            f"Table {loc.qualified!r} has no version {version}; its readable versions are "
            f"{'..., ' if len(readable) > 10 else ''}{shown} (see dc.transactions(table=...))."
        )


def create_table(
    table: str,
    namespace: str | None = None,
    catalog: str | None = None,
    schema: SchemaLike | None = None,
    table_properties: Mapping[Any, Any] | None = None,
    auto_create_namespace: bool = False,
    fail_if_exists: bool = True,
    *,
    table_version: str | None = None,
    table_version_properties: Mapping[Any, Any] | None = None,
    lifecycle_state: LifecycleState | str | None = None,
    content_types: Iterable[ContentType | str] | None = None,
) -> TableInfo:
    """Create an empty table, or a new ``table_version`` of one; without a schema it is
    schemaless (it records written files). A new version inherits the table's properties.
    Writes of a content type outside ``content_types`` (when given) are refused."""
    from workbench.core.namespaces import ensure_namespace

    flag("auto_create_namespace", auto_create_namespace)
    flag("fail_if_exists", fail_if_exists)
    loc = locate(table, namespace, catalog)
    table_level, own, lifecycle = version_arguments(
        table_properties, table_version_properties, lifecycle_state
    )
    accepted = parse_content_types(content_types)
    with operation(loc.catalog) as txn:
        try:
            target = for_write(txn, loc, table_version, TableWriteMode.CREATE, creating=True)
        except TableVersionAlreadyExistsError:  # CREATE of a version that exists
            if fail_if_exists:
                raise
            return get_table(table, loc.namespace, catalog, table_version=table_version)
        if not target.creates:
            if fail_if_exists:
                raise TableAlreadyExistsError(
                    f"Table {loc.qualified!r} already exists; drop it first, create a new "
                    "version with table_version=..., or write to it with "
                    "dc.write(..., mode=dc.TableWriteMode.REPLACE)."
                )
            return get_table(table, loc.namespace, catalog)
        ensure_namespace(txn, loc, auto_create_namespace)
        configuration = new_configuration(txn, target, table_level, own, lifecycle)
        configuration.update(encode_content_types(accepted))
        change = txn.touch_table(loc.namespace, target.loc.name)
        if schema is None:
            stage_new_schemaless_table(txn, change, configuration)
        else:
            declared = to_storage(Schema.of(schema))
            check_read_optimization(declared, configuration)
            stage_new_table(txn, change, declared, configuration)
        txn.record(change, "CREATE_TABLE")
    return get_table(table, loc.namespace, catalog, table_version=target.loc.version_name)


def drop_table(
    table: str,
    namespace: str | None = None,
    catalog: str | None = None,
    *,
    table_version: str | None = None,
) -> None:
    """Drop a table with all its versions; their files stay for time travel until
    ``dc.vacuum`` removes them. With ``table_version``, only that version is dropped: its
    lifecycle state becomes DELETED (as in DeltaCAT), so no call but time travel sees it
    again and its name is not reused; dropping a table's last version drops the table."""
    loc = locate(table, namespace, catalog)
    with operation(loc.catalog) as txn:
        names = versions_in(txn, loc.namespace, loc.name)
        if not names:
            raise TableNotFoundError(
                f"Cannot drop table {loc.qualified!r}: it does not exist in catalog "
                f"{loc.catalog_name!r}."
            )
        if table_version is not None:
            target = for_read(txn, loc, table_version)
            if live_versions(txn, loc, names) != [target.version_name]:
                from workbench.core.alter import alter_table

                alter_table(
                    table,
                    namespace=namespace,
                    catalog=catalog,
                    table_version=table_version,
                    lifecycle_state=LifecycleState.DELETED,
                )
                return
        # Later versions first: their folders sit inside the first version's folder.
        for version in reversed(names):
            txn.drop(txn.touch_table(loc.namespace, loc.versioned(version).name))


def table_exists(
    table: str,
    namespace: str | None = None,
    catalog: str | None = None,
    as_of: Any = None,
    *,
    table_version: str | None = None,
) -> bool:
    """True when the table (or its version ``table_version``) exists, now or ``as_of`` a past
    point."""
    loc = locate(table, namespace, catalog)
    seen = view(loc.catalog, as_of)
    names = versions_in(seen, loc.namespace, loc.name)
    if table_version is None:
        return bool(names)
    return check_version_name(table_version) in live_versions(seen, loc, names)


def list_tables(
    namespace: str | None = None, catalog: str | None = None, as_of: Any = None
) -> list[TableRef]:
    """References to the tables of a namespace, sorted by name."""
    cat = get_catalog(catalog)
    ns = namespace_name(cat, namespace)
    seen = view(cat, as_of)
    if not seen.has_namespace(ns):
        from workbench.core.timetravel import before_history_note

        when = "" if as_of is None else f" as of {as_of!r}"
        raise NamespaceNotFoundError(
            f"Namespace {ns!r} does not exist in catalog {catalog_name(cat)!r}{when}"
            f"{before_history_note(seen, as_of)}; see "
            "dc.list_namespaces()."
        )
    names = sorted({split_key(n)[0] for n in seen.table_names(ns)})
    return [TableRef(n, ns, catalog_name(cat)) for n in names]


def describe(opened: OpenTable, seen: Transaction | None = None) -> TableInfo:
    """Build the public description of an opened table version (``seen``: the view it was
    opened in, for its sibling versions)."""
    loc = opened.loc
    seen = seen or view(loc.catalog)
    names = versions_in(seen, loc.namespace, loc.table_name) or [loc.version_name]
    names = live_versions(seen, loc.versioned(names[0]), names)
    newest = opened
    if names[-1] != loc.version_name:
        newest = open_in(seen, loc.versioned(names[-1]))
    return TableInfo(
        name=loc.table_name,
        namespace=loc.namespace,
        catalog=loc.catalog_name,
        schema=opened.schema,
        version=opened.version,
        row_count=sum(f.rows for f in opened.files),
        file_count=len(opened.files),
        size_bytes=sum(f.size for f in opened.files),
        schemaless=opened.schemaless,
        properties=opened.properties,
        uri=opened.uri,
        version_name=loc.version_name,
        lifecycle_state=lifecycle_of(opened.properties),
        version_names=tuple(names),
        active_version=active_version(seen, loc, names),
        table_properties=table_configuration(newest.properties),
        content_types=accepted_content_types(opened.properties),
    )


def get_table(
    table: str,
    namespace: str | None = None,
    catalog: str | None = None,
    version: int | None = None,
    as_of: Any = None,
    *,
    table_version: str | None = None,
) -> TableInfo:
    """Describe a table's current version (or ``table_version``): schema, merge keys, Delta
    version, row/file counts, bytes, properties."""
    loc = locate(table, namespace, catalog)
    seen = view(loc.catalog, as_of)
    opened = open_in(seen, for_read(seen, loc, table_version), version, as_of)
    return describe(opened, seen)


def delta_table(
    table: str,
    namespace: str | None = None,
    catalog: str | None = None,
    as_of: Any = None,
    *,
    table_version: str | None = None,
) -> DeltaTable:
    """A ``deltalake.DeltaTable`` at the version the catalog shows (or showed ``as_of``): the
    safe way for other tools to read a table folder, since the folder's newest Delta version
    may belong to a transaction that has not committed."""
    from deltalake import DeltaTable

    opened = open_table(locate(table, namespace, catalog), as_of=as_of, table_version=table_version)
    options = opened.loc.catalog.properties.storage_options or None
    return DeltaTable(opened.uri, version=opened.version, storage_options=options)
