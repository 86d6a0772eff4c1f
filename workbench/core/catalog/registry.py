"""The catalogs registered in this process by name, which one is the default, and the branch
calls on each use for the session (``dc.init``, ``dc.put_catalog``, ``dc.pop_catalog``)."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from workbench.core.base.caches import forget_catalog
from workbench.core.base.errors import CatalogNotFoundError, InvalidArgumentError
from workbench.core.base.names import MAIN, validate_name
from workbench.core.catalog.catalogs import DEFAULT_LOCAL_ROOT, Catalog, CatalogProperties

DEFAULT_CATALOG = "default"
DEFAULT_NAMESPACE = "default"


class _Registry:
    """The catalogs registered in this process, which one is the default, and the branch calls
    on each use when they name none."""

    def __init__(self) -> None:
        self.catalogs: dict[str, Catalog] = {}
        self.default: str | None = None
        self.branches: dict[str, str] = {}  # catalog identity -> branch calls on it use
        self.cleared = False  # emptied on purpose: no local catalog is set up on first use

    def set(self, catalogs: dict[str, Catalog], default: str | None) -> None:
        for name in catalogs:
            validate_name("catalog", name)
        if default is not None and default not in catalogs:
            raise CatalogNotFoundError(
                f"Default catalog {default!r} is not among the catalogs passed {sorted(catalogs)}."
            )
        self.catalogs = dict(catalogs)
        self.default = default or next(iter(catalogs), None)
        self.cleared = False


_registry = _Registry()
session_branches = _registry.branches  # catalog identity -> the branch calls on it use


def resolved(
    catalogs: dict[str, Catalog] | None, default: str | None
) -> tuple[dict[str, Catalog], str | None]:
    """The catalogs ``init`` would register, checked (with none given: those registered, or
    the local default catalog)."""
    if catalogs is None and _registry.catalogs:  # init() again keeps what is registered
        catalogs, default = dict(_registry.catalogs), default or _registry.default
    if catalogs is None:
        catalogs = {DEFAULT_CATALOG: Catalog(CatalogProperties(DEFAULT_LOCAL_ROOT))}
    if not isinstance(catalogs, dict) or not all(isinstance(c, Catalog) for c in catalogs.values()):
        raise InvalidArgumentError(
            "init(catalogs=...) takes a dict of name -> dc.Catalog(dc.CatalogProperties(root))."
        )
    for catalog in catalogs.values():
        catalog.check_root()
    return catalogs, default


def check_branch(catalogs: dict[str, Catalog], default: str | None, branch: str | None) -> None:
    """Raise ``BranchNotFoundError`` unless the catalog ``register`` would make the default
    has ``branch`` (None: nothing to check)."""
    if branch is not None and catalogs:
        catalogs[default or next(iter(catalogs))].on_branch(branch)


def register(
    catalogs: dict[str, Catalog], default: str | None, branch: str | None = None
) -> dict[str, Catalog]:
    """Make ``catalogs`` (checked by ``resolved``) the registered ones, on ``main`` except the
    default one on ``branch`` when given (checked by ``check_branch``), and tell the
    listeners."""
    _registry.set(catalogs, default)
    _registry.branches.clear()
    if branch is not None and branch != MAIN and _registry.default is not None:
        _registry.branches[_registry.catalogs[_registry.default].identity] = branch
    _notify()
    return dict(_registry.catalogs)


_listeners: list[Callable[[], None]] = []


def on_catalogs_changed(listener: Callable[[], None]) -> None:
    """Call ``listener`` after every ``init`` (e.g. so an engine's workers see the catalogs)."""
    if listener not in _listeners:
        _listeners.append(listener)


def init_local(path: str | os.PathLike[str] | None = None) -> Catalog:
    """Register one local catalog as the default (``./.workbench/`` unless ``path`` is given)."""
    catalog = Catalog(CatalogProperties(DEFAULT_LOCAL_ROOT if path is None else path))
    register(*resolved({DEFAULT_CATALOG: catalog}, DEFAULT_CATALOG))
    return catalog


def put_catalog(
    name: str,
    catalog: Catalog | None = None,
    *,
    default: bool = False,
    fail_if_exists: bool = False,
    **properties: Any,
) -> Catalog:
    """Register one catalog under ``name`` (built from ``properties`` such as ``root=`` when
    none is given), keeping the others; it becomes the default when ``default`` is true or
    when it is the only catalog. Returns the catalog."""
    if catalog is None:
        catalog = Catalog(CatalogProperties(**properties))
    if not isinstance(catalog, Catalog):
        raise InvalidArgumentError(
            f"put_catalog(name, catalog) takes a dc.Catalog, not {type(catalog).__name__}."
        )
    if fail_if_exists and name in _registry.catalogs:
        raise InvalidArgumentError(
            f"Catalog {name!r} already exists; pop it first (dc.pop_catalog) or pass "
            "fail_if_exists=False to replace it."
        )
    catalog.check_root()
    catalogs = {**_registry.catalogs, name: catalog}
    first = not _registry.catalogs or _registry.default not in catalogs
    _registry.set(catalogs, name if default or first else _registry.default)
    _notify()
    return catalog


def pop_catalog(name: str) -> Catalog | None:
    """Unregister the catalog called ``name`` and return it (None if there is none), dropping
    what this process cached of it (its log's state, table versions and handles, listings,
    stores, run log): put back, it reads its storage afresh. Its tables stay where they are."""
    catalog = _registry.catalogs.pop(name, None) if isinstance(name, str) else None
    if catalog is not None:
        forget_catalog(catalog.identity)
        if _registry.default == name:
            _registry.default = next(iter(_registry.catalogs), None)
        _notify()
    return catalog


def clear_catalogs() -> None:
    """Unregister every catalog; until the next ``init`` or ``put_catalog`` no catalog is the
    default (and none is set up on first use)."""
    _registry.catalogs, _registry.default, _registry.cleared = {}, None, True
    _registry.branches.clear()
    _notify()


def _notify() -> None:
    for listener in _listeners:
        listener()


def registered(name: str | None) -> Catalog:
    """The registered catalog called ``name``, or the default one (a local catalog is set up on
    first use, unless ``clear_catalogs`` emptied the registry)."""
    if not _registry.catalogs and not _registry.cleared:
        init_local()
    if name is not None and (not isinstance(name, str) or not name):
        raise CatalogNotFoundError(
            f"catalog={name!r} is not a catalog name; pass a registered name "
            f"{sorted(_registry.catalogs)}, or None for the default catalog."
        )
    if name is None and _registry.default is None:
        raise CatalogNotFoundError(
            "No default catalog is registered (dc.clear_catalogs() removed them); register one "
            "with dc.put_catalog(name, catalog) or dc.init(...)."
        )
    name = name or _registry.default
    if name not in _registry.catalogs:
        raise CatalogNotFoundError(
            f"Catalog {name!r} not found. Registered catalogs: {sorted(_registry.catalogs)}; "
            "register it with dc.put_catalog(name, catalog) or dc.init(catalogs={...})."
        )
    return _registry.catalogs[name]


def list_catalogs() -> dict[str, Catalog]:
    """The registered catalogs by name."""
    if not _registry.catalogs and not _registry.cleared:
        init_local()
    return dict(_registry.catalogs)


def registered_now() -> list[Catalog]:
    """The catalogs registered at this moment (none set up on first use, unlike
    ``list_catalogs``)."""
    return list(_registry.catalogs.values())


def default_catalog_name() -> str | None:
    """The name of the default catalog (None after ``clear_catalogs``, until one is put)."""
    return _registry.default


def catalog_name(catalog: Catalog) -> str:
    """The registered name of a catalog object."""
    for name, registered in _registry.catalogs.items():
        if registered is catalog.trunk:
            return name
    return catalog.root
