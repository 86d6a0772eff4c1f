"""Catalog branches at their edges, as a hostile user meets them: every write mode then a
publish read by plain Delta readers, merge-on-read on both sides, publishing again after a
rebase, vacuum at every stage, drops on either side, other processes changing main meanwhile,
names at their limits, wrong argument types, the magics, and kill -9 in the middle of branch
operations."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path

import pandas as pd
import pytest

import workbench as dc
from tests.conftest import tree_digest
from tests.core.ops.test_branches import folder_rows, frame, keyed, rows, sorted_rows

VECTORS = {"delta.enableDeletionVectors": "true"}
ROOT = Path(__file__).resolve().parents[3]


# ------------------------------------------------------------------------------------ helpers
def ids(table: str, namespace: str | None = None, **read) -> list[int]:
    return sorted(r["id"] for r in rows(table, namespace, **read))


def polars_rows(catalog: dc.Catalog, table: str, namespace: str = "default") -> list[dict]:
    import polars as pl

    return sorted_rows(pl.read_delta(f"{catalog.root}/{namespace}/{table}").to_arrow())


def assert_folders_show_main(catalog: dc.Catalog, *tables: str) -> None:
    """Plain Delta readers of the live folders see exactly main's rows."""
    for table in tables:
        on_main = rows(table)
        assert folder_rows(catalog, table) == on_main, table
        if "deletionVectors" not in str(dc.get_table(table).table_properties):
            assert polars_rows(catalog, table) == on_main, table


def in_process(root: str, code: str, **env: str) -> None:
    """Run ``code`` in a fresh process on the catalog at ``root`` (another user)."""
    script = f"import workbench as dc, pandas as pd; dc.init_local({root!r})\n{code}"
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]


def scattered_delete(n: int = 400) -> pd.DataFrame:
    """Every other id of ``range(n)``: deletes whose vector is too big to stay inline, so it
    is written as a ``deletion_vector_*.bin`` file beside the data."""
    return frame(range(0, n, 2), "x")


def vector_files(folder: str) -> set[str]:
    return {n for n in os.listdir(folder) if n.startswith("deletion_vector_")}


# ============================================================== bugs: data loss / wrong data
@pytest.mark.slow  # several seconds: make test runs it, make test-fast does not
def test_entering_a_branch_in_a_fresh_process_keeps_mains_whole_history(catalog):
    """Opening a branch in a new process reads main's history whole, so main's history and a
    default vacuum there keep every transaction and file time travel within 7 days needs."""
    dc.write(frame(range(3), "e"), "events")
    dc.tag("first")
    for i in range(26):  # past the first saved state (STATE_EVERY = 25)
        dc.write(frame([100 + i], "m"), "events", mode="replace")
    dc.create_branch("exp")
    total = len(dc.transactions(read_as="pandas"))
    report = Path(catalog.root).parent / "seen.txt"
    in_process(
        catalog.root,
        "with dc.branch('exp'):\n"
        "    pass\n"
        f"open({str(report)!r}, 'w').write(str(len(dc.transactions(read_as='pandas'))))\n"
        "dc.vacuum()",
    )
    assert int(report.read_text()) == total
    assert ids("events", as_of="first") == [0, 1, 2]


@pytest.mark.slow  # several seconds: make test runs it, make test-fast does not
def test_a_branch_dropped_and_made_again_elsewhere_is_read_and_written_anew(catalog):
    """After another process drops a branch, reads of it here fail; after it makes the name
    again, reads and writes here use the new branch."""
    dc.write(frame(range(3), "e"), "events")
    dc.create_branch("exp")
    dc.write(frame([7], "b"), "events", mode="append", branch="exp")
    in_process(catalog.root, "dc.drop_branch('exp')")
    with pytest.raises(dc.BranchNotFoundError):
        dc.read("events", branch="exp")
    in_process(catalog.root, "dc.create_branch('exp')")
    assert ids("events", branch="exp") == [0, 1, 2]
    dc.write(frame([8], "b"), "events", mode="append", branch="exp")
    assert ids("events", branch="exp") == [0, 1, 2, 8]


def test_a_publish_after_a_rebased_publish_keeps_mains_own_rows(catalog):
    """After a rebased publish (main = branch + main's own appends) the next publish replays only
    what the branch did since, keeping main's rows."""
    dc.write(frame(range(3), "e"), "events")
    dc.create_branch("exp")
    dc.write(frame([10], "b"), "events", mode="append", branch="exp")
    dc.write(frame([20], "m"), "events", mode="append")  # main's own row
    assert dc.merge_branch("exp", rebase=True).rebased == ["default.events"]
    assert ids("events") == [0, 1, 2, 10, 20]
    dc.write(frame([11], "b"), "events", mode="append", branch="exp")
    dc.merge_branch("exp")  # main did not change since the last publish: no conflict
    assert ids("events") == [0, 1, 2, 10, 11, 20]
    assert folder_rows(catalog, "events") == rows("events")


