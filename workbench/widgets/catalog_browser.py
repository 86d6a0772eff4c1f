"""Catalog browser: catalogs > namespaces > tables, with schema, counts, preview and history."""

from __future__ import annotations

from html import escape
from typing import Any

import ipywidgets as widgets

import workbench.api as dc
from workbench.core.base.errors import WorkbenchError
from workbench.core.catalog.registry import catalog_name
from workbench.widgets.grid import Grid
from workbench.widgets.history import readable
from workbench.widgets.render import error_html


class CatalogBrowser(widgets.HBox):
    """Pick a catalog, filter and select a table, and see what it holds."""

    def __init__(self, catalog: str | None = None, preview_rows: int = 20):
        self.preview_rows = preview_rows
        default = catalog_name(dc.get_catalog(catalog))  # an unknown name: CatalogNotFoundError
        self.catalog_picker = widgets.Dropdown(
            options=list(dc.list_catalogs()), value=default, description="catalog"
        )
        self.filter_box = widgets.Text(placeholder="filter tables", description="filter")
        self.table_list = widgets.Select(options=[], rows=18, layout={"width": "300px"})
        self.table_list.add_class("wb-table-list")
        self.summary = widgets.HTML("<i>select a table</i>")
        self.preview = Grid("wb-preview")
        self.recent = Grid("wb-recent")
        self.details = widgets.VBox([self.summary, self.preview, self.recent])
        self.details.add_class("wb-details")
        self._all: list[str] = []
        self.catalog_picker.observe(lambda _: self.reload(), names="value")
        self.filter_box.observe(lambda change: self.set_filter(change["new"]), names="value")
        self.table_list.observe(lambda change: self._show(change["new"]), names="value")
        left = widgets.VBox(
            [self.catalog_picker, self.filter_box, self.table_list], layout={"flex": "0 0 auto"}
        )
        super().__init__([left, self.details])
        self.add_class("wb-catalog-browser")
        self.reload()

    @property
    def catalog(self) -> str:
        """The catalog being browsed."""
        return self.catalog_picker.value

    def reload(self) -> None:
        """Re-list the catalog's tables (after changes made elsewhere)."""
        self._all = [
            f"{ns.name}.{t.name}"
            for ns in dc.list_namespaces(self.catalog)
            for t in dc.list_tables(ns.name, self.catalog)
        ]
        self.set_filter(self.filter_box.value)

    def set_filter(self, text: str) -> None:
        """Show only tables whose ``namespace.table`` contains ``text``."""
        if self.filter_box.value != text:
            self.filter_box.value = text  # the observer calls back here
            return
        self.table_list.options = [t for t in self._all if text.lower() in t.lower()]

    def select(self, qualified: str) -> None:
        """Select a table by ``namespace.table`` (as a click in the list does)."""
        self.table_list.value = qualified

    def _show(self, qualified: str | None) -> None:
        if not qualified:
            return
        namespace, _, table = qualified.partition(".")
        try:
            info = dc.get_table(table, namespace, self.catalog)
            rows = dc.read(
                table,
                namespace,
                self.catalog,
                read_as=dc.DatasetType.PANDAS,
                limit=self.preview_rows,
            )
            history = dc.transactions(
                read_as=dc.DatasetType.PANDAS, catalog=self.catalog, table=qualified, limit=5
            )
        except WorkbenchError as error:
            self.summary.value = error_html(error)
            self.preview.hide()
            self.recent.hide()
            return
        self.summary.value = (
            f"<h4 style='margin:4px 0'>{escape(qualified)}</h4>" + info._repr_html_()
        )
        self.preview.show(rows, f"first {len(rows)} of {info.row_count} rows")
        self.recent.show(readable(history), "recent transactions")

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(f"CatalogBrowser({self.catalog!r}, {len(self._all)} tables)")
