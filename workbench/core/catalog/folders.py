"""Where a catalog keeps table folders: live tables by name, dropped ones by incarnation.

A table lives at ``<root>/<namespace>/<table>/``. Dropping it moves its folder to
``_workbench/dropped/<incarnation>`` so time travel to before the drop keeps working until
vacuum. Every Delta commit records the transaction and the table incarnation that made it.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from workbench.core.delta.commits import TXN_TAG, read_commit_info
from workbench.core.delta.data_files import new_batch

if TYPE_CHECKING:
    from workbench.core.catalog.catalogs import Catalog

INCARNATION_TAG = "workbench.incarnation"  # commit-info key of the table's incarnation
DROPPED_KEY = "_workbench/dropped"
STAGING_KEY = "_workbench/staging"  # files written for a change before its commit
MAX_ID_LENGTH = 32


def live_key(namespace: str, name: str) -> str:
    """Key of the folder readers use while the table exists."""
    return f"{namespace}/{name}"


def dropped_key(incarnation: str) -> str:
    """Key of the folder a dropped table is kept in for time travel until vacuum."""
    if len(incarnation) > MAX_ID_LENGTH:  # catalogs before fixed-length ids used longer ones
        incarnation = hashlib.sha256(incarnation.encode()).hexdigest()[:MAX_ID_LENGTH]
    return f"{DROPPED_KEY}/{incarnation}"


def live_path(catalog: Catalog, namespace: str, name: str) -> str:
    """Path or URI of a table's live folder."""
    return catalog.uri(namespace, name)


def dropped_path(catalog: Catalog, incarnation: str) -> str:
    """Path or URI of a dropped table's folder."""
    return catalog.uri(*dropped_key(incarnation).split("/"))


def folder_identity(catalog: Catalog, key: str) -> tuple[str, str] | None:
    """The transaction and incarnation tagged on a table folder's first Delta commit (the
    incarnation is '' for folders made before it was recorded); None without a commit."""
    info = read_commit_info(catalog.storage, key, 0)
    if info is None:
        return None
    return str(info.get(TXN_TAG, "")), str(info.get(INCARNATION_TAG, ""))


def move_folder(catalog: Catalog, source: str, target: str) -> None:
    """Move a folder of objects (a rename on a local disk; copy then delete on object stores).
    Repeating an interrupted move finishes it."""
    from workbench.core.delta.table_cache import forget

    storage = catalog.storage
    if catalog.is_local:
        source_path, target_path = storage.fs_path(source), storage.fs_path(target)
        if os.path.isdir(source_path):
            os.makedirs(os.path.dirname(target_path), exist_ok=True)
            if os.path.isdir(target_path):  # an interrupted move elsewhere: merge into target
                for name in os.listdir(source_path):
                    os.replace(os.path.join(source_path, name), os.path.join(target_path, name))
                os.rmdir(source_path)
            else:
                os.replace(source_path, target_path)
    else:
        import obstore

        objects = storage.list(source)  # listed once: only what was copied is deleted
        for meta in objects:
            obstore.copy(storage.store, meta["path"], target + meta["path"][len(source) :])
        for meta in objects:
            storage.delete(meta["path"])
    forget(catalog.uri(*source.split("/")))


def remove_folder(catalog: Catalog, key: str) -> None:
    """Delete a folder and everything in it."""
    import shutil

    from workbench.core.delta.table_cache import forget

    storage = catalog.storage
    if catalog.is_local:
        shutil.rmtree(storage.fs_path(key), ignore_errors=True)
    else:
        for meta in storage.list(key):
            storage.delete(meta["path"])
    forget(catalog.uri(*key.split("/")))


@contextmanager
def staging_folder(catalog: Catalog) -> Iterator[str]:
    """A fresh staging folder of the catalog (its URI) for files a change writes before it
    commits (e.g. an engine's predictions), removed when the block ends."""
    key = f"{STAGING_KEY}/{new_batch()}"
    try:
        yield catalog.storage.uri(key)
    finally:
        remove_folder(catalog, key)
