"""Completion from the catalog and the catalog sidebar in a real JupyterLab in headless
Chromium: Tab in a ``%%dc sql`` cell and in ``dc.read("``; the sidebar opens in the left area,
lists tables, follows a write made in a cell, and inserts a snippet into the active cell."""

from __future__ import annotations

import re
import time

import pytest

from tests.notebook.test_browser import _notebook_page

pytestmark = pytest.mark.browser
PANEL = '[id^="wb-catalog-sidebar-"]'  # the sidebar's panel (its id ends with one of its own)
SIDEBAR = f"{PANEL} .wb-sidebar"

SETUP_CELL = """\
import tempfile
import pandas as pd
import pyarrow as pa
import workbench as dc
%load_ext workbench

dc.init_local(tempfile.mkdtemp())
keyed = dc.Schema.of([dc.Field.of(pa.field("id", pa.int64()), is_merge_key=True),
                      pa.field("item", pa.string())])
dc.write(pd.DataFrame({"id": [1, 2], "item": ["tea", "jam"]}), "shop.orders", schema=keyed,
         auto_create_namespace=True)
dc.write(pd.DataFrame({"sku": [7], "count": [3]}), "shop.stock")
dc.write(pd.DataFrame({"note": ["hi"]}), "default.notes")
"""


def _new_cell(page, text: str) -> None:
    """Add a code cell at the end of the notebook and type ``text`` into it."""
    page.locator(".jp-Notebook .jp-Cell").last.click()
    page.keyboard.press("Escape")
    page.keyboard.press("b")  # command mode: a new cell below, then edit it
    page.keyboard.press("Enter")
    page.keyboard.insert_text(text)


def _completions(page) -> list[str]:
    """Press Tab and read the completer's items that came from the kernel, with their kind
    (JupyterLab's own context provider adds the words of the editor, without a kind)."""
    from playwright.sync_api import expect

    page.keyboard.press("Tab")
    items = page.locator(".jp-Completer .jp-Completer-item")
    expect(items.first).to_be_visible(timeout=20_000)
    found = page.locator(".jp-Completer .jp-Completer-item").evaluate_all(
        "items => items.filter(i => i.getAttribute('title')).map(i => i.getAttribute('data-value'))"
    )
    page.keyboard.press("Escape")
    return found


def _box(locator, within: float = 10.0) -> dict:
    """``locator``'s bounding box. The tree is drawn anew when sizes arrive, so an element found
    just before a redraw is measured detached (no box): it is found again and measured."""
    deadline = time.monotonic() + within
    while (box := locator.bounding_box()) is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert box is not None, f"{locator} has no box (hidden) for {within} s"
    return box


def _run_cell(page) -> None:
    page.keyboard.press("Shift+Enter")


def test_tab_completes_tables_and_columns(lab, tmp_path):
    from playwright.sync_api import expect

    with _notebook_page(lab, tmp_path, "completion", SETUP_CELL) as (page, aborted):
        expect(page.locator(".jp-Cell .jp-OutputArea-output").first).to_be_visible(timeout=120_000)
        page.wait_for_timeout(1000)
        _new_cell(page, "%%dc sql\nSELECT * FROM ")
        assert _completions(page) == ["default.notes", "shop.orders", "shop.stock"]
        _new_cell(page, "%%dc sql\nSELECT * FROM shop.orders WHERE orders.")
        assert _completions(page) == ["id", "item"]
        _new_cell(page, 'dc.read("')
        assert _completions(page) == ["default.notes", "shop.orders", "shop.stock"]
    assert aborted == [], "the page tried to load from outside 127.0.0.1"


