"""Which storage holds a path or URI when code has only the URI (a data file an engine writes
into a table folder, a media file a table refers to): the storage in use in this context (the
open transaction's catalog's), else that of a catalog of this process whose root holds it (the
one used last, when several catalogs share a root with different options), else a plain one
for its bucket or the local disk."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from workbench.core.base.caches import process_cache
from workbench.core.storage.store import Storage, is_local

_known: dict[str, Storage] = {}  # identity -> storage of a catalog, the one used last at the end
_in_use: ContextVar[tuple[Storage, ...]] = ContextVar("workbench_storage_in_use", default=())


def storage_for(uri: str, preferred: Storage | None = None) -> Storage:
    """The storage holding a path or URI, with the credentials of the catalog it belongs to:
    ``preferred`` (the catalog's at hand) when its root holds it, else the one in use here."""
    for storage in ([preferred] if preferred else []) + list(reversed(_in_use.get())):
        if _holds(storage.root, uri):
            return storage
    known = list(_known.values())  # at once: other threads remember storages meanwhile
    matches = [s for s in reversed(known) if _holds(s.root, uri)]
    if matches:
        return max(matches, key=lambda s: len(s.root))  # the innermost root, used last
    if is_local(uri):
        return Storage("/")
    scheme, _, rest = uri.partition("://")
    return Storage(f"{scheme}://{rest.split('/', 1)[0]}")


def _holds(root: str, uri: str) -> bool:
    return uri.startswith(root.rstrip("/") + "/")


def remember(storage: Storage) -> Storage:
    """Make a catalog's storage the one ``storage_for`` finds first for paths under its root
    (outside a ``using`` block of another storage there)."""
    if next(reversed(_known), None) != storage.identity:
        _known.pop(storage.identity, None)
        _known[storage.identity] = storage
    return storage


@contextmanager
def using(storage: Storage) -> Iterator[Storage]:
    """Make ``storage`` the one ``storage_for`` gives for paths under its root, in this context
    (threads and tasks started inside do not inherit it: pass them the storage)."""
    token = _in_use.set((*_in_use.get(), storage))
    try:
        yield storage
    finally:
        _in_use.reset(token)


def _forget(identity: str) -> None:
    _known.pop(identity, None)


process_cache("storage.known", _known.clear, forget=_forget)