@pytest.mark.parametrize("created_on_branch", [False, True], ids=["main_table", "branch_table"])
def test_dropping_a_branch_keeps_the_deletion_vectors_its_publish_gave_main(
    catalog, created_on_branch
):
    """drop_branch frees files only the branch used; a deletion-vector file the branch wrote
    and published is main's now."""
    if not created_on_branch:
        dc.write(frame(range(400), "m"), "users", **keyed(**VECTORS))
    dc.create_branch("exp")
    with dc.branch("exp"):
        if created_on_branch:
            dc.write(frame(range(400), "m"), "users", **keyed(**VECTORS))
        dc.write(scattered_delete(), "users", mode="delete")
    dc.merge_branch("exp")
    published = rows("users")
    folder = f"{catalog.root}/default/users"
    assert len(published) == 200 and vector_files(folder)
    dc.drop_branch("exp")
    assert vector_files(folder), "drop_branch deleted a deletion vector main uses"
    assert rows("users") == published
    assert folder_rows(catalog, "users") == published


def test_vacuum_keeps_a_table_a_live_branch_created_and_published_after_main_drops_it(catalog):
    """The branch still holds the table it created and published; main dropping it must not
    let vacuum delete the folder the branch reads it from."""
    dc.write(frame(range(3), "e"), "events")
    dc.create_branch("exp")
    dc.write(frame([5], "n"), "fresh", branch="exp")
    dc.merge_branch("exp")
    dc.write(frame([6], "n"), "fresh", mode="append", branch="exp")
    dc.drop_table("fresh")  # on main
    assert ids("fresh", branch="exp") == [5, 6]
    dc.vacuum(retain=0)
    assert ids("fresh", branch="exp") == [5, 6]


def test_vacuum_elsewhere_spares_the_files_an_open_branch_transaction_staged(catalog):
    """Vacuum in another process leaves alone the folder of a table an open branch transaction
    is staging files in (it holds the branch's lease), so the commit finds its files."""
    dc.write(frame(range(3), "e"), "events")
    dc.create_branch("exp")
    with dc.transaction(branch="exp"):
        dc.write(frame([7], "b"), "events", mode="append")
        in_process(catalog.root, "dc.vacuum()")  # another user, default retain=7 days
    assert ids("events", branch="exp") == [0, 1, 2, 7]


def test_a_branch_read_never_shows_the_incarnation_main_made_in_another_process(catalog):
    """After another process drops and re-creates a table on main, a branch here still reads the
    incarnation it started from (from the dropped folder), never main's new table."""
    dc.write(frame(range(3), "e"), "events")
    dc.write(frame(range(3), "o"), "other")
    dc.create_branch("exp")
    dc.write(frame([9], "b"), "other", mode="append", branch="exp")
    in_process(
        catalog.root,
        "for t in ('events', 'other'):\n"
        "    dc.drop_table(t)\n"
        "    dc.write(pd.DataFrame({'id': [100, 101], 'v': ['n', 'n']}), t)",
    )
    assert ids("events", branch="exp") == [0, 1, 2]
    assert ids("other", branch="exp") == [0, 1, 2, 9]


def test_a_branch_from_a_point_vacuum_removed_never_reads_the_new_incarnation(catalog):
    """A branch from a tag whose dropped incarnation vacuum removed fails to read that table,
    never showing the live table of the same name."""
    dc.write(frame(range(3), "s"), "spare")
    dc.tag("t0")
    dc.drop_table("spare")
    dc.write(frame([50], "S"), "spare")  # a new incarnation under the same name
    dc.vacuum(retain=0)  # t0's incarnation is no longer needed on main
    try:
        dc.create_branch("old", from_="t0")
        seen = ids("spare", branch="old")
    except dc.WorkbenchError:
        return  # refusing is fine
    assert seen != [50], "the branch shows main's new incarnation as the old table"


def test_drop_branch_in_a_fresh_process_frees_the_files_the_branch_wrote(catalog):
    """drop_branch in a process that has not read the logs yet still frees the branch's files."""
    dc.write(frame(range(3), "e"), "events")
    folder = f"{catalog.root}/default/events"
    before = set(os.listdir(folder))
    dc.create_branch("exp")
    dc.write(frame([7], "b"), "events", mode="append", branch="exp")
    assert set(os.listdir(folder)) != before
    in_process(catalog.root, "dc.drop_branch('exp')")
    assert set(os.listdir(folder)) == before


