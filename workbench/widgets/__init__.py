"""Notebook widgets over the public API: catalog browser, transaction history, time travel,
runs."""

from workbench.widgets.catalog_browser import CatalogBrowser
from workbench.widgets.history import HistoryBrowser
from workbench.widgets.runs import RunsBrowser
from workbench.widgets.time_travel import TimeTravel

__all__ = ["CatalogBrowser", "HistoryBrowser", "RunsBrowser", "TimeTravel"]
