"""Notebook widgets over the public API: catalog browser, transaction history, time travel,
runs, media gallery, and the catalog sidebar in JupyterLab's left area."""

from workbench.widgets.catalog_browser import CatalogBrowser
from workbench.widgets.gallery import Gallery
from workbench.widgets.history import HistoryBrowser
from workbench.widgets.runs import RunsBrowser
from workbench.widgets.sidebar import CatalogSidebar, open_sidebar
from workbench.widgets.time_travel import TimeTravel

__all__ = [
    "CatalogBrowser",
    "CatalogSidebar",
    "Gallery",
    "HistoryBrowser",
    "RunsBrowser",
    "TimeTravel",
    "open_sidebar",
]