# ================================================ bugs: untyped errors / wrong error advice
@pytest.mark.parametrize("bad", [["exp"], {"name": "exp"}], ids=["list", "dict"])
def test_unhashable_branch_names_raise_typed_errors(catalog, bad):
    dc.write(frame(range(2), "e"), "events")
    dc.create_branch("exp")
    before = tree_digest(catalog.root)
    calls = [
        lambda: dc.drop_branch(bad),
        lambda: dc.merge_branch(bad),
        lambda: dc.use_branch(bad),
        lambda: dc.transaction(branch=bad).__enter__(),
        lambda: dc.init(branch=bad),
        lambda: dc.branch(bad).__enter__(),
    ]
    for call in calls:
        with pytest.raises(dc.WorkbenchError, match="branch"):
            call()
    assert tree_digest(catalog.root) == before


def test_a_namespace_conflict_on_publish_is_a_branch_conflict(catalog):
    """The branch dropped a namespace main has since put a table in: a retry can never succeed,
    so the publish raises BranchConflictError naming it, and changes nothing."""
    dc.create_namespace("lab")
    dc.create_branch("exp")
    with dc.branch("exp"):
        dc.drop_namespace("lab")
    dc.write(frame([1], "l"), "t", "lab")
    before = tree_digest(catalog.root)
    with pytest.raises(dc.BranchConflictError, match="lab"):
        dc.merge_branch("exp")
    assert tree_digest(catalog.root) == before


@pytest.fixture
def shell(tmp_path):
    pytest.importorskip("IPython")
    from IPython.core.interactiveshell import InteractiveShell

    ip = InteractiveShell.instance()
    ip.run_line_magic("load_ext", "workbench")
    ip.run_line_magic("dc", f"init {tmp_path / 'catalog'}")
    dc.write(frame(range(2), "o"), "orders", "shop", auto_create_namespace=True)
    yield ip


def magic(shell, line: str):
    from IPython.utils.capture import capture_output

    with capture_output() as captured:
        result = shell.run_line_magic("dc", line)
    return result, [o.data.get("text/plain", "") for o in captured.outputs]


def test_magic_branch_use_of_an_invalid_name_says_it_is_invalid(shell):
    """``%dc branch use é`` says the name is invalid (not that the branch does not exist)."""
    for line in ["branch use é", "branch use ''"]:
        result, shown = magic(shell, line)
        assert result is None and len(shown) == 1
        assert "InvalidNameError" in shown[0], shown[0]


def test_case_variants_of_main_are_not_branch_names(catalog):
    """'Main' or 'MAIN' cannot name a branch: ``dc.branch('Main')`` would be mistaken for main."""
    dc.write(frame(range(2), "e"), "events")
    for name in ["Main", "MAIN"]:
        with pytest.raises((dc.BranchAlreadyExistsError, dc.InvalidNameError)):
            dc.create_branch(name)


def test_tagging_a_branch_before_its_first_commit_names_its_start_or_says_why_not(catalog):
    """``dc.tag`` on a branch with no transactions of its own says so (not that the catalog has
    none)."""
    dc.write(frame(range(2), "e"), "events")
    dc.create_branch("exp")
    with dc.branch("exp"):
        try:
            dc.tag("start")
        except dc.WorkbenchError as e:
            assert "branch" in str(e), e
        else:
            assert ids("events", as_of="start") == [0, 1]


# ==================================================================== guards (behaviour works)
MODES = ["add", "append", "chrono", "replace", "merge", "delete", "auto"]


def test_every_write_mode_and_schema_evolution_publish_what_plain_readers_then_see(catalog):
    for mode in MODES:
        properties = VECTORS if mode == "delete" else {}
        arguments = keyed(**properties) if mode in ("merge", "delete", "auto") else {}
        dc.write(frame(range(4), "m"), f"t_{mode}", **arguments)
    dc.create_branch("exp")
    before = {mode: rows(f"t_{mode}") for mode in MODES}
    with dc.branch("exp"):
        for mode in MODES:
            data = frame([2, 9], "b")
            if mode in ("append", "merge"):
                data = data.assign(extra=[1.5, 2.5])  # a new column: schema evolution
            dc.write(data, f"t_{mode}", mode=mode)
        dc.write(frame([1], "c"), "created", mode="create", table_properties=VECTORS)
        dc.write(frame([2], "c"), "created", mode="append")
        on_branch = {mode: rows(f"t_{mode}") for mode in MODES}
    assert {mode: rows(f"t_{mode}") for mode in MODES} == before
    assert_folders_show_main(catalog, *[f"t_{mode}" for mode in MODES])
    dc.merge_branch("exp")
    assert {mode: rows(f"t_{mode}") for mode in MODES} == on_branch
    assert {"id": 9, "v": "b9", "extra": 2.5} in on_branch["merge"]
    assert_folders_show_main(catalog, *[f"t_{mode}" for mode in MODES], "created")
    dc.vacuum(retain=0)
    assert_folders_show_main(catalog, *[f"t_{mode}" for mode in MODES], "created")


