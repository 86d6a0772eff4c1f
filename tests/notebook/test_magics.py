"""The %dc / %%dc magics in a real IPython shell: parsing, dispatch, errors, capture, completion."""

from __future__ import annotations

import pandas as pd
import pytest
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output

import workbench as dc
from tests.conftest import tree_digest
from workbench.magics.completion import completions
from workbench.magics.parser import help_text


@pytest.fixture
def shell(tmp_path):
    ip = InteractiveShell.instance()
    ip.run_line_magic("load_ext", "workbench")
    ip.run_line_magic("dc", f"init {tmp_path / 'catalog'}")
    ip.user_ns["orders"] = pd.DataFrame({"id": [1, 2], "item": ["tea", "jam"]})
    ip.run_line_magic("dc", "write shop.orders orders --merge-keys id")
    yield ip
    ip.user_ns.pop("orders", None)


def run(shell, line, cell=None):
    """Run a magic; return its result and the texts it displayed."""
    with capture_output() as captured:
        if cell is None:
            result = shell.run_line_magic("dc", line)
        else:
            result = shell.run_cell_magic("dc", line, cell)
    shown = [o.data.get("text/plain", "") for o in captured.outputs]
    return result, shown


def test_write_show_describe_and_capture(shell):
    result, _ = run(
        shell,
        "write shop.orders",
        "import pandas as pd\npd.DataFrame({'id': [2, 3], 'item': ['honey', 'bread']})",
    )
    assert (result.mode, result.rows_added, result.rows_updated) == ("merge", 1, 1)
    shown, _ = run(shell, "show shop.orders --limit 2 --columns item -o first_two")
    assert list(shown.columns) == ["item"] and len(shown) == 2
    assert shell.user_ns["first_two"] is shown
    info, _ = run(shell, "describe shop.orders")
    assert info.merge_keys == ["id"] and info.row_count == 3


def test_write_without_merge_keys_makes_a_table_of_the_data(shell):
    shell.user_ns["stock"] = pd.DataFrame({"sku": [5, 6]})
    run(shell, "write shop.stock stock")
    info, _ = run(shell, "describe shop.stock")
    assert not info.schemaless and info.merge_keys == []
    assert dc.read("stock", "shop", read_as="pandas")["sku"].tolist() == [5, 6]


def test_sql_history_diff_tag_and_time_travel(shell):
    frame, _ = run(shell, "sql -o totals", "SELECT count(*) AS n FROM shop.orders")
    assert frame["n"].tolist() == [2] and shell.user_ns["totals"] is frame
    run(shell, "tag before")
    shell.user_ns["more"] = pd.DataFrame({"id": [9], "item": ["figs"]})
    run(shell, "merge shop.orders more")
    history, _ = run(shell, "history shop.orders --limit 5")
    assert history["operations"].iloc[0] == ["WRITE_MERGE"]
    change, _ = run(shell, "diff shop.orders before")
    assert (change.added, change.removed, change.changed) == (1, 0, 0)
    feed, _ = run(shell, "changes shop.orders before")
    assert feed[["id", "_change_type"]].values.tolist() == [[9, "insert"]]
    whole, _ = run(shell, "changes shop.orders --net")
    assert sorted(whole["id"]) == [1, 2, 9] and set(whole["_change_type"]) == {"insert"}
    old, _ = run(shell, "show shop.orders --as-of before")
    assert sorted(old["id"]) == [1, 2]
    frame, _ = run(shell, "sql --as-of before", "SELECT max(id) AS top FROM shop.orders")
    assert frame["top"].tolist() == [2]
    frame, _ = run(shell, "sql --engine daft", "SELECT count(*) AS n FROM shop.orders")
    assert frame["n"].tolist() == [3]  # dc.sql's engines: Daft too
    plan, _ = run(shell, "sql --explain", "SELECT item FROM shop.orders WHERE id = 9")
    assert plan.files >= 1 and plan.scans[0].table == "shop.orders"
    assert "id" in plan.scans[0].condition and "READ_PARQUET" in plan.engine_plan


