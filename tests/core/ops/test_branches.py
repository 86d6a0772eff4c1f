"""Catalog branches: zero-copy creation, isolation from main and from readers of the table
folders, publishing (conflicts, rebase, all-or-nothing), per-branch history, drop and vacuum."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest

import workbench as dc
from tests.conftest import fail_log_commits, tree_digest
from tests.delta_readers import delta_rows

VECTORS = {"delta.enableDeletionVectors": "true"}


def keyed(**properties: str) -> dict:
    """Arguments creating a table keyed by ``id``."""
    schema = dc.Schema.of(
        [
            dc.Field.of(pa.field("id", pa.int64()), is_merge_key=True),
            dc.Field.of(pa.field("v", pa.string())),
        ]
    )
    return {"schema": schema, "table_properties": properties or None}


def frame(ids, tag: str) -> pd.DataFrame:
    ids = list(ids)
    return pd.DataFrame({"id": ids, "v": [f"{tag}{i}" for i in ids]})


def sorted_rows(data: pa.Table) -> list[dict]:
    """Rows in one order whatever order they were read in."""
    return sorted(data.to_pylist(), key=lambda r: tuple(str(v) for v in r.values()))


def rows(table: str, namespace: str | None = None, **read) -> list[dict]:
    return sorted_rows(dc.read(table, namespace, read_as="pyarrow", **read))


def folder_rows(catalog: dc.Catalog, table: str, namespace: str = "default") -> list[dict]:
    """A table's rows as a plain Delta reader of its folder sees them."""
    from deltalake import DeltaTable

    return sorted_rows(delta_rows(DeltaTable(f"{catalog.root}/{namespace}/{table}")))


def delta_logs(root: str) -> str:
    """Digest of every table's Delta log and the catalog log: what main's readers see."""
    import hashlib

    digest = hashlib.sha256()
    for folder, _, files in sorted(os.walk(root)):
        if "_delta_log" not in folder or "/branches/" in folder:
            continue
        for name in sorted(files):
            digest.update(f"{folder}/{name}".encode())
            digest.update(Path(folder, name).read_bytes())
    return digest.hexdigest()


def parquet_files(root: str) -> set[str]:
    return {
        os.path.join(folder, name)
        for folder, _, files in os.walk(root)
        for name in files
        if name.endswith(".parquet") and "_workbench" not in folder
    }


@pytest.fixture
def lake(catalog):
    """A catalog with a keyed table (deletion vectors on), a plain one and a spare one."""
    dc.write(frame(range(6), "m"), "users", **keyed(**VECTORS))
    dc.write(frame(range(3), "e"), "events")
    dc.write(frame(range(2), "s"), "spare")
    return catalog


def test_creating_a_branch_copies_no_data_and_main_never_sees_its_work(lake):
    dc.create_namespace("retired")
    before_files, before_logs = parquet_files(lake.root), delta_logs(lake.root)
    branch = dc.create_branch("exp")
    assert parquet_files(lake.root) == before_files
    assert branch.name == "exp" and branch.transactions == 0 and not branch.current
    main_users, main_events = rows("users"), rows("events")

    with dc.branch("exp") as current:
        assert current.current and dc.current_branch() == "exp"
        dc.write(frame([1, 7], "b"), "users", mode="merge")  # update + insert (vectors)
        dc.write(frame([2], "x"), "users", mode="delete")
        dc.write(frame([9], "b").assign(extra=1.5), "events", mode="append")  # evolves schema
        dc.write(frame([0], "r"), "spare", mode="replace")
        dc.write(frame([5], "n"), "fresh", namespace="lab", auto_create_namespace=True)
        dc.create_namespace("empty_ns")
        dc.drop_namespace("retired")
        branch_users, branch_events = rows("users"), rows("events")

    assert dc.current_branch() == "main"
    assert rows("users") == main_users and rows("events") == main_events
    assert not dc.table_exists("fresh", "lab") and not dc.namespace_exists("empty_ns")
    assert dc.namespace_exists("retired")
    assert delta_logs(lake.root) == before_logs  # no table folder's Delta log moved
    assert folder_rows(lake, "users") == main_users
    assert {"id": 7, "v": "b7"} in branch_users and {"id": 2, "v": "m2"} not in branch_users
    assert {"id": 1, "v": "b1"} in branch_users
    assert {"id": 9, "v": "b9", "extra": 1.5} in branch_events
    assert rows("users", branch="exp") == branch_users
    assert [b.name for b in dc.branches()] == ["main", "exp"]
    assert dc.branches()[1].tables_changed == [
        "default.events",
        "default.spare",
        "default.users",
        "lab.fresh",
    ]

    result = dc.merge_branch("exp")
    assert result.tables == ["default.events", "default.spare", "default.users", "lab.fresh"]
    assert rows("users") == branch_users and rows("events") == branch_events
    assert rows("spare") == [{"id": 0, "v": "r0"}]
    assert rows("fresh", "lab") == [{"id": 5, "v": "n5"}]
    assert dc.namespace_exists("empty_ns") and not dc.namespace_exists("retired")
    for table, namespace in [("users", "default"), ("events", "default"), ("fresh", "lab")]:
        assert folder_rows(lake, table, namespace) == rows(table, namespace)
    with dc.branch("exp"):  # the branch still reads what it wrote after its tables moved
        assert rows("fresh", "lab") == [{"id": 5, "v": "n5"}]
        assert rows("users") == branch_users