def test_sidebar_lists_follows_writes_and_inserts(lab, tmp_path):
    from playwright.sync_api import expect

    cell = SETUP_CELL + "%dc sidebar\n"
    with _notebook_page(lab, tmp_path, "sidebar", cell) as (page, aborted):
        sidebar = page.locator(SIDEBAR)
        expect(sidebar).to_be_visible(timeout=120_000)
        namespaces = sidebar.locator(".wb-sb-namespace")
        expect(namespaces).to_have_count(2, timeout=30_000)
        expect(namespaces.first).to_contain_text("default (1)")  # collapsed, counted
        expect(sidebar.locator(".wb-sb-table")).to_have_count(0)
        for namespace in ("default", "shop"):
            sidebar.locator(f'[data-namespace="{namespace}"] > .wb-sb-head').click()
        expect(sidebar.locator(".wb-sb-table")).to_have_count(3, timeout=30_000)

        _new_cell(page, 'dc.write(pd.DataFrame({"x": [1]}), "shop.fresh")')
        _run_cell(page)
        idle = page.get_by_text("| Idle").first
        expect(idle).to_be_visible(timeout=60_000)
        finished = time.monotonic()
        expect(sidebar.locator('[data-table="shop.fresh"]')).to_be_visible(timeout=5_000)
        shown_after = time.monotonic() - finished
        assert shown_after < 1.0, f"the new table showed {shown_after:.2f} s after the cell"

        sidebar.locator('[data-table="shop.orders"] > .wb-sb-head').click()  # open: columns
        expect(sidebar.locator(".wb-sb-column")).to_have_count(2, timeout=30_000)
        expect(sidebar.locator(".wb-sb-key")).to_have_count(1)
        sidebar.locator('[data-table="shop.orders"] .wb-sb-label').first.click()  # pick
        detail = sidebar.locator(".wb-sb-detail")
        expect(detail).to_contain_text("first 2 of 2 rows", timeout=30_000)
        expect(detail).to_contain_text("jam")

        _new_cell(page, "")
        sidebar.locator(".wb-sb-insert-handle").click()
        active = page.locator(".jp-Notebook .jp-Cell.jp-mod-active .cm-content")
        expect(active).to_contain_text('dc.table("shop.orders")', timeout=30_000)
        notebook = page.locator(".jp-Notebook").first
        expect(notebook).to_have_class(re.compile("jp-mod-editMode"), timeout=10_000)
        _new_cell(page, "")
        sidebar.locator(".wb-sb-insert-sql").click()  # an empty cell: into it
        snippet = ["%%dc sql", "SELECT * FROM shop.orders LIMIT 10"]  # no blank line after it
        expect(active.locator(".cm-line")).to_have_text(snippet, timeout=30_000)
        cells = page.locator(".jp-Notebook .jp-Cell")
        count = cells.count()
        _new_cell(page, "x = 1")
        sidebar.locator(".wb-sb-insert-sql").click()  # a cell with code: a new cell below it
        expect(cells).to_have_count(count + 2, timeout=30_000)
        expect(active.locator(".cm-line")).to_have_text(snippet, timeout=30_000)
        expect(cells.nth(count).locator(".cm-content")).to_have_text("x = 1")
        expect(notebook).to_have_class(re.compile("jp-mod-editMode"), timeout=10_000)
        page.keyboard.type(" -- typed")  # the cursor is in the cell, after the snippet
        expect(active).to_contain_text("LIMIT 10 -- typed")
        _new_cell(page, "%%dc sql\nSELECT item FROM shop.orders o WHERE o.")
        page.keyboard.press("Tab")  # the screenshot shows the completer beside the sidebar
        expect(page.locator(".jp-Completer")).to_contain_text("item", timeout=20_000)
    assert aborted == [], "the page tried to load from outside 127.0.0.1"


BIG_CATALOG_CELL = """\
import tempfile
import pyarrow as pa
import workbench as dc
%load_ext workbench

dc.init_local(tempfile.mkdtemp())
schema = dc.Schema.of([pa.field("id", pa.int64()), pa.field("created", pa.timestamp("us", "UTC"))])
with dc.transaction(commit_message="a thousand tables"):
    for i in range(1000):
        dc.create_table(f"t{i:04d}", f"ns{i % 10}", schema=schema, auto_create_namespace=True)
    for i in range(250):  # one namespace of more tables than the sidebar draws at once
        dc.create_table(f"b{i:03d}", "bulk", schema=schema, auto_create_namespace=True)
dc.put_catalog("another", dc.Catalog(dc.CatalogProperties(tempfile.mkdtemp())))
%dc sidebar
"""


