"""The Ray engine on one shared local Ray instance: every mode against the local engine, lazy
reads, parallel writes, transactions mixing engines, and failures that leave nothing behind."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings

import workbench as dc
from tests.conftest import tree_digest
from tests.engine_parity import KEYED, STEPS, outcome, random_steps, run_sequence
from workbench.core.catalog.locations import locate
from workbench.core.storage.known import storage_for
from workbench.core.transactions.table_versions import open_table

pytestmark = pytest.mark.ray


def test_ray_matches_the_local_engine_in_every_mode(ray_cluster, tmp_path, new_catalog):
    local = run_sequence("local", tmp_path / "local")
    assert run_sequence("ray", new_catalog(tmp_path / "ray")) == local
    assert dc.transactions(read_as="pandas")["engine"].tolist()[:5] == ["ray"] * 5


@settings(
    max_examples=3,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(steps=STEPS)
def test_random_sequences_on_ray_match_local(ray_cluster, tmp_path_factory, new_catalog, steps):
    sequence = random_steps(steps)
    local = run_sequence("local", tmp_path_factory.mktemp("local"), sequence)
    assert run_sequence("ray", new_catalog(tmp_path_factory.mktemp("ray")), sequence) == local


def test_ray_reads_are_lazy_and_a_limit_reads_one_file(ray_cluster, catalog):
    for i in range(4):
        rows = pa.table({"id": range(i * 100, (i + 1) * 100)})
        dc.write(rows, "multi", mode="append" if i else "create")
    lazy = dc.read("multi", read_as=dc.DatasetType.RAY_DATASET)
    limited = dc.read("multi", read_as=dc.DatasetType.RAY_DATASET, limit=10)
    files = sorted(open_table(locate("multi")).files, key=lambda f: f.low["id"])
    for file in files[1:]:  # only the first file in write order (ids 0-99) may be opened
        filesystem, path = storage_for(file.absolute).locate(file.absolute)
        filesystem.move(path, path.removesuffix(".parquet") + ".hidden")
    assert sorted(r["id"] for r in limited.take_all()) == list(range(10))
    with pytest.raises(Exception, match=r"hidden|No such file|not found|NotFound"):
        lazy.take_all()


def test_ray_tasks_write_files_in_parallel_and_commit_once(ray_cluster, catalog):
    import ray.data

    data = ray.data.range(4000, override_num_blocks=4).map_batches(
        lambda b: {"id": b["id"], "v": [f"v{i}" for i in b["id"]]}, batch_format="numpy"
    )
    result = dc.write(data, "wide", schema=KEYED)
    assert result.rows_added == 4000 and dc.get_table("wide").file_count == 4
    assert dc.read("wide", read_as=dc.DatasetType.PYARROW).num_rows == 4000


def test_a_ray_and_a_local_write_commit_together_or_not_at_all(ray_cluster, catalog):
    import ray.data

    dc.write(pa.table({"id": [1], "v": ["a"]}), "a", schema=KEYED)
    with pytest.raises(RuntimeError), dc.transaction():
        dc.write(ray.data.from_arrow(pa.table({"id": [2], "v": ["b"]})), "a")
        dc.write(pa.table({"k": [1]}), "b")
        raise RuntimeError("abort")
    assert outcome("a")["rows"] == [{"id": 1, "v": "a", "score": 0.0}]
    assert not dc.table_exists("b")


def test_a_failing_ray_job_commits_nothing_and_leaves_no_files(ray_cluster, catalog):
    import ray.data

    dc.write(pa.table({"id": [1, 2], "v": ["a", "b"]}), "t", schema=KEYED)
    folder = dc.get_table("t").uri
    before = tree_digest(folder)

    def explode(batch):
        if 3999 in batch["id"]:
            raise ValueError("model failed on this batch")
        return {"id": batch["id"], "v": [str(i) for i in batch["id"]]}

    source = ray.data.range(4000, override_num_blocks=4).map_batches(explode, batch_format="numpy")
    with pytest.raises(dc.WriteFailedError, match="model failed"):
        dc.write(source, "t", mode="replace")
    assert tree_digest(folder) == before


RAY_CONSTRUCTORS = ["from_pandas", "from_arrow", "from_items", "range", "read_parquet"]


def _constructor_rows(constructor: str) -> pa.Table:
    """The rows each Ray constructor is given (``range`` makes its own: ids 0, 1, 2)."""
    if constructor == "range":
        return pa.table({"id": pa.array([0, 1, 2], pa.int64())})
    return pa.table({"id": [0, 1, 2], "v": ["a", "b", "c"]})


@contextmanager
def _parquet_reader(v2: bool) -> Iterator[None]:
    """Datasets ``ray.data.read_parquet`` makes meanwhile read through Ray's DataSourceV2
    (``ListFiles -> ReadFiles``, Ray's default since 2.5x) or the older reader. On this
    machine each execution of a V2 read costs Ray 25-50 s of scheduling whatever the file's
    size, so the modes run on the older reader and one write covers V2 below."""
    import ray.data

    context = ray.data.DataContext.get_current()
    before = getattr(context, "use_datasource_v2", None)
    if before is None:  # a Ray without V2
        yield
        return
    context.use_datasource_v2 = v2
    try:
        yield
    finally:
        context.use_datasource_v2 = before


def _ray_dataset(constructor: str, rows: pa.Table, folder: Path):
    import pyarrow.parquet as pq
    import ray.data

    if constructor == "from_pandas":
        return ray.data.from_pandas(rows.to_pandas())
    if constructor == "from_arrow":
        return ray.data.from_arrow(rows)
    if constructor == "from_items":
        return ray.data.from_items(rows.to_pylist())
    if constructor == "range":
        return ray.data.range(rows.num_rows)
    folder.mkdir(exist_ok=True)
    pq.write_table(rows, folder / "rows.parquet")
    with _parquet_reader(v2=False):
        return ray.data.read_parquet(str(folder))


@pytest.mark.parametrize("constructor", RAY_CONSTRUCTORS)
def test_every_ray_constructor_writes_like_local_data_in_every_mode(
    ray_cluster, catalog, tmp_path, constructor
):
    """A Dataset from each of Ray's constructors creates a table and writes to an existing one
    (keyed and not, every mode that applies) exactly as the same rows from pyarrow do."""
    rows = _constructor_rows(constructor)
    existing = pa.table({"id": [1, 5], "v": ["one", "five"]})
    keyed = dc.Schema.of(
        [dc.Field.of(pa.field("id", pa.int64()), is_merge_key=True), pa.field("v", pa.string())]
    )
    cases = [(mode, None, None) for mode in ("auto", "create")]
    cases += [(mode, existing, None) for mode in ("auto", "add", "append", "chrono", "replace")]
    cases += [(mode, existing, keyed) for mode in ("auto", "merge", "replace", "delete")]
    for i, (mode, before, schema) in enumerate(cases):
        for name, data in (
            (f"ray{i}", _ray_dataset(constructor, rows, tmp_path / "pq")),
            (f"local{i}", rows),
        ):
            if before is not None:
                dc.write(before, name, schema=schema if schema is not None else before.schema)
            dc.write(data, name, mode=mode)
        got = dc.read(f"ray{i}", read_as=dc.DatasetType.PYARROW).sort_by("id")
        want = dc.read(f"local{i}", read_as=dc.DatasetType.PYARROW).sort_by("id")
        assert (mode, got.schema, got.to_pylist()) == (mode, want.schema, want.to_pylist())


def test_a_parquet_read_through_ray_datasource_v2_merges_like_local_data(
    ray_cluster, catalog, tmp_path
):
    import pyarrow.parquet as pq
    import ray.data

    keyed = dc.Schema.of(
        [dc.Field.of(pa.field("id", pa.int64()), is_merge_key=True), pa.field("v", pa.string())]
    )
    rows = _constructor_rows("read_parquet")
    pq.write_table(rows, tmp_path / "rows.parquet")
    with _parquet_reader(v2=True):
        data = ray.data.read_parquet(str(tmp_path / "rows.parquet"))
    for name, source in (("ray", data), ("local", rows)):
        dc.write(pa.table({"id": [1, 5], "v": ["one", "five"]}), name, schema=keyed)
        dc.write(source, name, mode="merge")
    got, want = (dc.read(n, read_as="pyarrow").sort_by("id") for n in ("ray", "local"))
    assert (
        got.to_pylist()
        == want.to_pylist()
        == [
            {"id": 0, "v": "a"},
            {"id": 1, "v": "b"},
            {"id": 2, "v": "c"},
            {"id": 5, "v": "five"},
        ]
    )


def test_integral_floats_go_into_an_integer_column_checked_on_ray(
    ray_cluster, catalog, monkeypatch
):
    """pandas makes an int column holding None a float column: its whole values go back into
    the table's int column, checked and cast in Ray tasks (the rows never reach the driver); a
    fraction is refused as before."""
    import pandas as pd
    import ray.data

    from workbench.engines.ray import RayEngine

    keyed = dc.Schema.of(
        [dc.Field.of(pa.field("id", pa.int64()), is_merge_key=True), pa.field("age", pa.int64())]
    )
    dc.write(pa.table({"id": [1, 2], "age": [25, 30]}), "t", schema=keyed)

    def collected(*args):
        raise AssertionError("the rows were collected to the driver")

    monkeypatch.setattr(RayEngine, "to_arrow", collected)
    dc.write(ray.data.from_pandas(pd.DataFrame({"id": [2, 3], "age": [None, 40]})), "t")
    got = dc.read("t", read_as=dc.DatasetType.PYARROW).sort_by("id").to_pylist()
    assert got == [{"id": 1, "age": 25}, {"id": 2, "age": None}, {"id": 3, "age": 40}]
    before = tree_digest(catalog.root)
    with pytest.raises(dc.SchemaValidationError, match="double"):
        dc.write(ray.data.from_arrow(pa.table({"id": [4], "age": [1.5]})), "t")
    assert tree_digest(catalog.root) == before


def test_an_empty_ray_dataset_without_a_schema_is_a_typed_error(ray_cluster, catalog):
    import pandas as pd
    import ray.data

    empty = ray.data.from_pandas(pd.DataFrame({"id": pd.Series([], dtype="int64")}))
    with pytest.raises(dc.SchemaValidationError, match="no schema"):
        dc.write(empty, "t")
    assert not dc.table_exists("t")
    typed = ray.data.from_arrow(pa.table({"id": pa.array([], pa.int64())}))
    assert dc.write(typed, "t").rows_added == 0


BLOCKS = [  # a merge source spread over blocks: key 3 and key 1 repeat in later blocks
    {"id": [1, 2, 3], "v": ["a", "b", "c"]},
    {"id": [3, 4, 6], "v": ["d", "e", "x"]},
    {"id": [5, 1], "v": ["f", "g"]},
]


def _blocks(engine: str, parts: list[dict]) -> object:
    tables = [pa.table(p) for p in parts]
    if engine == "local":
        return pa.concat_tables(tables)
    import ray.data

    data = ray.data.from_arrow(tables)
    assert data.num_blocks() == len(tables)
    return data


@pytest.mark.parametrize("vectors", [True, False], ids=["merge-on-read", "copy-on-write"])
def test_ray_checks_keys_and_merges_across_blocks_like_local(
    ray_cluster, tmp_path, new_catalog, vectors
):
    """Repeated keys in different blocks are found and de-duplicated in block order, and a
    MERGE of a partial source over several blocks and files ends as the local engine's."""
    results = {}
    for engine in ("local", "ray"):
        dc.init({"default": new_catalog(tmp_path / engine)})
        properties = {"delta.enableDeletionVectors": str(vectors).lower()}
        for i in range(3):  # three files, keys 0-29
            rows = {"id": range(i * 10, i * 10 + 10), "v": [f"old{k}" for k in range(10)]}
            dc.write(pa.table(rows), "t", schema=KEYED, table_properties=properties)
        with pytest.raises(dc.MergeKeyError, match=r"^2 row\(s\) .* repeat a merge key"):
            dc.write(_blocks(engine, BLOCKS), "t", mode="merge")
        nulls = [{"id": [1, None], "v": ["a", "b"]}, {"id": [None, 7], "v": ["c", "d"]}]
        with pytest.raises(dc.MergeKeyError, match=r"^2 row\(s\) .* null merge key"):
            dc.write(_blocks(engine, nulls), "t", mode="merge")
        dc.write(_blocks(engine, BLOCKS), "t", mode="merge", dedupe="last")
        scores = [{"id": [2, 45], "score": [2.5, 4.5]}, {"id": [12, 29], "score": [1.0, 9.0]}]
        dc.write(_blocks(engine, scores), "t", mode="merge")
        dc.write(_blocks(engine, [{"id": [0, 13]}, {"id": [29, 99]}]), "t", mode="delete")
        dc.write(pa.table({"id": [9], "v": ["z"]}), "u", schema=KEYED)
        dc.write(_blocks(engine, BLOCKS), "u", mode="merge", dedupe="first")
        results[engine] = (outcome("t")["rows"], outcome("u")["rows"])
    assert results["ray"] == results["local"]
    merged = {r["id"]: r for r in results["ray"][0]}
    assert (merged[1]["v"], merged[3]["v"], merged[12]["score"], merged[45]["v"]) == (
        "g",
        "d",
        1.0,
        None,
    )
    assert [r["v"] for r in results["ray"][1]] == ["a", "b", "c", "e", "f", "x", "z"]


def test_the_change_feed_reads_as_a_ray_dataset_like_pyarrow(ray_cluster, catalog):
    key = dc.Field.of(pa.field("id", pa.int64()), is_merge_key=True)
    dc.create_table("t", schema=dc.Schema.of([key, pa.field("v", pa.int64())]))
    dc.write(pa.table({"id": [1, 2], "v": [1, 2]}), "t", mode="merge")
    dc.write(pa.table({"id": [2, 3], "v": [20, 3]}), "t", mode="merge")

    def changes(rows: list[dict]) -> list[tuple]:
        return sorted((r["_commit_version"], r["id"], r["v"], r["_change_type"]) for r in rows)

    expected = changes(dc.changes("t", read_as="pyarrow").to_pylist())
    assert changes(dc.changes("t", read_as=dc.DatasetType.RAY_DATASET).take_all()) == expected
    assert len(expected) == 5  # two inserts, then an update's two images and an insert