def test_history_records_the_publish_and_time_travel_and_tags_work_per_branch(lake):
    dc.tag("before")
    dc.create_branch("exp")
    dc.write(frame([3], "b"), "events", mode="append", branch="exp")
    with dc.branch("exp"):
        history = dc.transactions(read_as="pandas")
        assert len(history) == 1 and history["tables"][0].tolist() == ["default.events"]
        dc.tag("first-on-branch")
        dc.write(frame([4], "b"), "events", mode="append")
        assert len(rows("events", as_of="first-on-branch")) == 4
        assert len(rows("events", as_of="before")) == 3  # main's tag before the branch point
        assert len(rows("events")) == 5
        assert "first-on-branch" in dc.tags()
    assert "first-on-branch" not in dc.tags()
    with pytest.raises(dc.TimeTravelError):
        dc.read("events", as_of="first-on-branch")

    dc.merge_branch("exp", commit_message="ship the new events")
    latest = dc.transactions(read_as="pandas").iloc[0]
    assert latest["commit_message"] == "ship the new events"
    assert '"branch": "exp"' in latest["details"]
    assert len(rows("events")) == 5


def test_a_conflict_names_the_tables_and_publishes_nothing(lake):
    dc.create_branch("exp")
    with dc.branch("exp"):
        dc.write(frame([1], "b"), "users", mode="merge")
        dc.write(frame([8], "b"), "events", mode="append")
        dc.write(frame([5], "n"), "fresh")
    dc.write(frame([1], "main"), "users", mode="merge")  # main changes the same table
    before, branch_before = tree_digest(lake.root + "/default"), rows("users", branch="exp")

    with pytest.raises(dc.BranchConflictError) as caught:
        dc.merge_branch("exp")
    assert caught.value.tables == ["default.users"]
    assert "default.users" in str(caught.value) and "rebase=True" in str(caught.value)
    assert isinstance(caught.value, dc.TransactionConflictError)
    with pytest.raises(dc.BranchConflictError):  # keyed tables never rebase
        dc.merge_branch("exp", rebase=True)
    assert tree_digest(lake.root + "/default") == before
    assert not dc.table_exists("fresh")
    assert rows("users", branch="exp") == branch_before
    assert rows("fresh", branch="exp") == [{"id": 5, "v": "n5"}]


def test_rebase_publishes_appends_on_top_of_mains_appends(lake):
    dc.create_branch("exp")
    dc.write(frame([10], "b"), "events", mode="append", branch="exp")
    dc.write(frame([20], "m"), "events", mode="append")
    with pytest.raises(dc.BranchConflictError):
        dc.merge_branch("exp")
    result = dc.merge_branch("exp", rebase=True)
    assert result.rebased == ["default.events"]
    assert [r["id"] for r in rows("events")] == [0, 1, 10, 2, 20]  # sorted as text
    assert folder_rows(lake, "events") == rows("events")


