"""A real JupyterLab in headless Chromium: run tutorial 04, click the widgets, see them change;
see the history grid's headers line up with its columns and sort it, offline; render the runs
browser over real runs and see their statuses in colour."""

from __future__ import annotations

import json
import os
import re
import secrets
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from tests.chromium import chromium_page, offline

pytestmark = pytest.mark.browser
ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = "04_notebook_workbench.ipynb"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextmanager
def jupyter_lab(folder: Path) -> Iterator[tuple[str, str]]:
    """JupyterLab on 127.0.0.1 serving ``folder`` (its settings in it too, news off: no toast
    over screenshots), with this checkout importable by its kernels; yields (base URL, token)
    once it answers."""
    port, token = _free_port(), secrets.token_hex(16)
    settings = folder / ".jupyter/lab/user-settings/@jupyterlab/apputils-extension"
    settings.mkdir(parents=True, exist_ok=True)  # no "get notified about news?" toast
    (settings / "notification.jupyterlab-settings").write_text(json.dumps({"fetchNews": "false"}))
    here = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "JUPYTER_CONFIG_DIR": str(folder / ".jupyter"), "PYTHONPATH": here}
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "jupyterlab",
            "--no-browser",
            "--allow-root",
            "--ServerApp.ip=127.0.0.1",
            f"--ServerApp.port={port}",
            f"--IdentityProvider.token={token}",
            f"--ServerApp.root_dir={folder}",
        ],
        cwd=folder,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 90
    while True:
        try:
            with urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=2):
                break
        except OSError:
            if server.poll() is not None or time.monotonic() > deadline:
                server.kill()
                pytest.fail("JupyterLab did not start within 90 s")
            time.sleep(0.5)
    try:
        yield base, token
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_tutorial_widgets_respond_to_clicks(lab, tmp_path):
    base, token = lab
    shot = tmp_path / "jupyterlab-widgets.png"
    with chromium_page(shot) as page:
        _drive(page, base, token)
    assert shot.stat().st_size > 10_000


def _open_and_run_all(page, base: str, token: str, notebook: str) -> None:
    """Open ``notebook`` alone in a fresh workspace (the lab is shared by the tests, and a
    restored workspace would bring back the other tests' tabs) and run all its cells."""
    from playwright.sync_api import expect

    workspace = notebook.removesuffix(".ipynb").replace("_", "-")
    page.goto(f"{base}/lab/workspaces/{workspace}/tree/{notebook}?reset&token={token}")
    page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=90_000)
    expect(page.get_by_text("| Idle").first).to_be_visible(timeout=90_000)  # kernel ready
    page.locator(".lm-MenuBar-itemLabel", has_text="Run").first.click()
    page.locator(".lm-Menu-itemLabel").get_by_text("Run All Cells", exact=True).click()


def _drive(page, base: str, token: str) -> None:
    """Run the notebook, select a table, click the slider, and check what changes."""
    from playwright.sync_api import expect

    _open_and_run_all(page, base, token, NOTEBOOK)

    # Catalog browser: selecting a table fills the details pane.
    table_list = page.locator(".wb-table-list select")
    table_list.wait_for(timeout=120_000)
    details = page.locator(".wb-details")
    expect(details).to_contain_text("select a table")
    expect(page.locator(".wb-branch-picker select")).to_have_value("main")
    table_list.select_option("demo.sales")
    expect(details).to_contain_text("first 4 of 4 rows", timeout=30_000)
    expect(details).to_contain_text("honey")

    # Time travel: clicking the start of the slider shows the oldest point.
    then = page.locator(".wb-then")
    expect(then).to_contain_text("as of point 2 of 2", timeout=60_000)
    track = page.locator(".wb-time-slider .noUi-target, .wb-time-slider .slider").first
    box = track.bounding_box()
    assert box is not None
    page.mouse.click(box["x"] + 2, box["y"] + box["height"] / 2)
    expect(then).to_contain_text("as of point 1 of 2", timeout=30_000)
    expect(then).not_to_contain_text("honey")
    expect(page.locator(".wb-diff-now")).to_contain_text("rows added")


RUNS_CELL = """\
import tempfile
import workbench as dc
from workbench.widgets import RunsBrowser

dc.init_local(tempfile.mkdtemp())
with dc.run("nightly") as run, run.step("load") as step:
    step.rows_out = 2
try:
    with dc.run("broken"):
        1 / 0
except ZeroDivisionError:
    pass
RunsBrowser()
"""


