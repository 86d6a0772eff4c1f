"""Runs: a paged, filterable grid of a catalog's runs, a Gantt timeline and a run's detail."""

from __future__ import annotations

import time
from html import escape
from typing import Any

import ipywidgets as widgets
import pandas as pd

import workbench.api as dc
from workbench.frontend.views import RUN_STATUSES as STATUSES
from workbench.widgets.grid import Grid
from workbench.widgets.paged import PagedBrowser, timeline_figure
from workbench.widgets.render import (
    STATUS_COLOURS,
    chart_times,
    duration,
    status_html,
    when,
)
from workbench.widgets.run_detail import RunDetail


class RunsBrowser(PagedBrowser):
    """Browse a catalog's runs, newest first: how each ended, when, and (select one) what it did."""

    key_column = "run_id"

    def __init__(self, catalog: str | None = None, page_size: int = 20, chart_runs: int = 200):
        self.catalog = catalog
        self.chart_runs = chart_runs
        self.status_picker = widgets.Dropdown(
            options=[("any", ""), *((s, s) for s in STATUSES)], description="status"
        )
        self.status_picker.observe(lambda change: self.set_status(change["new"]), names="value")
        timeline = timeline_figure(
            "runs",
            300,
            barmode="overlay",
            yaxis={"autorange": "reversed", "categoryorder": "array"},
        )
        for status in STATUSES:
            timeline.add_bar(orientation="h", name=status, marker_color=STATUS_COLOURS[status])
        super().__init__(
            Grid("wb-runs-table", html=True, selectable=True),
            RunDetail(),
            timeline,
            "filter by name, kind or run id",
            (self.status_picker,),
            page_size,
        )
        self.add_class("wb-runs")
        self.reload()

    def reload(self) -> None:
        """Re-read the runs (after new ones were recorded)."""
        self.runs = dc.runs(read_as=dc.DatasetType.PANDAS, catalog=self.catalog)
        now = time.time_ns()
        self.runs["elapsed"] = [_elapsed(run, now) for run in self.runs.itertuples()]
        self.set_filter(self.filter_box.value)

    def set_status(self, status: str) -> None:
        """Keep runs with ``status`` (any when empty)."""
        if self.status_picker.value != status:
            self.status_picker.value = status  # the observer calls back here
            return
        self.set_filter(self.filter_box.value)

    def filtered(self, needle: str) -> pd.DataFrame:
        """Runs of the picked status whose name, kind or run id contains ``needle``."""
        shown = self.runs
        if self.status_picker.value:
            shown = shown[shown["status"] == self.status_picker.value]
        if needle:
            haystack = (shown["name"] + " " + shown["kind"] + " " + shown["run_id"]).str.lower()
            shown = shown[haystack.str.contains(needle, regex=False)]
        self._draw_timeline(shown)
        return shown

    def show_rows(self, rows: pd.DataFrame) -> None:
        frame = pd.DataFrame(
            {
                "name": rows["name"].map(escape),
                "kind": rows["kind"].map(escape),
                "status": rows["status"].map(status_html),
                "start": rows["started"].map(when),
                "duration": rows["elapsed"].map(duration),
                "transactions": rows["transactions"].map(len),
                "elapsed_ns": rows["elapsed"],
            }
        )
        self.table.show(frame, order_by={"duration": "elapsed_ns"})

    def select(self, run_id: str) -> None:
        """Show one run's steps, metrics and transactions."""
        run = next(self.runs[self.runs["run_id"] == run_id].itertuples())
        self.detail.show(run, self.catalog)

    def _draw_timeline(self, shown: pd.DataFrame) -> None:
        """One bar per shown run from start to end (now while running); bars are at least
        1/200 of the span wide, so short runs and abandoned ones (end unknown) stay visible."""
        runs = shown.head(self.chart_runs)
        labels = [f"{run.name} · {run.run_id[-6:]}" for run in runs.itertuples()]
        ends = runs["started"] + runs["elapsed"].fillna(0)
        span = (ends.max() - runs["started"].min()) if len(runs) else 0
        widths_ms = runs["elapsed"].fillna(0).clip(lower=span / 200) / 1e6
        with self.timeline.batch_update():
            self.timeline.layout.yaxis.categoryarray = labels
            for bar in self.timeline.data:
                mine = (runs["status"] == bar.name).to_numpy()
                bar.base = chart_times(runs["started"][mine])
                bar.x = widths_ms[mine].tolist()
                bar.y = [label for label, keep in zip(labels, mine, strict=True) if keep]


def _elapsed(run: Any, now: int) -> float | None:
    """How long a run took, or has taken so far while running; None when unknown (abandoned)."""
    if not pd.isna(run.duration_ns):
        return float(run.duration_ns)
    return float(now - run.started) if run.status == "running" else None
