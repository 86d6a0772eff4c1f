"""``dc.report``: run a notebook with papermill on a kernel of this environment, pinned to one
catalog state, and render it to a self-contained HTML page with a header saying what it read."""

from __future__ import annotations

import html
import json
import logging
import os
import re
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from workbench.core.base.arguments import flag
from workbench.core.base.dependencies import require
from workbench.core.base.errors import InvalidArgumentError, ReportFailedError
from workbench.core.base.json_text import standard_json
from workbench.core.base.names import MAIN
from workbench.core.base.resources import package_path
from workbench.core.catalog.descriptions import html_table
from workbench.reports.kernel import START_UP, pinned_environment
from workbench.reports.notebooks import REPORTS_INSTALL, read_notebook, resolve_template
from workbench.reports.parameters import SET_BY_REPORT, checked_values, declared_parameters

REPORTS = Path("reports")  # where reports go unless ``output`` says otherwise
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
# plotly's notebook renderer puts a MathJax CDN script before every figure: offline it can
# only fail, so reports leave it out (plotly.js itself is inline)
_MATHJAX_CDN = re.compile(r'<script src="https://[^"]*/mathjax/[^"]*"></script>')


@dataclass(frozen=True)
class ReportResult:
    """A rendered report: its HTML, the executed notebook beside it, and what it read."""

    html: Path
    notebook: Path
    template: Path
    catalog: str
    as_of: str | None  # the catalog transaction the report read (None: before the first)
    parameters: dict[str, Any] = field(default_factory=dict)
    run_id: str | None = None
    seconds: float = 0.0
    branch: str = MAIN  # the branch it read
    as_of_time: int | None = None  # the moment (ns) ``as_of`` named, when it was a time

    def __str__(self) -> str:
        return f"report {self.html} (notebook {self.notebook}, as of {self.as_of})"

    def _repr_html_(self) -> str:
        return (
            f"<p>Report <a href='{html.escape(str(self.html))}' target='_blank'>"
            f"{html.escape(str(self.html))}</a> as of <code>{html.escape(str(self.as_of))}</code>"
            f" in {self.seconds:.1f} s</p>"
        )


def report(
    template: str | os.PathLike[str],
    output: str | os.PathLike[str] | None = None,
    parameters: Mapping[str, Any] | None = None,
    as_of: Any = None,
    catalog: str | None = None,
    progress: bool = True,
    *,
    branch: str | None = None,
) -> ReportResult:
    """Run ``template`` (a notebook path or a bundled template's name) with ``parameters`` as
    of one catalog state (the newest transaction unless ``as_of``) of ``branch`` (the current
    one by default), write HTML to ``output`` (default ``reports/<name>.html``) with the
    executed notebook beside it; raise ``ReportFailedError`` if a cell raises (the HTML still
    shows the error first). ``progress`` shows a bar over the notebook's cells."""
    from workbench.core.catalog.registry import catalog_name
    from workbench.core.catalog.scope import branch_scope, get_catalog
    from workbench.core.events.runs import run as recorded_run
    from workbench.version import __version__

    flag("progress", progress)
    path, values = _notebook_and_values(template, parameters)
    html_path, notebook_path = _output_files(output, path.stem)
    with branch_scope(branch, catalog):
        cat = get_catalog(catalog)
        pinned, moment = _pin(as_of, catalog)
    # with no as_of, the run log as of now (before this report's own run): the runs begun after
    # the newest transaction show, and a rerun shows no run of a later time
    runs_at = time.time_ns() if as_of is None else moment
    recorded = {**values, "as_of": pinned}
    with recorded_run(f"report {path.stem}", recorded, kind="report", catalog=catalog) as run:
        started = time.perf_counter()
        header = {
            "catalog": f"{catalog_name(cat)} ({cat.root})",
            "branch": cat.branch,
            "as of transaction": pinned or _before_first(cat),
            **({"as of time (UTC)": _utc(moment)} if moment is not None else {}),
            "parameters": standard_json(values, sort_keys=True),
            "template": str(path),
            "workbench": __version__,
            "run at (UTC)": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M:%S"),
            "run id": run.run_id,
        }
        variables = _kernel_environment(cat, pinned, runs_at)
        error = _execute(path, notebook_path, values, progress, variables)
        _render(notebook_path, html_path, header, error)
        if error is not None:
            raise ReportFailedError(
                f"Report {path.stem!r} failed: {error.rstrip('.')}. The HTML ({html_path}) shows "
                f"the failing cell first; the executed notebook is {notebook_path}.",
                html=html_path,
                notebook=notebook_path,
            )
        return ReportResult(
            html_path,
            notebook_path,
            path,
            catalog_name(cat),
            pinned,
            values,
            run.run_id,
            time.perf_counter() - started,
            cat.branch,
            moment,
        )


