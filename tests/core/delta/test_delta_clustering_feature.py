"""Why a clustered table records its columns only as ``workbench.clusterBy``: Delta's own
clustered tables (writer feature ``clustering`` with ``domainMetadata``, the columns in the
``delta.clustering`` domain) are read, checkpointed and vacuumed by deltalake, but every write
deltalake makes to one is refused, so a workbench table carrying them could no longer be
written by deltalake, polars or Daft. When this test fails, deltalake writes such tables:
record the clustering in Delta's domain too."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pyarrow as pa
import pytest
from deltalake import DeltaTable, write_deltalake
from deltalake.exceptions import CommitFailedError

from tests.delta_readers import duckdb_delta_scan


def delta_clustered_table(folder: Path) -> str:
    """A Delta table clustered by ``user`` as Delta Spark records it (version 1)."""
    uri = str(folder)
    write_deltalake(uri, pa.table({"user": [2, 1], "v": ["b", "a"]}))
    clustering = {"clusteringColumns": [["user"]]}  # column paths, as Delta Spark writes them
    actions = [
        {"commitInfo": {"timestamp": 1, "operation": "CLUSTER BY"}},
        {
            "protocol": {
                "minReaderVersion": 1,
                "minWriterVersion": 7,
                "writerFeatures": ["domainMetadata", "clustering"],
            }
        },
        {
            "domainMetadata": {
                "domain": "delta.clustering",
                "configuration": json.dumps(clustering),
                "removed": False,
            }
        },
    ]
    commit = folder / "_delta_log" / f"{1:020d}.json"
    commit.write_text("".join(json.dumps(a) + "\n" for a in actions))
    return uri


def test_deltalake_reads_and_keeps_a_delta_clustered_table_but_writes_none(tmp_path):
    uri = delta_clustered_table(tmp_path / "t")
    table = DeltaTable(uri)
    assert table.protocol().writer_features == ["domainMetadata", "clustering"]
    assert sorted(table.to_pyarrow_table().column("user").to_pylist()) == [1, 2]
    assert pl.read_delta(uri).height == 2
    assert [r["user"] for r in duckdb_delta_scan(uri, order_by="user")] == [1, 2]
    table.create_checkpoint()
    assert table.vacuum(retention_hours=0, enforce_retention_duration=False, dry_run=True) == []
    with pytest.raises(CommitFailedError, match="Unsupported table features"):
        write_deltalake(uri, pa.table({"user": [3], "v": ["c"]}), mode="append")
    with pytest.raises(CommitFailedError, match="Unsupported table features"):
        DeltaTable(uri).optimize.compact()
