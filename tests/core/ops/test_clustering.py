"""Clustering on real tables: ``dc.optimize(cluster_by=...)`` keeps every row (model-based,
with deletion vectors and time travel), narrows each file's range in every clustering column by
the log's statistics, is kept by automatic compaction and by a re-cluster without arguments,
round-trips as a table property, travels with a branch, and bad input changes nothing."""

from __future__ import annotations

import tempfile
from collections import Counter

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from deltalake import DeltaTable
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import workbench as dc
from tests.conftest import tree_digest
from tests.delta_readers import delta_rows
from workbench.core.catalog.locations import locate
from workbench.core.delta.clustering import clustering_order
from workbench.core.transactions.table_versions import open_table
from workbench.exceptions import ClusteringError, WorkbenchError

CLUSTER_BY = dc.TableProperty.CLUSTER_BY
KEYED = dc.Schema.of(
    [
        dc.Field.of(pa.field("id", pa.int64()), is_merge_key=True),
        dc.Field.of(pa.field("user", pa.string())),
        dc.Field.of(pa.field("category", pa.int64())),
    ]
)
EAGER = {"workbench.autoCompact.minNumFiles": "2"}  # a step every second small commit


def events(ids, seed: int = 0, users: int = 3000, categories: int = 150) -> pa.Table:
    """Rows of ``ids`` with a user (string) and a category (a tenth of them null)."""
    rng = np.random.default_rng(seed)
    ids = list(ids)
    category = rng.integers(0, categories, len(ids))
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "user": [f"user-{u:05d}" for u in rng.integers(0, users, len(ids))],
            "category": pa.array(category, mask=rng.random(len(ids)) < 0.1),
        }
    )


def files_of(table: str = "t") -> list:
    return open_table(locate(table)).files


def log_statistics(table: str = "t") -> list[dict]:
    """Each file's statistics as the table's Delta log gives them to other readers."""
    options = dc.get_catalog().properties.storage_options  # none for a local folder
    direct = DeltaTable(dc.get_table(table).uri, storage_options=options or None)
    return pa.table(direct.get_add_actions(flatten=True)).to_pylist()


def candidates(files: list[dict], column: str, value) -> int:
    """How many files could hold ``column = value`` by their log statistics: all but those
    whose values of it are all null or whose range leaves it out."""

    def could(f: dict) -> bool:
        if f[f"null_count.{column}"] == f["num_records"]:
            return False
        low, high = f[f"min.{column}"], f[f"max.{column}"]
        return low is None or low <= value <= high

    return sum(map(could, files))


def as_multiset(table: pa.Table) -> Counter:
    return Counter(tuple(sorted(r.items())) for r in table.to_pylist())


def shrink_files(rows_per_file: int, columns: list[str], table: str = "t") -> None:
    """Set the table's target file size to about ``rows_per_file`` of its rows clustered by
    ``columns``, as workbench lays them out (a file's own footer aside)."""
    from workbench.core.delta.clustering import clustered
    from workbench.core.delta.data_files import written_row_bytes

    per_row = written_row_bytes(clustered(dc.read(table, read_as="pyarrow"), columns))
    size = str(int(per_row * rows_per_file))
    dc.alter_table(table, table_version_properties={"delta.targetFileSize": size})


