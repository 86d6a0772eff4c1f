"""Notebook-face benchmarks: magic dispatch overhead, catalog browser on 1,000 tables, history
widget over 10,000 transactions, and one time-travel step on a 1M-row table.

Run with ``python -m benchmarks.ui_bench``; each figure is a median, measured in this process.
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
}


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


def main() -> int:
    """Run the four measures, write JSON and print a Markdown table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=1000)
    parser.add_argument("--history", type=int, default=10_000)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args()
    figures = {}
    with tempfile.TemporaryDirectory() as folder:
        figures["magic_dispatch_overhead_ms"] = magic_overhead(f"{folder}/m", args.repeats * 30)
        print("magic overhead measured", file=sys.stderr)
        figures["browser_open_1000_tables_ms"] = browser_open(
            f"{folder}/b", args.tables, args.repeats
        )
        print("catalog browser measured", file=sys.stderr)
        figures["history_first_page_10k_ms"] = history_first_page(
            Path(folder) / "h", args.history, args.repeats
        )
        print("history measured", file=sys.stderr)
        figures["time_travel_step_1m_rows_ms"] = time_travel_step(
            f"{folder}/t", args.rows, args.repeats
        )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(figures, indent=2))
    print("| measure | median | target | status |\n| --- | ---: | ---: | --- |")
    for name, value in figures.items():
        target = TARGETS_MS[name]
        status = "PASS" if value < target else "MISS"
        print(f"| {name} | {value:.1f} ms | < {target} ms | {status} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
