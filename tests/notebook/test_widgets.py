"""Widgets operated from Python in a kernel: models update as a user's clicks would make them."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import datetime, timedelta
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest

import workbench as dc
from workbench.widgets import CatalogBrowser, HistoryBrowser, RunsBrowser, TimeTravel
from workbench.widgets.grid import Grid
from workbench.widgets.render import STATUS_COLOURS, when


def seed() -> None:
    schema = dc.Schema.of(
        [
            dc.Field.of(
                __import__("pyarrow").field("id", __import__("pyarrow").int64()), is_merge_key=True
            )
        ]
    )
    dc.write(
        pd.DataFrame({"id": [1, 2], "v": ["a", "b"]}),
        "items",
        "shop",
        schema=schema,
        auto_create_namespace=True,
    )
    dc.write(pd.DataFrame({"id": [2, 3], "v": ["B", "c"]}), "items", "shop")
    dc.write(pd.DataFrame({"k": [1]}), "notes", "ops", auto_create_namespace=True)


def test_catalog_browser_lists_filters_and_previews(catalog):
    seed()
    browser = CatalogBrowser()
    assert list(browser.table_list.options) == ["ops.notes", "shop.items"]
    assert browser.preview.layout.display == "none", "no grid before a table is selected"
    browser.set_filter("shop")
    assert list(browser.table_list.options) == ["shop.items"]
    browser.select("shop.items")
    assert "shop.items" in browser.summary.value and "key" in browser.summary.value
    assert browser.preview.layout.display is None
    assert "first 3 of 3 rows" in browser.preview.title.value
    assert browser.preview.frame.to_dict("list") == {"id": [1, 2, 3], "v": ["a", "B", "c"]}
    recent = browser.recent.frame
    assert recent["operations"].tolist() == ["WRITE_MERGE", "CREATE_NAMESPACE, CREATE_TABLE"]
    assert recent["rows_added"].tolist() == [1, 2], "recent history of the table, newest first"
    browser.filter_box.value = ""
    assert len(browser.table_list.options) == 2
    with pytest.raises(dc.CatalogNotFoundError, match="'elsewhere' not found"):
        CatalogBrowser(catalog="elsewhere")


def test_catalog_browser_shows_the_tables_of_the_branch_picked(catalog):
    seed()
    dc.create_branch("exp")
    with dc.branch("exp"):
        dc.write(pd.DataFrame({"id": [4], "v": ["d"]}), "items", "shop")
        dc.write(pd.DataFrame({"k": [2]}), "drafts", "ops")
    browser = CatalogBrowser()
    assert browser.branch == "main" and list(browser.branch_picker.options) == ["main", "exp"]
    assert list(browser.table_list.options) == ["ops.notes", "shop.items"]
    browser.select("shop.items")
    assert "first 3 of 3 rows" in browser.preview.title.value
    browser.pick_branch("exp")
    assert list(browser.table_list.options) == ["ops.drafts", "ops.notes", "shop.items"]
    assert browser.table_list.value == "shop.items", "the selected table, as the branch has it"
    assert "first 4 of 4 rows" in browser.preview.title.value
    assert browser.recent.title.value == "<b>recent transactions on exp</b>"
    assert browser.recent.frame["operations"].tolist() == ["WRITE_MERGE"]

    with dc.branch("exp"):
        opened_on_exp = CatalogBrowser()
    assert opened_on_exp.branch == "exp"
    opened_on_exp.select("ops.drafts")  # after the block: still the branch it was opened on
    assert "first 1 of 1 rows" in opened_on_exp.preview.title.value
    dc.init(branch="exp")
    assert CatalogBrowser().branch == "exp", "the session's branch"
    dc.init(branch="main")

    dc.drop_branch("exp")
    opened_on_exp.select("ops.notes")
    assert "BranchNotFoundError" in opened_on_exp.summary.value
    assert opened_on_exp.preview.layout.display == "none"
    browser.reload()
    assert browser.branch == "main" and list(browser.branch_picker.options) == ["main"]
    assert list(browser.table_list.options) == ["ops.notes", "shop.items"]
    assert "first 3 of 3 rows" in browser.preview.title.value


def test_history_browser_hides_compaction_steps_until_asked(catalog):
    for i in range(8):  # the eighth small file brings a compaction step
        dc.write(pd.DataFrame({"id": [i]}), "log")
    history = HistoryBrowser()
    operations = history.table.frame["operations"].tolist()
    assert "AUTO_COMPACT" not in operations and len(operations) == 8  # the writes, newest first
    assert len(history.timeline.data[0].x) == 8
    history.steps_box.value = True
    shown = history.table.frame
    assert shown["operations"].iloc[0] == "AUTO_COMPACT"
    assert "compact default.log" in shown["commit_message"].iloc[0]
    assert len(history.shown) == 9 and len(history.timeline.data[0].x) == 9


def test_history_browser_pages_filters_and_shows_a_selected_rows_detail(catalog):
    for i in range(25):  # 27 transactions in all: no compaction between them
        dc.write(
            pd.DataFrame({"id": [i]}), "log", mode="append" if i else "create", auto_compact=False
        )
    seed()
    log = dc.transactions(read_as=dc.DatasetType.PANDAS)
    history = HistoryBrowser(page_size=10)
    assert history.pages == 3 and "page 1 of 3" in history.page_label.value
    grid = history.table.frame
    assert list(grid.columns) == [
        "time",
        "commit_message",
        "tables",
        "operations",
        "rows_added",
        "rows_removed",
    ]
    assert grid["time"].tolist() == [when(t) for t in log["end_time"][:10]], "newest first"
    assert grid["tables"].iloc[0] == "ops, ops.notes" and grid["rows_added"].iloc[0] == 1

    history.table.itable.selected_rows = [1]  # as a click on the page's second row does
    assert log["transaction_id"].iloc[1] in history.detail.value
    assert "shop.items" in history.detail.value and "WRITE_MERGE" in history.detail.value

    history.next_button.click()
    assert history.page == 1 and history.table.itable.selected_rows == []
    assert history.table.frame["time"].tolist() == [when(t) for t in log["end_time"][10:20]]
    history.table.itable.selected_rows = [0]
    assert log["transaction_id"].iloc[10] in history.detail.value

    history.set_filter("shop.items")
    assert len(history.shown) == 2 and history.pages == 1
    assert history.table.frame["tables"].tolist() == ["shop.items", "shop, shop.items"]
    assert len(history.timeline.data[0].x) == 28
    # the chart's time axis is dates (local wall-clock ms), as the grid's times are
    assert history.timeline.layout.xaxis.type == "date"
    newest = datetime.fromisoformat(when(log["end_time"].iloc[0])).replace(tzinfo=None)
    wall_ms = (newest - datetime(1970, 1, 1)) // timedelta(milliseconds=1)
    assert history.timeline.data[0].x[0] == wall_ms


def test_grid_sorts_a_text_column_by_a_hidden_one():
    grid = Grid("wb-test")
    assert grid.layout.display == "none", "hidden until it has rows"
    grid.show(
        pd.DataFrame({"step": ["a", "b"], "duration": ["2 s", "10 ms"], "ns": [2e9, 1e7]}),
        "steps",
        order_by={"duration": "ns"},
    )
    assert grid.layout.display is None and grid.title.value == "<b>steps</b>"
    definitions = grid.itable._dt_args["columnDefs"]
    assert {"targets": 1, "orderData": 2} in definitions
    assert {"targets": [2], "visible": False} in definitions
    grid.show(pd.DataFrame({"x": [1]}))
    assert grid.itable._dt_args["columnDefs"] == [], "a new frame drops the old sort columns"


def test_time_travel_slider_moves_preview_and_diff(catalog):
    seed()
    travel = TimeTravel("items", "shop")
    assert travel.slider.max == 1 and "as of point 2 of 2" in travel.then.title.value
    assert travel.then.frame["v"].tolist() == ["a", "B", "c"]
    assert travel.diff.added == 0
    travel.slider.value = 0
    assert "as of point 1 of 2" in travel.then.title.value
    assert travel.then.frame["v"].tolist() == ["a", "b"]
    assert (travel.diff.added, travel.diff.changed) == (1, 1)
    assert list(travel.chart.data[0].y) == [2, 3]


def test_time_travel_opens_on_a_table_dropped_made_again_and_vacuumed(catalog):
    dc.write(pd.DataFrame({"x": [1, 2]}), "t")
    dc.write(pd.DataFrame({"x": [3]}), "t")
    dc.drop_table("t")
    dc.write(pd.DataFrame({"x": [7, 8, 9]}), "t")
    dc.vacuum(retain=0)  # the first incarnation's files go
    travel = TimeTravel("t")
    assert list(travel.chart.data[0].y) == [2, 3, None, 3]  # a gap where it was dropped
    assert travel.then.frame["x"].tolist() == [7, 8, 9]
    for point in (2, 0):  # the drop, and a point vacuum removed: typed errors in the pane
        travel.slider.value = point
        assert "Error" in travel.changes.value and travel.then.layout.display == "none"


def _lost_run(root: Path) -> None:
    """Record a run whose process exits without ending it, as a killed kernel leaves one."""
    code = (
        "import os, sys, workbench as dc\n"
        "dc.init_local(sys.argv[1])\n"
        "dc.run('lost').__enter__()\n"
        "os._exit(0)\n"
    )
    subprocess.run([sys.executable, "-c", code, str(root)], check=True, timeout=120)


def test_runs_browser_colours_pages_filters_and_shows_a_selected_runs_detail(catalog, tmp_path):
    for i in range(12):
        with dc.run(f"tick-{i}", kind="job"):
            pass
    with dc.run("daily", {"day": "2026-11-21"}) as run:
        with run.step("load") as step:
            step.rows_in = 3
            dc.write(pa.table({"id": [1, 2, 3]}), "raw")
            step.rows_out = 3
        run.log_metric("loss", 0.25)
    with pytest.raises(ZeroDivisionError), dc.run("broken") as failing, failing.step("divide"):
        1 / 0  # noqa: B018
    _lost_run(tmp_path / "catalog")
    with dc.run("live"):
        runs = RunsBrowser(page_size=5)
    assert runs.pages == 4 and "page 1 of 4 (16 shown)" in runs.page_label.value
    grid = runs.table.frame
    assert list(grid.columns) == [
        "name",
        "kind",
        "status",
        "start",
        "duration",
        "transactions",
        "elapsed_ns",
    ]
    assert grid["name"].tolist() == ["live", "lost", "broken", "daily", "tick-11"]
    cells = json.loads(runs.table.itable._dt_args["data_json"])
    for status, colour in STATUS_COLOURS.items():
        label = f"wb-status-{status}' style='color:#fff;background:{colour}"
        assert any(label in row[2] for row in cells), "status labels reach the grid as HTML"
    assert [len(bar.y) for bar in runs.timeline.data] == [1, 13, 1, 1]  # running .. abandoned
    assert all(width > 0 for bar in runs.timeline.data for width in bar.x)
    runs.next_button.click()
    assert runs.page == 1 and runs.table.frame["name"].iloc[0] == "tick-10"

    runs.set_status("failed")
    assert runs.shown["name"].tolist() == ["broken"] and runs.pages == 1
    runs.table.itable.selected_rows = [0]  # as a click on the row does
    assert "ZeroDivisionError: division by zero" in runs.detail.header.value
    steps = runs.detail.steps.frame
    assert steps["name"].tolist() == ["divide"] and "wb-status-failed" in steps["status"].iloc[0]

    runs.set_status("")
    runs.filter_box.value = "DAILY"
    assert runs.shown["name"].tolist() == ["daily"]
    assert [len(bar.y) for bar in runs.timeline.data] == [0, 1, 0, 0]
    assert runs.table.frame["transactions"].tolist() == [1]
    runs.table.itable.selected_rows = [0]
    assert run.run_id in runs.detail.header.value
    steps = runs.detail.steps.frame
    assert steps[["name", "rows in", "rows out"]].values.tolist() == [["load", 3, 3]]
    assert runs.detail.metrics.frame.values.tolist() == [["loss", 0.25]]
    (txn,) = dc.runs(name="daily", read_as="pandas").iloc[0]["transactions"]
    commits = runs.detail.transactions.frame
    assert commits[["transaction_id", "tables"]].values.tolist() == [[txn, "default.raw"]]
