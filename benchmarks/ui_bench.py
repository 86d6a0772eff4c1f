"""Notebook-face benchmarks: magic dispatch overhead, catalog browser on 1,000 tables, history
widget over 10,000 transactions, one time-travel step on a 1M-row table, completion from a
catalog of 1,000 tables of 100 columns, and how soon the catalog sidebar shows a new table; and
in a real JupyterLab in headless Chromium, on that catalog, Tab to the completer's popup and
``%dc sidebar`` to the sidebar's tree, both timed in the page (``performance.now()``).

Run with ``python -m benchmarks.ui_bench``; each figure is a median, measured in this process
(the browser's in the page).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from benchmarks.timing import median_seconds
from benchmarks.txn_bench import build_history

DEFAULT_OUT = Path(__file__).resolve().parent / "results" / "ui.json"
TARGETS_MS = {
    "magic_dispatch_overhead_ms": 10,
    "browser_open_1000_tables_ms": 1000,
    "history_first_page_10k_ms": 500,
    "time_travel_step_1m_rows_ms": 1000,
    "completion_1000x100_ms": 50,
    "sidebar_fresh_after_write_ms": 1000,
    "tab_to_popup_in_page_ms": 100,
    "sidebar_first_paint_1000_tables_ms": 1000,
}
# In the page: the time from a key's press (caught before JupyterLab sees it) to an element
# matching a selector being shown, checked at every change of the page.
IN_PAGE_TIMER = """([key, selector]) => {
  window.wbTook = null;
  let pressed = null;
  const shown = () => [...document.querySelectorAll(selector)].some((e) => e.offsetParent);
  const onKey = (event) => {
    if (event.key === key && pressed === null) pressed = performance.now();
  };
  const watch = new MutationObserver(() => {
    if (pressed === null || !shown()) return;
    window.wbTook = performance.now() - pressed;
    watch.disconnect();
    document.removeEventListener("keydown", onKey, true);
  });
  document.addEventListener("keydown", onKey, true);
  watch.observe(document.body, { childList: true, subtree: true, attributes: true });
}"""
POPUP = ".jp-Completer:not(.lm-mod-hidden) .jp-Completer-item"
SIDEBAR_TREE = ".wb-sidebar .wb-sb-namespace"
BROWSER_FIGURES = (
    "tab_to_popup_in_page_ms",
    "tab_to_popup_first_in_page_ms",  # JupyterLab sets its completer up on the first Tab
    "sidebar_first_paint_1000_tables_ms",
    "sidebar_first_paint_first_catalog_read_ms",  # the kernel's first read of the catalog's log
)
COMPLETION_CELLS = [  # (code, what it must offer)
    ("%%dc sql\nSELECT * FROM ns3.t00", "ns3.t0003"),
    ("%%dc sql\nSELECT * FROM ns7.t0047 t WHERE t.", "c001"),
    ("%%dc sql\nSELECT * FROM ns1.t0001 a JOIN ns2.t0002 b ON a.c001 = b.", "id"),
    ('dc.read("ns5.t00', "ns5.t0005"),
    ('dc.read("t", namespace="ns', "ns9"),
]


def _ms(fn: Callable[[], Any], repeats: int) -> float:
    return median_seconds(fn, repeats) * 1e3


def magic_overhead(root: str, repeats: int) -> float:
    """Median extra time of ``%dc describe t`` over ``dc.get_table('t')``, alternating."""
    from IPython.core.interactiveshell import InteractiveShell

    import workbench as dc

    dc.init_local(root)
    dc.write(pa.table({"id": [1, 2, 3]}), "t")
    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "workbench")
    shell.run_line_magic("dc", f"init {root}")
    magic, direct = [], []
    for _ in range(repeats):
        magic.append(_ms(lambda: shell.run_line_magic("dc", "describe t"), 1))
        direct.append(_ms(lambda: dc.get_table("t"), 1))
    return statistics.median(magic) - statistics.median(direct)


def browser_open(root: str, tables: int, repeats: int) -> float:
    """Median time to build a catalog browser over ``tables`` tables."""
    import workbench as dc
    from workbench.widgets import CatalogBrowser

    dc.init_local(root)
    schema = dc.Schema.of([pa.field("id", pa.int64())])
    with dc.transaction(commit_message="many tables"):
        for i in range(tables):
            dc.create_table(f"t{i:04d}", f"ns{i % 10}", schema=schema, auto_create_namespace=True)
    listed = len(CatalogBrowser().table_list.options)
    if listed != tables:
        raise AssertionError(f"the browser listed {listed} tables, expected {tables}")
    return _ms(CatalogBrowser, repeats)


def history_first_page(root: Path, transactions: int, repeats: int) -> float:
    """Median time to build the history widget (first page and timeline) over the log."""
    from workbench.widgets import HistoryBrowser

    build_history(root, transactions)
    return _ms(HistoryBrowser, repeats)


def time_travel_step(root: str, rows: int, repeats: int) -> float:
    """Median time of one slider step (preview of 50 rows and diff counts) on ``rows`` rows."""
    import workbench as dc
    from workbench.widgets import TimeTravel

    dc.init_local(root)
    rng = np.random.default_rng(0)
    schema = dc.Schema.of(
        [
            dc.Field.of(pa.field("id", pa.int64()), is_merge_key=True),
            pa.field("value", pa.float64()),
        ]
    )
    dc.write(pa.table({"id": np.arange(rows), "value": rng.random(rows)}), "big", schema=schema)
    changed = rng.choice(rows + rows // 10, rows // 10, replace=False)
    dc.write(pa.table({"id": changed, "value": rng.random(len(changed))}), "big")
    travel = TimeTravel("big")
    steps = []
    for i in range(repeats):
        steps.append(_ms(lambda i=i: travel.select(i % 2), 1))
    return statistics.median(steps)


def wide_catalog(root: str, tables: int, columns: int) -> None:
    """A catalog of ``tables`` empty tables of ``columns`` columns each, in 10 namespaces."""
    import workbench as dc

    dc.init_local(root)
    fields = [dc.Field.of(pa.field("id", pa.int64()), is_merge_key=True)]
    fields += [pa.field(f"c{i:03d}", pa.float64()) for i in range(1, columns)]
    schema = dc.Schema.of(fields)
    with dc.transaction(commit_message="a wide catalog"):
        for i in range(tables):
            dc.create_table(f"t{i:04d}", f"ns{i % 10}", schema=schema, auto_create_namespace=True)


def completion(root: str, repeats: int) -> tuple[float, float]:
    """Median time of one Tab through IPython's completer over the cells of
    ``COMPLETION_CELLS``, warm (listings cached), and of the first Tab after a commit (the
    listing and two tables' columns read again)."""
    import warnings

    from IPython.core.completer import provisionalcompleter
    from IPython.core.interactiveshell import InteractiveShell

    import workbench as dc

    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "workbench")
    shell.user_ns["dc"] = dc

    def tab(code: str, wanted: str) -> None:
        with warnings.catch_warnings(), provisionalcompleter():
            warnings.simplefilter("ignore")
            found = [c.text for c in shell.Completer.completions(code, len(code))]
        if wanted not in found:
            raise AssertionError(f"{code!r} offered {found[:5]}..., not {wanted!r}")

    cold = []
    for i in range(repeats):  # a commit clears the listings: the next Tab reads them again
        dc.write(pa.table({"x": [i]}), "commit", "ns0")
        cold.append(_ms(lambda: tab(*COMPLETION_CELLS[2]), 1))
    times = [
        _ms(lambda cell=cell: tab(*cell), 1) for _ in range(repeats) for cell in COMPLETION_CELLS
    ]
    return statistics.median(times), statistics.median(cold)