def _notebook_and_values(
    template: Any, parameters: Mapping[str, Any] | None
) -> tuple[Path, dict[str, Any]]:
    """The notebook to run and ``parameters`` as it takes them, checked against its
    ``parameters`` cell before any kernel starts."""
    if parameters is not None and not isinstance(parameters, Mapping):
        raise InvalidArgumentError(
            f"parameters={parameters!r} must be a dict of name -> value (or None)."
        )
    pinned_by_us = sorted(set(parameters or {}) & set(SET_BY_REPORT))
    if pinned_by_us:
        raise InvalidArgumentError(
            f"parameters may not set {', '.join(pinned_by_us)}: dc.report sets them to the "
            "catalog it reads and the transaction it pins; pass catalog= (a registered "
            "catalog's name) or as_of= to dc.report instead."
        )
    path = resolve_template(template)
    declared = declared_parameters(read_notebook(path))
    return path, checked_values(declared, parameters or {}, path)


def _output_files(output: Any, stem: str) -> tuple[Path, Path]:
    """The HTML file a report writes and the executed notebook beside it, checked to be
    writable files (not folders, not under a file) before any kernel starts."""
    if output is not None and not isinstance(output, (str, os.PathLike)):
        raise InvalidArgumentError(f"output={output!r} must be a path ending in .html.")
    html_path = Path(output) if output is not None else REPORTS / f"{stem}.html"
    if html_path.suffix != ".html":
        raise InvalidArgumentError(f"output={str(output)!r} must end in .html.")
    html_path = html_path.resolve()
    notebook_path = html_path.with_suffix(".ipynb")
    for target in (html_path, notebook_path):
        if target.is_dir():
            raise InvalidArgumentError(
                f"output={str(output)!r}: {target} is a folder; name a file in it instead, "
                f"e.g. output={str(target / f'{stem}.html')!r}."
            )
    existing = next(p for p in html_path.parents if p.exists())
    if not existing.is_dir():
        raise InvalidArgumentError(
            f"output={str(output)!r}: {existing} is a file, so nothing can be written under "
            "it; choose an output path in a folder."
        )
    if not os.access(existing, os.W_OK | os.X_OK):
        raise InvalidArgumentError(
            f"output={str(output)!r}: folder {existing} is not writable by this user; choose "
            "an output path in a folder you can write."
        )
    return html_path, notebook_path


def _before_first(cat: Any) -> str:
    """What a report pinned before a line's first transaction reads, for its header."""
    return "(empty catalog)" if cat.record is None else "(the branch's starting state)"


def _pin(as_of: Any, catalog: str | None) -> tuple[str | None, int | None]:
    """The id of the transaction to read: the newest one at or before ``as_of`` (now if None),
    so a rerun shows the same numbers after later commits; and the moment ``as_of`` names when
    it is a time (ns), when the run log is read as it was then."""
    from workbench.core.catalog.scope import get_catalog
    from workbench.core.transactions.history import transactions
    from workbench.core.transactions.time_travel import as_of_instant, resolve_sequence

    moment = None if as_of is None else as_of_instant(get_catalog(catalog), as_of)
    history = transactions(catalog=catalog, compactions=True)
    history = history.select(["transaction_id", "sequence"]).to_pylist()
    if not history:
        return None, moment
    if as_of is None:
        return history[0]["transaction_id"], None  # newest first
    last = resolve_sequence(get_catalog(catalog), as_of, "as_of")
    return next((r["transaction_id"] for r in history if r["sequence"] <= last), None), moment


