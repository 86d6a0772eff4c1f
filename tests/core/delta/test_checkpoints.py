"""Tables are checkpointed every ``CHECKPOINT_EVERY`` versions in the background, so a new
process opening one replays fewer JSON commits than that; what it reads from a checkpoint and
the commits after it (files, deletion vectors) is exactly what was committed."""

from __future__ import annotations

import json
import subprocess
import sys

import pyarrow as pa
import pytest
from deltalake import DeltaTable

import workbench as dc
from tests.core.delta.test_deletion_vectors import keyed_schema, rows
from tests.delta_readers import delta_rows
from workbench.core.base.caches import clear_process_caches
from workbench.core.delta import deletion_vectors, upkeep
from workbench.core.transactions.rollforward import CHECKPOINT_EVERY

FIRST_READ = """
import json, sys
import workbench as dc
root, options = json.loads(sys.argv[1])
dc.init({"default": dc.Catalog(dc.CatalogProperties(root, options))})
print(json.dumps(sorted(dc.read("t", read_as="pyarrow").select(["id", "v"]).to_pylist(), key=str)))
"""


def keyed_table() -> dict[int, str]:
    """A keyed table with deletion vectors on and compaction off (a version per change), 1000
    rows at version 1: its rows' ``v`` by ``id``."""
    properties = {"delta.enableDeletionVectors": "true", "delta.autoOptimize.autoCompact": "false"}
    dc.create_table("t", schema=keyed_schema(), table_properties=properties)
    dc.write(rows(range(1000), "a"), "t", mode="merge")
    return {i: f"a{i}" for i in range(1000)}


def change(i: int, rows_now: dict[int, str]) -> dict[int, str]:
    """The ``i``-th change, a version each: in turn a merge (an upsert: updates, deleted keys
    back, new keys) and a delete of present rows (scattered: in a vector file or inline)."""
    if i % 2:
        gone = sorted(rows_now)[i % 7 :: 40 + i]
        dc.write(pa.table({"id": gone}), "t", mode="delete")
        return {k: v for k, v in rows_now.items() if k not in gone}
    upserted = [*range(i * 7, i * 7 + 5), *range(1000 + i * 5, 1005 + i * 5)]
    dc.write(rows(upserted, "b"), "t", mode="merge")
    return {**rows_now, **{k: f"b{k}" for k in upserted}}


def new_process_rows(catalog: dc.Catalog) -> list[dict]:
    """The rows (``id``, ``v``) a new process reads from the table (nothing of this one's
    caches)."""
    where = json.dumps([catalog.properties.root, catalog.properties.storage_options])
    out = subprocess.run(
        [sys.executable, "-c", FIRST_READ, where], check=True, capture_output=True, text=True
    )
    return json.loads(out.stdout)


def expected_rows(model: dict[int, str]) -> list[dict]:
    return sorted(({"id": k, "v": v} for k, v in model.items()), key=str)


def check_checkpointed_and_read_anew(catalog: dc.Catalog) -> None:
    model, head = keyed_table(), 2 * CHECKPOINT_EVERY
    for i in range(head - 1):  # versions 2 to ``head``, checkpoints asked for on the way
        model = change(i, model)
    upkeep.flush()  # written in the background: the last at ``head``, the newest version
    for i in range(head - 1, head + 1):  # two versions past it
        model = change(i, model)
    info, storage = dc.get_table("t"), catalog.storage
    newest = json.loads(storage.get(storage.key_of(f"{info.uri}/_delta_log/_last_checkpoint")))
    assert (newest["version"], info.version) == (head, head + 2)
    expected = expected_rows(model)
    assert new_process_rows(catalog) == expected  # from the checkpoint and the commits after
    here = dc.read("t", read_as="pyarrow").select(["id", "v"])
    assert sorted(here.to_pylist(), key=str) == expected
    direct = DeltaTable(info.uri, storage_options=catalog.properties.storage_options)
    assert sorted(delta_rows(direct).select(["id", "v"]).to_pylist(), key=str) == expected


@pytest.mark.slow  # several seconds: make test runs it, make test-fast does not
def test_a_new_process_reads_a_table_from_its_recent_checkpoint(catalog):
    check_checkpointed_and_read_anew(catalog)


def test_a_new_process_reads_a_table_on_s3_from_its_recent_checkpoint(s3_catalog):
    check_checkpointed_and_read_anew(s3_catalog)


def test_a_log_replayed_a_few_commits_at_a_time_reads_the_same_rows(catalog, monkeypatch):
    model = keyed_table()
    for i in range(7):  # versions 2 to 8: vectors replayed from the first commit on
        model = change(i, model)
    monkeypatch.setattr(deletion_vectors, "COMMITS_AT_ONCE", 2)
    clear_process_caches()  # nothing remembered: the table's Delta log is read again
    here = dc.read("t", read_as="pyarrow").select(["id", "v"])
    assert sorted(here.to_pylist(), key=str) == expected_rows(model)