@pytest.mark.parametrize("main_compacts", [True, False])
@pytest.mark.parametrize("branch_compacts", [True, False])
def test_a_branchs_rows_follow_mains_rows_as_of_the_publish(
    catalog, main_compacts, branch_compacts
):
    """A publish counts as the branch's write: after a rebase its rows follow every row main
    held, in the order the branch wrote them, with or without compaction on either side;
    main's later appends and the next publish follow them; earlier versions keep their order."""
    compacting = main_compacts or branch_compacts
    eager = {"workbench.autoCompact.minNumFiles": "2"}  # a step every second small commit
    dc.write(
        pa.table({"id": [0]}),
        "events",
        table_properties=eager if compacting else {"delta.autoOptimize.autoCompact": False},
    )

    def append(ids: list[int], on_branch: bool = False) -> None:
        compact = branch_compacts if on_branch else main_compacts
        branch = "exp" if on_branch else "main"
        dc.write(
            pa.table({"id": ids}), "events", mode="append", auto_compact=compact, branch=branch
        )

    def ids(**read) -> list[int]:
        return dc.read("events", read_as="pyarrow", **read).column("id").to_pylist()

    def files(branch: str = "main") -> int:
        with dc.branch(branch):
            return dc.get_table("events").file_count

    for i in range(1, 5):
        append([i])
    dc.create_branch("exp")
    base = files("exp")
    append([100], on_branch=True)
    append([5])
    append([6])
    append([101], on_branch=True)
    append([102], on_branch=True)
    for i in range(7, 10):
        append([i])
    assert (files() < 10, files("exp") < base + 3) == (main_compacts, branch_compacts)
    before = dc.transactions(read_as="pyarrow").column("transaction_id")[0].as_py()
    dc.merge_branch("exp", rebase=True)
    assert ids() == [*range(10), 100, 101, 102]
    append([10])
    assert ids() == [*range(10), 100, 101, 102, 10]
    append([103], on_branch=True)
    append([104], on_branch=True)
    append([105], on_branch=True)
    dc.merge_branch("exp", rebase=True)  # the branch folded only what it wrote since
    assert ids() == [*range(10), 100, 101, 102, 10, 103, 104, 105]
    assert ids(as_of=before) == list(range(10))
    assert ids(branch="exp") == [*range(5), *range(100, 106)]


def test_a_branch_publishes_again_only_what_it_changed_since(lake):
    dc.create_branch("exp")
    dc.write(frame([7], "b"), "users", mode="merge", branch="exp")
    dc.merge_branch("exp")
    dc.write(frame([8], "b"), "users", mode="merge", branch="exp")
    dc.write(frame([3], "m"), "events", mode="append")  # main moves on elsewhere
    second = dc.merge_branch("exp")
    assert second.tables == ["default.users"]
    assert [r["id"] for r in rows("users")] == [0, 1, 2, 3, 4, 5, 7, 8]
    assert dc.merge_branch("exp").tables == []  # nothing new


def test_a_table_dropped_and_made_again_on_a_branch_replaces_mains(lake):
    dc.create_branch("exp")
    with dc.branch("exp"):
        dc.drop_table("spare")
        dc.write(pd.DataFrame({"k": ["new"]}), "spare")
        dc.drop_table("events")
    old = rows("spare")
    dc.merge_branch("exp")
    assert rows("spare") == [{"k": "new"}] and not dc.table_exists("events")
    assert folder_rows(lake, "spare") == [{"k": "new"}]
    before_publish = dc.transactions(read_as="pandas").iloc[1]["transaction_id"]
    assert len(old) == 2 and rows("spare", as_of=before_publish) == old  # the old incarnation


def test_drop_branch_frees_its_files_and_vacuum_keeps_what_live_branches_need(lake):
    users_folder = dc.get_table("users").uri
    before = set(os.listdir(users_folder))
    dc.create_branch("exp")
    with dc.branch("exp"):
        dc.write(frame([1, 40], "b"), "users", mode="merge")
        dc.write(frame([50], "n"), "fresh")
        branch_users = rows("users")
    written = set(os.listdir(users_folder)) - before
    assert any(f.endswith(".parquet") for f in written)
    dc.write(frame(range(3), "z"), "users", mode="replace")  # main no longer needs old files
    dc.vacuum(retain=0)
    assert written <= set(os.listdir(users_folder))
    with dc.branch("exp"):
        assert rows("users") == branch_users and rows("fresh") == [{"id": 50, "v": "n50"}]
    dc.drop_branch("exp")
    assert [b.name for b in dc.branches()] == ["main"]
    assert not (Path(lake.root) / "_workbench" / "branches" / "exp").exists()
    assert not written & set(os.listdir(users_folder))
    dc.vacuum(retain=0)
    assert rows("users") == [{"id": i, "v": f"z{i}"} for i in range(3)]
    with pytest.raises(dc.BranchNotFoundError):
        dc.read("users", branch="exp")


