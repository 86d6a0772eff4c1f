"""``dc.changes`` against a plain-Python model of the change feed: random histories of appends,
merges by key, deletes, an added column, compaction and a branch, on merge-on-read and
copy-on-write tables; the same feed from deltalake's ``load_cdf`` over the change data files
``delta.enableChangeDataFeed`` makes commits write; net changes; and the errors."""

from __future__ import annotations

import datetime
from collections import Counter
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

import workbench as dc
from workbench.core.io.changes import table_changes

INSERT, DELETE, PRE, POST = "insert", "delete", "update_preimage", "update_postimage"
META = ["_change_type", "_commit_version", "_commit_timestamp", "_transaction_id"]
KEYED = dc.Schema.of(
    [
        dc.Field.of(pa.field("id", pa.int64()), is_merge_key=True),
        dc.Field.of(pa.field("n", pa.int64())),
        dc.Field.of(pa.field("s", pa.string())),
    ]
)
TYPES = {"id": pa.int64(), "n": pa.int64(), "s": pa.string(), "w": pa.float64()}
CHANGE_DATA = {"delta.enableChangeDataFeed": True}
VECTORS_OFF = {"delta.enableDeletionVectors": False}


class FeedModel:
    """A keyed table's rows and the changes each of its versions made, in plain Python."""

    def __init__(self, columns: list[str]):
        self.columns = list(columns)
        self.rows: dict[int, dict[str, Any]] = {}
        self.feed: list[tuple[dict[str, Any], str, int]] = []  # row, change type, version

    def merge(self, rows: list[dict[str, Any]], version: int) -> None:
        for name in rows[0]:
            if name not in self.columns:
                self.columns.append(name)
        for row in rows:
            new = {c: row.get(c) for c in self.columns}
            old = self.rows.get(row["id"])
            if old is None:
                self.feed.append((new, INSERT, version))
            elif {c: old.get(c) for c in self.columns} != new:
                self.feed += [(old, PRE, version), (new, POST, version)]
            self.rows[row["id"]] = new

    def delete(self, keys: list[int], version: int) -> None:
        for key in keys:
            old = self.rows.pop(key, None)
            if old is not None:
                self.feed.append((old, DELETE, version))

    def expected(self, first: int = 0, last: int = 10**9, columns: Any = None) -> Counter:
        return Counter(
            (*(row.get(c) for c in columns or self.columns), kind, version)
            for row, kind, version in self.feed
            if first <= version <= last
        )

    def net(self) -> Counter:
        """The net changes of the whole feed: per key, first before against last after."""
        by_key: dict[int, list[tuple[dict[str, Any], str]]] = {}
        for row, kind, _ in self.feed:
            by_key.setdefault(row["id"], []).append((row, kind))
        out: Counter = Counter()
        for changes in by_key.values():
            (first, first_kind), (last, last_kind) = changes[0], changes[-1]
            before = first if first_kind in (DELETE, PRE) else None
            after = last if last_kind in (INSERT, POST) else None
            cells = [
                (tuple(r.get(c) for c in self.columns), k)
                for r, k in ((before, DELETE), (after, INSERT))
                if r is not None
            ]
            if before is not None and after is not None:
                if cells[0][0] == cells[1][0]:
                    continue
                cells = [(cells[0][0], PRE), (cells[1][0], POST)]
            out.update((*values, kind) for values, kind in cells)
        return out


def got(feed: pa.Table, columns: list[str], with_version: bool = True) -> Counter:
    names = [*columns, "_change_type", *(["_commit_version"] if with_version else [])]
    return Counter(zip(*(feed.column(c).to_pylist() for c in names), strict=True))


def table_of(rows: list[dict[str, Any]]) -> pa.Table:
    names = list(rows[0])
    return pa.table({c: pa.array([r.get(c) for r in rows], TYPES[c]) for c in names})


def random_rows(rng: np.random.Generator, keys: Any, wide: bool) -> list[dict[str, Any]]:
    rows = []
    for key in keys:
        row = {"id": int(key), "n": int(rng.integers(0, 4)), "s": f"s{int(rng.integers(0, 3))}"}
        if wide:
            row["w"] = float(rng.integers(0, 3))
        rows.append(row)
    return rows


def live_history(name: str, seed: int, properties: dict[str, Any]) -> FeedModel:
    """A random history of table ``name``, written and modelled side by side."""
    rng = np.random.default_rng(seed)
    model = FeedModel(["id", "n", "s"])
    dc.create_table(name, schema=KEYED, table_properties={**CHANGE_DATA, **properties})
    wide = False
    for step in range(10):
        choice = rng.integers(0, 5) if step else 0
        if choice <= 1:  # merge: updates (some to equal values), inserts
            keys = rng.choice(60, int(rng.integers(1, 15)), replace=False)
            rows = random_rows(rng, keys, wide)
            result = dc.write(table_of(rows), name, mode="merge")
            model.merge(rows, result.version)
        elif choice == 2 and model.rows:
            keys = [int(k) for k in rng.choice(list(model.rows), min(4, len(model.rows)))]
            result = dc.write(table_of([{"id": k} for k in keys]), name, mode="delete")
            model.delete(sorted(set(keys)), result.version)
        elif choice == 3 and not wide:  # a column added by a merge
            wide = True
            rows = random_rows(rng, rng.choice(60, 5, replace=False), wide)
            result = dc.write(table_of(rows), name, mode="merge")
            model.merge(rows, result.version)
        else:
            dc.optimize(name)  # no row changes
    return model


