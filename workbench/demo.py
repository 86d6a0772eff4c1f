"""``make demo``: an end-to-end run on the default local catalog that ends in an HTML report."""

from __future__ import annotations

import html
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa

import workbench as dc

NAMESPACE = "demo"
REPORT = Path("reports") / "demo.html"


def _events(start: int, count: int, seed: int) -> pd.DataFrame:
    """Synthetic sensor readings with a unique ``reading_id``."""
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "reading_id": np.arange(start, start + count, dtype=np.int64),
            "sensor": rng.choice(["north", "south", "east", "west"], count),
            "celsius": rng.normal(21.0, 4.0, count).round(2),
        }
    )


def run() -> Path:
    """Run the demo pipeline and write its report; return the report's path."""
    catalog = dc.init_local()
    steps: list[str] = []

    def step(text: str, result: object = None) -> None:
        steps.append(text + (f" -> {result}" if result is not None else ""))
        print(f"[demo] {steps[-1]}")

    if dc.namespace_exists(NAMESPACE):
        dc.drop_namespace(NAMESPACE, purge=True)
    dc.create_namespace(NAMESPACE)
    schema = dc.Schema.of(
        [
            dc.Field.of(pa.field("reading_id", pa.int64()), is_merge_key=True),
            dc.Field.of(pa.field("sensor", pa.string())),
            dc.Field.of(pa.field("celsius", pa.float64())),
        ]
    )
    step(
        "create readings (20,000 rows)",
        dc.write(_events(0, 20_000, 1), "readings", NAMESPACE, schema=schema),
    )
    late = _events(19_000, 2_000, 2).assign(quality=lambda d: np.where(d.celsius > 25, "hot", "ok"))
    step("merge 2,000 late rows with a new 'quality' column", dc.write(late, "readings", NAMESPACE))
    faulty = pd.DataFrame({"reading_id": np.arange(0, 500, dtype=np.int64)})
    step("delete 500 faulty readings", dc.write(faulty, "readings", NAMESPACE, mode="delete"))
    readings = dc.read("readings", NAMESPACE, read_as=dc.DatasetType.PANDAS)
    daily = readings.groupby("sensor", as_index=False).agg(
        readings=("reading_id", "count"), mean_celsius=("celsius", "mean")
    )
    dc.tag(f"demo-before-summary-{time.time_ns()}")
    before = dc.transactions(read_as=dc.DatasetType.PYARROW).column("transaction_id")[0].as_py()
    with dc.transaction(commit_message="demo: summary and audit"):
        dc.write(daily, "sensor_summary", NAMESPACE)
        audit = pd.DataFrame({"step": ["summary"], "rows_in": [len(readings)]})
        dc.write(audit, "audit", NAMESPACE)
    step("one transaction wrote sensor_summary and audit together")
    first = dc.read("readings", NAMESPACE, read_as=dc.DatasetType.PANDAS, version=0)
    step(f"time travel: version 0 had {len(first)} rows, latest has {len(readings)}")
    existed = dc.table_exists("sensor_summary", NAMESPACE, as_of=before)
    step(f"catalog as of the transaction before the summary: summary table existed={existed}")
    history = dc.transactions(read_as=dc.DatasetType.PANDAS).head(6)
    info = dc.get_table("readings", NAMESPACE)
    return _report(catalog.root, steps, info, daily, history)


def _report(
    root: str, steps: list[str], info: dc.TableInfo, summary: pd.DataFrame, history: pd.DataFrame
) -> Path:
    items = "".join(f"<li>{html.escape(s)}</li>" for s in steps)
    recent = history[["commit_message", "tables", "operations", "rows_added", "rows_removed"]]
    REPORT.parent.mkdir(parents=True, exist_ok=True)
    REPORT.write_text(
        "<!doctype html><html><head><meta charset='utf-8'><title>workbench demo</title></head>"
        f"<body><h1>workbench demo</h1><p>Catalog: <code>{html.escape(root)}</code></p>"
        f"<h2>Steps</h2><ol>{items}</ol><h2>Table readings</h2>{info._repr_html_()}"
        f"<h2>Per-sensor summary</h2>{summary.to_html(index=False)}"
        f"<h2>Recent catalog transactions</h2>{recent.to_html(index=False)}</body></html>",
        encoding="utf-8",
    )
    return REPORT.resolve()


if __name__ == "__main__":
    path = run()
    print(f"[demo] report written to {path}")
    sys.exit(0)