def test_transaction_cell_is_atomic(shell):
    record, _ = run(
        shell,
        "transaction -m restock",
        "import pandas as pd\n"
        "dc_rows = pd.DataFrame({'id': [5], 'item': ['salt']})\n"
        "import workbench\n"
        "workbench.write(dc_rows, 'orders', namespace='shop')\n"
        "workbench.write(pd.DataFrame({'sku': [5]}), 'stock', namespace='shop')",
    )
    assert record.commit_message == "restock" and len(record.changes) == 2
    with pytest.raises(ValueError, match="stop"):  # the user's own error, after the rollback
        run(
            shell,
            "transaction",
            "import workbench, pandas as pd\n"
            "workbench.write(pd.DataFrame({'sku': [6]}), 'stock', namespace='shop')\n"
            "raise ValueError('stop')",
        )
    assert dc.read("stock", "shop", read_as="pandas")["sku"].tolist() == [5]


def test_use_ls_catalogs_drop_optimize_vacuum(shell):
    listing, _ = run(shell, "catalogs")
    assert listing.rows[0][0] == "default"
    run(shell, "use default/shop")
    tables, _ = run(shell, "ls")
    assert [r[0] for r in tables.rows] == ["orders"]
    table, _ = run(shell, "ls shop.orders")  # ns.t as the other commands take it
    assert table.title.startswith("dc://default/shop/orders") and table.rows[0][1] == 2
    info, _ = run(shell, "describe orders")
    assert info.namespace == "shop", "short names use the current namespace"
    message, _ = run(shell, "optimize orders")
    assert "optimized" in str(message)
    message, _ = run(shell, "optimize orders --cluster-by item")
    assert "clustered by item" in str(message)
    message, _ = run(shell, "drop orders")
    assert "dropped" in str(message) and not dc.table_exists("orders", "shop")
    result, _ = run(shell, "vacuum --retain 0 --dry-run")
    assert isinstance(result, dc.VacuumResult)


BAD_LINES = [
    ("bogus", "Unknown command"),
    ("show", "the following arguments are required: table"),
    ("show shop.orders --limit many", "invalid int value"),
    ("show shop.nope", "TableNotFoundError"),
    ("ls shop.nope", "TableNotFoundError"),
    ("use nowhere", "CatalogNotFoundError"),
    ("write shop.orders missing_variable", "No variable 'missing_variable'"),
    ("history --since no-such-tag", "TimeTravelError"),
    ("vacuum --retain soon", "Cannot read duration"),
    ("ls dc://", "InvalidUrlError"),
    ("show 'unterminated", "Cannot split"),
    ("show shop.orders --version 99", "TableVersionNotFoundError"),
    ("show shop.orders --limit -1", "InvalidArgumentError"),
    ("vacuum shop.orders", "See %dc vacuum --help"),
    ("optimize shop.nope", "TableNotFoundError"),
    ("optimize shop.orders --cluster-by nope", "ClusteringError"),
    ("branch bogus", "invalid choice: 'bogus'"),
    ("branch create", "See %dc branch create --help"),
    ("branch create 'bad name'", "InvalidNameError"),
    ("branch create main", "BranchAlreadyExistsError"),
    ("branch create exp --from no-such-tag", "TimeTravelError"),
    ("branch use nope", "BranchNotFoundError: Branch 'nope' does not exist"),
    ("branch drop nope", "BranchNotFoundError"),
    ("branch drop main", "cannot be dropped"),
    ("branch merge nope", "BranchNotFoundError"),
    ("branch merge main", "InvalidArgumentError"),
]


@pytest.mark.parametrize(("line", "expected"), BAD_LINES)
def test_bad_lines_show_a_short_error_and_change_nothing(shell, line, expected):
    root = dc.get_catalog().root
    before = tree_digest(root)
    result, shown = run(shell, line)
    assert result is None and len(shown) == 1 and expected in shown[0]
    assert "Traceback" not in shown[0]
    assert tree_digest(root) == before