def test_merge_on_read_on_both_sides_publishes_apart_and_conflicts_together(catalog):
    dc.write(frame(range(300), "m"), "k1", **keyed(**VECTORS))
    dc.write(frame(range(300), "m"), "k2", **keyed(**VECTORS))
    dc.write(frame(range(10), "m"), "log", table_properties=VECTORS)  # no merge keys
    dc.create_branch("exp")
    with dc.branch("exp"):
        dc.write(frame(range(0, 300, 2), "b"), "k1", mode="merge")
        dc.write(frame(range(1, 300, 3), "x"), "k1", mode="delete")
    dc.write(frame(range(0, 300, 5), "x"), "k2", mode="delete")
    dc.write(frame(range(0, 300, 7), "M"), "k2", mode="merge")
    on_branch, on_main = rows("k1", branch="exp"), rows("k2")
    dc.merge_branch("exp")
    assert rows("k1") == on_branch and rows("k2") == on_main
    assert_folders_show_main(catalog, "k1", "k2")

    dc.create_branch("both")
    dc.write(frame(range(0, 300, 4), "B"), "k2", mode="delete", branch="both")
    dc.write(frame(range(0, 300, 6), "Q"), "k2", mode="merge")
    before = tree_digest(catalog.root)
    for rebase in (False, True):  # keyed: never rebased
        with pytest.raises(dc.BranchConflictError) as caught:
            dc.merge_branch("both", rebase=rebase)
        assert caught.value.tables == ["default.k2"]
    assert tree_digest(catalog.root) == before
    dc.write(frame([99], "b"), "log", mode="append", branch="both")
    dc.write(frame([98], "m"), "log", mode="append")
    dc.drop_branch("both")
    assert_folders_show_main(catalog, "k1", "k2", "log")


def test_publish_twice_and_work_on_a_created_table_with_vacuum_at_every_stage(catalog):
    def vacuumed() -> None:
        dc.vacuum(retain=0)

    dc.write(frame(range(3), "e"), "events")
    dc.tag("t0")
    dc.create_branch("exp")
    vacuumed()
    dc.write(frame([5], "n"), "fresh", branch="exp")
    vacuumed()
    with dc.branch("exp"):
        first_on_branch = dc.tag("b1")
    moment = datetime.now()
    dc.write(frame([6], "n"), "fresh", mode="append", branch="exp")
    vacuumed()
    first = dc.merge_branch("exp")
    vacuumed()
    assert ids("fresh") == ids("fresh", branch="exp") == [5, 6]
    dc.write(frame([7], "n"), "fresh", mode="append", branch="exp")
    vacuumed()
    assert ids("fresh") == [5, 6] and ids("fresh", branch="exp") == [5, 6, 7]
    assert folder_rows(catalog, "fresh") == rows("fresh")
    dc.write(frame([8], "m"), "events", mode="append")  # main moves on elsewhere
    second = dc.merge_branch("exp")
    vacuumed()
    assert second.tables == ["default.fresh"]
    assert ids("fresh") == [5, 6, 7] and ids("events") == [0, 1, 2, 8]
    assert_folders_show_main(catalog, "fresh", "events")
    # time travel on the branch across the publishes, and on main
    assert ids("fresh", branch="exp", as_of="b1") == [5]
    assert ids("fresh", branch="exp", as_of=first_on_branch) == [5]
    assert ids("fresh", branch="exp", as_of=moment) == [5]
    assert ids("events", branch="exp", as_of="t0") == [0, 1, 2]
    assert ids("fresh", as_of=first.transaction_id) == [5, 6]
    with pytest.raises(dc.TimeTravelError, match="not in the branch's history"):
        dc.read("fresh", branch="exp", as_of=second.transaction_id)
    with pytest.raises(dc.TimeTravelError):
        dc.read("fresh", as_of="b1")  # the branch's tag is not main's
    assert dc.merge_branch("exp").tables == []
    dc.drop_branch("exp")
    vacuumed()
    assert ids("fresh") == [5, 6, 7]
    assert_folders_show_main(catalog, "fresh", "events")