GALLERY_CELL = """\
import shutil, tempfile
import pyarrow.compute as pc
import workbench as dc
from workbench.widgets import Gallery

root = tempfile.mkdtemp()
dc.init_local(root + "/catalog")
shutil.copytree({media!r}, root + "/images")
dc.import_media(root + "/images", "files", namespace="media")
dc.infer("files", "image-facts", namespace="media", progress=False)
Gallery("files", "media", page_size=4)
"""


def test_gallery_shows_thumbnails_with_captions(lab, tmp_path):
    from playwright.sync_api import expect

    cell = GALLERY_CELL.format(media=str(ROOT / "media" / "images"))
    with _notebook_page(lab, tmp_path, "gallery", cell) as (page, aborted):
        thumbnails = page.locator(".wb-gallery-grid img")
        expect(thumbnails).to_have_count(4, timeout=120_000)
        expect(page.locator(".wb-gallery-grid")).to_contain_text("phash:")
        drawn = thumbnails.first.evaluate("img => img.complete && img.naturalWidth")
        assert drawn > 0, "the thumbnail did not decode in the browser"
        page.locator(".wb-gallery button", has_text="▶").click()
        expect(page.locator(".wb-gallery")).to_contain_text("page 2/13")
        for width in (1500, 760):  # a wide window, and a narrow JupyterLab panel
            page.set_viewport_size({"width": width, "height": 1100})
            page.wait_for_timeout(500)
            assert _cut_labels(page, ".wb-gallery") == [], f"labels cut at {width} px"
    assert aborted == [], "the page tried to load from outside 127.0.0.1"


def _cut_labels(page, container: str) -> list[str]:
    """The texts of labels (descriptions, readouts, counters) in ``container`` that do not fit
    their box or stick out of the container, so the user sees them cut."""
    return page.evaluate(
        """container => {
            const box = document.querySelector(container).getBoundingClientRect();
            const labels = document.querySelectorAll(
                `${container} .widget-label, ${container} .widget-readout, `
                + `${container} .widget-label-basic`);
            return [...labels].filter(el => el.offsetParent !== null && el.textContent.trim())
                .filter(el => el.scrollWidth > el.clientWidth + 1
                    || el.getBoundingClientRect().right > box.right + 1)
                .map(el => el.textContent.trim());
        }""",
        container,
    )


def _api(base: str, token: str, method: str, path: str, body: dict) -> None:
    """Call the Jupyter server's REST API with the test token."""
    request = urllib.request.Request(
        f"{base}/api/{path}",
        data=json.dumps(body).encode(),
        method=method,
        headers={"Authorization": f"token {token}", "Content-Type": "application/json"},
    )
    urllib.request.urlopen(request, timeout=30).close()


def stop_kernels(base: str, token: str) -> None:
    """Shut down every kernel of the server (a test's kernels once it ends: the server is
    shared, and an idle sidebar's kernel still polls its catalog)."""
    headers = {"Authorization": f"token {token}"}
    listing = urllib.request.Request(f"{base}/api/kernels", headers=headers)
    with urllib.request.urlopen(listing, timeout=30) as answer:
        kernels = json.load(answer)
    for kernel in kernels:
        url = f"{base}/api/kernels/{kernel['id']}"
        stop = urllib.request.Request(url, method="DELETE", headers=headers)
        with suppress(urllib.error.HTTPError):  # it ended by itself meanwhile
            urllib.request.urlopen(stop, timeout=30).close()


def _start_kernel(base: str, token: str, name: str) -> None:
    """Attach a running kernel to the notebook, so the page opens without a kernel dialog."""
    kernel = {"name": "python3"}
    _api(
        base,
        token,
        "POST",
        "sessions",
        {"path": name, "name": name, "type": "notebook", "kernel": kernel},
    )


def _upload_notebook(base: str, token: str, name: str, source: str) -> None:
    """Put a one-cell notebook into the server's folder through the contents API."""
    cell = {"cell_type": "code", "source": source, "metadata": {}, "outputs": []}
    cell["execution_count"] = None
    kernel = {"name": "python3", "display_name": "Python 3", "language": "python"}
    notebook = {"cells": [cell], "metadata": {"kernelspec": kernel}}
    notebook.update(nbformat=4, nbformat_minor=5)
    _api(
        base,
        token,
        "PUT",
        f"contents/{name}",
        {"type": "notebook", "format": "json", "content": notebook},
    )


def on_this_machine(url: str) -> bool:
    """Requests to JupyterLab on 127.0.0.1 only: the widgets must work with no CDN."""
    return urlsplit(url).hostname == "127.0.0.1"


