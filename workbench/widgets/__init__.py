"""Notebook widgets over the public API: catalog browser, transaction history, time travel."""

from workbench.widgets.catalog_browser import CatalogBrowser
from workbench.widgets.history import HistoryBrowser
from workbench.widgets.time_travel import TimeTravel

__all__ = ["CatalogBrowser", "HistoryBrowser", "TimeTravel"]