def test_drop_and_recreate_on_main_and_on_the_branch(catalog):
    dc.write(frame(range(3), "a"), "alpha")
    dc.write(frame(range(3), "b"), "beta")
    dc.create_branch("exp")
    with dc.branch("exp"):
        dc.write(frame([7], "x"), "alpha", mode="append")
        dc.drop_table("beta")
        dc.write(pd.DataFrame({"k": ["new"]}), "beta")
    dc.drop_table("alpha")  # main: the branch's base incarnation goes to the dropped folder
    dc.write(frame([100], "A"), "alpha")
    dc.vacuum(retain=0)
    assert ids("alpha", branch="exp") == [0, 1, 2, 7] and ids("alpha") == [100]
    before = tree_digest(catalog.root)
    with pytest.raises(dc.BranchConflictError) as caught:
        dc.merge_branch("exp", rebase=True)
    assert caught.value.tables == ["default.alpha"]
    assert tree_digest(catalog.root) == before
    with dc.branch("exp"):
        dc.drop_table("alpha")  # give up the branch's alpha: then only beta is published
        dc.write(frame([1], "y"), "alpha")
        dc.drop_table("alpha")
    with pytest.raises(dc.BranchConflictError):  # publishing the drop would drop main's alpha
        dc.merge_branch("exp")


def test_two_branches_publishing_the_same_tables(catalog):
    dc.write(frame(range(3), "e"), "events")
    dc.write(frame(range(3), "u"), "users", **keyed())
    dc.create_branch("a")
    dc.create_branch("b")
    for name in ("a", "b"):
        with dc.branch(name):
            dc.write(frame([ord(name)], name), "events", mode="append")
            dc.write(frame([1], name), "users", mode="merge")
            dc.write(frame([5], name), "fresh")
    dc.merge_branch("a")
    with pytest.raises(dc.BranchConflictError) as caught:
        dc.merge_branch("b", rebase=True)
    assert caught.value.tables == ["default.fresh", "default.users"]
    with dc.branch("b"):
        dc.drop_table("fresh")
        dc.drop_table("users")
        dc.write(frame([9], "b"), "users", **keyed())  # a new incarnation on the branch
        dc.drop_table("users")
    with pytest.raises(dc.BranchConflictError):
        dc.merge_branch("b", rebase=True)  # the branch dropped tables main changed since
    assert ids("events") == [0, 1, 2, ord("a")]
    assert_folders_show_main(catalog, "events", "users", "fresh")


def test_a_branch_from_an_old_tag_reads_that_state_through_vacuum(catalog):
    dc.write(frame(range(3), "e"), "events")
    dc.tag("v1")
    dc.write(frame([3], "e"), "events", mode="append")
    dc.write(frame([4], "e"), "events", mode="replace")
    dc.create_branch("old", from_="v1")
    dc.vacuum(retain=0)
    assert ids("events", branch="old") == [0, 1, 2]
    dc.write(frame([9], "b"), "events", mode="append", branch="old")
    dc.vacuum(retain=0)
    assert ids("events", branch="old") == [0, 1, 2, 9] and ids("events") == [4]
    assert dc.branches()[1].source == "main as of v1"
    dc.drop_branch("old")
    dc.vacuum(retain=0)
    assert ids("events") == [4] and folder_rows(catalog, "events") == rows("events")


def test_dropping_one_branch_then_vacuum_leaves_main_and_the_others_readable(catalog):
    dc.write(frame(range(3), "e"), "events", **keyed(**VECTORS))
    dc.create_branch("a")
    dc.create_branch("b")
    with dc.branch("a"):
        dc.write(frame([1, 7], "a"), "events", mode="merge")
        dc.write(frame([5], "a"), "fresh")
    with dc.branch("b"):
        dc.write(frame([2, 8], "b"), "events", mode="merge")
    on_b = rows("events", branch="b")
    dc.drop_branch("a")
    dc.vacuum(retain=0)
    assert rows("events", branch="b") == on_b
    with pytest.raises(dc.BranchNotFoundError):
        dc.read("fresh", branch="a")
    dc.merge_branch("b")
    dc.drop_branch("b")
    dc.vacuum(retain=0)
    assert rows("events") == on_b and folder_rows(catalog, "events") == on_b
    assert os.listdir(f"{catalog.root}/_workbench/branches") == []


