"""The catalog's names for front ends, within a time limit: a listing that takes longer (an
object store that does not answer) is left to finish in the background, and the caller gets
nothing now instead of waiting. Never raises."""

from __future__ import annotations

import contextvars
import importlib
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

from workbench.core.base.errors import WorkbenchError
from workbench.core.catalog.registry import list_catalogs
from workbench.core.catalog.scope import get_catalog
from workbench.core.ops.names import (
    CatalogNames,
    Column,
    TableOutline,
    catalog_names,
    line_outlines,
    table_columns,
)
from workbench.core.storage.store import is_local

T = TypeVar("T")
WAIT_S = 0.3  # the longest a keystroke waits for a listing not cached yet
# ... of a catalog in a local folder, which cannot hang: its first listing (a new kernel's
# first Tab) may take longer than WAIT_S on a busy machine, and nothing offered is worse.
LOCAL_WAIT_S = 2.0
RETRY_AFTER_S = 15.0  # after a slow failure (a store that does not answer), no retry for this long


class _Pending:
    """One background listing: its thread, and its result or error when done."""

    def __init__(self, work: Callable[[], Any]):
        self.done = threading.Event()
        self.result: Any = None
        self.failed = False
        self.started = time.monotonic()
        self.took = 0.0  # seconds, once done
        context = contextvars.copy_context()  # the caller's branch and catalog scopes
        self.thread = threading.Thread(target=self._run, args=(context, work), daemon=True)
        self.thread.start()

    def _run(self, context: contextvars.Context, work: Callable[[], Any]) -> None:
        try:
            self.result = context.run(work)
        except Exception:  # a listing that fails gives no names: completion must not raise
            self.failed = True
        finally:
            self.took = time.monotonic() - self.started
            self.done.set()


_pending: dict[tuple, _Pending] = {}
_lock = threading.Lock()


def within(key: tuple, work: Callable[[], T], wait: float = WAIT_S) -> T | None:
    """``work()``'s result if it comes within ``wait`` seconds, else None (it goes on in the
    background, at most one per ``key``; one that failed slowly is not retried for a while)."""
    with _lock:
        pending = _pending.get(key)
        now = time.monotonic()
        stale = pending is not None and pending.done.is_set()
        if pending is not None and not pending.done.is_set():
            wait = 0.0 if now - pending.started > wait else wait  # late: do not wait again
        elif (
            stale
            and pending.failed
            and pending.took > wait
            and now - pending.started < RETRY_AFTER_S
        ):
            return None
        else:
            pending = _pending[key] = _Pending(work)
    if not pending.done.wait(wait):
        return None
    return None if pending.failed else pending.result


def listing(catalog: str | None = None, branch: str | None = None) -> CatalogNames | None:
    """The names of a catalog line (see ``catalog_names``), or None when they cannot be had now."""
    key = ("names", catalog, branch)
    return within(key, lambda: catalog_names(catalog, branch), _wait_for(catalog))


def _wait_for(catalog: str | None) -> float:
    """How long a keystroke waits for a listing of ``catalog``: longer for a local folder."""
    try:
        local = is_local(get_catalog(catalog).root)
    except WorkbenchError:
        return WAIT_S
    return LOCAL_WAIT_S if local else WAIT_S


def columns(
    table: str, catalog: str | None = None, branch: str | None = None
) -> tuple[Column, ...]:
    """The columns of ``"ns.t"``, or none when the table is unknown or cannot be read now."""
    found = within(
        ("columns", table, catalog, branch),
        lambda: table_columns(table, None, catalog, branch),
        _wait_for(catalog),
    )
    return found or ()


def outlines(
    catalog: str | None = None, branch: str | None = None, namespaces: list[str] | None = None
) -> dict[str, TableOutline] | None:
    """The columns, rows and bytes of a catalog line's tables (of ``namespaces``, else all;
    ``"ns.t"`` -> outline), or None while they are being read (a first reading opens each
    table's Delta log: seconds at thousands of tables; later ones reopen only those changed)."""
    wanted = None if namespaces is None else tuple(sorted(namespaces))
    return within(
        ("outlines", catalog, branch, wanted), lambda: line_outlines(catalog, branch, wanted)
    )


def warm_up(*modules: str) -> None:
    """Import in the background what a first listing needs (Arrow's Parquet reader, Delta) and
    ``modules`` (those installed), so a new kernel's first completion or sidebar waits on none
    of them."""

    def imports() -> None:
        for module in ("deltalake", "pyarrow.parquet", *modules):
            try:
                importlib.import_module(module)
            except ImportError:  # an optional extra not installed: nothing to warm
                continue

    threading.Thread(target=imports, name="workbench-warm-up", daemon=True).start()


def catalogs() -> list[str]:
    """The registered catalogs' names (no storage is read)."""
    try:
        return sorted(list_catalogs())
    except WorkbenchError:
        return []


__all__ = [
    "CatalogNames",
    "Column",
    "TableOutline",
    "catalogs",
    "columns",
    "listing",
    "outlines",
    "warm_up",
    "within",
]