def test_bad_branch_input_is_a_typed_error_and_changes_nothing(lake, tmp_path):
    dc.create_branch("exp")
    before = tree_digest(lake.root)
    with pytest.raises(dc.BranchAlreadyExistsError):
        dc.create_branch("exp")
    with pytest.raises(dc.BranchAlreadyExistsError):
        dc.create_branch("main")
    for bad in ["", "../x", "a/b", "_hidden", 3, None, "x" * 300]:
        with pytest.raises(dc.InvalidNameError):
            dc.create_branch(bad)
    with pytest.raises(dc.BranchNotFoundError, match=r"dc\.create_branch"):
        dc.read("users", branch="nope")
    with pytest.raises(dc.BranchNotFoundError), dc.branch("nope"):
        pass
    with pytest.raises(dc.BranchNotFoundError):
        dc.merge_branch("nope")
    with pytest.raises(dc.BranchNotFoundError):
        dc.drop_branch("nope")
    with pytest.raises(dc.InvalidArgumentError):
        dc.drop_branch("main")
    with pytest.raises(dc.InvalidArgumentError):
        dc.merge_branch("exp", into="other")
    with pytest.raises(dc.InvalidArgumentError):
        dc.merge_branch("main")
    with pytest.raises(dc.InvalidArgumentError):
        dc.merge_branch("exp", rebase="yes")
    with pytest.raises(dc.TimeTravelError):
        dc.create_branch("old", from_="no-such-tag")
    with pytest.raises(dc.InvalidArgumentError):
        dc.read("users", branch=7)
    with dc.transaction(branch="exp"):
        with pytest.raises(dc.TransactionCatalogError, match="branch 'exp'"):
            dc.write(frame([1], "x"), "users", branch="main")
        with pytest.raises(dc.TransactionError):
            dc.create_branch("inner")
    assert tree_digest(lake.root) == before


def test_a_failed_publish_leaves_main_and_the_branch_as_they_were(lake, monkeypatch):
    dc.create_branch("exp")
    with dc.branch("exp"):
        dc.write(frame([7], "b"), "users", mode="merge")
        dc.write(frame([5], "n"), "fresh")
    main_before = tree_digest(lake.root + "/default")
    branch_before = rows("users", branch="exp"), rows("fresh", branch="exp")
    fail_log_commits(monkeypatch, OSError("disk gone"))
    with pytest.raises(dc.WriteFailedError):
        dc.merge_branch("exp")
    monkeypatch.undo()
    assert tree_digest(lake.root + "/default") == main_before
    assert (rows("users", branch="exp"), rows("fresh", branch="exp")) == branch_before
    dc.merge_branch("exp")
    assert rows("fresh") == [{"id": 5, "v": "n5"}]


def test_a_publish_cut_short_after_its_commit_is_finished_by_the_next_user(lake, monkeypatch):
    from workbench.core.transactions import transaction

    dc.create_branch("exp")
    dc.write(frame([5], "n"), "fresh", branch="exp")
    monkeypatch.setattr(transaction, "apply_entry", _crash)  # the process dies right here
    with pytest.raises(_Crash):
        dc.merge_branch("exp")
    monkeypatch.undo()
    script = (
        "import workbench as dc, sys; dc.init_local(sys.argv[1]); "
        "print(dc.read('fresh', read_as='pandas')['id'].tolist())"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, lake.root], capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "[5]"
    assert folder_rows(lake, "fresh") == [{"id": 5, "v": "n5"}]


class _Crash(BaseException):
    pass


def _crash(*_args, **_kwargs):
    raise _Crash


def test_a_branch_from_a_tag_sees_that_state_and_conflicts_with_later_main_changes(lake):
    dc.tag("v1")
    dc.write(frame([30], "m"), "events", mode="append")
    dc.create_branch("old", from_="v1")
    assert len(rows("events", branch="old")) == 3
    dc.write(frame([31], "b"), "events", mode="append", branch="old")
    with pytest.raises(dc.BranchConflictError):
        dc.merge_branch("old")
    dc.merge_branch("old", rebase=True)
    assert sorted(r["id"] for r in rows("events")) == [0, 1, 2, 30, 31]


def test_work_on_a_dropped_branch_fails_to_commit(lake):
    dc.create_branch("exp")
    with dc.branch("exp"), pytest.raises(dc.BranchNotFoundError), dc.transaction():
        dc.write(frame([1], "b"), "events", mode="append")
        script = "import workbench as dc, sys; dc.init_local(sys.argv[1]); dc.drop_branch('exp')"
        subprocess.run([sys.executable, "-c", script, lake.root], check=True)
    assert rows("events") == [{"id": i, "v": f"e{i}"} for i in range(3)]


