"""Catalog browser: catalogs > branches > namespaces > tables, with schema, counts, preview and
history of a table as the picked branch sees it."""

from __future__ import annotations

from html import escape
from typing import Any

import ipywidgets as widgets

import workbench.api as dc
from workbench.api import WorkbenchError
from workbench.frontend.views import catalog_name_of
from workbench.widgets.grid import Grid
from workbench.widgets.history import readable
from workbench.widgets.render import error_html


class CatalogBrowser(widgets.HBox):
    """Pick a catalog and a branch, filter and select a table, and see what it holds."""

    def __init__(
        self, catalog: str | None = None, preview_rows: int = 20, branch: str | None = None
    ):
        self.preview_rows = preview_rows
        default = catalog_name_of(catalog)  # an unknown name: CatalogNotFoundError
        self.catalog_picker = widgets.Dropdown(
            options=list(dc.list_catalogs()), value=default, description="catalog"
        )
        self.branch_picker = widgets.Dropdown(
            options=[dc.MAIN_BRANCH], value=dc.MAIN_BRANCH, description="branch"
        )
        self.branch_picker.add_class("wb-branch-picker")
        self.filter_box = widgets.Text(placeholder="filter tables", description="filter")
        self.table_list = widgets.Select(options=[], rows=18, layout={"width": "300px"})
        self.table_list.add_class("wb-table-list")
        self.summary = widgets.HTML("<i>select a table</i>")
        self.preview = Grid("wb-preview")
        self.recent = Grid("wb-recent")
        self.details = widgets.VBox([self.summary, self.preview, self.recent])
        self.details.add_class("wb-details")
        self._all: list[str] = []
        self._offering = False  # True while the branch picker's options are being replaced
        self.catalog_picker.observe(lambda _: self.reload(), names="value")
        self.branch_picker.observe(lambda _: self._branch_picked(), names="value")
        self.filter_box.observe(lambda change: self.set_filter(change["new"]), names="value")
        self.table_list.observe(lambda change: self._show(change["new"]), names="value")
        self.sidebar_button = widgets.Button(
            description="open in sidebar", tooltip="keep the catalog beside the notebook"
        )
        self.sidebar_button.add_class("wb-open-sidebar")
        self.sidebar_button.on_click(lambda _: self.open_sidebar())
        left = widgets.VBox(
            [
                self.catalog_picker,
                self.branch_picker,
                self.filter_box,
                self.table_list,
                self.sidebar_button,
            ],
            layout={"flex": "0 0 auto"},
        )
        super().__init__([left, self.details])
        self.add_class("wb-catalog-browser")
        self.reload(branch or dc.current_branch(self.catalog))

    @property
    def catalog(self) -> str:
        """The catalog being browsed."""
        return self.catalog_picker.value

    @property
    def branch(self) -> str:
        """The branch of the catalog being browsed (``main`` unless one is picked)."""
        return self.branch_picker.value

    def reload(self, branch: str | None = None) -> None:
        """Re-list the catalog's branches and the tables of the branch shown (or of ``branch``),
        after changes made elsewhere; ``main`` when the catalog has no such branch."""
        wanted = branch or self.branch
        try:
            names = [b.name for b in dc.branches(self.catalog)]
        except WorkbenchError as error:  # e.g. the session's branch is not in this catalog
            self._fail(error)
            return
        self._offering = True
        try:
            self.branch_picker.options = names
            self.branch_picker.value = wanted if wanted in names else dc.MAIN_BRANCH
        finally:
            self._offering = False
        self._list_tables()

    def pick_branch(self, name: str) -> None:
        """Show branch ``name``'s tables (as picking it in the list does)."""
        self.branch_picker.value = name

    def _branch_picked(self) -> None:
        if not self._offering:
            self._list_tables()

    def _list_tables(self) -> None:
        try:
            with dc.branch(self.branch, self.catalog):
                self._all = [
                    f"{ns.name}.{t.name}"
                    for ns in dc.list_namespaces(self.catalog)
                    for t in dc.list_tables(ns.name, self.catalog)
                ]
        except WorkbenchError as error:  # e.g. the branch was dropped elsewhere
            self._fail(error)
            return
        selected, self.table_list.value = self.table_list.value, None
        self.set_filter(self.filter_box.value)
        if selected in self.table_list.options:
            self.select(selected)  # shown again, as this branch has it
        else:
            self.summary.value = "<i>select a table</i>"
            self.preview.hide()
            self.recent.hide()

    def _fail(self, error: WorkbenchError) -> None:
        self._all = []
        self.table_list.options = []
        self.summary.value = error_html(error)
        self.preview.hide()
        self.recent.hide()

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
            with dc.branch(self.branch, self.catalog):
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
        self.recent.show(readable(history), f"recent transactions on {self.branch}")

    def open_sidebar(self) -> None:
        """Open the catalog sidebar in JupyterLab's left area, with this table picked."""
        from workbench.widgets.sidebar import open_sidebar

        try:
            content = open_sidebar()
        except dc.WorkbenchError as error:
            self.summary.value = error_html(error)
            return
        if self.table_list.value:
            content.select(self.catalog, self.branch, self.table_list.value)

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(
            f"CatalogBrowser({self.catalog!r}, branch={self.branch!r}, {len(self._all)} tables)"
        )
