"""Daft writes its own Parquet files (in parallel, in Rust) into a fresh folder inside the
table, in the table's declared types; core commits them. A failed run leaves no files."""

from __future__ import annotations

import shutil
from typing import TYPE_CHECKING

from workbench.core.files import WrittenFile, describe_file, new_batch

if TYPE_CHECKING:
    import daft

    from workbench.core.schema import Schema

FOLDER_PREFIX = "daft-"


def prepared(frame: daft.DataFrame, schema: Schema) -> daft.DataFrame:
    """The frame in ``schema``'s columns and types; absent columns get their defaults."""
    from daft import col, lit

    from workbench.engines.daft.engine import daft_type

    columns = []
    for f in schema:
        value = col(f.name) if f.name in frame.column_names else lit(f.future_default)
        columns.append(value.cast(daft_type(f.type)).alias(f.name))
    return frame.select(*columns)


def write_frame(frame: daft.DataFrame, schema: Schema, folder: str) -> list[WrittenFile]:
    """Run ``frame`` and write it as Parquet into a new folder of the table."""
    target = f"{folder.rstrip('/')}/{FOLDER_PREFIX}{new_batch()}"
    try:
        paths = prepared(frame, schema).write_parquet(target).to_pydict()["path"]
        return sorted((describe_file(p) for p in paths), key=lambda f: f.uri)
    except BaseException:
        shutil.rmtree(target.removeprefix("file://"), ignore_errors=True)
        raise