# ------------------------------------------------------------------------------- model-based
STEPS = st.lists(
    st.one_of(
        st.tuples(st.just("add"), st.integers(1, 30)),
        st.tuples(st.just("update"), st.lists(st.integers(0, 60), min_size=1, max_size=6)),
        st.tuples(st.just("delete"), st.lists(st.integers(0, 60), min_size=1, max_size=6)),
        st.tuples(
            st.just("cluster"),
            st.sampled_from([["user"], ["category"], ["user", "category"], ["category", "id"]]),
        ),
        st.tuples(st.just("optimize"), st.none()),
    ),
    min_size=3,
    max_size=12,
)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=STEPS)
def test_clustering_keeps_every_row_against_a_model(steps):
    """Adds, merges and deletes (deletion vectors), clusterings and re-clusterings: the table
    holds the model's rows after each, through workbench and deltalake, and every earlier
    transaction still reads the rows it had."""
    with tempfile.TemporaryDirectory() as root:
        dc.init_local(root)
        dc.write(events(range(20)), "t", schema=KEYED, table_properties=EAGER)
        model = {r["id"]: r for r in events(range(20)).to_pylist()}
        history = []
        next_id = 20
        for n, (op, arg) in enumerate(steps, 1):
            if op == "add":
                data = events(range(next_id, next_id + arg), seed=n)
                next_id += arg
                dc.write(data, "t", mode="merge")
            elif op == "update":
                data = events(sorted(set(arg)), seed=n)
                dc.write(data, "t", mode="merge")
            elif op == "delete":
                data = pa.table({"id": pa.array(sorted(set(arg)), pa.int64())})
                dc.write(data, "t", mode="delete")
                for key in arg:
                    model.pop(key, None)
            elif op == "cluster":
                dc.optimize("t", cluster_by=arg)
            else:
                dc.optimize("t")
            if op in ("add", "update"):
                model.update({r["id"]: r for r in data.to_pylist()})
            want = Counter(tuple(sorted(r.items())) for r in model.values())
            assert as_multiset(dc.read("t", read_as="pyarrow")) == want
            history.append((dc.get_table("t").version, want))
        for version, then in history:
            assert as_multiset(dc.read("t", read_as="pyarrow", version=version)) == then
        folder = delta_rows(DeltaTable(dc.get_table("t").uri))
        assert as_multiset(folder.select(["id", "user", "category"])) == history[-1][1]


