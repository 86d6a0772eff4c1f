"""Widgets operated from Python in a kernel: models update as a user's clicks would make them."""

from __future__ import annotations

import pandas as pd

import workbench as dc
from workbench.widgets import CatalogBrowser, HistoryBrowser, TimeTravel


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
    browser.set_filter("shop")
    assert list(browser.table_list.options) == ["shop.items"]
    browser.select("shop.items")
    html = browser.details_html
    assert "shop.items" in html and "first 3 of 3 rows" in html and "key" in html
    assert "WRITE_MERGE" in html, "recent history of the table"
    browser.filter_box.value = ""
    assert len(browser.table_list.options) == 2


def test_history_browser_pages_filters_and_details(catalog):
    for i in range(25):
        dc.write(pd.DataFrame({"id": [i]}), "log", mode="append" if i else "create")
    seed()
    history = HistoryBrowser(page_size=10)
    assert history.pages == 3 and "page 1 of 3" in history.page_label.value
    history.next_button.click()
    assert history.page == 1
    history.set_filter("shop.items")
    assert len(history.shown) == 2 and history.pages == 1
    history.select(history.picker.options[0][1])
    assert "shop.items" in history.detail.value
    assert len(history.timeline.data[0].x) == 28


def test_time_travel_slider_moves_preview_and_diff(catalog):
    seed()
    travel = TimeTravel("items", "shop")
    assert travel.slider.max == 1 and "as of point 2 of 2" in travel.then.value
    assert travel.diff.added == 0
    travel.slider.value = 0
    assert "as of point 1 of 2" in travel.then.value
    assert (travel.diff.added, travel.diff.changed) == (1, 1)
    assert list(travel.chart.data[0].y) == [2, 3]
