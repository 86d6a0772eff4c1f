"""dc.report on real catalogs and real kernels: offline HTML, pinned catalog state, failures."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import nbformat
import pandas as pd
import pytest

import workbench as dc
from tests.chromium import chromium_page, offline
from workbench.magics.parser import parse
from workbench.reports import parse_parameters

ROOT = Path(__file__).resolve().parents[2]
KERNEL = pytest.mark.kernel  # each report starts a kernel (about 10 s)


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


@KERNEL
def test_catalog_overview_is_offline_html_pinned_to_a_transaction(
    catalog: Path, tmp_path: Path, capfd, monkeypatch
):
    temporary = tmp_path / "temporary"
    temporary.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temporary))  # this process's temporary files
    result = dc.report("catalog_overview", output=tmp_path / "out" / "overview.html")
    assert not list(temporary.iterdir())  # the kernel spec's folder gone with the report
    assert "without encryption" not in capfd.readouterr().err  # the kernel's sockets use Curve
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


@KERNEL
def test_a_raising_cell_fails_the_report_but_writes_html_with_the_error_first(
    catalog: Path, tmp_path: Path
):
    nb = nbformat.v4.new_notebook()
    params = nbformat.v4.new_code_cell("catalog = None\nas_of = None")
    params.metadata["tags"] = ["parameters"]
    nb.cells = [
        params,
        nbformat.v4.new_code_cell("print('first cell ran')"),
        nbformat.v4.new_code_cell("import plotly.express as px\npx.bar(x=['a'], y=[7]).show()"),
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
    assert "window.Plotly = Plotly" in html  # a user's chart, renderer unset, has plotly.js inline
    assert Path(failed.value.notebook).is_file()
    assert dc.transactions().num_rows == before  # the catalog is unchanged
    assert dc.runs(kind="report").to_pylist()[0]["status"] == "failed"


@KERNEL
def test_a_users_notebook_reads_the_reported_catalog_pinned_with_no_set_up(
    catalog: Path, tmp_path: Path, caplog
):
    nb = nbformat.v4.new_notebook()  # no parameters cell, no dc.init: just reads
    nb.cells = [
        nbformat.v4.new_code_cell("import workbench as dc"),
        nbformat.v4.new_code_cell(
            "orders = dc.read('orders', 'shop', read_as='pandas')\n"
            "print('ORDERS', len(orders), 'TABLES', [t.name for t in dc.list_tables('shop')])\n"
            "print('HISTORY', dc.transactions().num_rows)"
        ),
    ]
    mine = tmp_path / "analysis.ipynb"
    nbformat.write(nb, mine)
    pinned = dc.transactions().to_pylist()[0]["transaction_id"]
    commits = dc.transactions().num_rows
    dc.write(pd.DataFrame({"order": range(10, 15)}), "orders", "shop", mode="add")  # after the pin
    dc.write(pd.DataFrame({"b": [1]}), "later", "shop")
    with caplog.at_level("WARNING"):
        result = dc.report(mine, output=tmp_path / "analysis.html", as_of=pinned, progress=False)
    assert "unknown parameter" not in caplog.text
    html = result.html.read_text()
    assert f"ORDERS 10 TABLES ['orders']\nHISTORY {commits}" in html  # as of the pin, not now

    nb.cells.append(nbformat.v4.new_code_cell("dc.write(orders, 'copy', 'shop')"))
    nbformat.write(nb, mine)
    before = dc.transactions().num_rows
    with pytest.raises(dc.ReportFailedError, match="HistoricTransactionError"):
        dc.report(mine, output=tmp_path / "writes.html", as_of=pinned, progress=False)
    assert "pinned" in (tmp_path / "writes.html").read_text()  # the error says why
    assert dc.transactions().num_rows == before and not dc.table_exists("copy", "shop")


@KERNEL
def test_reports_of_main_and_a_branch_each_read_their_own_line(catalog: Path, tmp_path: Path):
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell(
            "import workbench as dc\n"
            "print('ORDERS', len(dc.read('orders', 'shop', read_as='pandas')), 'ON', "
            "dc.current_branch())"
        )
    ]
    mine = tmp_path / "orders.ipynb"
    nbformat.write(nb, mine)
    dc.create_branch("exp")
    fresh = dc.report(mine, output=tmp_path / "fresh.html", branch="exp", progress=False)
    assert "ORDERS 10 ON exp" in fresh.html.read_text() and fresh.as_of is None
    assert "(the branch's starting state)" in fresh.html.read_text()
    dc.write(pd.DataFrame({"order": range(10, 15)}), "orders", "shop", mode="add", branch="exp")
    on_branch = dc.report(mine, output=tmp_path / "exp.html", branch="exp", progress=False)
    on_main = dc.report(mine, output=tmp_path / "main.html", progress=False)
    assert "ORDERS 15 ON exp" in on_branch.html.read_text() and on_branch.branch == "exp"
    assert "ORDERS 10 ON main" in on_main.html.read_text() and on_main.branch == "main"


@KERNEL
def test_a_report_on_an_s3_catalog_reads_it_with_the_catalogs_storage_options(s3, tmp_path: Path):
    secret = "secret-given-in-code-only"  # moto takes any key; the kernel must get this one
    options = {**s3.options, "AWS_SECRET_ACCESS_KEY": secret}
    root = f"s3://{s3.new_bucket()}/catalog"
    dc.init({"default": dc.Catalog(dc.CatalogProperties(root, options))})
    dc.write(pd.DataFrame({"order": range(7)}), "orders")
    result = dc.report("catalog_overview", output=tmp_path / "s3.html", progress=False)
    html = result.html.read_text()
    assert root in html and "<td>7</td>" in _rows_of(html, "orders")
    assert secret not in html and secret not in result.notebook.read_text()


@KERNEL
def test_a_report_reads_the_run_log_this_process_writes_to(catalog: Path, tmp_path: Path):
    from workbench.core.events.config import configure_events

    dc.init(events=f"sqlite:///{tmp_path}/runs.db")
    try:
        with dc.run("refresh") as run, run.step("load") as step:
            dc.write(pd.DataFrame({"a": [4, 5]}), "t", mode="add")
            step.rows_in, step.rows_out = 2, 2
        result = dc.report(
            "pipeline_run", output=tmp_path / "run.html", parameters={"name": "refresh"}
        )
        assert run.run_id in result.html.read_text()  # the kernel found the run in SQLite
        assert dc.runs(kind="report").to_pylist()[0]["run_id"] == result.run_id
    finally:
        configure_events(None)


def _cli(*args: str, cwd: Path) -> int:
    return subprocess.run(
        [sys.executable, "-m", "workbench", "--root", "catalog", *args],
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
    ).returncode


@KERNEL
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


def test_cli_refuses_a_root_that_does_not_exist(tmp_path: Path):
    missing = tmp_path / "typo" / "catalog"
    done = subprocess.run(
        [sys.executable, "-m", "workbench", "--root", str(missing), "runs"],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2 and "the folder does not exist" in done.stderr
    assert not (tmp_path / "typo").exists()  # nothing was created there


MEDIA = ROOT / "media"
# template -> its parameters on the sample catalog, and the fewest charts it must draw there
TEMPLATES = {
    "catalog_overview": ({}, 3),
    "table_profile": ({"namespace": "shop", "table": "raw"}, 6),
    "pipeline_run": ({"name": "refresh"}, 4),
    "inference_run": ({"namespace": "media", "table": "samples"}, 4),
}


@pytest.fixture(scope="module")
def reports(tmp_path_factory) -> dict[str, dc.ReportResult]:
    """Every bundled template rendered once on a catalog with a keyed table changed twice, a
    recorded pipeline run and two models run over a few media files (one run twice)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    folder = tmp_path_factory.mktemp("reports")
    dc.init_local(folder / "catalog")
    keyed = dc.Schema.of([dc.Field.of(pa.field("id", pa.int64()), is_merge_key=True)])
    raw = pd.DataFrame({"id": range(50), "x": [i / 2 for i in range(50)], "s": ["a", "b"] * 25})
    dc.write(raw, "raw", "shop", schema=keyed, auto_create_namespace=True)
    with (
        dc.run("refresh", {"label": "r1"}) as run,
        dc.transaction(commit_message="refresh"),
        run.step("clean") as step,
    ):
        clean = dc.read("raw", "shop", read_as="pandas").query("x > 5")
        dc.write(clean, "clean", "shop", mode="create")
        step.rows_in, step.rows_out = len(raw), len(clean)
    dc.write(pd.DataFrame({"id": [5, 99], "x": [1.5, 2.5], "s": ["c", None]}), "raw", "shop")
    files = folder / "files"
    for name in ("images/scene_00.jpg", "images/scene_02.png", "texts/" + _first_text()):
        (files / name).parent.mkdir(parents=True, exist_ok=True)
        (files / name).write_bytes((MEDIA / name).read_bytes())
    dc.import_media(files, "samples", "media")
    images = pc.field("kind") == "image"
    dc.infer("samples", "image-facts", namespace="media", where=images, progress=False)
    dc.infer(
        "samples",
        "text-embedding",
        namespace="media",
        progress=False,
        where=pc.field("kind") == "text",
    )
    dc.infer("samples", "image-facts", namespace="media", where=images, progress=False)
    return {
        name: dc.report(name, output=folder / "html" / f"{name}.html", parameters=parameters)
        for name, (parameters, _) in TEMPLATES.items()
    }


