"""workbench's JupyterLab extension in a real JupyterLab in headless Chromium: it is loaded (no
Node.js: the prebuilt one), ``%%dc sql`` cells are highlighted as SQL and go back to Python when
the magic line goes, and Tab offers catalog names matched in any case, with their kinds, before
any word of the editor."""

from __future__ import annotations

import json
import re
import urllib.request

import pytest

from tests.notebook.test_browser import _notebook_page
from tests.notebook.test_browser_catalog import _new_cell

pytestmark = pytest.mark.browser
EXTENSION = "workbench-jupyterlab"

SETUP_CELL = """\
import tempfile
import pandas as pd
import workbench as dc
%load_ext workbench

dc.init_local(tempfile.mkdtemp())
dc.write(pd.DataFrame({"id": [1], "item": ["tea"], "price": [2.5]}), "sales.orders",
         auto_create_namespace=True)
dc.write(pd.DataFrame({"id": [1], "qty": [3]}), "sales.order_lines")
dc.write(pd.DataFrame({"sku": [7]}), "shop.stock", auto_create_namespace=True)
"""

# The tokens of a line as (text, class) pairs: CodeMirror wraps each highlighted token in a span.
TOKENS = """line => [...line.querySelectorAll('span')].map(s => [s.textContent, s.className])"""


def _tokens(page, line_text: str) -> dict[str, str]:
    """The class of each highlighted token of the active cell's line holding ``line_text``."""
    line = page.locator(".jp-Notebook .jp-Cell.jp-mod-active .cm-line", has_text=line_text)
    return dict(line.first.evaluate(TOKENS))


def test_the_extension_is_loaded_from_its_prebuilt_files(lab):
    base, token = lab
    with urllib.request.urlopen(f"{base}/lab?token={token}", timeout=30) as page:
        html = page.read().decode()
    config = json.loads(re.search(r'id="jupyter-config-data"[^>]*>(.*?)</script>', html, re.S)[1])
    names = [extension["name"] for extension in config["federated_extensions"]]
    assert EXTENSION in names


def test_dc_sql_cells_are_highlighted_as_sql_and_python_again_without_the_magic(lab, tmp_path):
    from playwright.sync_api import expect

    with _notebook_page(lab, tmp_path, "highlight", SETUP_CELL) as (page, aborted):
        expect(page.locator(".jp-Cell .jp-OutputArea-output").first).to_be_visible(timeout=120_000)
        first_line = page.locator(".jp-Cell .cm-line", has_text="import tempfile").first
        keyword = dict(first_line.evaluate(TOKENS))["import"]  # Python's keyword class
        _new_cell(page, "%%dc sql\nSELECT item FROM sales.orders WHERE id = 1")
        sql = _tokens(page, "SELECT")
        assert sql["SELECT"] == sql["FROM"] == sql["WHERE"] == keyword, sql
        assert "orders" not in sql, f"orders is styled as a Python property: {sql}"
        page.keyboard.press("Control+Home")  # the magic line goes: Python again
        page.keyboard.press("Shift+End")
        page.keyboard.press("Delete")
        python = _tokens(page, "SELECT")
        assert "SELECT" not in python and "FROM" not in python, python
        assert "orders" in python, python  # a property after "."
        page.keyboard.insert_text("%%dc  sql -o top")  # typed back: SQL again
        assert _tokens(page, "SELECT")["SELECT"] == keyword
    assert aborted == [], "the page tried to load from outside 127.0.0.1"


# Records the type of each message the page sends its kernels from now on (window.wbSent):
# Tab in a %dc cell asks for completions without the debugger's evaluate round trips.
SENT_TYPES = """() => {
  window.wbSent = [];
  const send = WebSocket.prototype.send;
  WebSocket.prototype.send = function (data) {
    const text = typeof data === 'string' ? data : new TextDecoder().decode(data);
    const found = text.match(/"msg_type":\\s*"([a-z_]+)"/);
    if (found) window.wbSent.push(found[1]);
    return send.call(this, data);
  };
}"""


def _popup(page) -> list[tuple[str, str]]:
    """Press Tab and read the completer's items: (text, kind), kind "" for the editor's words."""
    from playwright.sync_api import expect

    page.keyboard.press("Tab")
    items = page.locator(".jp-Completer .jp-Completer-item")
    expect(items.first).to_be_visible(timeout=20_000)
    found = items.evaluate_all(
        "items => items.map(i => [i.getAttribute('data-value'), i.getAttribute('title') || ''])"
    )
    page.keyboard.press("Escape")
    return [tuple(item) for item in found]


def test_tab_offers_catalog_names_in_any_case_with_their_kinds_first(lab, tmp_path):
    from playwright.sync_api import expect

    cell = (
        SETUP_CELL
        + 'dc.write(pd.DataFrame({"id": [2]}), "archive.orders", '
        + ("auto_create_namespace=True)\n")
    )
    with _notebook_page(lab, tmp_path, "complete", cell) as (page, aborted):
        expect(page.locator(".jp-Cell .jp-OutputArea-output").first).to_be_visible(timeout=120_000)
        page.wait_for_timeout(1000)
        _new_cell(page, "%%dc sql\nSELECT * FROM ord")
        assert _popup(page) == [  # every table's part starts with it: in name order
            ("archive.orders", "table"),
            ("sales.order_lines", "table"),
            ("sales.orders", "table"),
        ]
        _new_cell(page, "%%dc sql\nSELECT * FROM Sales.")
        assert _popup(page) == [("sales.order_lines", "table"), ("sales.orders", "table")]
        _new_cell(page, "%%dc sql\nSELECT * FROM sales.orders WHERE orders.")
        assert _popup(page) == [
            ("id", "column · int64 · sales.orders"),
            ("item", "column · string · sales.orders"),
            ("price", "column · double · sales.orders"),
        ]
        _new_cell(page, 'dc.read("orders')
        assert _popup(page) == [  # parts that start with it, then the fuzzy match
            ("archive.orders", "table"),
            ("sales.orders", "table"),
            ("sales.order_lines", "table"),
        ]
        _new_cell(page, '%%dc sql\nSELECT * FROM "sales"."ord')
        page.evaluate(SENT_TYPES)
        assert _popup(page) == [('"sales"."order_lines"', "table"), ('"sales"."orders"', "table")]
        sent = page.evaluate("window.wbSent")
        assert "complete_request" in sent and "debug_request" not in sent, sent
    assert aborted == [], "the page tried to load from outside 127.0.0.1"
