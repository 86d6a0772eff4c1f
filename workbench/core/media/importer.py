"""``import_media``: build or update a table of references to the files of a folder."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from html import escape
from typing import TYPE_CHECKING, Any

from workbench.core.base.arguments import flag, text
from workbench.core.base.errors import NotAMediaTableError
from workbench.core.base.progress import progress
from workbench.core.media.columns import KEY_COLUMN, URI_COLUMN, URI_PROPERTY, arrow_schema
from workbench.core.media.detect import detect
from workbench.core.media.facts import facts
from workbench.core.media.scan import MediaFile, Source, open_source, scan
from workbench.core.storage.fetch import read_many

if TYPE_CHECKING:
    import pyarrow as pa

    from workbench.core.catalog.locations import Location

CHUNK = 64  # files read into memory at once
STAT_COLUMNS = [KEY_COLUMN, "size", "modified"]


@dataclass(frozen=True)
class ImportResult:
    """What an import did: rows added, updated, unchanged and removed, and files gone from the
    folder whose rows were kept (``prune=True`` removes them)."""

    table: str
    source: str
    added: int
    updated: int
    unchanged: int
    removed: int
    kept_missing: int = 0
    version: int | None = None  # the table's Delta version after the import; None: no change

    @property
    def changed(self) -> bool:
        """True when the import committed anything."""
        return self.version is not None

    def __repr__(self) -> str:
        return (
            f"ImportResult(table={self.table!r}, added={self.added}, updated={self.updated}, "
            f"unchanged={self.unchanged}, removed={self.removed}, "
            f"kept_missing={self.kept_missing}, version={self.version})"
        )

    def _repr_html_(self) -> str:
        counts = "".join(
            f"<td style='padding:0 8px'><b>{value}</b> {label}</td>"
            for label, value in (
                ("added", self.added),
                ("updated", self.updated),
                ("unchanged", self.unchanged),
                ("removed", self.removed),
            )
        )
        note = (
            f"<br><i>{self.kept_missing} rows of files no longer in the folder were kept; "
            "prune=True removes them.</i>"
            if self.kept_missing
            else ""
        )
        version = "no new version" if self.version is None else f"version {self.version}"
        return (
            f"<div><b>{escape(self.table)}</b> &larr; {escape(self.source)} ({version})"
            f"<table><tr>{counts}</tr></table>{note}</div>"
        )


def import_media(
    source: str | os.PathLike[str],
    table: str,
    namespace: str | None = None,
    recursive: bool = True,
    prune: bool = False,
    catalog: str | None = None,
) -> ImportResult:
    """Make ``table`` hold one row per file under the folder ``source`` (a path or an object-store
    URI): key, uri, kind, content type (from the bytes), size, sha256, modified time and per-kind
    facts. Files are referenced, never copied.

    A new table is created (and its namespace); on an existing media table, new files add rows,
    changed files (size or modified time differ) update theirs, and rows of files gone from the
    folder are deleted only with ``prune=True``. An unchanged folder commits nothing. All
    changes are one catalog transaction: a failed import changes nothing."""
    from workbench.core.catalog.locations import locate
    from workbench.core.transactions.context import operation

    flag("recursive", recursive)
    flag("prune", prune)
    text("namespace", namespace)
    text("catalog", catalog)
    text("table", table, optional=False)
    loc = locate(table, namespace, catalog)
    found = open_source(source, loc.catalog.storage)
    files = scan(found, recursive)
    with operation(loc.catalog, f"import media from {found.root}"):
        stored = _stored(loc)
        stale = [f for f in files if stored is None or stored.get(f.key) != _stat(f)]
        rows = _describe(found, stale)
        gone = sorted(set(stored or ()) - {f.key for f in files})
        version = _apply(loc, rows, gone if prune else [], stored is None)
    known = stored or {}
    return ImportResult(
        table=f"{loc.namespace}.{loc.table_name}",
        source=found.root,
        added=sum(1 for f in stale if f.key not in known),
        updated=sum(1 for f in stale if f.key in known),
        unchanged=len(files) - len(stale),
        removed=len(gone) if prune else 0,
        kept_missing=0 if prune else len(gone),
        version=version,
    )


def _stat(file: MediaFile) -> tuple[int, Any]:
    """What tells a file changed without reading it: its size and modified time."""
    return file.size, file.modified


def _stored(loc: Location) -> dict[str, tuple[int, Any]] | None:
    """Each stored key's size and modified time; None when the table does not exist. Raises
    ``NotAMediaTableError`` for a table without a media table's columns."""
    from workbench.core.io.reader import read
    from workbench.core.ops.tables import get_table, table_exists

    name, namespace, catalog = loc.table_name, loc.namespace, loc.catalog_name
    if not table_exists(name, namespace, catalog):
        return None
    check_media_table(get_table(name, namespace, catalog))
    rows = read(name, namespace, catalog, read_as="pyarrow", columns=STAT_COLUMNS).to_pylist()
    return {row[KEY_COLUMN]: (row["size"], row["modified"]) for row in rows}