def _table_rows(html: str, column: str) -> list[dict[str, str]]:
    """The rows of the first HTML table with a ``column`` header, as header -> cell text (the
    index column left out)."""
    table = next(t for t in re.findall(r"<table.*?</table>", html, re.S) if f">{column}<" in t)
    cells = [
        [
            re.sub(r"\.0$", "", c.strip())
            for c in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row, re.S)
        ]
        for row in re.findall(r"<tr[^>]*>(.*?)</tr>", table, re.S)
    ]
    header, *body = cells
    return [dict(zip(header[1:], row[1:], strict=True)) for row in body]


def _first_text() -> str:
    return sorted(p.name for p in (MEDIA / "texts").iterdir())[0]


@KERNEL
@pytest.mark.xdist_group("rendered_templates")  # one worker renders them (a module fixture)
@pytest.mark.parametrize("template", TEMPLATES)
def test_every_template_renders_its_charts_with_their_data(reports, template: str):
    result = reports[template]
    html = result.html.read_text()
    assert result.as_of in html and "Plotly.newPlot" in html
    assert not re.search(r"<script[^>]+src=\"https?://", html)  # nothing to fetch
    figures = re.findall(r"Plotly\.newPlot\(\s*\"[^\"]+\",\s*(\[.*?\])\s*,\s*\{", html, re.S)
    assert len(figures) >= TEMPLATES[template][1]
    assert all('"x":' in f or '"y":' in f for f in figures)  # each figure carries its data