@pytest.mark.parametrize("properties", [{}, VECTORS_OFF], ids=["merge-on-read", "copy-on-write"])
def test_random_histories_match_the_model_and_load_cdf(catalog, properties):
    from deltalake import DeltaTable

    for seed in (1, 2):
        name = f"t{seed}"
        model = live_history(name, seed, properties)
        feed = dc.changes(name, read_as="pyarrow")
        assert feed.column_names == [*model.columns, *META]
        assert feed.schema.field("_commit_timestamp").type == pa.timestamp("us", tz="UTC")
        assert got(feed, model.columns) == model.expected()
        computed = table_changes(name, change_files=False)  # the change data files agree
        assert got(computed, model.columns) == model.expected()
        for version in sorted({v for _, _, v in model.feed})[:4]:
            one = dc.changes(name, version, version, read_as="pyarrow")
            columns = one.column_names[: -len(META)]  # the schema of that version
            assert got(one, columns) == model.expected(version, version, columns)
        net = dc.changes(name, net=True, read_as="pyarrow")
        assert got(net, model.columns, with_version=False) == model.net()

        delta = pa.table(DeltaTable(f"{catalog.root}/default/{name}").load_cdf(0))
        ours = feed.drop_columns("_transaction_id")
        delta = delta.select(ours.column_names).cast(ours.schema)
        assert Counter(_rows(delta)) == Counter(_rows(ours))

        # a branch: main's versions up to its start, then its own (only in its log)
        dc.create_branch(f"b{seed}")
        rows = random_rows(np.random.default_rng(seed), range(55, 65), "w" in model.columns)
        version = dc.write(table_of(rows), name, mode="merge", branch=f"b{seed}").version
        model.merge(rows, version)
        on_branch = dc.changes(name, branch=f"b{seed}", read_as="pyarrow")
        assert got(on_branch, model.columns) == model.expected()


def _rows(table: pa.Table) -> list[tuple]:
    return list(zip(*(table.column(c).to_pylist() for c in table.column_names), strict=True))


def test_without_keys_rows_cancel_as_a_multiset(catalog):
    dc.write(pa.table({"a": [1, 1, 2], "b": ["x", "x", "y"]}), "plain")
    dc.write(pa.table({"a": [1, 2, 3], "b": ["x", "y", "z"]}), "plain", mode="replace")
    feed = dc.changes("plain", 1, 1, read_as="pyarrow")
    assert got(feed, ["a", "b"], False) == Counter({(1, "x", DELETE): 1, (3, "z", INSERT): 1})
    net = dc.changes("plain", net=True, read_as="pyarrow")
    assert got(net, ["a", "b"], False) == Counter(
        {(1, "x", INSERT): 1, (2, "y", INSERT): 1, (3, "z", INSERT): 1}
    )


def test_points_branches_columns_and_catalog_changes(catalog):
    dc.create_table("k", schema=KEYED)
    dc.write(table_of([{"id": 1, "n": 1, "s": "a"}]), "k", mode="merge")
    dc.tag("one")
    dc.write(table_of([{"id": 1, "n": 2, "s": "a"}]), "k", mode="merge")
    first = dc.transactions(read_as="pyarrow").column("transaction_id")[0].as_py()
    by_tag = dc.changes("k", start="one", read_as="pyarrow")  # after the state it names
    assert by_tag.column("_commit_version").to_pylist() == [2, 2]
    assert dc.changes("k", start=first, read_as="pyarrow").num_rows == 2
    assert dc.changes("k", end="one", read_as="pyarrow").num_rows == 1
    now = datetime.datetime.now(datetime.timezone.utc)
    assert dc.changes("k", end=now, read_as="pyarrow").num_rows == 3
    only = dc.changes("k", columns=["n"], read_as="pyarrow")
    assert only.column_names == ["n", *META]

    dc.create_branch("exp")
    dc.write(table_of([{"id": 2, "n": 0, "s": "b"}]), "k", mode="merge", branch="exp")
    on_branch = dc.changes("k", 3, branch="exp", read_as="pyarrow")
    assert on_branch.column("id").to_pylist() == [2]
    assert dc.changes("k", branch="exp", read_as="pyarrow").num_rows == 4
    with pytest.raises(dc.TableVersionNotFoundError):
        dc.changes("k", 3)  # main has no version 3

    sequence = dc.transactions(read_as="pyarrow").column("sequence")[0].as_py()
    everything = dc.catalog_changes(0, read_as="pyarrow")
    assert set(everything) == {"default.k"} and everything["default.k"].num_rows == 3
    last = dc.catalog_changes(sequence, read_as="pyarrow")
    assert last["default.k"].column("_commit_version").to_pylist() == [2, 2]
    for kind in ("pandas", "polars", "numpy"):
        assert len(dc.changes("k", read_as=kind)) == 3
    assert dc.changes("k").to_arrow().num_rows == 3  # Daft, as dc.read gives by default


