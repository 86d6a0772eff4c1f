"""Daft writes its own Parquet files (in parallel, in Rust) into a fresh folder inside the
table, in the table's declared types; core commits them. A failed run leaves no files."""

from __future__ import annotations

import shutil
from typing import TYPE_CHECKING

from workbench.core.conform import column_plan
from workbench.core.files import WrittenFile, describe_file, new_batch

if TYPE_CHECKING:
    import daft
    import pyarrow as pa

    from workbench.core.schema import Schema

FOLDER_PREFIX = "daft-"


def daft_type(arrow_type: pa.DataType) -> daft.DataType:
    """The Daft type of an Arrow type."""
    import daft

    return daft.DataType.from_arrow_type(arrow_type)


def conform(frame: daft.DataFrame, schema: Schema, fill_missing: bool) -> daft.DataFrame:
    """The frame conformed to the table's schema (``column_plan``), with Daft expressions."""
    from daft import col, lit

    return frame.select(
        *[
            (col(c.field.name) if c.present else lit(c.field.future_default))
            .cast(daft_type(c.field.type))
            .alias(c.field.name)
            for c in column_plan(schema, frame.column_names, fill_missing)
        ]
    )


def write_frame(frame: daft.DataFrame, schema: Schema, folder: str) -> list[WrittenFile]:
    """Run ``frame`` and write it as Parquet into a new folder of the table."""
    target = f"{folder.rstrip('/')}/{FOLDER_PREFIX}{new_batch()}"
    try:
        paths = conform(frame, schema, True).write_parquet(target).to_pydict()["path"]
        return sorted((describe_file(p) for p in paths), key=lambda f: f.uri)
    except BaseException:
        shutil.rmtree(target.removeprefix("file://"), ignore_errors=True)
        raise
