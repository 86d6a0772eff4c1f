"""The catalog sidebar: a panel in JupyterLab's left area that stays while the user works.

Catalogs > branches > namespaces > tables (rows and size) > columns (types, merge keys); the
filter matches tables and columns; picking a table shows its summary, preview and recent
history; buttons, a table's context menu and dragging a table into a cell insert
``dc.table("ns.t")``, a ``%%dc sql`` snippet or its name. It follows the catalog: after every
cell (a commit there shows at once) and every few seconds (commits of other processes). It
wears JupyterLab's theme (its CSS variables and button classes) and widens the left area to
fit when it opens.

Why anywidget and ipylab: both ship prebuilt JupyterLab extensions in their PyPI wheels, so
``pip install 'workbench[jupyter]'`` is all it takes (no Node.js, no build); the view is an
ES module of this package (``sidebar.js``), and ipylab's shell access puts the widget in the
left area and runs JupyterLab's own "replace selection in notebook cell" command to insert.
"""

from __future__ import annotations

import time
import uuid
from html import escape
from pathlib import Path
from typing import Any

import anywidget
import traitlets

import workbench.api as dc
from workbench.frontend import names
from workbench.widgets.render import error_html, when

HERE = Path(__file__).parent
PANEL_PREFIX = "wb-catalog-sidebar"  # each kernel's panel: this, then an id of its own
INSERT_COMMAND = "notebook:replace-selection"  # JupyterLab's notebook commands
NEW_CELL_COMMAND = "notebook:insert-cell-below"
EDIT_COMMAND = "notebook:enter-edit-mode"
ACTIVATE_COMMAND = "tabsmenu:activate-by-id"  # JupyterLab's command that shows a panel
HISTORY_ROWS = 50  # the transactions a table's "history" action shows
ICON = (HERE / "catalog-icon.svg").read_text()  # the panel's tab: a database drum


