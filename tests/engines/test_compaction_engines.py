"""Automatic compaction where the commit runs: Spark and Ray fold a keyed table's files on their
workers, Daft in this process, each step recorded with the engine that made it; on S3 too."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import workbench as dc
from tests.delta_readers import delta_rows
from tests.engine_parity import payload
from workbench.core.catalog.locations import locate
from workbench.core.delta.data_files import filesystem_of
from workbench.core.transactions.table_versions import open_table

KEYED = dc.Schema.of(
    [
        dc.Field.of(pa.field("id", pa.int64()), is_merge_key=True),
        dc.Field.of(pa.field("v", pa.string())),
    ]
)
EAGER = {"workbench.autoCompact.minNumFiles": "2"}


def merges(engine: str, spark=None, properties: dict | None = None) -> dict[int, str]:
    """A keyed table merged into six times by ``engine`` (each write with one value of ``v``,
    later writes with smaller ones); the rows it must hold."""
    model = {i: "a" for i in range(20)}
    first = payload(engine, {"id": list(range(20)), "v": ["a"] * 20}, "id long, v string", spark)
    dc.write(first, "t", schema=KEYED, table_properties={**EAGER, **(properties or {})})
    for step in range(6):
        ids = [step * 3, 30 + step]
        data = {"id": ids, "v": [f"{9 - step}"] * 2}
        dc.write(payload(engine, data, "id long, v string", spark), "t", mode="merge")
        model.update(dict.fromkeys(ids, f"{9 - step}"))
    return model


def steps_by(engine: str) -> list[str]:
    """The engines recorded on the table's compaction steps."""
    log = dc.transactions(table="default.t", read_as="pyarrow", compactions=True).to_pylist()
    return [r["engine"] for r in log if "AUTO_COMPACT" in r["operations"]]


def assert_rows(model: dict[int, str]) -> None:
    want = [{"id": k, "v": v} for k, v in sorted(model.items())]
    assert sorted(dc.read("t", read_as="pyarrow").to_pylist(), key=lambda r: r["id"]) == want
    from deltalake import DeltaTable

    info = dc.get_table("t")
    folder = delta_rows(DeltaTable(info.uri, storage_options=info_options()))
    assert sorted(folder.to_pylist(), key=lambda r: r["id"]) == want


def info_options() -> dict | None:
    return locate("t").catalog.properties.storage_options or None


def test_daft_writes_are_compacted_in_this_process(catalog):
    model = merges("daft")
    assert steps_by("daft") and set(steps_by("daft")) == {"daft"}
    assert_rows(model)


def test_spark_writes_are_compacted_by_spark(spark, catalog):
    model = merges("spark", spark)
    assert steps_by("spark") and set(steps_by("spark")) == {"spark"}
    assert_rows(model)
    assert len(open_table(locate("t")).files) < 8


def test_ray_writes_are_compacted_by_ray(ray_cluster, catalog):
    model = merges("ray")
    assert steps_by("ray") and set(steps_by("ray")) == {"ray"}
    assert_rows(model)


def assert_folded_in_order() -> None:
    """Every file holding rows of several writes (a step's) has them in ``v`` order."""
    folded = 0
    for f in open_table(locate("t")).files:
        fs, path = filesystem_of(f.absolute)
        values = pq.read_table(path, filesystem=fs).column("v").to_pylist()
        if len(set(values)) > 1:
            assert values == sorted(values), values
            folded += 1
    assert folded


@pytest.mark.parametrize(
    "engine", ["local", "daft", pytest.param("spark", marks=pytest.mark.spark)]
)
def test_compaction_keeps_a_clustered_table_clustered(engine, request, catalog):
    spark = request.getfixturevalue("spark") if engine == "spark" else None
    model = merges(engine, spark, {dc.TableProperty.CLUSTER_BY: ["v"]})
    assert steps_by(engine)
    assert_rows(model)
    assert_folded_in_order()


def test_ray_compaction_keeps_a_clustered_table_clustered(ray_cluster, catalog):
    model = merges("ray", properties={dc.TableProperty.CLUSTER_BY: ["v"]})
    assert steps_by("ray")
    assert_rows(model)
    assert_folded_in_order()


@pytest.mark.parametrize("engine", ["local", "daft"])
def test_compaction_on_s3(s3_catalog, engine):
    model = merges(engine)
    assert steps_by(engine)
    assert_rows(model)
