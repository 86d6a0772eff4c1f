"""Rows of a table file marked deleted, for merge-on-read MERGE and DELETE on any engine: the
file stays with a new deletion vector, or, once its deleted share passes the table's purge
share, it is rewritten without those rows (a purge of that one file, so the cost stays bounded
by the file a change already touches); a file with no rows left is simply removed."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from workbench.core.delta.commits import purge_share
from workbench.core.delta.data_files import (
    DataFile,
    Rewrite,
    Vectored,
    WrittenFile,
    discard,
    write_part,
)
from workbench.core.delta.deletion_vectors import (
    read_vector,
    store_vector,
    undeleted_mask,
    vector_uri,
)
from workbench.core.delta.reading import StoredTable, file_rows

if TYPE_CHECKING:
    from pyroaring import BitMap64


def mark_deleted(opened: StoredTable, f: DataFile, deleted: BitMap64, rewrite: Rewrite) -> None:
    """Add to ``rewrite`` what deleting the rows ``deleted`` (all of them, old ones included)
    of file ``f`` takes: a vector, a purged copy of the file, or the file's removal."""
    if len(deleted) >= f.rows:
        rewrite.removed.append(f)
    elif len(deleted) > purge_share(opened.properties) * f.rows:
        rows = file_rows(opened, f).filter(undeleted_mask(f.rows, deleted))
        rewrite.written.append(write_part(rows, opened.schema, opened.uri, storage=opened.storage))
        rewrite.removed.append(f)
    else:
        vector = store_vector(opened.uri, deleted, opened.storage)
        vector_file = (
            None if vector.inline else WrittenFile(vector_uri(opened.uri, vector), 0, "{}")
        )
        rewrite.vectored.append(Vectored(f, vector, vector_file))


def mark_more_deleted(
    opened: StoredTable, f: DataFile, deleted: BitMap64, rewrite: Rewrite
) -> None:
    """``mark_deleted`` for rows ``deleted`` now, besides those ``f``'s vector deleted before."""
    if f.deletion_vector is not None:
        deleted |= read_vector(opened.uri, f.deletion_vector, opened.storage)
    mark_deleted(opened, f, deleted, rewrite)


@contextmanager
def discarded_on_failure(rewrite: Rewrite) -> Iterator[None]:
    """Delete every file ``rewrite`` made (data and vectors) if the block fails."""
    try:
        yield
    except BaseException:
        discard(rewrite.made())
        raise
