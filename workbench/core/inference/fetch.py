"""Bytes of many URIs for model inputs on engines without a download function of their own.

Uses the media importer's ``read_many`` when it is installed (it arrives with media tables);
until then, reads each URI through the catalog's storage.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from workbench.core.storage import Storage


def read_uris(uris: Sequence[str | None], storage: Storage | None) -> list[bytes | None]:
    """The bytes behind each URI (None for a null URI), read with the catalog's credentials."""
    try:
        from workbench.core.media.fetch import read_many  # type: ignore[import-not-found]
    except ImportError:
        return _read_with_storage(uris, storage)
    return list(read_many(list(uris), dict(storage.options) if storage else {}))


def _read_with_storage(uris: Sequence[str | None], storage: Storage | None) -> list[bytes | None]:
    from workbench.core.storage import storage_for

    found: list[bytes | None] = []
    for uri in uris:
        if uri is None:
            found.append(None)
            continue
        filesystem, path = (storage or storage_for(uri)).locate(uri)
        with filesystem.open_input_stream(path) as stream:
            found.append(stream.read())
    return found
