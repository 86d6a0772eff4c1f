"""The row groups of object-store files a filter needs, as pyarrow fragments. A small file
(up to ``WHOLE_FILE_BYTES``) is fetched whole, footer and data in one request, and kept in the
process's file cache, so a query after it asks the store nothing; a bigger one is read where it
is, by range: its footer fetched once per process and remembered, then only the column chunks
of the groups whose statistics allow a matching row, coalesced. Either way the groups the
statistics rule out are never decoded."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from workbench.core.base.caches import BoundedCache
from workbench.core.delta.skipping import kept_row_groups
from workbench.core.delta.tiny_files import fetched_whole

if TYPE_CHECKING:
    import pyarrow as pa
    import pyarrow.dataset as pads

    from workbench.core.delta.data_files import DataFile
    from workbench.core.filters.expression import Expr
    from workbench.core.storage.store import Storage

WHOLE_FILE_BYTES = 8 * 1024**2  # files fetched whole: one request, about as quick as two
FOOTERS_BYTES = 32 * 1024**2  # footers kept per process (parsed, about their encoded size)

# (store identity, file key) -> a fragment whose footer is read: data files never change
_FOOTERS: BoundedCache[tuple[str, str], Any] = BoundedCache(
    "delta.row_group_footers", lambda f: f.metadata.serialized_size, lambda: FOOTERS_BYTES
)


def pruned_fragments(
    storage: Storage,
    parquet: pads.ParquetFileFormat,
    files: list[DataFile],
    predicate: Expr,
    schema: pa.Schema,
) -> list[pads.ParquetFileFragment]:
    """A fragment of each of ``files`` (on an object store) holding only its row groups whose
    statistics allow a row ``predicate`` holds for (``schema``: the table's, as stored)."""
    import pyarrow as pa

    small = [f for f in files if f.size <= WHOLE_FILE_BYTES]
    fetched = dict(zip((f.absolute for f in small), fetched_whole(storage, small), strict=True))
    fragments = []
    for f in files:
        data = fetched.get(f.absolute)
        if data is not None:
            whole = parquet.make_fragment(pa.BufferReader(data))
            whole.ensure_complete_metadata()  # parsed from memory
        else:
            whole = _footer_read(storage, parquet, f, storage.key_of(f.absolute))
        groups = kept_row_groups(whole.metadata, f, predicate, schema)
        fragments.append(whole if groups is None else whole.subset(row_group_ids=groups))
    return fragments


def _footer_read(
    storage: Storage, parquet: pads.ParquetFileFormat, f: DataFile, key: str
) -> pads.ParquetFileFragment:
    """File ``f`` as a fragment read by range, its footer fetched the first time only (its
    size from the log: no request to learn it); a file gone raises ``FileNotFoundError``."""
    found = _FOOTERS.get((storage.identity, key))
    if found is not None:
        return found
    fragment = parquet.make_fragment(
        storage.fs_path(f.absolute), storage.filesystem, file_size=f.size
    )
    try:
        fragment.ensure_complete_metadata()
    except OSError as e:
        if not storage.exists(key):
            raise FileNotFoundError(f.absolute) from e
        raise
    _FOOTERS.keep((storage.identity, key), fragment)
    return fragment