def test_names_at_their_limits(catalog):
    dc.write(frame(range(2), "e"), "events")
    longest = "b" * 255
    dc.create_branch(longest)
    dc.write(frame([5], "x"), "events", mode="append", branch=longest)
    dc.write(frame([1], "x"), "t" * 255, branch=longest)
    with dc.branch(longest):
        dc.tag("g" * 200)
        assert ids("events", as_of="g" * 200) == [0, 1, 5]
    assert dc.merge_branch(longest).tables == ["default.events", "default." + "t" * 255]
    assert ids("t" * 255) == [1]
    dc.drop_branch(longest)
    before = tree_digest(catalog.root)
    for bad in ["b" * 256, "é", "exp\n", "a b", "-x", "_x", ".x", "x/y", "..", ""]:
        with pytest.raises(dc.InvalidNameError):
            dc.create_branch(bad)
    assert tree_digest(catalog.root) == before


def test_wrong_argument_types_are_typed_errors_and_change_nothing(catalog):
    dc.write(frame(range(2), "e"), "events")
    dc.create_branch("exp")
    before = tree_digest(catalog.root)
    names_only = (dc.create_branch, dc.drop_branch, dc.merge_branch, dc.use_branch)
    with_none_meaning_current = (
        lambda b: dc.branch(b).__enter__(),
        lambda b: dc.read("events", branch=b),
        lambda b: dc.write(frame([1], "x"), "events", mode="append", branch=b),
        lambda b: dc.transaction(branch=b).__enter__(),
    )
    for bad in [None, 3, 3.5, b"exp", True, "", " exp", object()]:
        calls = names_only + (with_none_meaning_current if bad is not None else ())
        for call in calls:
            with pytest.raises(dc.WorkbenchError) as caught:
                call(bad)
            assert len(str(caught.value)) > 30, caught.value
    for call in (
        lambda: dc.create_branch("x", from_=object()),
        lambda: dc.create_branch("x", from_=""),
        lambda: dc.create_branch("x", from_=datetime(2999, 1, 1)),
        lambda: dc.create_branch("x", catalog=3),
        lambda: dc.branches(3),
        lambda: dc.branches("nope"),
        lambda: dc.current_branch(3),
        lambda: dc.drop_branch("exp", catalog=""),
        lambda: dc.merge_branch("exp", into=None),
        lambda: dc.merge_branch("exp", into="Main"),
        lambda: dc.merge_branch("exp", rebase=1),
        lambda: dc.merge_branch("exp", commit_message=3),
        lambda: dc.merge_branch("exp", catalog=[]),
        lambda: dc.use_branch("exp", catalog=3),
        lambda: dc.branch("exp", catalog=3).__enter__(),
    ):
        with pytest.raises(dc.WorkbenchError):
            call()
    assert tree_digest(catalog.root) == before


def test_nested_branch_blocks_and_transactions(catalog):
    dc.write(frame(range(2), "e"), "events")
    dc.create_branch("a")
    dc.create_branch("b")
    seen = []
    with dc.branch("a"):
        seen.append(dc.current_branch())
        with dc.branch("b"):
            seen.append(dc.current_branch())
            dc.write(frame([10], "b"), "events", mode="append")
        with dc.transaction():
            dc.write(frame([11], "a"), "events", mode="append")
            with dc.transaction(branch="b"):  # independent, on another branch
                dc.write(frame([12], "b"), "events", mode="append")
            with pytest.raises(dc.TransactionCatalogError), dc.branch("b"):
                dc.read("events")
            with pytest.raises(dc.TransactionError):
                dc.merge_branch("b")
        seen.append(dc.current_branch())
    seen.append(dc.current_branch())
    assert seen == ["a", "b", "a", "main"]
    assert ids("events", branch="a") == [0, 1, 11]
    assert ids("events", branch="b") == [0, 1, 10, 12]
    assert ids("events") == [0, 1]
    with pytest.raises(RuntimeError), dc.branch("a"), dc.transaction():
        dc.write(frame([13], "a"), "events", mode="append")
        raise RuntimeError("abort")
    assert ids("events", branch="a") == [0, 1, 11]
    assert dc.current_branch() == "main"


def test_run_transaction_on_a_branch_retries_a_conflict(catalog):
    dc.write(frame(range(3), "e"), "events")
    dc.create_branch("exp")
    attempts = []

    def count_then_append() -> None:
        seen = len(dc.read("events", read_as="pyarrow"))
        if not attempts:  # another user commits to the branch meanwhile
            in_process(
                catalog.root,
                "dc.write(pd.DataFrame({'id': [50], 'v': ['o']}), 'events', mode='append', "
                "branch='exp')",
            )
        attempts.append(seen)
        dc.write(frame([100 + seen], "r"), "events", mode="append")

    with dc.branch("exp"):
        dc.run_transaction(count_then_append, retries=3)
    assert attempts == [3, 4]
    assert ids("events", branch="exp") == [0, 1, 2, 50, 104] and ids("events") == [0, 1, 2]