def _utc(ns: int) -> str:
    return datetime.fromtimestamp(ns / 1e9, timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f")


def _kernel_environment(cat: Any, pinned: str | None, moment: int | None) -> dict[str, str]:
    """What the report's kernel needs to read the catalog as this process does, pinned to the
    ``pinned`` transaction, the run log as of ``moment`` (None: as of that transaction)
    (``pinned_environment``; its storage options as the environment variables object stores
    read, ``AWS_ENDPOINT_URL``, ..., and the run log this process writes to), and plotly's
    renderer that embeds plotly.js in each figure, so any notebook's charts draw in the HTML
    offline."""
    from workbench.core.catalog.registry import catalog_name
    from workbench.core.events.config import events_uri

    options = {key.upper(): value for key, value in cat.properties.storage_options.items()}
    return {
        **options,
        **pinned_environment(cat.root, catalog_name(cat), pinned, cat.branch, moment),
        "WORKBENCH_EVENTS": events_uri(cat),
        "PLOTLY_RENDERER": "notebook",
    }


@contextmanager
def _this_kernel(variables: Mapping[str, str]) -> Iterator[str]:
    """A kernel spec for this Python (never a system one), in a private temporary folder on
    JUPYTER_PATH; its kernel imports the same workbench as this process, with ``variables``
    added (the folder goes when the report ends, so credentials in it do not stay on disk)."""
    from ipykernel.kernelspec import write_kernel_spec

    package_root = str(Path(__file__).resolve().parent.parent.parent)
    paths = [package_root, *(os.path.abspath(p) for p in sys.path if p)]
    name = "workbench-report"
    saved = os.environ.get("JUPYTER_PATH")
    with tempfile.TemporaryDirectory(prefix="workbench-kernel-") as prefix:
        # written in place: ipykernel's install stages it in a temporary folder it leaves behind
        spec_dir = Path(prefix, "share", "jupyter", "kernels", name)
        write_kernel_spec(spec_dir, overrides={"display_name": name})
        spec = json.loads((spec_dir / "kernel.json").read_text())
        spec["argv"][0] = sys.executable
        spec["argv"].append(f"--IPKernelApp.exec_lines={START_UP}")  # before the first cell
        spec["env"] = {**variables, "PYTHONPATH": os.pathsep.join(dict.fromkeys(paths))}
        (spec_dir / "kernel.json").write_text(json.dumps(spec))
        os.environ["JUPYTER_PATH"] = os.pathsep.join(
            p for p in (str(Path(prefix) / "share" / "jupyter"), saved) if p
        )
        try:
            yield name
        finally:
            if saved is None:
                os.environ.pop("JUPYTER_PATH", None)
            else:
                os.environ["JUPYTER_PATH"] = saved


class _KnownParameters(logging.Filter):
    """Drops papermill's "Passed unknown parameter" warnings while dc.report runs a notebook:
    its parser cannot read a parameter annotated ``str | None`` and calls it unknown, while
    ``declared_parameters`` has already checked every name against the notebook."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith("Passed unknown parameter")


_KNOWN_PARAMETERS = _KnownParameters()


def _execute(
    template: Path,
    notebook: Path,
    values: Mapping[str, Any],
    progress: bool,
    environment: Mapping[str, str],
) -> str | None:
    """Run the template into ``notebook``; the failing cell's error as text, or None."""
    pm = require("papermill", "dc.report", REPORTS_INSTALL)
    notebook.parent.mkdir(parents=True, exist_ok=True)
    papermill_log = logging.getLogger("papermill")
    with _this_kernel(environment) as kernel:
        papermill_log.addFilter(_KNOWN_PARAMETERS)  # a user's own papermill runs keep it
        try:
            pm.execute_notebook(
                _literal_path(template),
                _literal_path(notebook),
                parameters=dict(values),
                kernel_name=kernel,
                language="python",  # a user notebook may not say; the kernel is Python
                cwd=str(template.parent),
                progress_bar=progress,
                log_output=False,
                config=_kernel_manager_config(),
            )
        except pm.PapermillExecutionError as e:
            return f"{e.ename}: {e.evalue}"
        finally:
            papermill_log.removeFilter(_KNOWN_PARAMETERS)
    return None


def _literal_path(path: Path) -> str:
    """``path`` as papermill takes it literally: it formats paths with the parameters (a
    ``{table}`` in a folder name would become the table's name), so braces are doubled."""
    return str(path).replace("{", "{{").replace("}", "}}")


def _kernel_manager_config() -> Any:
    """Encrypt the kernel's sockets when this ZeroMQ can (ipykernel warns on every start of a
    kernel that talks plain TCP)."""
    import zmq
    from traitlets.config import Config

    return Config({"KernelManager": {"transport_encryption": "auto"}} if zmq.has("curve") else {})


def _render(notebook: Path, html_path: Path, header: Mapping[str, str], error: str | None) -> None:
    """Write the executed notebook as HTML, inputs hidden, with the header (and on failure the
    failing cell and its error) first."""
    import nbformat
    from nbconvert import HTMLExporter

    nb = nbformat.read(str(notebook), as_version=4)
    nb.cells = [c for c in nb.cells if "papermill-error-cell-tag" not in c.metadata.get("tags", [])]
    top = [nbformat.v4.new_markdown_cell(html_table(dict(header), "workbench-report-header"))]
    if error is not None:
        top.append(nbformat.v4.new_markdown_cell(_failure(nb)))
    nb.cells = top + nb.cells
    nbformat.write(nb, str(notebook))
    exporter = HTMLExporter(
        template_name="workbench_report",
        extra_template_basedirs=[str(package_path("workbench.reports", "nbconvert"))],
        exclude_input=True,
        exclude_input_prompt=True,
    )
    body, _ = exporter.from_notebook_node(nb)
    html_path.write_text(_MATHJAX_CDN.sub("", body), encoding="utf-8")


def _failure(nb: Any) -> str:
    """Markdown showing the cell that raised, its source and its traceback."""
    for index, cell in enumerate(nb.cells):
        for out in cell.get("outputs", []) if cell.cell_type == "code" else []:
            if out.get("output_type") == "error":
                trace = _ANSI.sub("", "\n".join(out.get("traceback", [])))
                return (
                    f"<div class='workbench-report-error' style='border-left:4px solid #b00020;"
                    f"padding:4px 12px'>\n\n**The report failed** in cell {index + 1}:\n\n"
                    f"```python\n{cell.source}\n```\n\n```\n{trace}\n```\n\n</div>"
                )
    return "**The report failed**; no cell recorded the error."