def sidebar_freshness(root: str, repeats: int) -> float:
    """Median time from the end of a write to the sidebar's tree holding the new table (what
    the refresh after each cell does), on the wide catalog."""
    import time

    import workbench as dc
    from workbench.widgets import CatalogSidebar

    sidebar = CatalogSidebar()
    times = []
    for i in range(repeats):
        dc.write(pa.table({"x": [i]}), f"fresh{i}", "ns0")
        ended = time.perf_counter()
        sidebar.refresh()
        main = sidebar.tree[0]["branches"][0]["namespaces"]["ns0"]
        if f"ns0.fresh{i}" not in main:
            raise AssertionError("the sidebar does not show the table just written")
        times.append((time.perf_counter() - ended) * 1e3)
    return statistics.median(times)


def in_page(page: Any, key: str, selector: str) -> float:
    """Press ``key`` (``Shift+Enter``: timed from the Enter) and return the ms the page took to
    show ``selector``, timed in the page."""
    page.evaluate(IN_PAGE_TIMER, [key.split("+")[-1], selector])
    page.keyboard.press(key)
    page.wait_for_function("window.wbTook !== null", timeout=60_000)
    return page.evaluate("window.wbTook")


def browser_figures(root: str, repeats: int) -> dict[str, float]:
    """Median ms, in a real JupyterLab on the catalog at ``root``: from Shift+Enter on
    ``%dc sidebar`` (a new kernel each time, its ``%load_ext`` warm-up done) to the sidebar's
    tree, in a kernel that has used the catalog and in one whose first catalog read it is; and
    from Tab in a ``%%dc sql`` cell to the completer's popup (the page's first Tab apart)."""
    from tests.notebook.test_browser import _notebook_page, jupyter_lab
    from tests.notebook.test_browser_catalog import _new_cell

    setup = (
        f"import threading\nimport workbench as dc\n%load_ext workbench\ndc.init_local({root!r})\n"
        "for thread in threading.enumerate():  # %load_ext's background imports end\n"
        "    if thread.name == 'workbench-warm-up':\n        thread.join()\n"
    )
    used = "dc.list_namespaces()  # the kernel has read the catalog's log\n"
    times: dict[str, list[float]] = {name: [] for name in BROWSER_FIGURES}
    with tempfile.TemporaryDirectory() as folder, jupyter_lab(Path(folder)) as lab:
        for i in range(repeats):
            for paint, cell in (
                ("sidebar_first_paint_1000_tables_ms", setup + used),
                ("sidebar_first_paint_first_catalog_read_ms", setup),
            ):
                with _notebook_page(lab, Path(folder), f"bench{i}{len(cell)}", cell) as (page, _):
                    done = page.locator(".jp-InputPrompt", has_text="[1]:")  # the setup ran
                    done.first.wait_for(timeout=120_000)
                    _new_cell(page, "%dc sidebar")
                    times[paint].append(in_page(page, "Shift+Enter", SIDEBAR_TREE))
                    _new_cell(page, "%%dc sql\nSELECT * FROM ns3.t00")
                    for tab in ("tab_to_popup_first_in_page_ms", *["tab_to_popup_in_page_ms"] * 3):
                        times[tab].append(in_page(page, "Tab", POPUP))
                        page.keyboard.press("Escape")
    return {name: statistics.median(found) for name, found in times.items()}