def test_magic_branch_odd_inputs_are_short_errors_that_change_nothing(shell):
    magic(shell, "branch create exp")
    root = dc.get_catalog().root
    before = tree_digest(root)
    for line, expected in [
        ("branch create z --from 2999-01-01", "TimeTravelError"),
        ("branch create z --from ''", "TimeTravelError"),
        ("branch create é", "InvalidNameError"),
        ("branch create " + "x" * 256, "InvalidNameError"),
        ("branch create a b", "unrecognized arguments"),
        ("branch use Main", "BranchNotFoundError"),
        ("branch drop ''", "InvalidNameError"),
        ("branch merge", "required: name"),
        ("branch merge exp --rebase -m", "expected one argument"),
    ]:
        result, shown = magic(shell, line)
        assert result is None and len(shown) == 1 and expected in shown[0], (line, shown)
        assert "Traceback" not in shown[0]
    assert tree_digest(root) == before
    result, _ = magic(shell, "branch merge exp -m ''")
    assert str(result) == "Branch 'exp' has nothing to publish."
    magic(shell, "branch use exp")
    result, _ = magic(shell, "branch drop exp")
    assert "back on main" in str(result) and dc.current_branch() == "main"


# ======================================================================== kill -9 (slow)
KILLABLE = r"""
import sys, time
import workbench as dc
root, point, flag = sys.argv[1:4]
dc.init_local(root)

def stall():
    with open(flag, "w") as out:
        out.write(point)
    time.sleep(120)

if point == "merge_mid_move":  # the publish committed; its folder moves half done
    from workbench.core.transactions import rollforward
    real_move = rollforward.move_folder
    def move(catalog, source, target):
        real_move(catalog, source, target)
        stall()
    rollforward.move_folder = move
    dc.merge_branch("exp")
elif point == "create_before_record":  # the base state saved, the record not yet
    from workbench.core.storage.store import Storage
    real_put = Storage.put_if_absent
    def put(self, key, data):
        if key.endswith("branch.json"):
            stall()
        return real_put(self, key, data)
    Storage.put_if_absent = put
    dc.create_branch("late")
elif point == "drop_after_record":  # the record deleted, nothing freed yet
    from workbench.core.ops import branches
    branches.free_branch_files = lambda *args: stall()
    dc.drop_branch("exp")
"""


