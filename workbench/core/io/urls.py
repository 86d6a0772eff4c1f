"""``dc://catalog/namespace/table`` URLs: list, copy (with ``*`` and ``**``), get and put."""

from __future__ import annotations

import os
from typing import Any

from workbench.core.base.arguments import flag
from workbench.core.base.errors import (
    InvalidUrlError,
    NamespaceNotFoundError,
    TableAlreadyExistsError,
)
from workbench.core.base.types import DatasetType
from workbench.core.catalog.content_types import accepted_content_types
from workbench.core.catalog.descriptions import Namespace, Table, TableInfo
from workbench.core.catalog.locations import locate
from workbench.core.catalog.properties import stored_properties
from workbench.core.catalog.registry import put_catalog
from workbench.core.catalog.scope import get_catalog
from workbench.core.delta.reading import live_table
from workbench.core.io.reader import read
from workbench.core.io.url_names import SCHEME, CatalogUrl, parse_url
from workbench.core.io.writer import write
from workbench.core.ops.namespaces import (
    create_namespace,
    get_namespace,
    list_namespaces,
    namespace_exists,
)
from workbench.core.ops.tables import create_table, get_table, list_tables, table_exists
from workbench.core.storage.fetch import options_for
from workbench.core.storage.fetch import read as read_bytes
from workbench.core.storage.formats import content_type_of, read_file
from workbench.core.storage.store import is_local, local_path
from workbench.core.transactions.context import cross_catalog_transaction
from workbench.core.transactions.table_versions import open_table


def list_url(
    url: str, as_of: Any = None, recursive: bool = False
) -> list[Namespace | Table | TableInfo]:
    """What a URL names: a catalog's namespaces, a namespace's tables, or a table's description.

    ``dc://cat/**``, or ``recursive=True`` on a catalog URL, lists every table of every
    namespace too (after the namespaces when recursive, as DeltaCAT orders its listings).
    """

    flag("recursive", recursive)
    parsed = parse_url(url)
    if parsed.table is not None:
        return [get_table(parsed.table, parsed.namespace, parsed.catalog, as_of=as_of)]
    if parsed.namespace is not None:
        return _tables(parsed.namespace, parsed.catalog, as_of)
    namespaces = list_namespaces(parsed.catalog, as_of=as_of)
    tables = [t for ns in namespaces for t in _tables(ns.name, parsed.catalog, as_of)]
    if parsed.wildcard == "**":
        return tables
    return [*namespaces, *tables] if recursive else namespaces


def _tables(namespace: str, catalog: str, as_of: Any) -> list[Table]:

    return [Table(t.name, t.namespace, t.catalog) for t in list_tables(namespace, catalog, as_of)]


def get(url: str, read_as: DatasetType | str = DatasetType.DAFT, **read_kwargs: Any) -> Any:
    """What a URL names: for ``dc://`` URLs the rows of a table (as ``read_as``), a
    ``Namespace`` or a ``Catalog``; for any other URI (a local path, ``s3://bucket/key``, a media
    table's ``uri``) the file's bytes, read with the storage options of the catalog whose root
    holds it (else the default catalog's, when it is on the same kind of store)."""

    if isinstance(url, os.PathLike) or (isinstance(url, str) and not url.startswith(SCHEME)):
        if read_kwargs:
            raise InvalidUrlError(f"dc.get of a file URI takes no read options: {read_kwargs}.")
        where = os.fspath(url)
        if is_local(where):
            return read_bytes(os.path.abspath(local_path(where)))
        return read_bytes(where, options_for(where, get_catalog().storage))
    parsed = _exact(url)
    if parsed.table is not None:
        return read(parsed.table, parsed.namespace, parsed.catalog, read_as=read_as, **read_kwargs)
    if parsed.namespace is not None:
        return get_namespace(parsed.namespace, parsed.catalog)
    return get_catalog(parsed.catalog)


def put(url: str, data: Any = None, **kwargs: Any) -> Any:
    """Write ``data`` to the table a URL names; with no data, create the namespace a
    namespace URL names, or register the catalog a catalog URL names (``root=`` and the
    other ``dc.put_catalog`` arguments in ``kwargs``)."""

    parsed = _exact(url)
    if parsed.table is not None:
        if data is None:
            raise InvalidUrlError(f"dc.put({url!r}) needs the data to write to that table.")
        kwargs.setdefault("auto_create_namespace", True)
        return write(data, parsed.table, parsed.namespace, parsed.catalog, **kwargs)
    if data is not None:
        raise InvalidUrlError(
            f"{url!r} does not name a table, so it cannot take data; write to "
            "dc://<catalog>/<namespace>/<table>."
        )
    if parsed.namespace is not None:
        if kwargs:
            raise InvalidUrlError(f"dc.put of namespace URL {url!r} takes no options: {kwargs}.")
        return create_namespace(parsed.namespace, parsed.catalog)
    return put_catalog(parsed.catalog, **kwargs)


