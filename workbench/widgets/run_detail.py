"""One run's detail from its events: its steps, metrics and the transactions it committed."""

from __future__ import annotations

from html import escape
from typing import Any

import ipywidgets as widgets
import pandas as pd

import workbench.api as dc
from workbench.widgets.grid import Grid
from workbench.widgets.render import duration, status_html, text, when


class RunDetail(widgets.VBox):
    """A run's header over grids of its steps, metrics and transactions."""

    def __init__(self):
        self.header = widgets.HTML()
        self.steps = Grid("wb-run-steps", html=True)
        self.metrics = Grid("wb-run-metrics")
        self.transactions = Grid("wb-run-transactions")
        super().__init__([self.header, self.steps, self.metrics, self.transactions])
        self.add_class("wb-run-detail")

    def show(self, run: Any, catalog: str | None) -> None:
        """Show a run record (a row of ``dc.runs``) and what its events say it did."""
        events = dc.run_events(run.run_id, catalog=catalog).to_pylist()
        error = f"{text(run.error_type)}: {text(run.error_message)}" if text(run.error_type) else ""
        error_line = f"<div class='wb-error' style='color:#b00020'>{escape(error)}</div>"
        self.header.value = (
            f"<h4 style='margin:4px 0'>{escape(run.name)} {status_html(run.status)}</h4>"
            f"<div><code>{escape(run.run_id)}</code> {escape(run.kind)}, started "
            f"{when(run.started)}, parameters <code>{escape(text(run.parameters))}</code></div>"
            + (error_line if error else "")
        )
        self.steps.show(steps(events, run.status), "steps", order_by={"duration": "duration_ns"})
        self.metrics.show(metrics(events), "metrics")
        self.transactions.show(commits(events), "transactions")


def steps(events: list[dict[str, Any]], run_status: str) -> pd.DataFrame:
    """Steps in start order (``duration_ns`` sorts ``duration``); a step never finished is
    running while its run is, else shares the run's status (its process died or the run ended
    around it)."""
    rows: list[dict[str, Any]] = []
    open_steps: dict[str, list[dict[str, Any]]] = {}
    for event in events:
        step = event["step"]
        if event["event_type"] == "STEP_STARTED":
            row = {"name": step["name"], "status": run_status, "duration_ns": None}
            rows.append(row)
            open_steps.setdefault(step["name"], []).append(row)
        elif event["event_type"] == "STEP_FINISHED" and open_steps.get(step["name"]):
            row = open_steps[step["name"]].pop()
            row.update(status=step["status"], duration_ns=step["duration_ns"])
            row.update({"rows in": step["rows_in"], "rows out": step["rows_out"]})
    columns = ["name", "status", "rows in", "rows out", "duration_ns"]
    frame = pd.DataFrame(rows, columns=columns).astype(
        {"rows in": "Int64", "rows out": "Int64", "duration_ns": float}
    )
    frame["name"] = frame["name"].map(escape)
    frame["status"] = frame["status"].map(status_html)
    frame.insert(4, "duration", frame["duration_ns"].map(duration))
    return frame


def metrics(events: list[dict[str, Any]]) -> pd.DataFrame:
    """Metrics in the order they were logged."""
    logged = [e["metric"] for e in events if e["event_type"] == "METRIC_LOGGED"]
    return pd.DataFrame(logged, columns=["name", "value"])


def commits(events: list[dict[str, Any]]) -> pd.DataFrame:
    """The transactions the run committed: id, tables and rows."""
    rows = [
        {
            "transaction_id": t["transaction_id"],
            "tables": ", ".join(t["tables"] or []),
            "rows_added": t["rows_added"],
            "rows_removed": t["rows_removed"],
        }
        for t in (e["transaction"] for e in events if e["event_type"] == "TRANSACTION_COMMITTED")
    ]
    return pd.DataFrame(rows, columns=["transaction_id", "tables", "rows_added", "rows_removed"])
