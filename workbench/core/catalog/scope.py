"""Which catalog and branch a call without ``catalog=`` or ``branch=`` uses: the open
transaction's catalog, the innermost ``dc.branch`` block's branch, else the session's choice
(``dc.use_branch``, ``dc.init(branch=)``), else ``main``."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from workbench.core.base.errors import InvalidArgumentError, TransactionCatalogError
from workbench.core.base.names import MAIN
from workbench.core.catalog.catalogs import Catalog
from workbench.core.catalog.registry import catalog_name, registered, session_branches

_in_scope: ContextVar[Catalog | None] = ContextVar("workbench_catalog_in_scope", default=None)


# trunk identity -> branch, for calls in ``dc.branch`` blocks (replaced, never changed in place)
_branch_in_scope: ContextVar[dict[str, str] | None] = ContextVar(
    "workbench_branch_in_scope", default=None
)


def current_branch(catalog: str | Catalog | None = None) -> str:
    """The branch calls on a catalog (the default one) use when they name none: the innermost
    ``dc.branch`` block's, else the one ``dc.init(branch=...)`` chose, else ``main``."""
    return _branch_of(main_catalog(catalog))


def _branch_of(catalog: Catalog) -> str:
    identity = catalog.trunk.identity
    return (_branch_in_scope.get() or {}).get(identity) or session_branches.get(identity, MAIN)


def main_catalog(catalog: str | Catalog | None = None) -> Catalog:
    """The registered catalog (its ``main`` line) a name or catalog object means; None: the
    open transaction's, else the default one. Reads nothing of any branch."""
    if isinstance(catalog, Catalog):
        return catalog.trunk
    scoped = _in_scope.get()
    if catalog is None and scoped is not None:
        return scoped.trunk
    return registered(catalog)


def set_default_branch(name: str, catalog: str | None = None) -> None:
    """Make ``name`` the branch calls on a catalog (the default one) use outside ``dc.branch``
    blocks; raises ``BranchNotFoundError`` when it has no such branch."""
    trunk = main_catalog(catalog)
    trunk.on_branch(name)
    session_branches[trunk.identity] = name


def leave_branch(catalog: Catalog, name: str) -> None:
    """Stop using branch ``name`` of ``catalog`` by default (it was dropped): back to ``main``."""
    if session_branches.get(catalog.trunk.identity) == name:
        del session_branches[catalog.trunk.identity]


@contextmanager
def branch_scope(name: str | None, catalog: str | Catalog | None = None) -> Iterator[None]:
    """Make ``name`` the branch calls on a catalog (the default one) use without ``branch=``,
    for the block (None: leave the current one, so a ``branch=None`` argument changes
    nothing)."""
    if name is None:
        yield
        return
    if not isinstance(name, str) or not name:
        raise InvalidArgumentError(f"branch={name!r} is not a branch name; pass e.g. 'exp'.")
    identity = main_catalog(catalog).identity
    token = _branch_in_scope.set({**(_branch_in_scope.get() or {}), identity: name})
    try:
        yield
    finally:
        _branch_in_scope.reset(token)


@contextmanager
def catalog_scope(catalog: Catalog) -> Iterator[None]:
    """Make ``catalog`` the one that calls without ``catalog=`` use, for the block (the catalog
    of an open transaction)."""
    token = _in_scope.set(catalog)
    try:
        yield
    finally:
        _in_scope.reset(token)


def get_catalog(name: str | None = None) -> Catalog:
    """The catalog called ``name``, or the default one: the open transaction's catalog inside
    a transaction. Naming another catalog inside a transaction is an error."""
    scoped = _in_scope.get()
    if scoped is None:
        return lookup_catalog(name)
    scoped = _in_transaction_branch(scoped)
    if name is None:
        return scoped
    found = registered(name)  # its identity (root and storage options) is all that is compared
    if found.identity != scoped.identity:
        raise TransactionCatalogError(
            "Transaction and catalog parameters are mutually exclusive: the open transaction "
            f"is on catalog {catalog_name(scoped)!r}, so catalog={name!r} cannot be used inside "
            "it. Leave the transaction block to use that catalog, or open one on it."
        )
    return scoped


def _in_transaction_branch(scoped: Catalog) -> Catalog:
    """The open transaction's catalog, unless the block asks for another branch of it."""
    wanted = _branch_of(scoped)
    if wanted != scoped.branch:
        raise TransactionCatalogError(
            f"The open transaction is on branch {scoped.branch!r}, so branch {wanted!r} cannot "
            "be used inside it; leave the transaction block to work on that branch."
        )
    return scoped


def lookup_catalog(name: str | None = None) -> Catalog:
    """The registered catalog called ``name``, or the default one, on the branch calls on it
    use (see ``current_branch``)."""
    found = registered(name)
    return found.on_branch(_branch_of(found))