def kill_at(root: str, point: str, tmp_path: Path) -> None:
    """Run a branch operation in a process and kill -9 it at ``point``."""
    flag = tmp_path / f"{point}.flag"
    env = {**os.environ, "WORKBENCH_LEASE_SECONDS": "1"}  # its leases expire soon after
    proc = subprocess.Popen(
        [sys.executable, "-c", KILLABLE, root, point, str(flag)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 60
    while not flag.exists():
        assert proc.poll() is None, proc.stderr.read().decode()[-3000:]
        assert time.monotonic() < deadline, "the process did not reach the pause point"
        time.sleep(0.02)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    time.sleep(1.1)  # its leases expire


@pytest.mark.slow
def test_a_publish_killed_while_moving_a_table_in_is_finished_by_the_next_user(catalog, tmp_path):
    dc.write(frame(range(3), "e"), "events")
    dc.write(frame(range(3), "s"), "spare")
    dc.create_branch("exp")
    with dc.branch("exp"):
        dc.write(frame([7], "b"), "events", mode="append")
        dc.drop_table("spare")
        dc.write(pd.DataFrame({"k": ["new"]}), "spare")
        on_branch = rows("events"), rows("spare")
    before_publish = dc.transactions(read_as="pandas").iloc[0]["transaction_id"]
    kill_at(catalog.root, "merge_mid_move", tmp_path)
    assert (rows("events", branch="exp"), rows("spare", branch="exp")) == on_branch
    assert (rows("events"), rows("spare")) == on_branch  # the next user finishes the publish
    assert_folders_show_main(catalog, "events", "spare")
    assert ids("spare", as_of=before_publish) == [0, 1, 2]  # the old incarnation, dropped
    dc.vacuum(retain=0)
    dc.write(frame([8], "m"), "events", mode="append")  # the dead writer's leases are gone
    dc.drop_branch("exp")
    dc.vacuum(retain=0)
    assert rows("spare") == on_branch[1] and ids("events") == [0, 1, 2, 7, 8]
    assert_folders_show_main(catalog, "events", "spare")


@pytest.mark.slow
def test_a_create_killed_before_its_record_leaves_no_branch(catalog, tmp_path):
    dc.write(frame(range(3), "e"), "events")
    kill_at(catalog.root, "create_before_record", tmp_path)
    assert [b.name for b in dc.branches()] == ["main"]
    with pytest.raises(dc.BranchNotFoundError):
        dc.read("events", branch="late")
    dc.create_branch("late")
    dc.write(frame([9], "b"), "events", mode="append", branch="late")
    result = dc.vacuum(retain=0)
    assert len(result.dropped_branches) == 1 and result.dropped_branches[0].startswith("late/")
    assert ids("events", branch="late") == [0, 1, 2, 9]
    left = os.listdir(f"{catalog.root}/_workbench/branches/late")
    assert "branch.json" in left and len(left) == 2  # the record and the live branch's folder


@pytest.mark.slow
def test_a_drop_killed_after_its_record_is_cleaned_by_vacuum(catalog, tmp_path):
    dc.write(frame(range(3), "e"), "events")
    dc.create_branch("exp")
    with dc.branch("exp"):
        dc.write(frame([7], "b"), "events", mode="append")
        dc.write(frame([5], "n"), "fresh")
    files_before = set(os.listdir(f"{catalog.root}/default/events"))
    kill_at(catalog.root, "drop_after_record", tmp_path)
    assert [b.name for b in dc.branches()] == ["main"]
    in_process(
        catalog.root,
        "try:\n    dc.read('events', branch='exp')\n    raise SystemExit('read a dropped branch')\n"
        "except dc.BranchNotFoundError:\n    pass",
    )
    assert ids("events") == [0, 1, 2] and folder_rows(catalog, "events") == rows("events")
    result = dc.vacuum(retain=0)
    assert len(result.dropped_branches) == 1 and result.dropped_branches[0].startswith("exp/")
    leftover = Path(catalog.root, "_workbench", "branches", "exp")
    assert not leftover.exists() or not any(leftover.rglob("*"))  # at most an empty folder
    assert len(set(os.listdir(f"{catalog.root}/default/events"))) < len(files_before)
    dc.create_branch("exp")  # the name is free again, and the new branch starts clean
    assert dc.branches()[1].tables_changed == []
    dc.write(frame([9], "b"), "events", mode="append", branch="exp")
    assert dc.merge_branch("exp").tables == ["default.events"]
    assert ids("events") == [0, 1, 2, 9]


# ============================================================ names and where a branch starts
def test_branch_names_may_hold_single_dots_between_other_characters(catalog):
    dc.write(frame(range(3), "e"), "events")
    dc.create_branch("release-1.2")
    with dc.branch("release-1.2"):
        dc.write(frame([7], "r"), "events")
    assert ids("events", branch="release-1.2") == [0, 1, 2, 7]
    dc.merge_branch("release-1.2")
    assert ids("events") == [0, 1, 2, 7]
    before = tree_digest(catalog.root)
    for bad in ["release..2", ".hidden", "trailing.", "a/b", "_reserved"]:
        with pytest.raises(dc.InvalidNameError, match="single dots"):
            dc.create_branch(bad)
    assert tree_digest(catalog.root) == before


def test_a_branch_name_differing_from_another_only_in_case_is_refused(catalog):
    """'Exp' and 'exp' would be one folder on a case-insensitive disk."""
    dc.write(frame(range(2), "e"), "events")
    dc.create_branch("exp")
    before = tree_digest(catalog.root)
    with pytest.raises(dc.BranchAlreadyExistsError, match="only in case"):
        dc.create_branch("Exp")
    assert tree_digest(catalog.root) == before
    assert [b.name for b in dc.branches()] == ["main", "exp"]


def test_creating_a_branch_while_another_is_in_use_says_branches_start_from_main(catalog):
    """Inside a dc.branch block, create_branch used to start silently from main."""
    dc.write(frame(range(2), "e"), "events")
    dc.create_branch("a")
    before = tree_digest(catalog.root)
    with dc.branch("a"), pytest.raises(dc.InvalidArgumentError, match="start from a state of main"):
        dc.create_branch("b")
    dc.use_branch("a")
    with pytest.raises(dc.InvalidArgumentError, match=r"dc\.use_branch"):
        dc.create_branch("b")
    dc.use_branch("main")
    assert tree_digest(catalog.root) == before
    dc.create_branch("b")
    assert [b.name for b in dc.branches()] == ["main", "a", "b"]