@KERNEL
def test_reports_show_what_the_catalog_holds(reports):
    profile = reports["table_profile"].html.read_text()
    assert "shop.raw" in profile and "merge key" in profile
    run = reports["pipeline_run"].html.read_text()
    assert "shop.clean" in run and "new table" in run  # the before/after of the run's table
    inference = reports["inference_run"].html.read_text()
    assert "image-facts" in inference and "text-embedding" in inference
    assert "dominant_colour" in inference and "data:image/" in inference  # charts, thumbnails
    runs = _table_rows(inference, "skipped as unchanged")
    facts = [r for r in runs if r["model"] == "image-facts"]  # newest first
    assert [(r["predicted"], r["skipped as unchanged"]) for r in facts] == [("0", "2"), ("2", "0")]


# charts that plotly.js drew: a plot element holding at least one rendered trace
DRAWN = (
    "[...document.querySelectorAll('.js-plotly-plot')]"
    ".filter(plot => plot.querySelector('g.trace')).length"
)


@KERNEL
def test_report_charts_draw_offline_in_chromium(reports, tmp_path: Path):
    for template, (_, fewest) in TEMPLATES.items():
        with chromium_page(tmp_path / f"{template}.png", width=1280, height=900) as page:
            errors: list[str] = []
            page.on("pageerror", lambda error, errors=errors: errors.append(str(error)))
            aborted = offline(page, lambda url: url.startswith(("file:", "data:", "blob:")))
            page.goto(reports[template].html.as_uri())
            page.wait_for_function(f"({DRAWN}) >= {fewest}")
            drawn, plots = page.evaluate(DRAWN), page.locator(".js-plotly-plot").count()
        assert drawn == plots >= fewest, template  # every chart drew its traces
        assert not errors, errors
        assert not aborted, aborted  # the page asked the network for nothing


def test_magic_report_parses_parameters_and_output():
    args = parse("report catalog_overview -p title 'A b' -p limit 3 -o out.html")
    assert (args.template, args.html, args.output) == ("catalog_overview", "out.html", None)
    assert parse_parameters(args.parameter) == {"title": "A b", "limit": 3}