def test_a_thousand_tables_start_collapsed_and_a_picked_tables_detail_is_in_view(lab, tmp_path):
    from playwright.sync_api import expect

    with _notebook_page(lab, tmp_path, "big", BIG_CATALOG_CELL) as (page, aborted):
        sidebar = page.locator(SIDEBAR)
        expect(sidebar).to_be_visible(timeout=120_000)
        namespaces = sidebar.locator('.wb-sb-namespace[data-namespace^="ns"]')
        expect(namespaces).to_have_count(10, timeout=60_000)
        expect(sidebar.locator(".wb-sb-table")).to_have_count(0)  # every namespace collapsed
        catalogs = sidebar.locator(".wb-sb-catalog > .wb-sb-head .wb-sb-label")
        expect(catalogs).to_have_text(["default", "another"])  # the default one first
        for i in range(10):
            sidebar.locator(f'[data-namespace="ns{i}"] > .wb-sb-head').click()
        expect(sidebar.locator(".wb-sb-table")).to_have_count(1000, timeout=30_000)
        last = sidebar.locator('[data-table="ns9.t0999"] .wb-sb-label').first
        last.click()  # far down the tree: the tree pane scrolls to it
        detail = sidebar.locator(".wb-sb-detail")
        expect(detail).to_contain_text("ns9.t0999", timeout=30_000)
        height = page.viewport_size["height"]
        for part in (detail.locator("h4"), sidebar.locator(".wb-sb-toolbar")):
            box = _box(part)
            assert box["y"] >= 0 and box["y"] + box["height"] <= height
        bulk = sidebar.locator('[data-namespace="bulk"]')
        bulk.locator("> .wb-sb-head").click()
        expect(bulk.locator(".wb-sb-table")).to_have_count(200, timeout=30_000)
        bulk.locator(".wb-sb-more").click()  # "50 more…"
        expect(bulk.locator(".wb-sb-table")).to_have_count(250)
        expect(bulk.locator(".wb-sb-more")).to_have_count(0)
        bulk.locator("> .wb-sb-head").click()  # shut again, so ns9's tables are in view
        sidebar.locator('[data-table="ns9.t0999"] > .wb-sb-head').click()  # its columns
        column_type = sidebar.locator(".wb-sb-type", has_text="timestamp[us, tz=UTC]")
        expect(column_type).to_be_visible(timeout=30_000)
        panel = _box(page.locator(PANEL))
        for box in (_box(column_type), _box(detail.locator("table").first)):
            assert box["x"] + box["width"] <= panel["x"] + panel["width"] + 1, (box, panel)
    assert aborted == [], "the page tried to load from outside 127.0.0.1"


def test_a_restarted_kernels_sidebar_says_so_and_a_new_one_replaces_it(lab, tmp_path):
    from playwright.sync_api import expect

    root = str(tmp_path / "catalog")
    cell = (
        "import pandas as pd\nimport workbench as dc\n%load_ext workbench\n"
        f"dc.init_local({root!r})\n"
        'dc.write(pd.DataFrame({"x": [1]}), "shop.first", auto_create_namespace=True)\n'
        "%dc sidebar\n"
    )
    with _notebook_page(lab, tmp_path, "restart", cell) as (page, aborted):
        sidebars = page.locator(SIDEBAR)
        expect(sidebars).to_have_count(1, timeout=120_000)
        stale = page.locator(".wb-sb-stale")
        expect(stale).to_be_hidden()
        page.locator(".jp-Notebook .jp-Cell").first.click()
        page.keyboard.press("Escape")
        page.keyboard.press("0")
        page.keyboard.press("0")  # JupyterLab's restart, confirmed in its dialog
        page.locator(".jp-Dialog .jp-mod-accept").click()
        expect(stale).to_be_visible(timeout=30_000)  # the old kernel's sidebar says so

        page.locator(".jp-Notebook .jp-Cell").first.click()
        page.keyboard.press("Escape")
        _run_cell(page)  # the new kernel opens its sidebar; the stopped one closes
        live = page.locator(f"{SIDEBAR}:not(.wb-sb-dead)")
        expect(live).to_have_count(1, timeout=60_000)
        tabs = page.locator(".lm-TabBar-tab[data-id^='wb-catalog-sidebar-']")
        expect(tabs).to_have_count(1, timeout=30_000)  # the stopped one's panel closed
        expect(sidebars).to_have_count(1)
        expect(stale).to_be_hidden()
        _new_cell(page, 'dc.write(pd.DataFrame({"x": [2]}), "shop.second")')
        _run_cell(page)
        page.locator(f'{SIDEBAR} [data-namespace="shop"] > .wb-sb-head').click()
        expect(page.locator(f'{SIDEBAR} [data-table="shop.second"]')).to_be_visible(
            timeout=30_000
        )  # the new sidebar is live
    assert aborted == [], "the page tried to load from outside 127.0.0.1"