def check_media_table(info: Any) -> None:
    """Raise ``NotAMediaTableError`` unless a table (its ``TableInfo``) has every media column
    with its type and ``key`` as its only merge key."""
    import pyarrow as pa

    have = info.schema.arrow if info.schema is not None else pa.schema([])
    wrong = [
        f"{f.name} ({f.type})"
        for f in arrow_schema()
        if f.name not in have.names or not have.field(f.name).type.equals(f.type)
    ]
    if wrong or info.merge_keys != [KEY_COLUMN]:
        raise NotAMediaTableError(
            f"Table {info.namespace}.{info.name} exists but is not a media table (it lacks "
            f"{', '.join(wrong) or 'merge key ' + KEY_COLUMN!r}); import into a new table name, "
            "or drop that table first."
        )


def _describe(found: Source, files: Sequence[MediaFile]) -> pa.Table:
    """The media rows of ``files``: their bytes are read (in chunks, on threads), hashed,
    typed and measured."""
    import pyarrow as pa

    rows: list[dict[str, Any]] = []
    with progress(len(files), "importing media", unit="file") as advance:
        for chunk in _chunks(files, CHUNK):
            contents = read_many([f.uri for f in chunk], found.storage.options or None)
            rows += [_row(f, data) for f, data in zip(chunk, contents, strict=True)]
            advance(len(chunk))
    return pa.Table.from_pylist(rows, schema=arrow_schema())


def _chunks(items: Sequence[MediaFile], size: int) -> Iterator[Sequence[MediaFile]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _row(file: MediaFile, data: bytes) -> dict[str, Any]:
    """One file's row."""
    kind, content_type = detect(data)
    return {
        KEY_COLUMN: file.key,
        URI_COLUMN: file.uri,
        "kind": kind,
        "content_type": content_type,
        "size": len(data),
        "sha256": hashlib.sha256(data).hexdigest(),
        "modified": file.modified,
        **facts(kind, data),
    }


def _apply(loc: Location, rows: pa.Table, gone: list[str], create: bool) -> int | None:
    """Write the rows (creating the table, or merging them by key) and delete the ``gone``
    keys; the table's new Delta version, or None when there was nothing to write."""
    import pyarrow as pa

    from workbench.core.base.types import TableWriteMode
    from workbench.core.io.writer import write
    from workbench.core.media.columns import table_schema

    where = (loc.table_name, loc.namespace, loc.catalog_name)
    marker = {URI_PROPERTY: URI_COLUMN}
    version = None
    if create:
        return write(
            rows,
            *where,
            mode=TableWriteMode.CREATE,
            schema=table_schema(),
            table_properties=marker,
            auto_create_namespace=True,
        ).version
    if rows.num_rows:
        version = write(rows, *where, mode=TableWriteMode.MERGE).version
    if gone:
        keys = pa.table({KEY_COLUMN: pa.array(gone, pa.string())})
        version = write(keys, *where, mode=TableWriteMode.DELETE).version
    return version
