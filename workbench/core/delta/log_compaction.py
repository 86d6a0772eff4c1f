"""Upkeep of the append-only Delta tables workbench writes itself (the catalog log, the Delta
run log): a commit adds one small part, so now and then one tiered compaction step
(``compaction_plan``) folds parts together and a checkpoint spares readers the commit replay.

A step reads its parts and writes one part in their place in write order; it commits at the
next free version past other writers' appends (which only add parts), and gives up (its part
deleted) when a commit since then removed parts, as a concurrent step would. Steps and
checkpoints run in the background (``upkeep``), each bounded, so no commit pays for them.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from workbench.core.delta.commits import (
    add_action,
    commit_contents,
    commit_key,
    commit_lines,
    now_ms,
    remove_action,
)
from workbench.core.delta.compaction_plan import CompactionSettings, plan_step
from workbench.core.delta.data_files import WrittenFile, footer_stats, new_batch
from workbench.core.delta.snapshot import data_files_of
from workbench.core.delta.upkeep import later, request_checkpoint

if TYPE_CHECKING:
    from deltalake import DeltaTable

    from workbench.core.storage.store import Storage

# A log part is a few rows; a step folds at least 8 of one tier, so each row is rewritten about
# log8(commits) times. Parts are read in one go, so a step reads at most 64 MiB.
LOG_SETTINGS = CompactionSettings(target_size=32 * 1024**2, max_step_bytes=64 * 1024**2)
STEP_EVERY = 16  # commits between compaction steps
CHECKPOINT_EVERY = 100  # versions between checkpoints


@dataclass(frozen=True)
class LogStep:
    """A compaction step written but not committed: the version it read, its part's key and
    its actions."""

    read_version: int
    key: str
    actions: list[dict[str, Any]]


def compact_log(table: DeltaTable, storage: Storage, folder: str = "") -> int | None:
    """One compaction step of an append-only log table at ``folder`` (a key of ``storage``),
    if its parts call for one: the version it committed, None when none was needed or it gave
    way to another step."""
    step = prepare_step(table, storage, folder)
    return None if step is None else commit_step(storage, step, folder)


def prepare_step(table: DeltaTable, storage: Storage, folder: str = "") -> LogStep | None:
    """Plan a step on the newest version and write its part (None when none is needed)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    table.update_incremental()
    parts = data_files_of(table, storage.uri(folder) if folder else storage.root)
    chosen = plan_step(parts, LOG_SETTINGS)
    if not chosen:
        return None
    schema = pa.schema(table.schema().to_arrow())
    rows = pa.concat_tables(
        pq.read_table(storage.fs_path(f.absolute), filesystem=storage.filesystem, schema=schema)
        for f in chosen
    )
    buffer, collected = io.BytesIO(), []
    pq.write_table(rows, buffer, metadata_collector=collected)
    name = f"part-{new_batch()}-compacted.snappy.parquet"
    key = f"{folder}/{name}" if folder else name
    storage.put(key, buffer.getvalue())
    written = WrittenFile(storage.uri(key), len(buffer.getvalue()), footer_stats(collected[0]))
    info = {"commitInfo": {"timestamp": now_ms(), "operation": "OPTIMIZE"}}
    actions = [
        info,
        *(remove_action(f, data_change=False) for f in chosen),
        add_action(name, written, chosen[0].modified, data_change=False),
    ]
    return LogStep(table.version(), key, actions)


def commit_step(storage: Storage, step: LogStep, folder: str = "") -> int | None:
    """Publish a step at the first free version after the one it read, as long as every
    commit in between only added parts: the version, or None (its part is deleted)."""
    content = commit_lines(step.actions)
    version = step.read_version + 1
    while not storage.put_if_absent(commit_key(folder, version), content):
        if not commit_contents(storage.get(commit_key(folder, version))).only_adds:
            storage.delete(step.key)
            return None
        version += 1
    return version


def maintain_log(storage: Storage, version: int, folder: str = "") -> None:
    """The upkeep due after the log's commit ``version``, in the background: a compaction step
    every ``STEP_EVERY`` commits, a checkpoint every ``CHECKPOINT_EVERY``."""
    if version <= 0:
        return
    uri = storage.uri(folder) if folder else storage.root
    options = storage.delta_options
    if version % STEP_EVERY == 0:

        def step() -> None:
            from deltalake import DeltaTable

            compact_log(DeltaTable(uri, storage_options=options), storage, folder)

        later(f"compact {uri}", step, uri, options)
    if version % CHECKPOINT_EVERY == 0:
        request_checkpoint(uri, options)