def main() -> int:
    """Run the measures, write JSON and print a Markdown table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=1000)
    parser.add_argument("--history", type=int, default=10_000)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--columns", type=int, default=100)
    parser.add_argument("--only-catalog", action="store_true", help="completion and sidebar only")
    parser.add_argument("--no-browser", action="store_true", help="no JupyterLab in Chromium")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args()
    figures: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as folder:
        wide_catalog(f"{folder}/w", args.tables, args.columns)
        print("wide catalog made", file=sys.stderr)
        warm, cold = completion(f"{folder}/w", args.repeats)
        figures["completion_1000x100_ms"] = warm
        figures["completion_first_after_commit_ms"] = cold
        figures["sidebar_fresh_after_write_ms"] = sidebar_freshness(f"{folder}/w", args.repeats)
        print("completion and sidebar measured", file=sys.stderr)
        if not args.no_browser:
            figures.update(browser_figures(f"{folder}/w", min(args.repeats, 3)))
            print("in-page figures measured", file=sys.stderr)
        if not args.only_catalog:
            _notebook_measures(folder, args, figures)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(figures, indent=2))
    print("| measure | median | target | status |\n| --- | ---: | ---: | --- |")
    for name, value in figures.items():
        target = TARGETS_MS.get(name)
        status = "" if target is None else ("PASS" if value < target else "MISS")
        print(f"| {name} | {value:.1f} ms | {f'< {target} ms' if target else '-'} | {status} |")
    return 0


def _notebook_measures(folder: str, args: argparse.Namespace, figures: dict[str, float]) -> None:
    """The magics', browser's, history's and time travel's measures."""
    figures["magic_dispatch_overhead_ms"] = magic_overhead(f"{folder}/m", args.repeats * 30)
    print("magic overhead measured", file=sys.stderr)
    figures["browser_open_1000_tables_ms"] = browser_open(f"{folder}/b", args.tables, args.repeats)
    print("catalog browser measured", file=sys.stderr)
    figures["history_first_page_10k_ms"] = history_first_page(
        Path(folder) / "h", args.history, args.repeats
    )
    print("history measured", file=sys.stderr)
    figures["time_travel_step_1m_rows_ms"] = time_travel_step(
        f"{folder}/t", args.rows, args.repeats
    )


if __name__ == "__main__":
    sys.exit(main())
