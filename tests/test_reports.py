"""dc.report on real catalogs and real kernels: offline HTML, pinned catalog state, failures."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pandas as pd
import pytest

import workbench as dc
from workbench.magics.parser import parse
from workbench.reports import parse_parameters

ROOT = Path(__file__).resolve().parent.parent
SLOW = pytest.mark.integration  # each report starts a kernel (about 10 s)


@pytest.fixture
def catalog(tmp_path: Path) -> Path:
    """A small catalog: two namespaces, two tables."""
    root = tmp_path / "catalog"
    dc.init_local(root)
    dc.write(pd.DataFrame({"a": [1, 2, 3]}), "t")
    dc.create_namespace("shop")
    dc.write(pd.DataFrame({"order": range(10)}), "orders", "shop")
    return root


def _rows_of(html: str, table: str) -> str:
    """The HTML table row of ``table`` in the report's table listing."""
    return re.search(rf"<td>{table}</td>.*?</tr>", html, re.S).group(0)


@SLOW
def test_catalog_overview_is_offline_html_pinned_to_a_transaction(catalog: Path, tmp_path: Path):
    result = dc.report("catalog_overview", output=tmp_path / "out" / "overview.html")
    html = result.html.read_text()
    newest = dc.transactions().to_pylist()[0]["transaction_id"]
    assert result.as_of == newest and newest in html  # the header names the transaction read
    assert result.notebook.is_file() and result.notebook == result.html.with_suffix(".ipynb")
    assert "window.Plotly = Plotly" in html  # plotly.js itself, inline
    assert not re.search(r"<script[^>]+src=\"[^\"]*cdn\.plot\.ly", html)
    assert '"type":"bar"' in html.replace(" ", "")  # the commits chart with its data
    assert "<td>orders</td>" in html and "<td>10</td>" in _rows_of(html, "orders")

    dc.write(pd.DataFrame({"order": range(10, 15)}), "orders", "shop", mode="add")
    again = dc.report(
        "catalog_overview", output=tmp_path / "again.html", as_of=result.as_of
    ).html.read_text()
    assert "<td>10</td>" in _rows_of(again, "orders")  # the same numbers after a new commit
    assert result.as_of in again


@SLOW
def test_a_raising_cell_fails_the_report_but_writes_html_with_the_error_first(
    catalog: Path, tmp_path: Path
):
    nb = nbformat.v4.new_notebook()
    params = nbformat.v4.new_code_cell("catalog = None\nas_of = None")
    params.metadata["tags"] = ["parameters"]
    nb.cells = [
        params,
        nbformat.v4.new_code_cell("print('first cell ran')"),
        nbformat.v4.new_code_cell("raise ValueError('broken on purpose')"),
        nbformat.v4.new_code_cell("print('never runs')"),
    ]
    template = tmp_path / "mine.ipynb"
    nbformat.write(nb, template)
    before = dc.transactions().num_rows
    with pytest.raises(dc.ReportFailedError) as failed:
        dc.report(template, output=tmp_path / "mine.html")
    html = Path(failed.value.html).read_text()
    assert "broken on purpose" in html
    assert html.index("The report failed") < html.index("first cell ran")  # the error comes first
    assert "never runs" not in html  # the run stopped at the raising cell
    assert Path(failed.value.notebook).is_file()
    assert dc.transactions().num_rows == before  # the catalog is unchanged
    assert dc.runs(kind="report").to_pylist()[0]["status"] == "failed"


def _cli(*args: str, cwd: Path) -> int:
    return subprocess.run(
        [sys.executable, "-m", "workbench", "--root", "catalog", *args],
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
    ).returncode


@SLOW
def test_cli_exit_codes(catalog: Path, tmp_path: Path):
    bad = nbformat.v4.new_notebook()
    bad.cells = [nbformat.v4.new_code_cell("1 / 0")]
    nbformat.write(bad, tmp_path / "bad.ipynb")
    assert (
        _cli("report", "catalog_overview", "-p", "title", "T", "-o", "ok.html", cwd=tmp_path) == 0
    )
    assert (tmp_path / "ok.html").is_file()
    assert _cli("report", "bad.ipynb", "-o", "bad.html", cwd=tmp_path) == 1
    assert (tmp_path / "bad.html").is_file()
    assert _cli("report", "no_such_template", cwd=tmp_path) == 2
    assert _cli("report", "catalog_overview", "-p", "only-a-key", cwd=tmp_path) == 2


def test_magic_report_parses_parameters_and_output():
    args = parse("report catalog_overview -p title 'A b' -p limit 3 -o out.html")
    assert (args.template, args.html, args.output) == ("catalog_overview", "out.html", None)
    assert parse_parameters(args.parameter) == {"title": "A b", "limit": 3}
