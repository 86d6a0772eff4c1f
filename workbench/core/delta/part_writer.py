"""A worker's stream of Arrow tables written as Parquet files of a bounded size, so neither the
worker nor the driver ever holds the whole stream (e.g. an engine's model predictions)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from workbench.core.delta.data_files import WrittenFile, discard_batch, new_batch, write_part
from workbench.core.schema.table_schema import Schema

if TYPE_CHECKING:
    import pyarrow as pa

    from workbench.core.storage.store import Storage

PART_BYTES = 32 * 1024**2  # rows a writer holds before writing them as one file


class PartWriter:
    """Writes tables in ``schema`` into ``folder`` as files of about ``PART_BYTES``."""

    def __init__(self, schema: pa.Schema, folder: str, storage: Storage | None):
        self.schema = schema
        self.declared = Schema.of(schema)
        self.folder = folder
        self.storage = storage
        self.batch = new_batch()
        self.pending: list[pa.Table] = []
        self.parts = 0

    def add(self, rows: pa.Table) -> Iterator[WrittenFile]:
        """Keep ``rows``; yield a file once the rows kept are big enough."""
        self.pending.append(rows.cast(self.schema))
        if sum(t.nbytes for t in self.pending) >= PART_BYTES:
            yield self._flush()

    def finish(self) -> Iterator[WrittenFile]:
        """Write the rows still kept."""
        if any(t.num_rows for t in self.pending):
            yield self._flush()

    def discard(self) -> None:
        """Delete the files this writer made (its worker failed)."""
        discard_batch(self.folder, self.batch, self.storage)

    def _flush(self) -> WrittenFile:
        import pyarrow as pa

        rows, self.pending = pa.concat_tables(self.pending), []
        self.parts += 1
        return write_part(rows, self.declared, self.folder, self.parts, self.batch, self.storage)


def written_parts(
    tables: Iterator[pa.Table], schema: pa.Schema, folder: str, storage: Storage | None
) -> Iterator[WrittenFile]:
    """``tables`` written into ``folder`` as they come; a failure deletes what was written."""
    writer = PartWriter(schema, folder, storage)
    try:
        for table in tables:
            yield from writer.add(table)
        yield from writer.finish()
    except BaseException:
        writer.discard()
        raise
