"""The catalog sidebar's content operated from Python: its tree, columns, picked table,
insert snippets and refresh after a commit (the browser test drives it in JupyterLab)."""

from __future__ import annotations

import time

import pandas as pd
import pyarrow as pa

import workbench as dc
from workbench.core.ops.names import forget_names
from workbench.widgets.sidebar import CatalogSidebar


def _seed() -> None:
    keyed = dc.Schema.of(
        [dc.Field.of(pa.field("id", pa.int64()), is_merge_key=True), pa.field("item", pa.string())]
    )
    dc.write(
        pd.DataFrame({"id": [1, 2], "item": ["tea", "jam"]}),
        "shop.orders",
        schema=keyed,
        auto_create_namespace=True,
    )


def test_tree_lists_catalogs_branches_namespaces_and_tables(catalog, new_catalog, tmp_path):
    forget_names()
    _seed()
    dc.create_branch("exp")
    with dc.branch("exp"):
        dc.write(pd.DataFrame({"x": [1]}), "default.scratch")
    dc.put_catalog("lake", new_catalog(tmp_path / "lake"))
    inserted: list[tuple[str, bool]] = []
    sidebar = CatalogSidebar(insert=lambda text, new_cell: inserted.append((text, new_cell)))
    default, lake = sidebar.tree
    assert (default["catalog"], lake["catalog"]) == ("default", "lake")
    main, exp = default["branches"]
    assert (main["branch"], main["current"], exp["branch"]) == ("main", True, "exp")
    assert main["namespaces"] == {"default": [], "shop": ["shop.orders"]}
    assert exp["namespaces"]["default"] == ["default.scratch"]

    sidebar.expand("default", "main", "shop.orders")
    assert sidebar.columns["default/main/shop.orders"] == [
        ["id", "int64", True],
        ["item", "string", False],
    ]
    sidebar._message(
        None,
        {"kind": "select", "catalog": "default", "branch": "main", "table": "shop.orders"},
        None,
    )
    assert "first 2 of 2 rows" in sidebar.detail and "jam" in sidebar.detail
    sidebar._message(None, {"kind": "insert", "what": "handle", "empty": False}, None)
    sidebar._message(None, {"kind": "insert", "what": "sql", "empty": False}, None)
    sidebar._message(None, {"kind": "insert", "what": "sql", "empty": True}, None)
    sql = "%%dc sql\nSELECT * FROM shop.orders LIMIT 10"  # no blank line after it
    assert inserted == [('dc.table("shop.orders")', False), (sql, True), (sql, False)]
    sidebar.select("default", "exp", "default.scratch")
    assert sidebar.snippet("handle") == "dc.table(\"default.scratch\", branch='exp')"
    dc.write(pd.DataFrame({"v": [1]}), "raw.events", catalog="lake", auto_create_namespace=True)
    sidebar.refresh()
    sidebar.select("lake", "main", "raw.events")
    assert sidebar.snippet("handle") == 'dc.table("dc://lake/raw/events")'
    assert sidebar.snippet("sql") == "%%dc sql\nSELECT * FROM lake.raw.events LIMIT 10"


def test_refresh_shows_a_commit_at_once_and_drops_a_dropped_pick(catalog):
    forget_names()
    _seed()
    sidebar = CatalogSidebar()
    sidebar.select("default", "main", "shop.orders")
    dc.write(pd.DataFrame({"sku": [1]}), "shop.stock")
    sidebar.refresh()  # what the hook after each cell does
    assert sidebar.tree[0]["branches"][0]["namespaces"]["shop"] == ["shop.orders", "shop.stock"]
    dc.drop_table("shop.orders")
    sidebar.refresh()
    assert sidebar.selected is None and "pick a table" in sidebar.detail
    sidebar.select("default", "main", "shop.gone")
    assert "TableNotFoundError" in sidebar.detail


def test_outline_gives_rows_sizes_and_matching_columns_and_history_lists_commits(catalog):
    forget_names()
    _seed()
    dc.write(pd.DataFrame({"sku": [1, 2, 3]}), "shop.stock")
    sidebar = CatalogSidebar()
    assert sidebar.tree[0]["default"] is True
    assert _outline(sidebar, "IT") == {"shop.orders": ["item"]}
    rows_and_bytes = sidebar.stats["default/main"]
    assert rows_and_bytes["shop.orders"][0] == 2 and rows_and_bytes["shop.stock"][0] == 3
    assert rows_and_bytes["shop.orders"][1] > 0  # the data file's bytes, from the Delta log
    assert _outline(sidebar) == {}
    dc.write(pd.DataFrame({"sku": [4]}), "shop.stock")
    _outline(sidebar)
    assert sidebar.stats["default/main"]["shop.stock"][0] == 4  # the commit shows
    dc.write(pd.DataFrame({"n": [1]}), "default.notes")
    _outline(sidebar, namespaces=["default"])  # an open namespace's tables only
    assert list(sidebar.stats["default/main"]) == ["default.notes"]
    target = {"catalog": "default", "branch": "main", "table": "shop.stock"}
    assert sidebar.snippet("handle", target) == 'dc.table("shop.stock")'  # no pick needed
    sidebar.history("default", "main", "shop.stock")
    assert "last 2 transactions" in sidebar.detail and sidebar.selected == target


def _outline(
    sidebar: CatalogSidebar,
    text: str = "",
    namespaces: list[str] | None = None,
    branch: str = "main",
) -> dict:
    """The sidebar's outline of a line of the default catalog, once its reading is done (on a
    busy machine it may take longer than the wait of one call)."""
    deadline = time.monotonic() + 30
    while (found := sidebar.outline("default", branch, text, namespaces)) is None:
        assert time.monotonic() < deadline, "the outlines were not read within 30 s"
        time.sleep(0.1)
    return found


def test_outline_counts_live_rows_of_a_table_with_deletion_vectors_on_each_branch(catalog):
    """A lived-in table: many small commits, deletes by key (deletion vectors), a branch."""
    forget_names()
    _seed()
    for i in range(3, 30):
        dc.write(pd.DataFrame({"id": [i], "item": [f"i{i}"]}), "shop.orders", mode="merge")
    dc.write(pd.DataFrame({"id": [1, 5, 7]}), "shop.orders", mode="delete")
    dc.create_branch("exp")
    with dc.branch("exp"):
        dc.write(pd.DataFrame({"id": [9]}), "shop.orders", mode="delete")
    sidebar = CatalogSidebar()
    _outline(sidebar)
    assert (
        sidebar.stats["default/main"]["shop.orders"][0]
        == 26
        == dc.read("shop.orders", read_as="pyarrow").num_rows
    )
    assert _outline(sidebar, branch="exp") == {}
    assert sidebar.stats["default/exp"]["shop.orders"][0] == 25
