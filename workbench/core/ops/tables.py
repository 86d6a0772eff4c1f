"""Table lifecycle: create (a table or a new version of one), drop, exists, list, describe and
get, each in one catalog transaction or view."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from workbench.core.base.arguments import flag
from workbench.core.base.errors import (
    NamespaceNotFoundError,
    TableAlreadyExistsError,
    TableNotFoundError,
    TableVersionAlreadyExistsError,
    UnsupportedFeatureError,
)
from workbench.core.base.types import ContentType, LifecycleState, TableWriteMode
from workbench.core.catalog.content_types import (
    accepted_content_types,
    encode_content_types,
    parse_content_types,
)
from workbench.core.catalog.descriptions import TableInfo, TableRef
from workbench.core.catalog.locations import OpenTable, locate, namespace_name
from workbench.core.catalog.properties import check_configuration
from workbench.core.catalog.registry import catalog_name
from workbench.core.catalog.scope import get_catalog
from workbench.core.catalog.versions import (
    check_version_name,
    lifecycle_of,
    split_key,
    table_configuration,
    version_arguments,
)
from workbench.core.ops.alter import alter_table
from workbench.core.ops.namespaces import ensure_namespace
from workbench.core.schema.evolution import to_storage
from workbench.core.schema.table_schema import Schema, SchemaLike
from workbench.core.transactions.catalog_log import log_of
from workbench.core.transactions.context import operation, view
from workbench.core.transactions.opening import open_in
from workbench.core.transactions.staging import stage_new_schemaless_table, stage_new_table
from workbench.core.transactions.table_versions import (
    active_version,
    for_read,
    for_write,
    live_versions,
    new_configuration,
    open_table,
    versions_in,
)
from workbench.core.transactions.time_travel import before_history_note

if TYPE_CHECKING:
    from deltalake import DeltaTable

    from workbench.core.transactions.transaction import Transaction


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
        change = txn.lease_table(loc.namespace, target.loc.name)
        if schema is None:
            stage_new_schemaless_table(txn, change, configuration)
        else:
            declared = to_storage(Schema.of(schema))
            check_configuration(declared, configuration)
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
            txn.drop(txn.lease_table(loc.namespace, loc.versioned(version).name))


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
        row_count=opened.live_rows,
        file_count=len(opened.files),
        size_bytes=opened.size_bytes,
        schemaless=opened.schemaless,
        properties=opened.properties,
        uri="" if _branch_only(opened) else opened.uri,
        version_name=loc.version_name,
        lifecycle_state=lifecycle_of(opened.properties),
        version_names=tuple(names),
        active_version=active_version(seen, loc, names),
        table_properties=table_configuration(newest.properties),
        content_types=accepted_content_types(opened.properties),
        branch=loc.catalog.branch,
    )


def _branch_only(opened: OpenTable) -> bool:
    """True for a table version only a branch's log holds (no Delta log has it)."""
    limit = log_of(opened.loc.catalog).delta_limit(opened.incarnation)
    return limit is not None and opened.version > limit


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
    if _branch_only(opened):
        raise UnsupportedFeatureError(
            f"Table {opened.loc.qualified!r} on branch {opened.loc.catalog.branch!r} has "
            "versions that exist only in the branch's log, not in a Delta log, so no "
            "DeltaTable can show them: read it with dc.read(..., branch=...), or publish the "
            "branch with dc.merge_branch(...) first."
        )
    options = opened.loc.catalog.properties.storage_options or None  # the user's, as given
    return DeltaTable(opened.uri, version=opened.version, storage_options=options)