def test_bad_arguments_fail_before_any_kernel_starts(catalog: Path, tmp_path: Path):
    with pytest.raises(dc.InvalidArgumentError, match="as_of="):
        dc.report("catalog_overview", parameters={"as_of": "yesterday"})
    with pytest.raises(dc.InvalidArgumentError, match="dict"):
        dc.report("catalog_overview", parameters=[("title", "x")])
    with pytest.raises(dc.InvalidArgumentError, match=r"\.html"):
        dc.report("catalog_overview", output=tmp_path / "out.pdf")
    with pytest.raises(dc.InvalidArgumentError, match="True or False"):
        dc.report("catalog_overview", progress="no")
    with pytest.raises(dc.InvalidArgumentError, match="table_profile"):
        dc.report("no_such_template")  # the message lists the bundled templates
    assert not (tmp_path / "out.pdf").exists()


def test_what_is_not_a_notebook_or_a_writable_output_is_refused_before_any_kernel_starts(
    catalog: Path, tmp_path: Path
):
    data = tmp_path / "data.csv"
    data.write_text("id\n1\n")
    (tmp_path / "folder.html").mkdir()
    cases = [
        (lambda: dc.report(str(data)), "not a Jupyter notebook"),
        (lambda: dc.report(None), "must name a notebook"),
        (lambda: dc.report(3), "must name a notebook"),
        (lambda: dc.report("catalog_overview", output=data / "out.html"), "is a file"),
        (lambda: dc.report("catalog_overview", output=tmp_path / "folder.html"), "is a folder"),
        (lambda: dc.report("catalog_overview", output=3), "must be a path"),
    ]
    for call, message in cases:
        with pytest.raises(dc.InvalidArgumentError, match=message):
            call()
    assert dc.runs(kind="report").num_rows == 0  # no report started
    assert data.read_text() == "id\n1\n"


def test_a_misspelt_or_mistyped_parameter_is_refused_naming_the_notebooks_parameters(
    catalog: Path, tmp_path: Path
):
    with pytest.raises(dc.InvalidArgumentError, match="Unknown parameter tabel") as raised:
        dc.report("table_profile", output=tmp_path / "p.html", parameters={"tabel": "t"})
    assert "namespace, sample_rows, since, table, title" in str(raised.value)
    with pytest.raises(dc.InvalidArgumentError, match="declares table as str"):
        dc.report("table_profile", output=tmp_path / "p.html", parameters={"table": 5})
    with pytest.raises(dc.InvalidArgumentError, match="cannot be passed to a notebook"):
        dc.report("table_profile", parameters={"table": "t", "since": {1, 2}})
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("print('no parameters cell')")]
    nbformat.write(nb, tmp_path / "plain.ipynb")
    with pytest.raises(dc.InvalidArgumentError, match="no cell tagged 'parameters'"):
        dc.report(tmp_path / "plain.ipynb", parameters={"x": 1})
    assert dc.runs(kind="report").num_rows == 0 and not (tmp_path / "p.html").exists()


def test_command_line_parameters_take_the_type_the_notebook_declares():
    parsed = parse_parameters(
        [("table", "2024"), ("sample_rows", "10"), ("title", "None"), ("since", "17")],
        "table_profile",
    )
    assert parsed == {"table": "2024", "sample_rows": 10, "title": "None", "since": 17}
    assert parse_parameters([("table", "None")], "table_profile") == {"table": None}
    with pytest.raises(dc.InvalidArgumentError, match="declares sample_rows as int"):
        parse_parameters([("sample_rows", "ten")], "table_profile")
    assert parse_parameters([("limit", "3")]) == {"limit": 3}  # no notebook: literals


def test_times_given_as_parameters_reach_the_notebook_as_ns():
    from pathlib import Path as P

    import numpy as np

    from workbench.reports.notebooks import read_notebook, resolve_template
    from workbench.reports.parameters import checked_values, declared_parameters

    path = resolve_template("table_profile")
    declared = declared_parameters(read_notebook(path))
    moment = pd.Timestamp("2026-11-21 09:30:00.123456789", tz="UTC")
    as_datetime = moment.floor("us").to_pydatetime()  # a datetime holds microseconds
    for since in (moment, as_datetime, np.datetime64(moment.value, "ns"), moment.value):
        checked = checked_values(declared, {"table": "t", "since": since}, P(path))
        assert checked["since"] // 1000 == moment.value // 1000
    checked = checked_values(declared, {"table": "t", "sample_rows": np.int64(5)}, P(path))
    assert checked["sample_rows"] == 5 and type(checked["sample_rows"]) is int