@pytest.mark.usefixtures("catalog")
def test_the_first_tab_of_every_restarted_kernel_lists_tables(lab, tmp_path):
    """Ten restarts: each new kernel runs ``%load_ext workbench`` and opens the catalog, and
    Tab in a ``%%dc sql`` cell right after offers its tables."""
    import pyarrow as pa
    from playwright.sync_api import expect

    import workbench as dc

    dc.write(pa.table({"id": [1]}), "orders", "sales", auto_create_namespace=True)
    dc.write(pa.table({"id": [1]}), "payroll", "hr", auto_create_namespace=True)
    root = dc.get_catalog().root
    setup = f"import os\nimport workbench as dc\n%load_ext workbench\ndc.init_local({root!r})\n"
    setup += 'print("kernel", os.getpid())'
    output = ".jp-Notebook .jp-Cell >> nth=0 >> .jp-OutputArea-output"
    found = []
    with _notebook_page(lab, tmp_path, "first-tab", setup) as (page, aborted):
        expect(page.locator(output).first).to_contain_text("kernel", timeout=120_000)
        _new_cell(page, "%%dc sql\nSELECT * FROM ")
        for _ in range(10):
            before = page.locator(output).first.inner_text()
            page.locator(".jp-Notebook .jp-Cell").first.click()
            page.keyboard.press("Escape")
            page.keyboard.press("0")
            page.keyboard.press("0")  # JupyterLab's restart, confirmed in its dialog
            page.locator(".jp-Dialog .jp-mod-accept").click()
            expect(page.locator(".jp-Dialog")).to_have_count(0)
            page.wait_for_timeout(500)
            _run_cell(page)  # the setup in the new kernel
            expect(page.locator(output).first).not_to_have_text(before, timeout=60_000)
            page.locator(".jp-Notebook .jp-Cell").last.click()
            page.keyboard.press("Control+End")
            found.append(_completions(page))
    assert found == [["hr.payroll", "sales.orders"]] * 10
    assert aborted == [], "the page tried to load from outside 127.0.0.1"


THEME_COLOURS = """el => {
  const probe = document.createElement("div");
  probe.style.background = "var(--jp-layout-color1)";
  probe.style.color = "var(--jp-ui-font-color1)";
  document.body.append(probe);
  const theme = getComputedStyle(probe), own = getComputedStyle(el);
  const found = [theme.backgroundColor, theme.color, own.backgroundColor, own.color];
  probe.remove();
  return found;
}"""
CHANGE_THEME = (
    "from ipylab import JupyterFrontEnd\n"
    "JupyterFrontEnd().commands.execute('apputils:change-theme', {{'theme': '{}'}})"
)


def _brightness(rgb: str) -> int:
    """The sum of an ``rgb(r, g, b)`` colour's channels."""
    return sum(int(part) for part in re.findall(r"\d+", rgb)[:3])