class CatalogSidebar(anywidget.AnyWidget):
    """The sidebar's content: the catalog tree and the picked table's detail."""

    _esm = HERE / "sidebar.js"
    _css = HERE / "sidebar.css"
    tree = traitlets.List().tag(sync=True)
    columns = traitlets.Dict().tag(sync=True)  # "catalog/branch/ns.t" -> [[name, type, key]]
    stats = traitlets.Dict().tag(sync=True)  # "catalog/branch" -> {"ns.t": [rows, bytes]}
    selected = traitlets.Dict(allow_none=True, default_value=None).tag(sync=True)
    detail = traitlets.Unicode("<i>pick a table</i>").tag(sync=True)
    panel_id = traitlets.Unicode("").tag(sync=True)  # its panel's: the view closes any other

    def __init__(self, insert: Any = None, **kwargs: Any):
        super().__init__(**kwargs)
        self._insert = insert  # insert(text, new_cell): puts a snippet in a cell (None: nowhere)
        self.on_msg(self._message)
        self.refresh()

    def refresh(self) -> None:
        """List the catalogs again (a no-op for the browser when nothing changed)."""
        self.tree = [_catalog_tree(name) for name in _default_first(names.catalogs())]
        if self.selected and not self._still_listed():
            self.selected, self.detail = None, "<i>pick a table</i>"

    def select(self, catalog: str, branch: str, table: str) -> None:
        """Show ``table`` (``ns.t``) of ``catalog`` on ``branch``: summary, preview, history."""
        self.selected = {"catalog": catalog, "branch": branch, "table": table}
        try:
            handle = dc.table(table, catalog=catalog, branch=branch)
            self.detail = handle._repr_html_()
        except dc.WorkbenchError as error:
            self.detail = error_html(error)

    def expand(self, catalog: str, branch: str, table: str) -> None:
        """Load the columns of a table opened in the tree."""
        found = names.columns(table, catalog, branch)
        rows = [[c.name, c.type, c.key] for c in found]
        self.columns = {**self.columns, f"{catalog}/{branch}/{table}": rows}

    def history(self, catalog: str, branch: str, table: str) -> None:
        """Show the last transactions of ``table`` (``ns.t``) on ``branch`` in the detail pane."""
        self.selected = {"catalog": catalog, "branch": branch, "table": table}
        title = f"<h4 style='margin:4px 0'>{escape(table)}: history</h4>"
        try:
            handle = dc.table(table, catalog=catalog, branch=branch)
            found = handle.history(limit=HISTORY_ROWS)
        except dc.WorkbenchError as error:
            self.detail = title + error_html(error)
            return
        shown = found[["sequence", "end_time", "operations", "rows_added", "commit_message"]]
        shown = shown.assign(
            end_time=[when(t) for t in found["end_time"]],
            operations=[", ".join(o) for o in found["operations"]],
            commit_message=found["commit_message"].fillna(""),
        ).rename(columns={"end_time": "committed", "commit_message": "message"})
        listed = shown.to_html(index=False, border=0)  # escaped
        self.detail = title + f"<b>last {len(shown)} transactions</b>" + listed

    def outline(
        self, catalog: str, branch: str, text: str = "", namespaces: list[str] | None = None
    ) -> dict[str, list[str]] | None:
        """Fill ``stats`` for the tables of a catalog line (of ``namespaces``, else all) and
        return, for ``text``, their columns whose names hold it (``{"ns.t": [column, ...]}``);
        None while the outlines are being read."""
        found = names.outlines(catalog, branch, namespaces)
        if found is None:
            return None
        line = {t: [o.rows, o.size_bytes] for t, o in found.items()}
        if self.stats.get(f"{catalog}/{branch}") != line:
            self.stats = {**self.stats, f"{catalog}/{branch}": line}
        if not text:
            return {}
        wanted = text.lower()
        hits = {
            t: [c.name for c in o.columns if wanted in c.name.lower()] for t, o in found.items()
        }
        return {t: columns for t, columns in hits.items() if columns}

    def snippet(self, what: str, table: dict | None = None) -> str | None:
        """The code an insert puts in the cell, for ``table`` (catalog, branch, table) or else
        the picked one."""
        table = table or self.selected
        if not table:
            return None
        return _snippet(what, **table)

    def _still_listed(self) -> bool:
        wanted = self.selected or {}
        return any(
            any(wanted["table"] in tables for tables in branch["namespaces"].values())
            for catalog in self.tree
            if catalog["catalog"] == wanted["catalog"]
            for branch in catalog["branches"]
            if branch["branch"] == wanted["branch"]
        )

    def _message(self, _: Any, content: dict, buffers: Any) -> None:
        kind = content.get("kind")
        if kind in ("refresh", "poll"):
            self.refresh()
            self.send({"kind": "alive"})  # the view shows a stopped kernel by its silence
        elif kind in ("select", "expand", "history"):
            getattr(self, kind)(content["catalog"], content["branch"], content["table"])
        elif kind == "outline":
            catalog, branch, text = content["catalog"], content["branch"], content.get("text", "")
            namespaces = content.get("namespaces")
            found = self.outline(catalog, branch, text, namespaces)
            reply = {"kind": "outline", "catalog": catalog, "branch": branch, "text": text}
            reply["namespaces"] = namespaces  # pending: the view asks for them again shortly
            self.send({**reply, "pending": found is None, "matches": found or {}})
        elif kind == "insert" and self._insert is not None:
            what = content.get("what", "handle")
            text = self.snippet(what, content.get("target"))
            if text:  # SQL opens a cell of its own unless the active cell is empty
                self._insert(text, what == "sql" and not content.get("empty", False))


def _default_first(catalogs: list[str]) -> list[str]:
    """The catalogs' names, the default one first (the others in order)."""
    return sorted(catalogs, key=lambda name: not _is_default(name))


def _catalog_tree(catalog: str) -> dict:
    """One catalog's branches and, for each, its namespaces' tables (JSON for the view)."""
    default = _is_default(catalog)
    main = names.listing(catalog)
    if main is None:
        return {
            "catalog": catalog,
            "default": default,
            "branches": [],
            "error": "not reachable now",
        }
    branches = []
    for branch in main.branches:
        listing = main if branch == main.branch else names.listing(catalog, branch)
        namespaces: dict[str, list[str]] = {ns: [] for ns in listing.namespaces} if listing else {}
        for table in listing.tables if listing else ():
            namespaces.setdefault(table.split(".", 1)[0], []).append(table)
        sequence = listing.sequence if listing else -1  # any commit: the view asks for sizes
        line = {"branch": branch, "current": branch == main.branch, "sequence": sequence}
        branches.append({**line, "namespaces": namespaces})
    return {"catalog": catalog, "default": default, "branches": branches, "error": ""}


