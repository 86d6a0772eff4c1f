"""Catalogs: named filesystem roots holding namespaces of Delta tables, and their registry."""

from __future__ import annotations

import errno
import os
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

from workbench.core.base.errors import (
    CatalogNotFoundError,
    CatalogReadOnlyError,
    CatalogRootError,
    InvalidArgumentError,
    TransactionCatalogError,
)
from workbench.core.base.names import MAIN, MAX_NAME_LENGTH, validate_name
from workbench.core.catalog.branches import BranchRecord, require_record
from workbench.core.storage.limits import Limits
from workbench.core.storage.store import Storage, is_local, remember

if TYPE_CHECKING:
    import pyarrow.fs as pafs

DEFAULT_LOCAL_ROOT = ".workbench"
DEFAULT_CATALOG = "default"
DEFAULT_NAMESPACE = "default"


@dataclass(frozen=True)
class CatalogProperties:
    """Where a catalog lives: a local path or a URI (``s3://``, ``gs://``, ``az://``)."""

    root: str
    storage_options: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.root, (str, os.PathLike)) or not os.fspath(self.root):
            raise InvalidArgumentError(
                f"A catalog root is a folder path or URI (str or pathlib.Path), not "
                f"{self.root!r}; e.g. dc.CatalogProperties(root='/data/catalog')."
            )
        root = os.fspath(self.root)
        if "://" not in root:
            root = os.path.abspath(os.path.expanduser(root))
        object.__setattr__(self, "root", root.rstrip("/") or "/")
        object.__setattr__(self, "storage_options", _option_strings(self.storage_options))
        Limits.of(self.storage_options)  # a malformed retry or timeout option fails now


def _option_strings(options: object) -> dict[str, str]:
    """Storage options as the string map object stores take (``True`` becomes ``"true"``)."""
    if options is None:
        return {}
    scalars = (str, bool, int, float)
    if not isinstance(options, Mapping) or not all(
        isinstance(k, str) and isinstance(v, scalars) for k, v in options.items()
    ):
        raise InvalidArgumentError(
            "storage_options maps option names to values, e.g. "
            f'{{"AWS_REGION": "us-east-1", "AWS_ALLOW_HTTP": "true"}}; got {options!r}.'
        )
    return {k: str(v).lower() if isinstance(v, bool) else str(v) for k, v in options.items()}


class Catalog:
    """A catalog root: tables at ``<root>/<namespace>/<table>/``, metadata in ``_workbench/``.
    The object registered is the catalog's ``main`` line; ``on_branch`` gives a branch's."""

    branch: str = MAIN
    record: BranchRecord | None = None  # the branch's record (None on main)

    def __init__(self, properties: CatalogProperties | str | os.PathLike[str]):
        if not isinstance(properties, CatalogProperties):
            properties = CatalogProperties(properties)
        self.properties = properties
        self._branches: dict[str, BranchCatalog] = {}

    @property
    def trunk(self) -> Catalog:
        """The catalog's ``main`` line (the registered object)."""
        return self

    @property
    def line_key(self) -> str:
        """What tells this line of the catalog from every other, in caches and comparisons."""
        return self.root

    def on_branch(self, name: str) -> Catalog:
        """This catalog as branch ``name`` shows it (``main``: the catalog itself); raises
        ``BranchNotFoundError`` when there is no such branch."""
        if isinstance(name, str) and name == MAIN:
            return self
        # one small read each time: a branch dropped, or dropped and made again, elsewhere
        return self.on_record(require_record(self.storage, name, self.root))

    def on_record(self, record: BranchRecord) -> Catalog:
        """This catalog as the branch ``record`` describes shows it (a record just read)."""
        bound = self._branches.get(record.name)
        if bound is None or bound.branch_id != record.id:
            bound = self._branches[record.name] = BranchCatalog(self, record)
        return bound

    def forget_branch(self, name: str) -> None:
        """Stop using what this process knows of branch ``name`` (it was dropped or made anew)."""
        self._branches.pop(name, None)

    @property
    def root(self) -> str:
        """The catalog root URI or absolute path."""
        return self.properties.root

    @property
    def is_local(self) -> bool:
        """True for a root on the local filesystem."""
        return is_local(self.root)

    def check_root(self) -> None:
        """Raise ``CatalogRootError`` if the local root exists but is not a folder."""
        path = self.root.removeprefix("file://")
        if self.is_local and os.path.exists(path) and not os.path.isdir(path):
            raise CatalogRootError(
                f"The catalog root {path!r} is a file, not a folder, so it cannot hold tables; "
                "point the catalog at a folder (dc.init_local('path/to/folder'))."
            )

    @contextmanager
    def writing(self) -> Iterator[None]:
        """Run a write under the root, turning the OS's refusal into ``CatalogReadOnlyError``."""
        try:
            yield
        except OSError as e:
            if e.errno not in (errno.EACCES, errno.EPERM, errno.EROFS):
                raise
            raise CatalogReadOnlyError(
                f"Catalog {self.root!r} is read-only for this user ({e.strerror}); reads work, "
                "but writes need write access to the folder. To change the data, copy the "
                "tables into a catalog of your own with dc.copy(...)."
            ) from e

    @cached_property
    def max_name_length(self) -> int:
        """The longest namespace or table name this root stores as a folder name: the local
        filesystem's limit, capped at 255 so a catalog folder can be copied anywhere."""
        if not self.is_local:
            return MAX_NAME_LENGTH
        path = self.root.removeprefix("file://")
        while not os.path.isdir(path) and os.path.dirname(path) != path:
            path = os.path.dirname(path)
        try:
            return min(MAX_NAME_LENGTH, os.pathconf(path, "PC_NAME_MAX"))
        except (OSError, ValueError):
            return MAX_NAME_LENGTH

    @cached_property
    def storage(self) -> Storage:
        """Object access under the root (puts, put-if-absent, gets) and its pyarrow filesystem."""
        return remember(Storage(self.root, dict(self.properties.storage_options)))

    @property
    def filesystem(self) -> pafs.FileSystem:
        """A pyarrow filesystem for the root."""
        return self.storage.filesystem

    def fs_path(self, *parts: str) -> str:
        """Path of ``parts`` under the root, as the pyarrow filesystem expects it."""
        return self.storage.fs_path("/".join(parts))

    def uri(self, *parts: str) -> str:
        """URI (or local path) of ``parts`` under the root, as deltalake expects it."""
        return "/".join([self.root.rstrip("/"), *parts])

    def __repr__(self) -> str:
        return f"Catalog({self.root!r})"