# ----------------------------------------------------------------------------------- layout
@pytest.mark.parametrize("columns", [["user"], ["user", "category"], ["category", "user"]])
def test_files_of_a_clustered_table_hold_narrow_ranges(catalog, columns):
    """About 250 files: for any value of a clustering column, at most a tenth of the files
    could hold it by the log's statistics (unclustered, nearly every file could)."""
    rows = 25_000
    for part in range(4):
        ids = range(part * rows // 4, (part + 1) * rows // 4)
        dc.write(events(ids, seed=part), "t", auto_compact=False)
    shrink_files(100, columns)
    written = as_multiset(dc.read("t", read_as="pyarrow"))
    assert candidates(log_statistics(), "user", "user-01234") == 4, "every file could hold it"

    result = dc.optimize("t", cluster_by=columns)

    files = log_statistics()
    assert result["numFilesAdded"] == len(files) >= 200
    assert as_multiset(dc.read("t", read_as="pyarrow")) == written
    for column in columns:
        values = {r[column] for r in dc.read("t", read_as="pyarrow").to_pylist()} - {None}
        worst = max(candidates(files, column, v) for v in values)
        assert worst <= 0.1 * len(files), (column, worst, len(files))
    assert dc.get_table("t").table_version.properties[CLUSTER_BY] == columns


def test_a_column_of_few_values_is_cut_where_its_values_change(catalog):
    """User (many values) and category (20): each value of either lies in about sqrt(N) of
    the N files, as in a grid of tiles (along a curve, whose stretches are ragged boxes, a
    category lay in about 1.4 sqrt(N)); the files stay near the target size."""
    rows = 40_000
    dc.write(events(range(rows), users=2000, categories=20), "t", auto_compact=False)
    shrink_files(250, ["user", "category"])

    dc.optimize("t", cluster_by=["user", "category"])

    files = log_statistics()
    count = len(files)
    assert 130 <= count <= 190
    grid = count**0.5
    table = dc.read("t", read_as="pyarrow")
    for column in ("user", "category"):
        values = sorted(set(table.column(column).to_pylist()) - {None})
        opened = [candidates(files, column, v) for v in values]
        assert sum(opened) / len(opened) <= 1.1 * grid, (column, sum(opened) / len(opened), grid)
    sizes = sorted(f["num_records"] for f in files)
    assert sizes[len(sizes) // 10] >= 0.5 * 250 and sizes[-len(sizes) // 10] <= 1.5 * 250


def test_a_two_column_clustering_on_s3_keeps_every_row_and_skips_by_either_column(s3_catalog):
    """The tiles on an object store: every row kept, each value of either column in about
    sqrt(N) of the N files, and a SQL query on either column reads only its candidates."""
    written = events(range(8000), users=400, categories=10)
    dc.write(written, "t", auto_compact=False)
    shrink_files(200, ["user", "category"])

    dc.optimize("t", cluster_by=["user", "category"])

    files = log_statistics()
    assert 25 <= len(files) <= 60
    assert as_multiset(dc.read("t", read_as="pyarrow")) == as_multiset(written)
    for column, value in (("user", "user-00007"), ("category", 3)):
        opened = candidates(files, column, value)
        assert opened <= 1.1 * len(files) ** 0.5 + 1, (column, opened, len(files))
        query = f"SELECT count(*) AS n FROM default.t WHERE {column} = {value!r}"
        want = sum(1 for v in written.column(column).to_pylist() if v == value)
        assert dc.sql(query, read_as="pyarrow").column("n")[0].as_py() == want
        explained = dc.sql(query, explain=True)
        assert explained.kept_files == opened, explained


def test_columns_of_one_value_still_cut_files_of_the_target_size(catalog):
    """No value change to cut at (one user, every category null): the tiles are cut evenly."""
    rows = events(range(5000))
    rows = rows.set_column(1, "user", pa.array(["same"] * 5000))
    rows = rows.set_column(2, "category", pa.nulls(5000, pa.int64()))
    dc.write(rows, "t", auto_compact=False)
    shrink_files(250, ["user", "category"])
    dc.optimize("t", cluster_by=["user", "category"])
    sizes = [f["num_records"] for f in log_statistics()]
    assert sum(sizes) == 5000 and len(sizes) >= 15
    assert all(0.5 * 250 <= n <= 1.5 * 250 for n in sizes), sizes


def test_each_file_of_a_one_column_clustering_is_sorted(catalog):
    dc.write(events(range(2000)), "t", auto_compact=False)
    dc.optimize("t", cluster_by=["user"])
    (only,) = files_of()
    users = pq.read_table(only.absolute).column("user").to_pylist()
    assert users == sorted(users)


def test_automatic_compaction_keeps_new_rows_clustered(catalog):
    """Appends after a clustering land unordered; each compaction step writes its rows in the
    clustering order, and ``dc.optimize()`` without arguments re-clusters everything."""
    dc.write(events(range(400)), "t", table_properties=EAGER)
    dc.optimize("t", cluster_by=["user", "category"])
    for batch in range(8):
        ids = range(1000 + 50 * batch, 1050 + 50 * batch)
        dc.write(events(ids, seed=batch + 1), "t")  # each commit may run a step
    log = dc.transactions(table="default.t", read_as="pyarrow", compactions=True).to_pylist()
    assert any("AUTO_COMPACT" in r["operations"] for r in log)
    folded = [f for f in files_of() if f.rows > 50 and f.rows != 400]
    assert folded, "the steps' files hold more than one append"
    for f in folded:
        rows = pq.read_table(f.absolute)
        assert clustering_order(rows, ["user", "category"]).tolist() == list(range(rows.num_rows))

    dc.optimize("t")
    (whole,) = files_of()
    rows = pq.read_table(whole.absolute)
    assert rows.num_rows == 800
    assert clustering_order(rows, ["user", "category"]).tolist() == list(range(800))


def test_time_travel_before_a_clustering_reads_the_old_rows_in_their_order(catalog):
    dc.write(events(range(300)), "t", auto_compact=False)
    dc.write(events(range(300, 600), seed=1), "t", auto_compact=False)
    before = dc.get_table("t").version
    old = dc.read("t", read_as="pyarrow")
    dc.optimize("t", cluster_by=["user"])
    assert dc.read("t", read_as="pyarrow", version=before).equals(old)
    assert dc.read("t", read_as="pyarrow").column("id").to_pylist() != list(range(600))
    uri = dc.get_table("t").uri
    assert as_multiset(DeltaTable(uri, version=before).to_pyarrow_table()) == as_multiset(old)


# --------------------------------------------------------------------------------- property
def test_the_clustering_round_trips_as_a_table_property(catalog):
    dc.create_table("t", schema=KEYED, table_properties={CLUSTER_BY: ["user"]})
    info = dc.get_table("t")
    assert info.table_version.properties[CLUSTER_BY] == ["user"]
    assert info.table.properties[CLUSTER_BY] == ["user"]
    dc.write(events(range(100), seed=3), "t", auto_compact=False)
    dc.write(events(range(100, 200), seed=4), "t", auto_compact=False)
    assert dc.optimize("t")["clusterBy"] == ["user"], "the property alone clusters"
    (only,) = files_of()
    users = pq.read_table(only.absolute).column("user").to_pylist()
    assert users == sorted(users)

    dc.alter_table("t", table_version_properties={CLUSTER_BY: ("category", "user")})
    assert dc.get_table("t").table_version.properties[CLUSTER_BY] == ["category", "user"]
    dc.alter_table("t", table_properties={CLUSTER_BY: ["id"]})  # the table's, for new versions
    info = dc.get_table("t")
    assert info.table.properties[CLUSTER_BY] == ["id"]
    assert info.table_version.properties[CLUSTER_BY] == ["category", "user"]

    dc.alter_table("t", table_version_properties={CLUSTER_BY: None})  # no longer clustered
    assert dc.get_table("t").table_version.properties[CLUSTER_BY] is None
    dc.write(events(range(200, 210), seed=5), "t", auto_compact=False)
    ids = dc.read("t", read_as="pyarrow").column("id").to_pylist()
    assert "clusterBy" not in dc.optimize("t")
    assert dc.read("t", read_as="pyarrow").column("id").to_pylist() == ids, "order kept"


def test_a_clustering_column_is_dropped_only_with_the_clustering(catalog):
    dc.write(events(range(50)), "t", table_properties={CLUSTER_BY: ["user", "category"]})
    schema = dc.get_table("t").table_version.schema
    drop = schema.update(allow_incompatible_changes=True).remove_field("category")
    before = tree_digest(catalog.root)
    with pytest.raises(ClusteringError, match="set CLUSTER_BY without it"):
        dc.alter_table("t", schema_updates=drop)
    assert tree_digest(catalog.root) == before
    dc.alter_table("t", schema_updates=drop, table_version_properties={CLUSTER_BY: ["user"]})
    info = dc.get_table("t")
    assert info.schema.names == ["id", "user"]
    assert info.table_version.properties[CLUSTER_BY] == ["user"]


def test_a_clustering_made_on_a_branch_is_published_with_it(catalog):
    dc.write(events(range(500)), "t", auto_compact=False)
    main_files = {f.path for f in files_of()}
    dc.create_branch("layout")
    with dc.branch("layout"):
        dc.optimize("t", cluster_by=["user"])
        assert dc.get_table("t").table_version.properties[CLUSTER_BY] == ["user"]
    assert {f.path for f in files_of()} == main_files, "main is as it was"
    assert dc.get_table("t").table_version.properties[CLUSTER_BY] is None
    dc.merge_branch("layout")
    assert dc.get_table("t").table_version.properties[CLUSTER_BY] == ["user"]
    (only,) = files_of()
    users = pq.read_table(only.absolute).column("user").to_pylist()
    assert users == sorted(users)
    assert as_multiset(dc.read("t", read_as="pyarrow")) == as_multiset(events(range(500)))


# ------------------------------------------------------------------------------- bad input
SHAPES = dc.Schema.of(
    [
        pa.field("user", pa.string()),
        pa.field("tags", pa.list_(pa.string())),
        pa.field("meta", pa.struct([("a", pa.int64())])),
        pa.field("attrs", pa.map_(pa.string(), pa.string())),
        pa.field("blob", pa.binary()),
    ]
)


@pytest.fixture
def shaped(catalog):
    """A table with a column of each kind, clustered by ``user``, and a schemaless table."""
    dc.create_table("shapes", schema=SHAPES, table_properties={CLUSTER_BY: ["user"]})
    dc.write(
        pa.table(
            {
                "user": ["a", "b"],
                "tags": [["x"], []],
                "meta": [{"a": 1}, {"a": 2}],
                "attrs": pa.array([[("k", "v")], []], pa.map_(pa.string(), pa.string())),
                "blob": [b"1", b"2"],
            }
        ),
        "shapes",
    )
    dc.create_table("files")
    return catalog


BAD = {
    "unknown column": (lambda: dc.optimize("shapes", cluster_by=["nope"]), "no such column"),
    "other case": (lambda: dc.optimize("shapes", cluster_by=["User"]), "did you mean 'user'"),
    "list column": (lambda: dc.optimize("shapes", cluster_by=["tags"]), "has no order"),
    "struct column": (lambda: dc.optimize("shapes", cluster_by=["user", "meta"]), "no order"),
    "map column": (lambda: dc.optimize("shapes", cluster_by=["attrs"]), "has no order"),
    "binary column": (lambda: dc.optimize("shapes", cluster_by=["blob"]), "has no order"),
    "empty list": (lambda: dc.optimize("shapes", cluster_by=[]), "names no column"),
    "a string": (lambda: dc.optimize("shapes", cluster_by="user"), "list of column names"),
    "twice": (lambda: dc.optimize("shapes", cluster_by=["user", "USER"]), "twice"),
    "five columns": (lambda: dc.optimize("shapes", cluster_by=list("abcde")), "at most 4"),
    "not names": (lambda: dc.optimize("shapes", cluster_by=[1]), "as strings"),
    "schemaless": (lambda: dc.optimize("files", cluster_by=["path"]), "schemaless"),
    "create unknown": (
        lambda: dc.create_table("new", schema=SHAPES, table_properties={CLUSTER_BY: ["x"]}),
        "no such column",
    ),
    "create schemaless": (
        lambda: dc.create_table("new", table_properties={CLUSTER_BY: ["user"]}),
        "schemaless",
    ),
    "write creating": (
        lambda: dc.write(pa.table({"a": [1]}), "new", table_properties={CLUSTER_BY: ["b"]}),
        "no such column",
    ),
    "alter version": (
        lambda: dc.alter_table("shapes", table_version_properties={CLUSTER_BY: ["blob"]}),
        "has no order",
    ),
    "alter table": (
        lambda: dc.alter_table("shapes", table_properties={CLUSTER_BY: ["nope"]}),
        "no such column",
    ),
    "alter with a string": (
        lambda: dc.alter_table("shapes", table_version_properties={CLUSTER_BY: "user"}),
        "list of column names",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_clustering_raises_a_typed_error_and_changes_nothing(shaped, case):
    call, says = BAD[case]
    before = tree_digest(shaped.root)
    with pytest.raises(ClusteringError, match=says) as raised:
        call()
    assert isinstance(raised.value, WorkbenchError) and isinstance(raised.value, ValueError)
    assert tree_digest(shaped.root) == before
    assert dc.get_table("shapes").table_version.properties[CLUSTER_BY] == ["user"]


def test_clustered_files_come_out_at_the_target_size(catalog):
    """Ordered ids and times take a few bits a row where they came from, many bytes once rows
    are reordered by another column: the files are cut by what the clustered rows take."""
    rows = 300_000
    rng = np.random.default_rng(11)
    dc.write(
        pa.table(
            {
                "id": np.arange(rows, dtype=np.int64),
                "ts": pa.array(np.arange(rows, dtype=np.int64) * 1_000_000, pa.timestamp("us")),
                "user": pa.array([f"u{n}" for n in rng.integers(0, 5_000, rows)]),
            }
        ),
        "t",
    )
    target = 1024**2
    dc.alter_table("t", table_version_properties={"delta.targetFileSize": str(target)})
    dc.optimize("t", cluster_by=["user"])
    sizes = sorted(f.size for f in files_of("t"))[1:]  # the last file holds what is left
    assert len(sizes) >= 2
    assert all(0.7 * target <= size <= 1.3 * target for size in sizes), sizes
