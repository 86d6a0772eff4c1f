"""List the files of a media folder (a local path or an object-store prefix)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from workbench.core.base.errors import InvalidArgumentError, MediaNotFoundError, NotAFolderError
from workbench.core.storage.fetch import options_for
from workbench.core.storage.store import Storage, is_local, local_path


@dataclass(frozen=True)
class MediaFile:
    """One file found by a scan: its key (path under the folder), URI, size and change time."""

    key: str
    uri: str
    size: int
    modified: datetime  # UTC, microseconds


@dataclass(frozen=True)
class Source:
    """A folder to import: its root (absolute path or ``scheme://bucket/prefix``) and storage."""

    root: str
    storage: Storage

    def uri(self, key: str) -> str:
        """The URI of a file under the folder, in the form the catalog storage uses."""
        return f"{self.root}/{key}" if self.root != "/" else f"/{key}"


def open_source(source: Any, fallback: Storage | None = None) -> Source:
    """Check that ``source`` is an existing folder. Object-store credentials come from the
    catalog whose root holds it, else from ``fallback`` (the target catalog's storage) when it
    is on the same kind of store."""
    if not isinstance(source, (str, os.PathLike)) or not str(source):
        raise InvalidArgumentError(
            f"source={source!r} must be a folder: a path or a URI such as s3://bucket/prefix, "
            f"not {type(source).__name__}."
        )
    text = os.fspath(source)
    if is_local(text):
        root = os.path.abspath(os.path.expanduser(local_path(text)))
        if not os.path.exists(root):
            raise MediaNotFoundError(f"Media folder {root!r} does not exist; check the path.")
        if not os.path.isdir(root):
            raise _not_a_folder(root)
        return Source(root.rstrip("/") or "/", Storage(root))
    root = text.rstrip("/")
    options = options_for(root, fallback)
    source_storage = Storage(root, options)
    if not source_storage.list(""):
        parent, _, name = root.rpartition("/")
        in_bucket = "/" in root.split("://", 1)[1]
        if in_bucket and Storage(parent, options).exists(name):
            raise _not_a_folder(root)
        raise MediaNotFoundError(
            f"Nothing is stored under {root!r}: the prefix is empty or does not exist, or the "
            "catalog's storage options do not reach it."
        )
    return Source(root, source_storage)


def _not_a_folder(root: str) -> NotAFolderError:
    folder = root.rpartition("/")[0] or "/"
    return NotAFolderError(
        f"{root!r} is a file; dc.import_media imports a folder (keys are paths under it), so "
        f"pass its folder, e.g. {folder!r}."
    )


def scan(source: Source, recursive: bool = True) -> list[MediaFile]:
    """The files under the folder, sorted by key; hidden files and folders (names starting
    with '.') are skipped, and so are subfolders unless ``recursive``."""
    found = []
    for meta in source.storage.list(""):
        key = str(meta["path"])
        parts = key.split("/")
        if any(p.startswith(".") for p in parts) or (not recursive and len(parts) > 1):
            continue
        modified = meta["last_modified"].astimezone(timezone.utc)
        found.append(MediaFile(key, source.uri(key), int(meta["size"]), modified))
    return sorted(found, key=lambda f: f.key)
