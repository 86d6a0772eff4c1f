"""Which run log a catalog's runs go to: ``dc.init(..., events=uri)``, else the
``WORKBENCH_EVENTS`` environment variable, else ``[events] uri`` in ``workbench.toml``, else a
Delta log at ``<catalog root>/_workbench/events``."""

from __future__ import annotations

import logging
import os
from typing import TYPE_CHECKING, Any

from workbench.core.base.caches import drop_where, process_cache
from workbench.core.base.errors import EventLogUnavailableError, WorkbenchError
from workbench.core.base.settings import file_settings
from workbench.core.events.log import parse_event_log_uri
from workbench.core.storage.identity import redacted

if TYPE_CHECKING:
    from workbench.core.catalog.catalogs import Catalog
    from workbench.core.events.log import EventLog

log = logging.getLogger(__name__)
EVENTS_KEY = "_workbench/events"
_configured: dict[str, str | None] = {"uri": None}
# (URI, identity of the catalog whose storage options opened it; "" for a log opened without
# any: SQLite, or Delta on the local disk) -> the run log: a catalog with other credentials
# opens the log for itself
_open: dict[tuple[str, str], EventLog] = {}


def _forget(identity: str) -> None:
    drop_where(_open, lambda key: key[1] == identity)


process_cache(
    "events.config", lambda: (_open.clear(), _configured.update(uri=None)), forget=_forget
)


def configure_events(uri: str | None) -> None:
    """Send every catalog's runs to the log at ``uri`` (None: back to the default places). A
    malformed URI, or a local location holding something else, is an error now, not at the
    first run."""
    if uri is not None:
        check_location(uri)
    _configured["uri"] = uri


def check_location(uri: str) -> None:
    """Refuse a run-log URI that is malformed or names a local location holding something
    other than a run log, changing nothing (an object store's is checked when opened, with its
    catalog's storage options)."""
    backend, location = parse_event_log_uri(uri)
    try:
        if backend == "sqlite":
            from workbench.core.events import sqlite

            sqlite.check_location(location, uri)
        elif "://" not in location:
            from workbench.core.events import delta

            delta.check_location(location, uri)
    except WorkbenchError:
        raise
    except Exception as e:  # cannot even look there: opening it will say why
        log.debug("Could not check the run log location %s (%s)", uri, e)


def events_uri(catalog: Catalog) -> str:
    """The URI of the run log ``catalog``'s runs go to."""
    chosen = (
        _configured["uri"]
        or os.environ.get("WORKBENCH_EVENTS")
        or file_settings("events").get("uri")
    )
    if chosen:
        return str(chosen)
    root = catalog.root.rstrip("/")
    if "://" not in root:
        return f"delta://{os.path.abspath(root)}/{EVENTS_KEY}"
    scheme, rest = root.split("://", 1)
    return f"delta+{scheme}://{rest}/{EVENTS_KEY}"


def event_log_for(catalog: str | None = None) -> EventLog:
    """The (cached) run log of a catalog by name (the default catalog's when None)."""
    from workbench.core.catalog.scope import get_catalog

    cat = get_catalog(catalog)
    uri = events_uri(cat)
    on_store = uri.startswith("delta+")  # a Delta log on an object store: the catalog's own
    options = cat.properties.storage_options if on_store else {}
    key = (uri, cat.identity if on_store else "")
    if key not in _open:
        try:
            _open[key] = open_event_log(uri, **(options or {}))
        except WorkbenchError:
            raise
        except Exception as e:  # the backend's own error: say which log and how to fix it
            raise EventLogUnavailableError(
                f"Cannot open the run log at {uri!r} ({redacted(str(e), options)}); check "
                "that the location is writable, or choose another with dc.init(events=...) "
                "or WORKBENCH_EVENTS."
            ) from e
    return _open[key]


def open_event_log(uri: str, **options: Any) -> EventLog:
    """The event log a URI names: ``sqlite:///abs/path.db`` or ``delta:///abs/path`` (or an
    object-store form, ``delta+s3://bucket/path``, with storage ``options``)."""
    backend, location = parse_event_log_uri(uri, options)
    if backend == "sqlite":
        from workbench.core.events.sqlite import SqliteEventLog  # each backend loads on use

        return SqliteEventLog(location)
    from workbench.core.events.delta import DeltaEventLog

    return DeltaEventLog(location, storage_options=options or None)