def test_debug_flag_raises_the_real_error(shell):
    with pytest.raises(dc.TableNotFoundError):
        shell.run_line_magic("dc", "show shop.nope --debug")


def test_help_and_command_help_list_the_language(shell):
    result, _ = run(shell, "help")
    assert str(result) == help_text() and "timetravel" in str(result)
    result, _ = run(shell, "diff --help")
    assert "usage: %dc diff" in str(result) and "a branch name" in str(result)
    result, _ = run(shell, "branch --help")
    assert "%dc diff TABLE main NAME" in str(result) and "merge" in str(result)
    result, _ = run(shell, "branch merge --help")
    assert "usage: %dc branch merge" in str(result) and "--rebase" in str(result)


def test_completion_offers_commands_catalogs_and_tables(shell):
    assert completions("hi") == ["history"]
    assert completions("show sh") == ["shop.orders"]
    assert "default/shop" in completions("use ")
    assert "dc://default/shop" in completions("ls dc")
    assert completions("show 'oops") == []


def test_completion_offers_branch_actions_names_and_points(shell):
    run(shell, "tag start")
    run(shell, "branch create exp")
    assert completions("branch c") == ["create"]
    assert completions("branch ") == ["create", "diff", "drop", "list", "merge", "use"]
    assert completions("branch use ") == ["exp", "main"]
    assert completions("branch merge ") == ["exp"], "main is not published into itself"
    assert completions("branch create new --from s") == ["start"]
    assert completions("diff shop.orders main ") == ["main", "exp", "start"]
    assert completions("diff shop.orders e") == ["exp"]


def test_branch_create_use_diff_and_merge(shell):
    created, _ = run(shell, "branch create exp -o exp_branch")
    assert isinstance(created, dc.Branch) and shell.user_ns["exp_branch"] is created
    assert (created.name, created.source, created.tables_changed) == ("exp", "main", [])
    message, _ = run(shell, "branch use exp")
    assert "on branch exp" in str(message) and dc.current_branch() == "exp"
    shell.user_ns["more"] = pd.DataFrame({"id": [3], "item": ["figs"]})
    run(shell, "merge shop.orders more")
    rows, _ = run(shell, "show shop.orders")
    assert sorted(rows["id"]) == [1, 2, 3], "commands read the branch in use"
    listing, _ = run(shell, "branch")
    assert listing.title == "branches of catalog default"
    assert listing.rows == [["main", "", "-", 0, "-"], ["exp", "current", "main", 1, "shop.orders"]]
    tables, _ = run(shell, "ls shop")
    assert tables.title == "dc://default/shop on branch exp" and tables.rows[0][0] == "orders"
    change, _ = run(shell, "diff shop.orders main")
    assert (change.before, change.added) == ("branch main (version 0)", 1), "main vs now, on exp"
    browser, _ = run(shell, "browse")
    assert browser.branch == "exp" and browser.table_list.options == ("shop.orders",)

    message, _ = run(shell, "branch use main")
    assert str(message) == "on main" and dc.current_branch() == "main"
    rows, _ = run(shell, "show shop.orders")
    assert sorted(rows["id"]) == [1, 2], "main is untouched"
    change, _ = run(shell, "diff shop.orders main exp")
    assert (change.after, change.added, change.changed) == ("branch exp (version 1)", 1, 0)
    whole, _ = run(shell, "branch diff exp")
    assert isinstance(whole, dc.BranchDiff) and [d.added for d in whole.tables] == [1]
    result, _ = run(shell, "branch merge exp -m 'add figs'")
    assert isinstance(result, dc.MergeResult) and result.tables == ["shop.orders"]
    assert sorted(dc.read("orders", "shop", read_as="pandas")["id"]) == [1, 2, 3]
    history, _ = run(shell, "history --limit 1")
    assert history["commit_message"].tolist() == ["add figs"]
    assert history["operations"].iloc[0].tolist() == ["MERGE_BRANCH"]


