"""A paged, filterable grid of records with a timeline and the picked record's detail: what the
history and runs browsers share (their records, filters, columns and charts differ)."""

from __future__ import annotations

from typing import Any

import ipywidgets as widgets
import pandas as pd

from workbench.widgets.grid import Grid
from workbench.widgets.render import TIME_AXIS


def timeline_figure(title: str, height: int, **layout: Any) -> Any:
    """An empty plotly figure widget with a local-time x axis, for a browser's timeline."""
    import plotly.graph_objects as go

    base = {"height": height, "margin": {"t": 30, "b": 30}, "title": title, "xaxis": TIME_AXIS}
    return go.FigureWidget(layout={**base, **layout})


class PagedBrowser(widgets.VBox):
    """Records newest first, ``page_size`` a page, filtered by the text box (and the
    subclass's own ``controls``); a picked row shows the record keyed by ``key_column``."""

    key_column = ""

    def __init__(
        self,
        grid: Grid,
        detail: widgets.Widget,
        timeline: Any,
        placeholder: str,
        controls: tuple[widgets.Widget, ...] = (),
        page_size: int = 20,
    ):
        self.page_size, self.page = page_size, 0
        self.shown = self.rows = pd.DataFrame()
        self.filter_box = widgets.Text(placeholder=placeholder, description="filter")
        self.previous_button = widgets.Button(description="◀ newer", layout={"width": "90px"})
        self.next_button = widgets.Button(description="older ▶", layout={"width": "90px"})
        self.page_label = widgets.Label()
        self.table, self.detail, self.timeline = grid, detail, timeline
        self.filter_box.observe(lambda change: self.set_filter(change["new"]), names="value")
        self.previous_button.on_click(lambda _: self.show_page(self.page - 1))
        self.next_button.on_click(lambda _: self.show_page(self.page + 1))
        self.table.on_pick(lambda i: self.select(self.rows[self.key_column].iloc[i]))
        buttons = [self.previous_button, self.next_button, self.page_label]
        bar = widgets.HBox([self.filter_box, *controls, *buttons])
        super().__init__([bar, self.table, self.detail, self.timeline])

    def set_filter(self, text: str) -> None:
        """Keep the records whose text contains ``text`` (and the other controls choose)."""
        if self.filter_box.value != text:
            self.filter_box.value = text  # the observer calls back here
            return
        self.shown = self.filtered(text.lower())
        self.show_page(0)

    @property
    def pages(self) -> int:
        """Number of pages of the filtered records."""
        return max(1, -(-len(self.shown) // self.page_size))

    def show_page(self, page: int) -> None:
        """Show page ``page`` (0 = newest)."""
        self.page = min(max(page, 0), self.pages - 1)
        self.rows = self.shown.iloc[self.page * self.page_size : (self.page + 1) * self.page_size]
        self.page_label.value = f"page {self.page + 1} of {self.pages} ({len(self.shown)} shown)"
        self.show_rows(self.rows)

    def filtered(self, needle: str) -> pd.DataFrame:
        """The records the controls keep, ``needle`` (lower case) in their text."""
        raise NotImplementedError

    def show_rows(self, rows: pd.DataFrame) -> None:
        """Put a page of records in the grid."""
        raise NotImplementedError

    def select(self, key: str) -> None:
        """Show the detail of the record ``key``."""
        raise NotImplementedError