def test_errors(catalog):
    dc.create_table("k", schema=KEYED)
    dc.write(table_of([{"id": 1, "n": 1, "s": "a"}]), "k", mode="merge")
    dc.write(table_of([{"id": 1, "n": 2, "s": "a"}]), "k", mode="merge")
    with pytest.raises(dc.InvalidArgumentError, match="before start"):
        dc.changes("k", 2, 1)
    with pytest.raises(dc.TableVersionNotFoundError, match="no version 9"):
        dc.changes("k", 0, 9)
    with pytest.raises(dc.TableVersionNotFoundError, match="before table"):
        dc.changes("k", end=datetime.datetime(2000, 1, 1, tzinfo=datetime.timezone.utc))
    with pytest.raises(dc.InvalidArgumentError, match="no column"):
        dc.changes("k", columns=["nope"])
    with pytest.raises(dc.InvalidArgumentError):
        dc.changes("k", net="yes")
    with pytest.raises(dc.TableNotFoundError):
        dc.changes("missing")

    dc.vacuum(retain=0)  # the file version 2 rewrote is gone
    with pytest.raises(dc.ChangesUnavailableError, match="Only changes after version 2"):
        dc.changes("k", 1)
    dc.write(table_of([{"id": 1, "n": 3, "s": "a"}]), "k", mode="merge")
    with pytest.raises(dc.ChangesUnavailableError, match="from version 3 on"):
        dc.changes("k")
    assert got(dc.changes("k", 3, read_as="pyarrow"), ["n"], False) == {(2, PRE): 1, (3, POST): 1}


def test_vacuum_keeps_the_change_data_files_of_versions_it_keeps(catalog):
    dc.create_table("k", schema=KEYED, table_properties=CHANGE_DATA)
    dc.write(table_of([{"id": i, "n": 1, "s": "a"} for i in range(50)]), "k", mode="merge")
    dc.write(table_of([{"id": 1, "n": 2, "s": "a"}]), "k", mode="merge")
    dc.vacuum(retain=0)
    assert got(dc.changes("k", 2, read_as="pyarrow"), ["n"], False) == {(1, PRE): 1, (2, POST): 1}


def test_table_handle(catalog):
    dc.create_table("k", schema=KEYED)
    dc.write(table_of([{"id": 1, "n": 1, "s": "a"}]), "k", mode="merge")
    assert dc.table("k").changes(read_as="pyarrow").column("id").to_pylist() == [1]


@pytest.mark.s3
def test_change_data_files_on_s3(s3_catalog):
    from deltalake import DeltaTable

    dc.init({"default": s3_catalog})
    model = live_history("t", 3, {})
    feed = dc.changes("t", read_as="pyarrow")
    assert got(feed, model.columns) == model.expected()
    assert got(table_changes("t", change_files=False), model.columns) == model.expected()
    options = s3_catalog.properties.storage_options
    delta = pa.table(DeltaTable(dc.get_table("t").uri, storage_options=options).load_cdf(0))
    assert len(delta) == len(feed)


@pytest.mark.parametrize("properties", [{}, VECTORS_OFF], ids=["merge-on-read", "copy-on-write"])
def test_a_transaction_of_several_writes_is_one_commit_of_changes(catalog, properties):
    dc.create_table("k", schema=KEYED, table_properties={**CHANGE_DATA, **properties})
    dc.write(table_of([{"id": i, "n": 0, "s": "a"} for i in range(20)]), "k", mode="merge")
    with dc.transaction():
        dc.write(table_of([{"id": 1, "n": 1, "s": "a"}, {"id": 30, "n": 0, "s": "b"}]), "k")
        dc.write(table_of([{"id": 2}, {"id": 30}]), "k", mode="delete")
        dc.write(table_of([{"id": 1, "n": 2, "s": "a"}, {"id": 3, "n": 0, "s": "a"}]), "k")
    # a file the transaction wrote and replaced is gone from its later writes' view too (a
    # copy-on-write merge after a delete once rewrote it again: rows twice, deleted ones back)
    assert sorted(dc.read("k", read_as="pyarrow").column("id").to_pylist()) == [
        i for i in range(20) if i != 2
    ]
    want = {(1, 0, PRE): 1, (1, 2, POST): 1, (2, 0, DELETE): 1}
    for feed in (dc.changes("k", 2, read_as="pyarrow"), table_changes("k", 2, change_files=False)):
        assert got(feed, ["id", "n"], False) == want


@pytest.mark.spark
def test_changes_as_a_spark_frame(spark, catalog):
    dc.write(table_of([{"id": 1, "n": 1, "s": "a"}]), "k", schema=KEYED)
    dc.write(table_of([{"id": 1, "n": 2, "s": "a"}]), "k")
    frame = dc.changes("k", read_as="spark")
    assert sorted(r["_change_type"] for r in frame.collect()) == [INSERT, POST, PRE]
