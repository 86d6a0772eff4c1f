"""Catalogs as values: a root holding namespaces of Delta tables, its storage, and a line of its
log (``main`` or a branch). The process's registry of named catalogs is ``registry``."""

from __future__ import annotations

import errno
import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

from workbench.core.base.errors import CatalogReadOnlyError, CatalogRootError, InvalidArgumentError
from workbench.core.base.names import MAIN, MAX_NAME_LENGTH
from workbench.core.catalog.branch_records import BranchRecord, require_record
from workbench.core.storage.identity import masked
from workbench.core.storage.known import remember
from workbench.core.storage.limits import Limits
from workbench.core.storage.store import Storage, is_local

if TYPE_CHECKING:
    import pyarrow.fs as pafs


DEFAULT_LOCAL_ROOT = ".workbench"


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

    def __repr__(self) -> str:
        options = masked(self.storage_options)  # credentials are never shown
        return f"CatalogProperties(root={self.root!r}, storage_options={options!r})"


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
    def identity(self) -> str:
        """What tells this catalog from every other in this process's caches and stores: its
        root and a digest of its storage options (another endpoint or other credentials on
        the same root make another catalog; no secret can be read back from it)."""
        return self._own_storage.identity

    @property
    def line_key(self) -> str:
        """What tells this line of the catalog from every other, in caches and comparisons."""
        return self.identity

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

    @property
    def storage(self) -> Storage:
        """Object access under the root (puts, put-if-absent, gets) and its pyarrow filesystem;
        the one ``storage_for`` finds first for URIs under the root, having been used last."""
        return remember(self._own_storage)

    @cached_property
    def _own_storage(self) -> Storage:
        return Storage(self.root, dict(self.properties.storage_options))

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
        self.__dict__["_own_storage"] = trunk.storage  # the trunk's connections

    @property
    def trunk(self) -> Catalog:
        return self._trunk

    @property
    def line_key(self) -> str:
        return f"{self.identity}/{self.branch_id}"

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
