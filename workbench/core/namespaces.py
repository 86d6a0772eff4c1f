"""Namespaces: folders under a catalog root that group tables."""

from __future__ import annotations

from workbench.core.catalog import DEFAULT_NAMESPACE, catalog_name, get_catalog
from workbench.core.errors import NamespaceNotEmptyError, NamespaceNotFoundError
from workbench.core.models import Namespace
from workbench.core.names import validate_name
from workbench.core.tables import Location, list_tables, namespace_dir_exists, require_namespace


def create_namespace(namespace: str, catalog: str | None = None) -> Namespace:
    """Create a namespace; creating one that exists returns it unchanged."""
    cat = get_catalog(catalog)
    validate_name("namespace", namespace)
    cat.filesystem.create_dir(cat.fs_path(namespace), recursive=True)
    return Namespace(namespace, catalog_name(cat))


def namespace_exists(namespace: str, catalog: str | None = None) -> bool:
    """True when the namespace exists."""
    return namespace_dir_exists(get_catalog(catalog), validate_name("namespace", namespace))


def get_namespace(namespace: str, catalog: str | None = None) -> Namespace:
    """The namespace called ``namespace``, or ``NamespaceNotFoundError``."""
    if not namespace_exists(namespace, catalog):
        raise NamespaceNotFoundError(
            f"Namespace {namespace!r} does not exist; see dc.list_namespaces()."
        )
    return Namespace(namespace, catalog_name(get_catalog(catalog)))


def list_namespaces(catalog: str | None = None) -> list[Namespace]:
    """The namespaces of a catalog, sorted by name."""
    import pyarrow.fs as pafs

    cat = get_catalog(catalog)
    root = cat.filesystem.get_file_info(cat.fs_path())
    if root.type != pafs.FileType.Directory:
        return []
    children = cat.filesystem.get_file_info(pafs.FileSelector(cat.fs_path()))
    name = catalog_name(cat)
    return sorted(
        (
            Namespace(c.base_name, name)
            for c in children
            if c.type == pafs.FileType.Directory and not c.base_name.startswith(("_", "."))
        ),
        key=lambda n: n.name,
    )


def drop_namespace(namespace: str, catalog: str | None = None, purge: bool = False) -> None:
    """Delete a namespace; one holding tables needs ``purge=True``, which drops them too."""
    cat = get_catalog(catalog)
    ns = get_namespace(namespace, catalog)
    tables = list_tables(ns.name, catalog)
    if tables and not purge:
        raise NamespaceNotEmptyError(
            f"Namespace {namespace!r} holds {len(tables)} table(s) "
            f"({', '.join(t.name for t in tables[:5])}); drop them first or pass purge=True."
        )
    cat.filesystem.delete_dir(cat.fs_path(namespace))


def ensure_namespace(loc: Location, auto_create: bool) -> bool:
    """Make sure a table's namespace exists; return True when this call created it."""
    if namespace_dir_exists(loc.catalog, loc.namespace):
        return False
    if not auto_create and loc.namespace != DEFAULT_NAMESPACE:
        require_namespace(loc)
    loc.catalog.filesystem.create_dir(loc.catalog.fs_path(loc.namespace), recursive=True)
    return True
