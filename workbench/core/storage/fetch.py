"""Read the bytes of media files by URI: a local path, or an object-store URI whose
credentials come from the catalog whose root holds it (or from ``storage_options``)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor

from workbench.core.base.errors import MediaNotFoundError
from workbench.core.storage.known import storage_for
from workbench.core.storage.store import Storage, is_local, local_path

MAX_THREADS = 16


class _Reader:
    """Reads URIs, opening one store per bucket (or catalog root) for all of them."""

    def __init__(self, storage_options: Mapping[str, str] | None):
        self.options = None if storage_options is None else dict(storage_options)
        self.stores: dict[str, Storage] = {}

    def storage(self, uri: str) -> tuple[Storage, str]:
        """The storage holding an object-store ``uri`` and the object's key in it: with
        storage options its bucket's, else that of the catalog whose root contains it."""
        scheme, _, rest = uri.partition("://")
        bucket = f"{scheme}://{rest.split('/', 1)[0]}"
        storage = self.stores.get(bucket) if self.options is not None else None
        if storage is None:
            storage = storage_for(uri) if self.options is None else Storage(bucket, self.options)
            if self.options is not None or storage.root == bucket:
                self.stores[bucket] = storage
        return storage, uri[len(storage.root.rstrip("/")) + 1 :]

    def __call__(self, uri: str) -> bytes:
        if is_local(uri):
            try:
                with open(local_path(uri), "rb") as file:
                    return file.read()
            except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
                raise _missing(uri) from None
        storage, key = self.storage(uri)
        data = storage.get(key)
        if data is None:
            raise _missing(uri)
        return data


def read(uri: str, storage_options: Mapping[str, str] | None = None) -> bytes:
    """The bytes of the file at ``uri`` (a local path or ``scheme://bucket/key``)."""
    return _Reader(storage_options)(uri)


def read_many(
    uris: Sequence[str],
    storage_options: Mapping[str, str] | None = None,
    *,
    missing_ok: bool = False,
) -> list[bytes | None]:
    """The bytes of each URI, in order, read on a thread pool (I/O bound); with
    ``missing_ok`` a missing file gives None instead of raising ``MediaNotFoundError``."""
    reader = _Reader(storage_options)

    def one(uri: str) -> bytes | None:
        try:
            return reader(uri)
        except MediaNotFoundError:
            if missing_ok:
                return None
            raise

    if len(uris) <= 1:
        return [one(uri) for uri in uris]
    with ThreadPoolExecutor(min(MAX_THREADS, len(uris))) as pool:
        return list(pool.map(one, uris))


def options_for(uri: str, fallback: Storage | None = None) -> dict[str, str]:
    """Storage options to read ``uri`` with: ``fallback``'s (a catalog's storage) when its root
    holds it, else those of the catalog whose root holds it, else ``fallback``'s when it is on
    the same kind of store."""
    if is_local(uri):
        return {}
    options = storage_for(uri, fallback).options
    same_kind = fallback is not None and fallback.root.split("://")[0] == uri.split("://")[0]
    return dict(options or (fallback.options if same_kind and fallback else {}))


def _missing(uri: str) -> MediaNotFoundError:
    return MediaNotFoundError(
        f"No file at {uri!r}: it was moved or deleted since it was imported; re-import its "
        "folder with dc.import_media(..., prune=True) to drop rows of deleted files."
    )


# ``_missing``'s message, found in the text of an engine's error that wrapped it
MISSING_FILE = re.compile(r"No file at .*?: it was moved or deleted since .*?deleted files\.", re.S)
