"""Every write mode through each engine on a branch: the branch holds what the same writes give
on main, main and the table folders see none of it until it is published."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pytest

import workbench as dc
from tests.engine_parity import KEYED, OPERATIONS, payload, run_sequence


def on_branch(engine: str, catalog: dc.Catalog, spark: Any = None) -> dict[str, Any]:
    """Run the parity sequence through ``engine`` on branch ``exp`` of ``catalog`` and check
    main saw nothing of it; return the branch's outcome."""
    dc.init({"default": catalog})
    dc.create_branch("exp")
    with dc.branch("exp"):
        for mode, data, ddl in OPERATIONS:
            schema = KEYED if mode == "create" else None
            dc.write(payload(engine, data, ddl, spark), "t", mode=mode, schema=schema)
        result = branch_outcome()
        with pytest.raises(dc.UnsupportedFeatureError, match="merge_branch"):
            dc.delta_table("t")
    assert not dc.table_exists("t")
    assert catalog.storage.list("default/t") == []  # nothing in a live folder for "t"
    dc.merge_branch("exp")
    assert dc.read("t", read_as="pyarrow").sort_by("id").to_pylist() == result["rows"]
    return result


def branch_outcome() -> dict[str, Any]:
    """What the table holds on the branch (``outcome`` also checks files through Delta)."""
    rows = dc.read("t", read_as="pyarrow").sort_by("id").to_pylist()
    schema = [(f.name, str(f.type), f.is_merge_key) for f in dc.get_table("t").schema]
    return {"rows": rows, "schema": schema}


def same_as_on_main(branch: dict[str, Any], main: dict[str, Any]) -> bool:
    """Equal rows and schema; a branch numbers its table versions as main would."""
    return branch["rows"] == main["rows"] and branch["schema"] == main["schema"]


def test_every_mode_on_a_branch_locally(catalog, tmp_path, new_catalog):
    branch = on_branch("local", catalog)
    assert same_as_on_main(branch, run_sequence("local", new_catalog(tmp_path / "main")))


def test_every_mode_on_a_branch_on_spark(spark, catalog, tmp_path, new_catalog):
    branch = on_branch("spark", catalog, spark)
    assert same_as_on_main(branch, run_sequence("local", new_catalog(tmp_path / "main")))


def test_every_mode_on_a_branch_on_ray(ray_cluster, catalog, tmp_path, new_catalog):
    branch = on_branch("ray", catalog)
    assert same_as_on_main(branch, run_sequence("local", new_catalog(tmp_path / "main")))


def test_the_spark_data_source_reads_and_writes_a_branch(spark, catalog):
    dc.write(pa.table({"id": [1, 2], "v": ["a", "b"]}), "t", schema=KEYED)
    dc.create_branch("exp")
    frame = spark.createDataFrame([(3, "c", 0.0)], "id long, v string, score double")
    with dc.branch("exp"):  # save() on the driver passes the block's branch on
        frame.write.format("workbench").mode("append").option("writeMode", "merge").save("t")
        frame.write.format("workbench").mode("append").save("log")

    def ids(**options: str) -> list[int]:
        reader = spark.read.format("workbench").option("root", catalog.root).options(**options)
        return sorted(r.id for r in reader.load("t").collect())

    assert ids(branch="exp") == [1, 2, 3] and ids() == [1, 2]
    assert not dc.table_exists("log")
    with dc.branch("exp"):
        assert dc.read("log", read_as="pandas")["id"].tolist() == [3]