@KERNEL
def test_a_table_profile_compares_with_a_time_given_as_a_datetime(catalog: Path, tmp_path: Path):
    from datetime import datetime, timezone

    dc.write(pd.DataFrame({"a": [9]}), "t", mode="add")
    before_last = datetime.now(timezone.utc)
    dc.write(pd.DataFrame({"a": [10, 11]}), "t", mode="add")
    result = dc.report(
        "table_profile",
        output=tmp_path / "profile.html",
        parameters={"table": "t", "since": before_last},
        progress=False,
    )
    html = result.html.read_text()
    assert "Rows changed since" in html and result.parameters["since"] > 0


@KERNEL
def test_a_table_profile_since_before_the_table_existed_profiles_it_from_its_creation(
    catalog: Path, tmp_path: Path
):
    from datetime import datetime

    dc.write(pd.DataFrame({"id": [1, 2], "kind": ["a", "b"]}), "late")
    dc.write(pd.DataFrame({"id": [3], "kind": ["c"]}), "late", mode="add")
    result = dc.report(
        "table_profile",
        output=tmp_path / "late.html",
        parameters={"table": "late", "since": datetime(2026, 1, 1)},  # before the catalog, too
        progress=False,
    )
    html = result.html.read_text()
    assert "before its creation" in html and "+id, +kind" in html
    assert re.search(r"rows added</th>\s*<td>3</td>", html)


@KERNEL
def test_cli_gives_a_text_parameter_that_looks_like_a_number_as_text(catalog: Path, tmp_path):
    dc.write(pd.DataFrame({"year": [2024]}), "2024")
    assert (
        _cli("report", "table_profile", "-p", "table", "2024", "-o", "2024.html", cwd=tmp_path) == 0
    )
    assert "default.2024" in (tmp_path / "2024.html").read_text()


@KERNEL
def test_a_pipeline_report_pinned_to_a_time_shows_no_run_started_after_it(
    catalog: Path, tmp_path: Path, caplog
):
    import time

    with dc.run("refresh") as first:
        dc.write(pd.DataFrame({"a": [4]}), "t", mode="add")
    pinned_at = time.time_ns()
    with pytest.raises(ValueError), dc.run("refresh") as failed:
        raise ValueError("bad input")  # started after the point, committed nothing
    result = dc.report(
        "pipeline_run",
        output=tmp_path / "run.html",
        parameters={"name": "refresh"},
        as_of=pinned_at,
        progress=False,
    )
    html = result.html.read_text()
    assert first.run_id in html and failed.run_id not in html
    assert result.as_of_time == pinned_at and "as of time (UTC)" in html
    # name is declared (as `str | None`, which papermill's own parser cannot read)
    assert "unknown parameter" not in caplog.text


@KERNEL
def test_a_pipeline_report_pinned_to_a_transaction_shows_no_run_started_after_it(
    catalog: Path, tmp_path: Path
):
    with dc.run("refresh") as first:
        dc.write(pd.DataFrame({"a": [4]}), "t", mode="add")
    pinned = dc.transactions(limit=1).column("transaction_id")[0].as_py()
    with pytest.raises(ValueError), dc.run("refresh") as failed:
        raise ValueError("bad input")  # started after the point, committed nothing
    now = dc.report(
        "pipeline_run", tmp_path / "now.html", {"name": "refresh"}, progress=False
    ).html.read_text()
    assert failed.run_id in now  # unpinned: the newest run, though it made no transaction
    dc.write(pd.DataFrame({"a": [5]}), "t", mode="add")  # a later commit
    result = dc.report(
        "pipeline_run", tmp_path / "then.html", {"name": "refresh"}, as_of=pinned, progress=False
    )
    html = result.html.read_text()
    assert result.as_of == pinned
    assert first.run_id in html and failed.run_id not in html


@KERNEL
def test_paths_with_braces_are_taken_literally(catalog: Path, tmp_path: Path):
    folder = tmp_path / "{title}"
    folder.mkdir()
    nb = nbformat.v4.new_notebook()
    params = nbformat.v4.new_code_cell('title = "x"')
    params.metadata["tags"] = ["parameters"]
    nb.cells = [params, nbformat.v4.new_code_cell("print('TITLE', title)")]
    nbformat.write(nb, folder / "my {pm}.ipynb")
    output = folder / "out {title}.html"
    result = dc.report(folder / "my {pm}.ipynb", output=output, parameters={"title": "T"})
    assert result.html == output and "TITLE T" in output.read_text()
    assert sorted(p.name for p in folder.iterdir()) == [
        "my {pm}.ipynb",
        "out {title}.html",
        "out {title}.ipynb",
    ]