def test_branch_merge_conflict_then_rebase(shell):
    dc.write(pd.DataFrame({"line": ["opened"]}), "log", "shop")  # no merge keys: appends rebase
    run(shell, "branch create exp")
    with dc.branch("exp"):
        dc.write(pd.DataFrame({"line": ["on exp"]}), "log", "shop", mode="append")
    dc.write(pd.DataFrame({"line": ["on main"]}), "log", "shop", mode="append")
    result, shown = run(shell, "branch merge exp")
    assert result is None and "BranchConflictError" in shown[0]
    assert "main changed ['shop.log']" in shown[0] and "Nothing was published" in shown[0]
    result, _ = run(shell, "branch merge exp --rebase")
    assert (result.tables, result.rebased) == (["shop.log"], ["shop.log"])
    lines = dc.read("log", "shop", read_as="pandas")["line"].tolist()
    assert sorted(lines) == ["on exp", "on main", "opened"]


def test_branch_from_a_tag_and_drop_the_branch_in_use(shell):
    run(shell, "tag start")
    shell.user_ns["more"] = pd.DataFrame({"id": [3], "item": ["figs"]})
    run(shell, "merge shop.orders more")
    created, _ = run(shell, "branch create old --from start")
    assert created.source == "main as of start"
    run(shell, "branch use old")
    rows, _ = run(shell, "show shop.orders")
    assert sorted(rows["id"]) == [1, 2], "the branch starts from the tagged state"
    run(shell, "merge shop.orders more")  # the branch writes a file of its own
    message, _ = run(shell, "branch drop old")
    assert str(message) == "dropped branch old, the one in use; back on main"
    assert dc.current_branch() == "main"
    listing, _ = run(shell, "branch list")
    assert [row[0] for row in listing.rows] == ["main"]
    assert sorted(dc.read("orders", "shop", read_as="pandas")["id"]) == [1, 2, 3]
    catalogs, _ = run(shell, "catalogs")
    assert catalogs.title == "catalogs (branch main)"


def test_runs_lists_recorded_runs(shell):
    with dc.run("nightly"):
        pass
    with pytest.raises(ValueError), dc.run("nightly"):
        raise ValueError("bad input")
    listed, _ = run(shell, "runs nightly --status failed")
    assert listed["status"].tolist() == ["failed"]
    assert listed["error_type"].tolist() == ["ValueError"]
    everything, _ = run(shell, "runs --limit 5")
    assert everything["name"].tolist() == ["nightly", "nightly"]


def test_runsview_opens_the_runs_browser_filtered(shell):
    for name in ("nightly", "hourly"):
        with dc.run(name):
            pass
    browser, _ = run(shell, "runsview night --status succeeded")
    assert browser.shown["name"].tolist() == ["nightly"]
    assert (browser.filter_box.value, browser.status_picker.value) == ("night", "succeeded")


def test_infer_with_a_model_variable(shell):
    import pyarrow as pa

    shell.user_ns["sizes"] = dc.model(
        lambda batch: {"size": [len(t) for t in batch["item"]]},
        inputs=["item"],
        outputs={"size": pa.int64()},
        name="sizes",
    )
    result, _ = run(shell, "infer shop.orders --model sizes --engine local --into sizes")
    assert (result.rows_predicted, result.engine) == (2, "local")
    assert sorted(dc.read("sizes", "shop", read_as="pyarrow")["size"].to_pylist()) == [3, 3]
    again, _ = run(shell, "infer shop.orders --model sizes --engine local --into sizes --force")
    assert again.rows_predicted == 2
    missing, shown = run(shell, "infer shop.orders --model nope")
    assert "No built-in model is named 'nope'" in " ".join(shown) + str(missing)