@contextmanager
def _notebook_page(lab, tmp_path: Path, name: str, cell: str) -> Iterator[tuple[Any, list[str]]]:
    """A one-cell notebook uploaded to the lab, its kernel started, opened offline in Chromium
    and run; yields the page and the URLs it tried to load from outside 127.0.0.1 (a screenshot
    goes to tmp_path)."""
    base, token = lab
    _upload_notebook(base, token, f"{name}.ipynb", cell)
    _start_kernel(base, token, f"{name}.ipynb")
    with chromium_page(tmp_path / f"jupyterlab-{name}.png") as page:
        aborted = offline(page, on_this_machine)
        _open_and_run_all(page, base, token, f"{name}.ipynb")
        yield page, aborted


def test_runs_browser_shows_statuses_in_colour(lab, tmp_path):
    from playwright.sync_api import expect

    with _notebook_page(lab, tmp_path, "runs", RUNS_CELL) as (page, aborted):
        failed = page.locator(".wb-runs-table .wb-status-failed")
        expect(failed).to_have_css("background-color", "rgb(198, 40, 40)", timeout=120_000)
        succeeded = page.locator(".wb-runs-table .wb-status-succeeded")
        expect(succeeded).to_have_css("background-color", "rgb(46, 125, 50)")
        rows = page.locator(".wb-runs-table tbody tr")
        expect(rows).to_have_count(2)
        rows.filter(has_text="nightly").click()  # selecting a run shows its detail
        expect(page.locator(".wb-run-steps")).to_contain_text("load", timeout=30_000)
        expect(page.locator(".wb-runs .js-plotly-plot")).to_be_visible(timeout=30_000)
    assert aborted == [], "the page tried to load from outside 127.0.0.1"


HISTORY_CELL = """\
import tempfile
import pandas as pd
import workbench as dc
from workbench.widgets import HistoryBrowser

dc.init_local(tempfile.mkdtemp())
dc.write(pd.DataFrame({"id": range(5)}), "orders", "shop", auto_create_namespace=True)
with dc.transaction(commit_message="restock the shelves, and note why in a longer message"):
    dc.write(pd.DataFrame({"id": range(40)}), "orders", "shop")
    dc.write(pd.DataFrame({"note": ["restocked"]}), "notes", "shop")
dc.write(pd.DataFrame({"id": range(12)}), "orders", "shop")
HistoryBrowser()
"""


def test_history_grid_lines_up_sorts_and_selects_offline(lab, tmp_path):
    from playwright.sync_api import expect

    with _notebook_page(lab, tmp_path, "history", HISTORY_CELL) as (page, aborted):
        grid = page.locator(".wb-history-table")
        rows = grid.locator("tbody tr")
        expect(rows).to_have_count(3, timeout=120_000)
        headers = grid.locator("thead th")
        names = headers.all_inner_texts()
        assert [name.strip() for name in names][:2] == ["time", "commit_message"]
        cells = rows.first.locator("td")
        assert cells.count() == len(names) == 6
        for i, name in enumerate(names):
            header, cell = headers.nth(i).bounding_box(), cells.nth(i).bounding_box()
            assert header is not None and cell is not None
            assert abs(header["x"] - cell["x"]) <= 2, f"{name}: header x {header} vs {cell}"
            assert abs(header["width"] - cell["width"]) <= 2, f"{name}: width"

        added = grid.locator("tbody td:nth-child(5)")
        assert added.all_inner_texts() == ["12", "41", "5"], "newest first"
        headers.filter(has_text="rows_added").click()
        expect(added).to_have_text(["5", "12", "41"])
        headers.filter(has_text="rows_added").click()
        expect(added).to_have_text(["41", "12", "5"])

        rows.filter(has_text="restock the shelves").click()
        detail = page.locator(".wb-history-detail")
        expect(detail).to_contain_text("shop.notes", timeout=30_000)

        ticks = page.locator(".wb-history .xtick text").evaluate_all(
            "texts => texts.map(t => t.textContent)"  # SVG text has no innerText
        )
        assert ticks, "the commit chart drew no time axis"
        assert all(re.search(r"\d{1,2}:\d{2}|[A-Z][a-z]{2}", t) for t in ticks), ticks
        assert not any(re.search(r"\d{10}|e\+|\u00d710", t) for t in ticks), ticks
    assert (tmp_path / "jupyterlab-history.png").stat().st_size > 10_000
    assert aborted == [], "the page tried to load from outside 127.0.0.1"