def _is_default(catalog: str) -> bool:
    """Whether ``catalog`` is the default catalog (its tables need no catalog in SQL)."""
    try:
        return dc.list_catalogs().get(catalog) is dc.get_catalog()
    except dc.WorkbenchError:
        return False


def _snippet(what: str, catalog: str, branch: str, table: str) -> str:
    """``dc.table("ns.t")`` (with its catalog and branch when not the defaults) or a SQL cell."""
    is_default = _is_default(catalog)
    if what == "sql":
        name = table if is_default else f"{catalog}.{table}"
        return f"%%dc sql\nSELECT * FROM {name} LIMIT 10"
    address = table if is_default else "dc://{}/{}".format(catalog, table.replace(".", "/", 1))
    on = "" if branch == dc.current_branch(catalog) else f", branch={branch!r}"
    return f'dc.table("{address}"{on})'


class _Sidebar:
    """The one sidebar of this kernel: its panel in JupyterLab and the app it lives in."""

    def __init__(self) -> None:
        try:
            from ipylab import Icon, JupyterFrontEnd, Panel
        except ImportError as missing:
            raise dc.MissingDependencyError(
                "The catalog sidebar needs ipylab (JupyterLab's shell from Python): "
                "pip install 'workbench[jupyter]'."
            ) from missing
        self.app = JupyterFrontEnd()
        self.panel_id = f"{PANEL_PREFIX}-{time.time_ns():x}-{uuid.uuid4().hex[:8]}"  # sortable
        self.content = CatalogSidebar(insert=self.insert, panel_id=self.panel_id)
        self.panel = Panel([self.content])
        self.panel.title.caption = "Catalog (workbench)"  # the tab shows the icon, this on hover
        self.panel.title.icon = Icon(name="workbench:catalog", svgstr=ICON)
        self.panel.title.closable = True  # a new kernel's sidebar closes an earlier one's
        self.panel.add_class("wb-sidebar-panel")
        self.shown = False
        self.app.shell.observe(lambda _: self.activate(), names="_widgets")

    def show(self) -> None:
        """Put the panel in the left area (once) and bring it to the front."""
        if not self.shown:
            from ipywidgets import widget_serialization

            widget = widget_serialization["to_json"](self.panel, None)
            payload = {"serializedWidget": widget, "area": "left", "args": {"rank": 1000}}
            payload["id"] = self.panel_id  # ipylab names the panel so; activate finds it by it
            self.app.shell.send({"func": "add", "payload": payload})
            self.shown = True
        self.activate()

    def activate(self) -> None:
        """Bring the panel to the front of the left area (once JupyterLab has added it)."""
        if any(w.get("id") == self.panel_id for w in self.app.shell._widgets):
            self.app.commands.execute(ACTIVATE_COMMAND, {"id": self.panel_id})

    def insert(self, text: str, new_cell: bool = False) -> None:
        """Replace the selection in the active notebook cell with ``text`` (``new_cell``: in a
        new cell below it), and leave the cell in edit mode, its cursor after the text."""
        if new_cell:
            self.app.commands.execute(NEW_CELL_COMMAND)
        self.app.commands.execute(INSERT_COMMAND, {"text": text})
        self.app.commands.execute(EDIT_COMMAND)


_sidebar: _Sidebar | None = None


def open_sidebar() -> CatalogSidebar:
    """Open (or bring back) the catalog sidebar in JupyterLab's left area; refreshed after every
    cell. Returns its content widget."""
    global _sidebar
    if _sidebar is None:
        _sidebar = _Sidebar()  # its content lists the catalogs as it is made
        _follow_cells(_sidebar.content)
    else:
        _sidebar.content.refresh()
    _sidebar.show()
    return _sidebar.content


def _follow_cells(content: CatalogSidebar) -> None:
    """Refresh after each cell, so a table a cell wrote shows as soon as the cell ends."""
    from IPython import get_ipython

    shell = get_ipython()
    if shell is not None:
        shell.events.register("post_run_cell", lambda result: content.refresh())
