"""Every write mode through each engine on a branch: the branch holds what the same writes give
on main, main and the table folders see none of it until it is published."""

from __future__ import annotations

import contextlib
import itertools
from typing import Any

import pyarrow as pa
import pytest

import workbench as dc
from tests.conftest import tree_digest
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
    with dc.branch("exp"):  # a read in the block reads the branch, as a save there writes it
        assert ids() == [1, 2, 3] and ids(branch="main") == [1, 2]
    assert not dc.table_exists("log")
    with dc.branch("exp"):
        assert dc.read("log", read_as="pandas")["id"].tolist() == [3]
    writer = frame.write.format("workbench").mode("append")
    with dc.branch("exp"):
        writer.save("log")
    writer.save("log")  # the same writer after the block writes main: it kept no branch
    assert dc.read("log", read_as="pandas")["id"].tolist() == [3]
    assert dc.read("log", read_as="pandas", branch="exp")["id"].tolist() == [3, 3]


def test_every_spark_save_by_key_lands_on_the_branch_it_names(spark, catalog):
    """writeMode merge and delete, with Spark's append mode or none, on the branch an option
    names, the dc.branch block's, or main: each write lands there and nowhere else, so
    publishing the branch meets no conflict; a branch that does not exist is an error."""
    start = [{"id": 1, "v": "a", "score": 0.0}, {"id": 2, "v": "b", "score": 0.0}]
    combos = list(itertools.product(("merge", "delete"), ("append", None), ("option", "block", "")))
    for i in range(len(combos)):
        dc.write(pa.Table.from_pylist(start), f"t{i}", schema=KEYED)
    dc.create_branch("exp")
    change = spark.createDataFrame([(2, "B", 5.0)], "id long, v string, score double")
    expected = {"merge": [start[0], {"id": 2, "v": "B", "score": 5.0}], "delete": start[:1]}
    for i, (write_mode, save_mode, how) in enumerate(combos):
        writer = change.write.format("workbench").option("writeMode", write_mode)
        writer = writer.option("branch", "exp") if how == "option" else writer
        with dc.branch("exp") if how == "block" else contextlib.nullcontext():
            writer.save(f"default.t{i}", mode=save_mode)
        changed, kept = ("exp", "main") if how else ("main", "exp")
        assert table_rows(f"t{i}", changed) == expected[write_mode], combos[i]
        assert table_rows(f"t{i}", kept) == start, combos[i]
    before = tree_digest(catalog.root)
    for write_mode, save_mode in itertools.product(("merge", "delete", None), ("append", None)):
        writer = change.write.format("workbench").option("branch", "nope")
        writer = writer.option("writeMode", write_mode) if write_mode else writer
        with pytest.raises(dc.BranchNotFoundError, match="'nope' does not exist"):
            writer.save("default.t0", mode=save_mode)
    refused = change.write.format("workbench").option("writeMode", "merge").mode("overwrite")
    with pytest.raises(dc.InvalidArgumentError, match="cannot be combined"):
        refused.option("branch", "exp").save("default.t0")
    assert tree_digest(catalog.root) == before
    dc.merge_branch("exp")
    for i, (write_mode, _, _) in enumerate(combos):
        assert table_rows(f"t{i}", "main") == expected[write_mode], combos[i]


def table_rows(table: str, branch: str) -> list[dict[str, Any]]:
    return dc.read(table, read_as="pyarrow", branch=branch).sort_by("id").to_pylist()
