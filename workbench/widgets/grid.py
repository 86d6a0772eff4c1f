"""The widgets' tables: a title over an itables ``ITable`` grid of one page of rows.

Why itables' ``ITable`` widget rather than hand-built HTML tables: it is a maintained
anywidget over DataTables, whose header and body cells share one DOM table, so the columns line
up (pandas' ``to_html`` inside ``widgets.HTML`` drew misaligned headers in JupyterLab) and
browser tests can read the cells; a click on a header sorts by that column; columns are sized to
fit their content; ``selected_rows`` syncs a row selection back to Python; DataTables ships
inside the widget's ESM, so nothing loads from a CDN; and the same library renders offline
static tables in exported HTML reports. Paging and filtering stay in Python: a grid only ever
holds the page it shows.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from html import escape

import ipywidgets as widgets
import pandas as pd
from itables.widget import ITable

NO_CONTROLS = {"topStart": None, "topEnd": None, "bottomStart": None, "bottomEnd": None}


class Grid(widgets.VBox):
    """A titled, sortable grid; hidden until it first shows rows."""

    def __init__(self, css_class: str, *, html: bool = False, selectable: bool = False):
        self._options = {
            "showIndex": False,
            "paging": False,  # the caller pages
            "layout": NO_CONTROLS,  # the caller filters and pages, so no search box or pager
            "autoWidth": False,  # columns fit their content (one table holds header and body)
            "classes": "display compact",
            "style": "table-layout:auto;width:auto;margin:0",
            "text_in_header_can_be_selected": False,  # so a click anywhere on a header sorts
            "allow_html": html,  # cells the caller escaped, such as coloured status labels
            "maxBytes": 0,  # a page is small: never downsample it
            "maxColumns": 0,
            **({"select": {"style": "single"}} if selectable else {}),
        }
        self.title = widgets.HTML()  # not ITable's caption: DataTables' redraw drops it
        self.itable = ITable(**self._options)
        super().__init__(
            [self.title, self.itable], layout={"display": "none", "margin": "0 16px 0 0"}
        )
        self.add_class(css_class)

    @property
    def frame(self) -> pd.DataFrame | None:
        """The rows shown, in their original order (sorting in the browser does not change it)."""
        return self.itable.df

    def show(
        self, frame: pd.DataFrame, title: str = "", order_by: Mapping[str, str] | None = None
    ) -> None:
        """Show ``frame``'s rows under ``title`` and clear the selection; ``order_by`` maps a
        column to a hidden one that sorts it (durations as text sort by their nanoseconds)."""
        columns = list(frame.columns)
        order_by = order_by or {}
        column_defs: list[dict] = [
            {"targets": columns.index(shown), "orderData": columns.index(key)}
            for shown, key in order_by.items()
        ]
        if order_by:
            hidden = [columns.index(key) for key in order_by.values()]
            column_defs.append({"targets": hidden, "visible": False})
        self.title.value = f"<b>{escape(title)}</b>" if title else ""
        self.itable.update(frame, selected_rows=[], columnDefs=column_defs, **self._options)
        self.layout.display = None

    def on_pick(self, callback: Callable[[int], None]) -> None:
        """Call ``callback`` with the position in ``frame`` of each row the user selects."""

        def picked(change: dict) -> None:
            if change["new"]:
                callback(change["new"][0])

        self.itable.observe(picked, names="selected_rows")

    def hide(self) -> None:
        """Hide the grid (when there is nothing to show, such as after an error)."""
        self.layout.display = "none"