def _exact(url: str) -> CatalogUrl:
    """A URL that names one thing (no wildcard)."""
    parsed = parse_url(url)
    if parsed.wildcard:
        raise InvalidUrlError(f"{url!r} ends in a wildcard; name one catalog, namespace or table.")
    return parsed


def copy(src: str, dst: str, as_of: Any = None) -> Namespace | Table | list[Namespace | Table]:
    """Copy a table, a namespace, or many (``*``: without tables, ``**``: with them) into one
    catalog transaction of the destination catalog. Returns the new table or namespace (as
    DeltaCAT returns the one object it copied), or for a wildcard the list of them."""

    source, target = parse_url(src), parse_url(dst)
    with cross_catalog_transaction(target.catalog, f"copy {src} -> {dst}"):
        if source.table is not None:
            if target.table is None:
                raise InvalidUrlError(f"Copying table {src!r} needs a table URL as destination.")
            return _copy_table(source, target, as_of)
        if source.namespace is not None:
            namespace = _destination_namespace(target, dst)
            if not namespace_exists(source.namespace, source.catalog, as_of=as_of):
                raise NamespaceNotFoundError(
                    f"Cannot copy {src!r}: namespace {source.namespace!r} does not exist in "
                    f"catalog {source.catalog!r}; see dc.list('dc://{source.catalog}')."
                )
            created = create_namespace(namespace, target.catalog)
            if not source.wildcard:
                return created
            return [
                _copy_table(
                    CatalogUrl(source.catalog, ref.namespace, ref.name),
                    CatalogUrl(target.catalog, namespace, ref.name),
                    as_of,
                )
                for ref in list_tables(source.namespace, source.catalog, as_of=as_of)
            ]
        if source.wildcard is None or target.namespace is not None:
            raise InvalidUrlError(
                f"Copy a whole catalog with {src.rstrip('/')}/* (namespaces) or /** (with "
                f"tables) into a catalog URL such as dc://{target.catalog}; got {dst!r}."
            )
        copied: list[Namespace | Table] = []
        for ns in list_namespaces(source.catalog, as_of=as_of):
            copied.append(create_namespace(ns.name, target.catalog))
            if source.wildcard == "**":
                for ref in list_tables(ns.name, source.catalog, as_of=as_of):
                    into = CatalogUrl(target.catalog, ns.name, ref.name)
                    copied.append(
                        _copy_table(CatalogUrl(source.catalog, ns.name, ref.name), into, as_of)
                    )
        return copied


def _destination_namespace(target: CatalogUrl, dst: str) -> str:
    if not target.path:
        raise InvalidUrlError(f"Copying a namespace needs a namespace in the destination {dst!r}.")
    return target.path[-1]


def _copy_table(source: CatalogUrl, target: CatalogUrl, as_of: Any) -> Table:
    """Copy one table's current (or ``as_of``) rows, schema, keys, properties and accepted
    content types."""

    if table_exists(target.table, target.namespace, target.catalog):
        raise TableAlreadyExistsError(
            f"Cannot copy onto existing table dc://{target.catalog}/{target.namespace}/"
            f"{target.table}; drop it first or choose another name."
        )
    opened = open_table(locate(source.table, source.namespace, source.catalog), as_of=as_of)
    properties = stored_properties(opened.properties)
    content_types = accepted_content_types(opened.properties)
    if opened.schemaless:
        create_table(
            target.table,
            target.namespace,
            target.catalog,
            table_properties=properties,
            auto_create_namespace=True,
            content_types=content_types,
        )
        storage = opened.loc.catalog.storage
        for row in live_table(opened).to_pylist():
            fmt = content_type_of(row["content_type"])
            data = read_file(*storage.locate(f"{opened.uri.rstrip('/')}/{row['path']}"), fmt)
            write(data, target.table, target.namespace, target.catalog, content_type=fmt)
    else:
        write(
            live_table(opened),
            target.table,
            target.namespace,
            target.catalog,
            mode="create",
            schema=opened.schema,
            table_properties=properties,
            auto_create_namespace=True,
            content_types=content_types,
        )
    return Table(target.table, target.namespace or "default", target.catalog)
