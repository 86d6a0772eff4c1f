"""One run's detail from its events: its steps, metrics and the transactions it committed."""

from __future__ import annotations

from html import escape
from typing import Any

import pandas as pd

import workbench as dc
from workbench.widgets.render import duration, preview_html, status_html, text, when


def run_detail_html(run: Any, catalog: str | None) -> str:
    """A run record (a row of ``dc.runs``) as a header and its steps, metrics and commits."""
    events = dc.run_events(run.run_id, catalog=catalog).to_pylist()
    error = f"{text(run.error_type)}: {text(run.error_message)}" if text(run.error_type) else ""
    header = (
        f"<h4 style='margin:4px 0'>{escape(run.name)} {status_html(run.status)}</h4>"
        f"<div><code>{escape(run.run_id)}</code> {escape(run.kind)}, started "
        f"{when(run.started)}, parameters <code>{escape(text(run.parameters))}</code></div>"
        + (f"<div class='wb-error' style='color:#b00020'>{escape(error)}</div>" if error else "")
    )
    return (
        header
        + preview_html(steps(events, run.status), "steps", "wb-run-steps", escape_cells=False)
        + preview_html(metrics(events), "metrics", "wb-run-metrics")
        + preview_html(commits(events), "transactions", "wb-run-transactions")
    )


def steps(events: list[dict[str, Any]], run_status: str) -> pd.DataFrame:
    """Steps in start order; a step never finished is running while its run is, else shares
    the run's status (its process died or the run ended around it)."""
    rows: list[dict[str, Any]] = []
    open_steps: dict[str, list[dict[str, Any]]] = {}
    for event in events:
        step = event["step"]
        if event["event_type"] == "STEP_STARTED":
            row = {"name": step["name"], "status": run_status, "duration": ""}
            rows.append(row)
            open_steps.setdefault(step["name"], []).append(row)
        elif event["event_type"] == "STEP_FINISHED" and open_steps.get(step["name"]):
            row = open_steps[step["name"]].pop()
            row.update(status=step["status"], duration=duration(step["duration_ns"]))
            row.update({"rows in": step["rows_in"], "rows out": step["rows_out"]})
    frame = pd.DataFrame(rows, columns=["name", "status", "rows in", "rows out", "duration"])
    frame["name"] = frame["name"].map(escape)
    frame["status"] = frame["status"].map(status_html)
    return frame.astype({"rows in": "Int64", "rows out": "Int64"})


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