def test_sidebar_has_an_icon_tab_opens_wide_and_follows_the_dark_theme(lab, tmp_path):
    from playwright.sync_api import expect

    with _notebook_page(lab, tmp_path, "theme", SETUP_CELL + "%dc sidebar\n") as (page, aborted):
        sidebar = page.locator(SIDEBAR)
        expect(sidebar).to_be_visible(timeout=120_000)
        tab = page.locator(".lm-TabBar-tab[data-id^='wb-catalog-sidebar-']")
        expect(tab.locator("svg[data-icon='workbench:catalog']")).to_be_visible()
        expect(tab.locator(".lm-TabBar-tabLabel")).to_have_text("")  # the icon, no rotated text
        expect(tab).to_have_attribute("title", re.compile("Catalog"))
        page.wait_for_function(
            f"document.querySelector('{PANEL}').getBoundingClientRect().width >= 320",
            timeout=10_000,
        )
        light = sidebar.evaluate(THEME_COLOURS)
        assert light[2:] == light[:2], f"the sidebar's colours {light[2:]} are not the theme's"
        try:
            _new_cell(page, CHANGE_THEME.format("JupyterLab Dark"))
            _run_cell(page)
            page.wait_for_function(
                "document.body.dataset.jpThemeName === 'JupyterLab Dark'", timeout=30_000
            )
            page.wait_for_timeout(500)  # the theme's stylesheet applies
            dark = sidebar.evaluate(THEME_COLOURS)
            assert dark[2:] == dark[:2], f"the sidebar's colours {dark[2:]} are not the theme's"
            assert _brightness(dark[2]) < _brightness(light[2]) and dark[2] != light[2]
            assert _brightness(dark[3]) > _brightness(dark[2])  # light text on a dark ground
        finally:  # the lab's settings are shared by this module's tests
            _new_cell(page, CHANGE_THEME.format("JupyterLab Light"))
            _run_cell(page)
            page.wait_for_function(
                "document.body.dataset.jpThemeName === 'JupyterLab Light'", timeout=30_000
            )
    assert aborted == [], "the page tried to load from outside 127.0.0.1"


def test_a_tables_context_menu_copies_previews_shows_history_and_inserts(lab, tmp_path):
    from playwright.sync_api import expect

    with _notebook_page(lab, tmp_path, "menu", SETUP_CELL + "%dc sidebar\n") as (page, aborted):
        base, _ = lab
        page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=base)
        sidebar = page.locator(SIDEBAR)
        sidebar.locator('[data-namespace="shop"] > .wb-sb-head').click(timeout=120_000)
        row = sidebar.locator('[data-table="shop.stock"] > .wb-sb-head')
        menu = page.locator(".wb-sb-menu")

        def choose(action: str) -> None:
            row.click(button="right")
            menu.locator(f'[data-action="{action}"]').click()
            expect(menu).to_have_count(0)  # it closes

        choose("copy")
        page.wait_for_function("navigator.clipboard.readText().then(t => t === 'shop.stock')")
        detail = sidebar.locator(".wb-sb-detail")
        choose("preview")
        expect(detail).to_contain_text("first 1 of 1 rows", timeout=30_000)
        choose("history")
        expect(detail).to_contain_text("shop.stock: history", timeout=30_000)
        expect(detail).to_contain_text("CREATE_TABLE")
        _new_cell(page, "")
        choose("insert-handle")
        active = page.locator(".jp-Notebook .jp-Cell.jp-mod-active .cm-content")
        expect(active).to_have_text('dc.table("shop.stock")', timeout=30_000)
        _new_cell(page, "")
        choose("insert-sql")
        snippet = ["%%dc sql", "SELECT * FROM shop.stock LIMIT 10"]
        expect(active.locator(".cm-line")).to_have_text(snippet, timeout=30_000)
    assert aborted == [], "the page tried to load from outside 127.0.0.1"


def test_a_dragged_table_drops_its_name_and_the_filter_finds_columns(lab, tmp_path):
    from playwright.sync_api import expect

    with _notebook_page(lab, tmp_path, "drag", SETUP_CELL + "%dc sidebar\n") as (page, aborted):
        sidebar = page.locator(SIDEBAR)
        sidebar.locator('[data-namespace="shop"] > .wb-sb-head').click(timeout=120_000)
        orders = sidebar.locator('[data-table="shop.orders"] > .wb-sb-head')
        expect(orders.locator(".wb-sb-stats")).to_have_text(re.compile(r"^2 rows · \d+ B$"))
        _new_cell(page, "rows = dc.read(")
        active = page.locator(".jp-Notebook .jp-Cell.jp-mod-active .cm-content")
        orders.drag_to(active, target_position={"x": 400, "y": 8})  # after the text
        expect(active).to_have_text("rows = dc.read(shop.orders", timeout=10_000)

        sidebar.locator(".wb-sb-filter").fill("ite")  # no table's name; a column's
        found = sidebar.locator(".wb-sb-table")
        expect(found).to_have_count(1, timeout=30_000)
        expect(found).to_have_attribute("data-table", "shop.orders")
        expect(found.locator(".wb-sb-match")).to_have_text("item")
    assert aborted == [], "the page tried to load from outside 127.0.0.1"