class BranchCatalog(Catalog):
    """A catalog as one of its branches shows it: the same root and storage, the branch's log."""

    def __init__(self, trunk: Catalog, record: BranchRecord):
        super().__init__(trunk.properties)
        self._trunk = trunk
        self.record = record
        self.branch = record.name
        self.__dict__["storage"] = trunk.storage  # one storage per root

    @property
    def trunk(self) -> Catalog:
        return self._trunk

    @property
    def line_key(self) -> str:
        return f"{self.root}#{self.branch_id}"

    @property
    def branch_id(self) -> str:
        """The id of the branch this line is."""
        return self.record.id

    def on_branch(self, name: str) -> Catalog:
        return self._trunk.on_branch(name)

    def on_record(self, record: BranchRecord) -> Catalog:
        return self._trunk.on_record(record)

    def __repr__(self) -> str:
        return f"Catalog({self.root!r}, branch={self.branch!r})"


class _Registry:
    """The catalogs registered in this process, which one is the default, and the branch calls
    on each use when they name none."""

    def __init__(self) -> None:
        self.catalogs: dict[str, Catalog] = {}
        self.default: str | None = None
        self.branches: dict[str, str] = {}  # catalog root -> branch calls on it use
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
        _registry.branches[_registry.catalogs[_registry.default].root] = branch
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
    """Unregister the catalog called ``name`` and return it (None if there is none). Its
    tables stay where they are."""
    catalog = _registry.catalogs.pop(name, None) if isinstance(name, str) else None
    if catalog is not None:
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


_in_scope: ContextVar[Catalog | None] = ContextVar("workbench_catalog_in_scope", default=None)
# trunk root -> branch, for calls in ``dc.branch`` blocks (replaced, never changed in place)
_branch_in_scope: ContextVar[dict[str, str] | None] = ContextVar(
    "workbench_branch_in_scope", default=None
)


def current_branch(catalog: str | Catalog | None = None) -> str:
    """The branch calls on a catalog (the default one) use when they name none: the innermost
    ``dc.branch`` block's, else the one ``dc.init(branch=...)`` chose, else ``main``."""
    return _branch_of(main_catalog(catalog).root)


def _branch_of(root: str) -> str:
    return (_branch_in_scope.get() or {}).get(root) or _registry.branches.get(root, MAIN)


def main_catalog(catalog: str | Catalog | None = None) -> Catalog:
    """The registered catalog (its ``main`` line) a name or catalog object means; None: the
    open transaction's, else the default one. Reads nothing of any branch."""
    if isinstance(catalog, Catalog):
        return catalog.trunk
    scoped = _in_scope.get()
    if catalog is None and scoped is not None:
        return scoped.trunk
    return _registered(catalog)


def set_default_branch(name: str, catalog: str | None = None) -> None:
    """Make ``name`` the branch calls on a catalog (the default one) use outside ``dc.branch``
    blocks; raises ``BranchNotFoundError`` when it has no such branch."""
    trunk = main_catalog(catalog)
    trunk.on_branch(name)
    _registry.branches[trunk.root] = name


def leave_branch(catalog: Catalog, name: str) -> None:
    """Stop using branch ``name`` of ``catalog`` by default (it was dropped): back to ``main``."""
    if _registry.branches.get(catalog.trunk.root) == name:
        del _registry.branches[catalog.trunk.root]


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
    root = main_catalog(catalog).root
    token = _branch_in_scope.set({**(_branch_in_scope.get() or {}), root: name})
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
    found = _registered(name)  # its root is all that is compared
    if found.root != scoped.root:
        raise TransactionCatalogError(
            "Transaction and catalog parameters are mutually exclusive: the open transaction "
            f"is on catalog {catalog_name(scoped)!r}, so catalog={name!r} cannot be used inside "
            "it. Leave the transaction block to use that catalog, or open one on it."
        )
    return scoped


def _in_transaction_branch(scoped: Catalog) -> Catalog:
    """The open transaction's catalog, unless the block asks for another branch of it."""
    wanted = _branch_of(scoped.root)
    if wanted != scoped.branch:
        raise TransactionCatalogError(
            f"The open transaction is on branch {scoped.branch!r}, so branch {wanted!r} cannot "
            "be used inside it; leave the transaction block to work on that branch."
        )
    return scoped


def lookup_catalog(name: str | None = None) -> Catalog:
    """The registered catalog called ``name``, or the default one, on the branch calls on it
    use (see ``current_branch``)."""
    found = _registered(name)
    return found.on_branch(_branch_of(found.root))


def _registered(name: str | None) -> Catalog:
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


def default_catalog_name() -> str | None:
    """The name of the default catalog (None after ``clear_catalogs``, until one is put)."""
    return _registry.default


def catalog_name(catalog: Catalog) -> str:
    """The registered name of a catalog object."""
    for name, registered in _registry.catalogs.items():
        if registered is catalog.trunk:
            return name
    return catalog.root
