"""Runs: a paged, filterable grid of a catalog's runs, a Gantt timeline and a run's detail."""

from __future__ import annotations

import time
from html import escape
from typing import Any

import ipywidgets as widgets
import pandas as pd

import workbench.api as dc
from workbench.core.events.queries import STATUSES
from workbench.widgets.grid import Grid
from workbench.widgets.render import (
    STATUS_COLOURS,
    TIME_AXIS,
    chart_times,
    duration,
    status_html,
    when,
)
from workbench.widgets.run_detail import RunDetail


class RunsBrowser(widgets.VBox):
    """Browse a catalog's runs, newest first: how each ended, when, and (select one) what it did."""

    def __init__(self, catalog: str | None = None, page_size: int = 20, chart_runs: int = 200):
        self.catalog = catalog
        self.page_size = page_size
        self.chart_runs = chart_runs
        self.page = 0
        self.filter_box = widgets.Text(
            placeholder="filter by name, kind or run id", description="filter"
        )
        self.status_picker = widgets.Dropdown(
            options=[("any", ""), *((s, s) for s in STATUSES)], description="status"
        )
        self.previous_button = widgets.Button(description="◀ newer", layout={"width": "90px"})
        self.next_button = widgets.Button(description="older ▶", layout={"width": "90px"})
        self.page_label = widgets.Label()
        self.table = Grid("wb-runs-table", html=True, selectable=True)
        self.detail = RunDetail()
        self.timeline = self._timeline_widget()
        self.filter_box.observe(lambda change: self.set_filter(change["new"]), names="value")
        self.status_picker.observe(lambda change: self.set_status(change["new"]), names="value")
        self.previous_button.on_click(lambda _: self.show_page(self.page - 1))
        self.next_button.on_click(lambda _: self.show_page(self.page + 1))
        self.table.on_pick(lambda i: self.select(self.rows["run_id"].iloc[i]))
        controls = widgets.HBox(
            [
                self.filter_box,
                self.status_picker,
                self.previous_button,
                self.next_button,
                self.page_label,
            ]
        )
        super().__init__([controls, self.table, self.detail, self.timeline])
        self.add_class("wb-runs")
        self.reload()

    @staticmethod
    def _timeline_widget() -> Any:
        import plotly.graph_objects as go

        figure = go.FigureWidget(
            layout={
                "height": 300,
                "margin": {"t": 30, "b": 30},
                "title": "runs",
                "barmode": "overlay",
                "xaxis": TIME_AXIS,
                "yaxis": {"autorange": "reversed", "categoryorder": "array"},
            }
        )
        for status in STATUSES:
            figure.add_bar(orientation="h", name=status, marker_color=STATUS_COLOURS[status])
        return figure

    def reload(self) -> None:
        """Re-read the runs (after new ones were recorded)."""
        self.runs = dc.runs(read_as=dc.DatasetType.PANDAS, catalog=self.catalog)
        now = time.time_ns()
        self.runs["elapsed"] = [_elapsed(run, now) for run in self.runs.itertuples()]
        self._apply_filters()

    def set_filter(self, text: str) -> None:
        """Keep runs whose name, kind or run id contains ``text``."""
        if self.filter_box.value != text:
            self.filter_box.value = text  # the observer calls back here
            return
        self._apply_filters()

    def set_status(self, status: str) -> None:
        """Keep runs with ``status`` (any when empty)."""
        if self.status_picker.value != status:
            self.status_picker.value = status  # the observer calls back here
            return
        self._apply_filters()

    def _apply_filters(self) -> None:
        shown = self.runs
        if self.status_picker.value:
            shown = shown[shown["status"] == self.status_picker.value]
        needle = self.filter_box.value.lower()
        if needle:
            haystack = (shown["name"] + " " + shown["kind"] + " " + shown["run_id"]).str.lower()
            shown = shown[haystack.str.contains(needle, regex=False)]
        self.shown = shown
        self._draw_timeline()
        self.show_page(0)

    @property
    def pages(self) -> int:
        """Number of pages of the filtered runs."""
        return max(1, -(-len(self.shown) // self.page_size))

    def show_page(self, page: int) -> None:
        """Show page ``page`` (0 = newest)."""
        self.page = min(max(page, 0), self.pages - 1)
        self.rows = self.shown.iloc[self.page * self.page_size : (self.page + 1) * self.page_size]
        self.page_label.value = f"page {self.page + 1} of {self.pages} ({len(self.shown)} shown)"
        frame = pd.DataFrame(
            {
                "name": self.rows["name"].map(escape),
                "kind": self.rows["kind"].map(escape),
                "status": self.rows["status"].map(status_html),
                "start": self.rows["started"].map(when),
                "duration": self.rows["elapsed"].map(duration),
                "transactions": self.rows["transactions"].map(len),
                "elapsed_ns": self.rows["elapsed"],
            }
        )
        self.table.show(frame, order_by={"duration": "elapsed_ns"})

    def select(self, run_id: str) -> None:
        """Show one run's steps, metrics and transactions."""
        run = next(self.runs[self.runs["run_id"] == run_id].itertuples())
        self.detail.show(run, self.catalog)

    def _draw_timeline(self) -> None:
        """One bar per shown run from start to end (now while running); bars are at least
        1/200 of the span wide, so short runs and abandoned ones (end unknown) stay visible."""
        runs = self.shown.head(self.chart_runs)
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
