"""Report benchmark: ``dc.report("catalog_overview")`` over a catalog of 200 tables and about
10,000 transactions, end to end (kernel start, papermill, HTML), beside the same notebook run by
hand with papermill and nbconvert, and an empty notebook (the kernel's start-up floor).

Run with ``python -m benchmarks.report_bench [--tables N] [--history N] [--repeats R]``; each
figure is a median of R runs, measured in one run on this machine.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.timing import median_seconds
from benchmarks.txn_bench import build_history
from workbench.reports import resolve_template

DEFAULT_OUT = Path(__file__).resolve().parent / "results" / "report.json"
TARGET_SECONDS = 20.0
TEMPLATE = "catalog_overview"  # a bundled template


def by_hand(notebook: Path, out: Path, parameters: dict[str, Any]) -> None:
    """What a user does without dc.report: papermill on the python3 kernel with plotly's
    inline renderer (else the HTML has no charts), then nbconvert."""
    import papermill as pm
    from nbconvert import HTMLExporter

    os.environ["PLOTLY_RENDERER"] = "notebook"

    executed = out.with_suffix(".ipynb")
    pm.execute_notebook(
        str(notebook),
        str(executed),
        parameters=parameters,
        kernel_name="python3",
        cwd=str(notebook.parent),
        progress_bar=False,
    )
    body, _ = HTMLExporter(exclude_input=True).from_filename(str(executed))
    out.write_text(body, encoding="utf-8")


def empty_notebook(folder: Path) -> Path:
    """A notebook with only a parameters cell: running it costs the kernel's start."""
    import nbformat

    cell = nbformat.v4.new_code_cell("catalog = None")
    cell.metadata["tags"] = ["parameters"]
    path = folder / "empty.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[cell]), str(path))
    return path


def main() -> int:
    """Build the catalog, time the three ways, write JSON and print a Markdown table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=200)
    parser.add_argument("--history", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args()

    import workbench as dc

    with tempfile.TemporaryDirectory(prefix="report-bench-") as tmp:
        folder = Path(tmp)
        root = folder / "catalog"
        started = time.perf_counter()
        build_history(root, args.history, tables=args.tables)
        built = time.perf_counter() - started
        transactions = dc.transactions().num_rows
        tables = len(dc.list_tables("default"))
        pinned = dc.transactions(limit=1).column("transaction_id")[0].as_py()
        parameters = {"catalog": str(root), "as_of": pinned}
        notebook = resolve_template(TEMPLATE)
        results = {
            "tables": tables,
            "transactions": transactions,
            "build_seconds": round(built, 1),
            "dc_report_seconds": median_seconds(
                lambda: dc.report(TEMPLATE, output=folder / "report.html", progress=False),
                args.repeats,
            ),
            "papermill_by_hand_seconds": median_seconds(
                lambda: by_hand(notebook, folder / "by_hand.html", parameters), args.repeats
            ),
            "empty_notebook_seconds": median_seconds(
                lambda: by_hand(empty_notebook(folder), folder / "empty.html", {}), args.repeats
            ),
        }
    report = results["dc_report_seconds"]
    results["dc_report_vs_by_hand"] = report / results["papermill_by_hand_seconds"]
    results["passes_target"] = report < TARGET_SECONDS
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2) + "\n")
    print(f"catalog: {tables} tables, {transactions} transactions (built in {built:.0f} s)")
    print("| way | median seconds |\n|---|---:|")
    print(f"| dc.report('catalog_overview') | {report:.1f} |")
    print(f"| papermill + nbconvert by hand | {results['papermill_by_hand_seconds']:.1f} |")
    print(f"| empty notebook (kernel start) | {results['empty_notebook_seconds']:.1f} |")
    verdict = "PASS" if results["passes_target"] else "FAIL"
    print(
        f"dc.report / by hand: {results['dc_report_vs_by_hand']:.2f}x; "
        f"target < {TARGET_SECONDS:.0f} s: {verdict}"
    )
    return 0 if results["passes_target"] else 1


if __name__ == "__main__":
    sys.exit(main())
