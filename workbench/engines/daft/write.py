"""Daft writes its own Parquet files (in parallel, in Rust) into a fresh folder inside the
table, in the table's declared types; core commits them. A failed run leaves no files."""

from __future__ import annotations

import shutil
from typing import TYPE_CHECKING

from workbench.core.delta.data_files import (
    ROW_GROUP_BYTES,
    WrittenFile,
    describe_file,
    new_batch,
)
from workbench.core.schema.conform import column_plan
from workbench.core.storage.known import storage_for

if TYPE_CHECKING:
    import daft
    import pyarrow as pa

    from workbench.core.schema.table_schema import Schema
    from workbench.core.storage.store import Storage

FOLDER_PREFIX = "daft-"


def io_config(storage: Storage) -> daft.io.IOConfig | None:
    """Daft's settings for a catalog's object store (None for a local folder)."""
    from daft.io import IOConfig, S3Config

    if not storage.root.startswith(("s3://", "s3a://")):
        return None
    s3 = storage.s3
    return IOConfig(
        s3=S3Config(
            endpoint_url=s3.get("endpoint"),
            key_id=s3.get("access_key_id"),
            access_key=s3.get("secret_access_key"),
            session_token=s3.get("session_token"),
            region_name=s3.get("region"),
            use_ssl=not str(s3.get("endpoint", "https")).startswith("http://"),
            **storage.limits.daft_s3(),  # bounded retries on a dead endpoint, as the others
        )
    )


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
    import daft

    storage = storage_for(folder)
    target = f"{folder.rstrip('/')}/{FOLDER_PREFIX}{new_batch()}"
    try:
        # row groups of about the size workbench's own writer makes (Daft writes a page index)
        with daft.execution_config_ctx(parquet_target_row_group_size=ROW_GROUP_BYTES):
            written = conform(frame, schema, True).write_parquet(
                target, io_config=io_config(storage)
            )
        paths = written.to_pydict()["path"]
        return sorted((describe_file(_uri(p, target), storage) for p in paths), key=lambda f: f.uri)
    except BaseException:
        discard_folder(storage, target)
        raise


def _uri(path: str, target: str) -> str:
    """A path Daft reports as a URI in the target's scheme (it drops ``s3://``)."""
    if "://" in path or "://" not in target:
        return path.removeprefix("file://")
    return f"{target.split('://', 1)[0]}://{path}"


def discard_folder(storage: Storage, folder: str) -> None:
    """Delete a write's own folder and what it holds."""
    for meta in storage.list(folder[len(storage.root.rstrip("/")) + 1 :]):
        storage.delete(meta["path"])
    if "://" not in folder:
        shutil.rmtree(folder, ignore_errors=True)
