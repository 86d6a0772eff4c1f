"""A Daft data sink that writes each micropartition as a Parquet part in a table's declared
types, and reports the files for core to commit."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from daft.io.sink import DataSink, WriteResult

from workbench.core.files import WrittenFile, discard_batch, new_batch, write_part

if TYPE_CHECKING:
    import daft

    from workbench.core.schema import Schema

RESULT = "file"


class PartSink(DataSink[str]):
    """Writes micropartitions into a table folder; each result is a ``WrittenFile`` as JSON."""

    def __init__(self, schema: Schema, folder: str, batch: str):
        self.table_schema, self.folder, self.batch = schema, folder, batch

    def name(self) -> str:
        return "workbench table files"

    def schema(self) -> Any:
        import daft
        import pyarrow as pa

        return daft.Schema.from_pyarrow_schema(pa.schema([(RESULT, pa.string())]))

    def write(self, micropartitions: Iterator[Any]) -> Iterator[WriteResult[str]]:
        for index, part in enumerate(micropartitions):
            data = part.to_arrow()
            if not data.num_rows:
                continue
            written = write_part(data, self.table_schema, self.folder, index, self.batch)
            record = json.dumps([written.uri, written.size, written.stats])
            yield WriteResult(result=record, bytes_written=written.size, rows_written=data.num_rows)

    def finalize(self, write_results: list[WriteResult[str]]) -> Any:
        from daft.recordbatch import MicroPartition

        return MicroPartition.from_pydict({RESULT: [r.result for r in write_results]})


def write_frame(frame: daft.DataFrame, schema: Schema, folder: str) -> list[WrittenFile]:
    """Run ``frame`` and write it into the table folder; a failed run leaves no files."""
    batch = new_batch()
    try:
        records = frame.write_sink(PartSink(schema, folder, batch)).to_pydict()[RESULT]
    except BaseException:
        discard_batch(folder, batch)
        raise
    return sorted((WrittenFile(*json.loads(r)) for r in records), key=lambda f: f.uri)