def test_dc_init_chooses_the_branch_calls_use(lake):
    dc.create_branch("exp")
    dc.init(branch="exp")
    dc.write(frame([11], "b"), "events", mode="append")
    assert dc.current_branch() == "exp" and len(rows("events")) == 4
    dc.init()
    assert dc.current_branch() == "main" and len(rows("events")) == 3
    with pytest.raises(dc.BranchNotFoundError):
        dc.init(branch="nope")


def test_each_catalog_has_its_own_branch_and_a_dropped_one_is_left(lake, tmp_path):
    other = dc.Catalog(dc.CatalogProperties(str(tmp_path / "other")))
    dc.put_catalog("other", other)
    dc.write(frame([1], "o"), "t", catalog="other")
    dc.create_branch("exp")
    with pytest.raises(dc.BranchNotFoundError):
        dc.init(branch="nope")
    assert dc.current_branch() == "main"  # the failed init changed nothing
    dc.init(branch="exp")
    assert dc.current_branch() == "exp" and dc.current_branch("other") == "main"
    assert rows("t", catalog="other") == [{"id": 1, "v": "o1"}]  # other catalog: on main
    dc.write(frame([2], "o"), "t", catalog="other", mode="append")
    info = dc.get_table("events")
    assert info.branch == "exp" and info.uri != ""  # not changed on the branch: main's folder
    dc.write(frame([9], "b"), "events", mode="append")
    assert dc.get_table("events").uri == ""  # a branch-only version: no Delta reader shows it
    assert str(dc.diff("events", before="main")).count("branch") == 2
    history = dc.transactions(read_as="pandas")
    assert history["branch"].tolist() == ["exp"]
    dc.drop_branch("exp")
    assert dc.current_branch() == "main" and len(rows("events")) == 3
    dc.create_branch("exp2")
    dc.write(frame([5], "b"), "events", mode="append", branch="exp2")
    dc.merge_branch("exp2")
    latest = dc.transactions(read_as="pandas").iloc[0]
    assert (latest["branch"], latest["published_from"]) == ("main", "exp2")


def test_table_versions_on_a_branch(lake):
    dc.create_branch("exp")
    with dc.branch("exp"):
        dc.write(frame([7], "v2"), "events", table_version="2", mode="create")
        assert rows("events") == [{"id": 7, "v": "v27"}]
        assert len(rows("events", table_version="1")) == 3
    with pytest.raises(dc.TableVersionNotFoundError):
        dc.read("events", table_version="2")
    dc.merge_branch("exp")
    assert rows("events") == [{"id": 7, "v": "v27"}] and len(rows("events", table_version="1")) == 3


def test_schemaless_tables_and_a_namespace_main_dropped_come_back_with_a_publish(lake):
    dc.create_namespace("lab")
    dc.create_branch("exp")
    dc.drop_namespace("lab")  # on main, after the branch point
    with dc.branch("exp"):
        dc.write(pa.table({"k": [1]}), "files", schema=None)
        dc.write(frame([1], "n"), "fresh", namespace="lab")
        assert dc.read("files", read_as="pandas").shape[0] == 1
    assert not dc.table_exists("files")
    dc.merge_branch("exp")
    assert dc.namespace_exists("lab") and rows("fresh", "lab") == [{"id": 1, "v": "n1"}]
    assert dc.read("files", read_as="pandas").shape[0] == 1


def test_diff_branch_shows_what_publishing_would_change_table_by_table(lake):
    dc.create_branch("exp")
    with dc.branch("exp"):
        dc.write(frame([1, 40], "b"), "users", mode="merge")
        dc.write(frame([5], "n"), "fresh")
        dc.drop_table("spare")
    changes = dc.diff_branch("exp")
    by_table = {d.table: d for d in changes.tables}
    assert sorted(by_table) == ["default.fresh", "default.spare", "default.users"]
    users = by_table["default.users"]
    assert (users.added, users.removed, users.changed) == (1, 0, 1)
    assert (by_table["default.fresh"].added, by_table["default.spare"].removed) == (1, 2)
    assert "wb-branch-diff" in changes._repr_html_() and "default.fresh" in str(changes)
    assert dc.diff_branch("exp").tables == changes.tables  # nothing changed by looking
    with pytest.raises(dc.InvalidArgumentError):
        dc.diff_branch("main")
    with pytest.raises(dc.BranchNotFoundError):
        dc.diff_branch("nope")
