"""Transaction history: a paged, filterable grid, a commit timeline and a transaction's detail."""

from __future__ import annotations

import ipywidgets as widgets
import pandas as pd

import workbench.api as dc
from workbench.widgets.grid import Grid
from workbench.widgets.paged import PagedBrowser, timeline_figure
from workbench.widgets.render import chart_times, text, when


class HistoryBrowser(PagedBrowser):
    """Browse a catalog's committed transactions, newest first; select one to see its detail."""

    key_column = "transaction_id"

    def __init__(self, catalog: str | None = None, page_size: int = 20):
        self.catalog = catalog
        self.steps_box = widgets.Checkbox(value=False, description="compaction steps", indent=False)
        self.steps_box.observe(lambda _: self.reload(), names="value")
        detail = widgets.HTML()
        detail.add_class("wb-history-detail")
        timeline = timeline_figure("commits", 260, yaxis={"title": "rows added"})
        timeline.add_scatter(
            mode="markers",
            name="transactions",
            hovertemplate="%{x}<br>%{y} rows added<br>%{text}<extra></extra>",
        )
        super().__init__(
            Grid("wb-history-table", selectable=True),
            detail,
            timeline,
            "filter by message, table or operation",
            (self.steps_box,),
            page_size,
        )
        self.add_class("wb-history")
        self.reload()

    def reload(self) -> None:
        """Re-read the history (after new commits)."""
        history = dc.transactions(
            read_as=dc.DatasetType.PANDAS, catalog=self.catalog, compactions=self.steps_box.value
        )
        self.history = history
        scatter = self.timeline.data[0]
        with self.timeline.batch_update():
            # arrays, not lists: plotly checks a list item by item (10k commits: ~100 ms)
            scatter.x = chart_times(history["end_time"])
            scatter.y = history["rows_added"].to_numpy()
            scatter.text = history["commit_message"].fillna("").to_numpy()
        self.set_filter(self.filter_box.value)

    def filtered(self, needle: str) -> pd.DataFrame:
        """Transactions whose message, tables or operations contain ``needle``."""
        history = self.history
        if not needle:
            return history
        haystack = (
            history["commit_message"].fillna("").str.lower()
            + " "
            + history["tables"].map(" ".join).str.lower()
            + " "
            + history["operations"].map(" ".join).str.lower()
        )
        return history[haystack.str.contains(needle, regex=False)]

    def show_rows(self, rows: pd.DataFrame) -> None:
        self.table.show(readable(rows))

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
