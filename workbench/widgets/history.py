"""Transaction history: a paged, filterable grid, a commit timeline and a transaction's detail."""

from __future__ import annotations

from typing import Any

import ipywidgets as widgets
import pandas as pd

import workbench.api as dc
from workbench.widgets.grid import Grid
from workbench.widgets.render import TIME_AXIS, chart_times, text, when

COMPACTION = "AUTO_COMPACT"  # the operation of automatic compaction steps


class HistoryBrowser(widgets.VBox):
    """Browse a catalog's committed transactions, newest first; select one to see its detail."""

    def __init__(self, catalog: str | None = None, page_size: int = 20):
        self.catalog = catalog
        self.page_size = page_size
        self.page = 0
        self.filter_box = widgets.Text(
            placeholder="filter by message, table or operation", description="filter"
        )
        self.steps_box = widgets.Checkbox(value=True, description="compaction steps", indent=False)
        self.previous_button = widgets.Button(description="◀ newer", layout={"width": "90px"})
        self.next_button = widgets.Button(description="older ▶", layout={"width": "90px"})
        self.page_label = widgets.Label()
        self.table = Grid("wb-history-table", selectable=True)
        self.detail = widgets.HTML()
        self.detail.add_class("wb-history-detail")
        self.timeline = self._timeline_widget()
        self.filter_box.observe(lambda change: self.set_filter(change["new"]), names="value")
        self.steps_box.observe(lambda _: self.set_filter(self.filter_box.value), names="value")
        self.previous_button.on_click(lambda _: self.show_page(self.page - 1))
        self.next_button.on_click(lambda _: self.show_page(self.page + 1))
        self.table.on_pick(lambda i: self.select(self.rows["transaction_id"].iloc[i]))
        controls = widgets.HBox(
            [
                self.filter_box,
                self.steps_box,
                self.previous_button,
                self.next_button,
                self.page_label,
            ]
        )
        super().__init__([controls, self.table, self.detail, self.timeline])
        self.add_class("wb-history")
        self.reload()

    @staticmethod
    def _timeline_widget() -> Any:
        import plotly.graph_objects as go

        figure = go.FigureWidget(
            layout={
                "height": 260,
                "margin": {"t": 30, "b": 30},
                "title": "commits",
                "xaxis": TIME_AXIS,
                "yaxis": {"title": "rows added"},
            }
        )
        figure.add_scatter(
            mode="markers",
            name="transactions",
            hovertemplate="%{x}<br>%{y} rows added<br>%{text}<extra></extra>",
        )
        return figure

    def reload(self) -> None:
        """Re-read the history (after new commits)."""
        history = dc.transactions(read_as=dc.DatasetType.PANDAS, catalog=self.catalog)
        self.history = history
        scatter = self.timeline.data[0]
        with self.timeline.batch_update():
            # arrays, not lists: plotly checks a list item by item (10k commits: ~100 ms)
            scatter.x = chart_times(history["end_time"])
            scatter.y = history["rows_added"].to_numpy()
            scatter.text = history["commit_message"].fillna("").to_numpy()
        self.set_filter(self.filter_box.value)

    def set_filter(self, text: str) -> None:
        """Keep transactions whose message, tables or operations contain ``text``."""
        if self.filter_box.value != text:
            self.filter_box.value = text
            return
        needle = text.lower()
        history = self.history
        if not self.steps_box.value:  # upkeep that changed no row
            history = history[~history["operations"].map(lambda ops: COMPACTION in ops)]
        if needle:
            haystack = (
                history["commit_message"].fillna("").str.lower()
                + " "
                + history["tables"].map(" ".join).str.lower()
                + " "
                + history["operations"].map(" ".join).str.lower()
            )
            self.shown = history[haystack.str.contains(needle, regex=False)]
        else:
            self.shown = history
        self.show_page(0)

    @property
    def pages(self) -> int:
        """Number of pages of the filtered history."""
        return max(1, -(-len(self.shown) // self.page_size))

    def show_page(self, page: int) -> None:
        """Show page ``page`` (0 = newest)."""
        self.page = min(max(page, 0), self.pages - 1)
        self.rows = self.shown.iloc[self.page * self.page_size : (self.page + 1) * self.page_size]
        self.page_label.value = f"page {self.page + 1} of {self.pages} ({len(self.shown)} shown)"
        self.table.show(readable(self.rows))

    def select(self, transaction_id: str) -> None:
        """Show one transaction's per-table detail."""
        self.detail.value = dc.read_transaction(transaction_id, self.catalog)._repr_html_()


def readable(history: pd.DataFrame) -> pd.DataFrame:
    """Rows of ``dc.transactions`` as the grids show them: local times, lists as text."""
    return pd.DataFrame(
        {
            "time": history["end_time"].map(when),
            "commit_message": history["commit_message"].map(text),
            "tables": history["tables"].map(", ".join),
            "operations": history["operations"].map(", ".join),
            "rows_added": history["rows_added"],
            "rows_removed": history["rows_removed"],
        }
    )
