"""Parts Spark's executors already wrote into a table folder, as data ``dc.write`` commits:
``df.write.format("workbench")`` runs its tasks before the catalog transaction that adds
their files, so that transaction sees only file actions, never rows."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from workbench.core.base.errors import InvalidArgumentError, TransactionConflictError
from workbench.core.data.engine import Engine
from workbench.core.delta.data_files import WrittenFile
from workbench.core.schema.merge_keys import unique_keys
from workbench.core.schema.table_schema import Schema
from workbench.core.storage.store import Storage

if TYPE_CHECKING:
    import pyarrow as pa

    from workbench.core.base.types import DatasetType
    from workbench.core.catalog.locations import OpenTable
    from workbench.core.delta.data_files import Rewrite
    from workbench.core.schema.merge_order import Ranking


@dataclass(frozen=True)
class WrittenParts:
    """Files written in ``written_as`` (the table schema planned before the job ran) for the
    table folder ``folder`` (None: staged for a table the write creates, whose folder its
    transaction chooses), from a frame whose own schema is ``incoming``."""

    files: list[WrittenFile]
    incoming: pa.Schema
    written_as: Schema
    folder: str | None
    storage: Storage

    @property
    def writing_engine(self) -> Engine:
        """The engine ``dc.write`` commits these parts with."""
        return WrittenPartsEngine()


class WrittenPartsEngine(Engine):
    """Commits parts Spark wrote: checks them against the write's plan, writes nothing."""

    name = "spark"

    def read(self, table: OpenTable, read_as: DatasetType, *args: Any, **kwargs: Any) -> Any:
        raise InvalidArgumentError("Written parts are committed, not read.")

    def source(self, data: WrittenParts) -> WrittenParts:
        return data

    def schema(self, source: WrittenParts) -> pa.Schema:
        return source.incoming

    def cast_exact(
        self, source: WrittenParts, targets: Mapping[str, pa.DataType]
    ) -> tuple[WrittenParts, list[str]]:
        return source, []  # the tasks wrote the table's types already

    def keyed(
        self,
        source: WrittenParts,
        keys: list[str],
        table: str,
        dedupe: str | None,
        order: Ranking = (),
    ) -> WrittenParts:
        """The parts, once their keys (read back, keys only) are non-null and unique: rows
        already written cannot be de-duplicated."""
        import pyarrow.dataset as pads

        paths = [source.storage.fs_path(f.uri) for f in source.files]
        if paths:
            written = pads.dataset(paths, filesystem=source.storage.filesystem, format="parquet")
            unique_keys(written.to_table(columns=keys), keys, table, None)
        return source

    def write_files(self, source: WrittenParts, schema: Schema, folder: str) -> list[WrittenFile]:
        """The parts, when the table is still as planned when the job started; parts staged
        for a table this write creates are moved into its folder."""
        from dataclasses import replace

        moved_folder = source.folder is not None and folder != source.folder
        if moved_folder or not schema.arrow.equals(source.written_as.arrow, True):
            raise TransactionConflictError(
                f"The table at {folder!r} changed (its schema or folder) while Spark wrote to "
                "it; nothing was committed. Run the write again."
            )
        inside = folder.rstrip("/") + "/"
        moved = []
        for f in source.files:
            if f.uri.startswith(inside):
                moved.append(f)
                continue
            target = inside + f.uri.rsplit("/", 1)[-1]
            source.storage.move(f.uri, target)
            moved.append(replace(f, uri=target))
        return moved

    def merge(self, table: OpenTable, source: Any, schema: Schema, keys: list[str]) -> Rewrite:
        raise InvalidArgumentError(
            "Parts Spark wrote are appended or replace a table; MERGE a Spark DataFrame with "
            "df.write.format('workbench').option('writeMode', 'merge') or dc.write(df, table, "
            "mode='merge')."
        )

    def delete(self, table: OpenTable, source: Any, keys: list[str]) -> Rewrite:
        raise InvalidArgumentError(
            "Parts Spark wrote are appended or replace a table; DELETE by key with "
            "df.write.format('workbench').option('writeMode', 'delete') or dc.write(df, table, "
            "mode='delete')."
        )
