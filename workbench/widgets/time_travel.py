"""Time travel: slide over the transactions that touched a table; see it then, diffed with now."""

from __future__ import annotations

from typing import Any

import ipywidgets as widgets

import workbench.api as dc
from workbench.api import WorkbenchError
from workbench.widgets.grid import Grid
from workbench.widgets.render import error_html, text, when


class TimeTravel(widgets.VBox):
    """A table as of each transaction that touched it, beside a diff against now."""

    def __init__(
        self,
        table: str,
        namespace: str | None = None,
        catalog: str | None = None,
        preview_rows: int = 50,
        chart_points: int = 200,
    ):
        self.table, self.namespace, self.catalog = table, namespace, catalog
        self.preview_rows = preview_rows
        qualified = f"{namespace or 'default'}.{table}"
        history = dc.transactions(read_as=dc.DatasetType.PANDAS, catalog=catalog, table=qualified)
        self.points = history.iloc[::-1].reset_index(drop=True)  # oldest first
        if self.points.empty:
            raise dc.TableNotFoundError(f"Table {qualified!r} has no history in this catalog.")
        last = len(self.points) - 1
        self.slider = widgets.IntSlider(
            value=last,
            min=0,
            max=last,
            description="point",
            continuous_update=False,
            layout={"width": "600px"},
        )
        self.slider.add_class("wb-time-slider")
        self.label = widgets.HTML()
        self.then = Grid("wb-then")
        self.changes = widgets.HTML()
        self.changes.add_class("wb-diff-now")
        self.progress = widgets.IntProgress(min=0, max=1, description="loading")
        self.chart = self._chart(chart_points)
        self.slider.observe(lambda change: self.select(change["new"]), names="value")
        panes = widgets.HBox([self.then, self.changes])
        super().__init__([self.slider, self.label, panes, self.chart])
        self.add_class("wb-time-travel")
        self.select(last)

    def _chart(self, limit: int) -> Any:
        """Row count and size of the table at each of the last ``limit`` points."""
        import plotly.graph_objects as go

        points = self.points.tail(limit)
        self.progress.max = len(points)
        counts, sizes = [], []
        for i, txn in enumerate(points["transaction_id"]):
            try:
                info = dc.get_table(self.table, self.namespace, self.catalog, as_of=txn)
            except (dc.TableNotFoundError, dc.TableVersionNotFoundError):
                counts.append(None)  # dropped then (made again later), or vacuumed: a gap
                sizes.append(None)
            else:
                counts.append(info.row_count)
                sizes.append(info.size_bytes)
            self.progress.value = i + 1
        x = [when(t) for t in points["end_time"]]
        figure = go.FigureWidget(
            layout={
                "height": 260,
                "margin": {"t": 30, "b": 30},
                "title": "rows and bytes over time",
                "yaxis2": {"overlaying": "y", "side": "right"},
            }
        )
        figure.add_scatter(x=x, y=counts, name="rows", mode="lines+markers")
        figure.add_scatter(x=x, y=sizes, name="bytes", mode="lines+markers", yaxis="y2")
        return figure

    def select(self, index: int) -> None:
        """Show the table as of point ``index`` (0 = oldest) and its diff against now."""
        if self.slider.value != index:
            self.slider.value = index  # the observer calls back here
            return
        point = self.points.iloc[index]
        txn = point["transaction_id"]
        self.label.value = (
            f"<b>{when(point['end_time'])}</b> {text(point['commit_message'])} <code>{txn}</code>"
        )
        try:
            rows = dc.read(
                self.table,
                self.namespace,
                self.catalog,
                read_as=dc.DatasetType.PANDAS,
                as_of=txn,
                limit=self.preview_rows,
            )
            difference = dc.diff(self.table, self.namespace, before=txn, catalog=self.catalog)
        except WorkbenchError as error:
            self.then.hide()
            self.changes.value = error_html(error)
            return
        self.then.show(rows, f"as of point {index + 1} of {len(self.points)}")
        self.changes.value = "<b>then → now</b>" + difference._repr_html_()
        self.diff = difference
