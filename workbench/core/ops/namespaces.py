"""Namespaces: named groups of tables, recorded in the catalog log like every other change."""

from __future__ import annotations

from typing import Any

from workbench.core.base.arguments import flag
from workbench.core.base.errors import NamespaceNotEmptyError, NamespaceNotFoundError
from workbench.core.base.names import validate_name
from workbench.core.catalog.descriptions import Namespace
from workbench.core.catalog.locations import Location, require_namespace
from workbench.core.catalog.registry import DEFAULT_NAMESPACE, catalog_name
from workbench.core.catalog.scope import get_catalog
from workbench.core.catalog.versions import is_version_key, split_key
from workbench.core.transactions.context import operation, view
from workbench.core.transactions.transaction import Transaction


def create_namespace(namespace: str, catalog: str | None = None) -> Namespace:
    """Create a namespace; creating one that exists returns it unchanged."""
    cat = get_catalog(catalog)
    validate_name("namespace", namespace, cat.max_name_length)
    with operation(cat) as txn:
        if not txn.has_namespace(namespace):
            txn.change_namespace(namespace, created=True)
    return Namespace(namespace, catalog_name(cat))


def namespace_exists(namespace: str, catalog: str | None = None, as_of: Any = None) -> bool:
    """True when the namespace exists (now, or ``as_of`` a past point)."""
    return view(get_catalog(catalog), as_of).has_namespace(validate_name("namespace", namespace))


def get_namespace(namespace: str, catalog: str | None = None) -> Namespace:
    """The namespace called ``namespace``, or ``NamespaceNotFoundError``."""
    if not namespace_exists(namespace, catalog):
        raise NamespaceNotFoundError(
            f"Namespace {namespace!r} does not exist; see dc.list_namespaces()."
        )
    return Namespace(namespace, catalog_name(get_catalog(catalog)))


def list_namespaces(catalog: str | None = None, as_of: Any = None) -> list[Namespace]:
    """The namespaces of a catalog, sorted by name."""
    cat = get_catalog(catalog)
    name = catalog_name(cat)
    return [Namespace(ns, name) for ns in view(cat, as_of).namespaces()]


def drop_namespace(namespace: str, catalog: str | None = None, purge: bool = False) -> None:
    """Drop a namespace; one holding tables needs ``purge=True``, which drops them too."""
    flag("purge", purge)
    cat = get_catalog(catalog)
    validate_name("namespace", namespace, cat.max_name_length)
    with operation(cat) as txn:
        if not txn.has_namespace(namespace):
            raise NamespaceNotFoundError(
                f"Namespace {namespace!r} does not exist; see dc.list_namespaces()."
            )
        keys = txn.table_names(namespace)
        tables = sorted({split_key(k)[0] for k in keys})
        if tables and not purge:
            raise NamespaceNotEmptyError(
                f"Namespace {namespace!r} holds {len(tables)} table(s) "
                f"({', '.join(tables[:5])}); drop them first or pass purge=True."
            )
        # Later table versions first: their folders sit inside their table's folder.
        for key in sorted(keys, key=is_version_key, reverse=True):
            txn.drop(txn.lease_table(namespace, key))
        txn.change_namespace(namespace, created=False)


def ensure_namespace(txn: Transaction, loc: Location, auto_create: bool) -> None:
    """Make sure a table's namespace exists in ``txn``, creating it when allowed."""
    if txn.has_namespace(loc.namespace):
        return
    require_namespace(loc, auto_create or loc.namespace == DEFAULT_NAMESPACE)
    txn.change_namespace(loc.namespace, created=True)
