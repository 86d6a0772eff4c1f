"""A read of an object-store catalog that does not wait for the check of its log. Every read
outside a transaction first asks the catalog's log for commits newer than this process has
read: one round trip to the store, as long as the read's own fetches. Here the read runs on
the log as last read while another thread makes that check; when the check found new
commits, the read runs again on them. Either way the answer is the one a read made after the
check would give."""

from __future__ import annotations

import threading
from collections.abc import Callable
from contextvars import ContextVar
from typing import TYPE_CHECKING, TypeVar

from workbench.core.storage.store import is_local
from workbench.core.transactions.catalog_log import log_of
from workbench.core.transactions.rollforward import roll_forward

if TYPE_CHECKING:
    from concurrent.futures import Future, ThreadPoolExecutor

    from workbench.core.catalog.catalogs import Catalog
    from workbench.core.transactions.catalog_log import TransactionLog

T = TypeVar("T")

# the log lines (``Catalog.line_key``) whose views may use the log as last read, for this call
_unchecked: ContextVar[frozenset[str]] = ContextVar("workbench_unchecked", default=frozenset())
_checkers: list[tuple[int, ThreadPoolExecutor]] = []  # (process id, its threads)
_checkers_lock = threading.Lock()


def unchecked(catalog: Catalog) -> bool:
    """True inside ``read_ahead_of_check`` for ``catalog``: its view need not check its log."""
    return catalog.line_key in _unchecked.get()


def read_ahead_of_check(catalog: Catalog, read: Callable[[], T]) -> T:
    """``read()``, the check of ``catalog``'s log for new commits made meanwhile on another
    thread (on an object store; a local catalog's check costs less than a thread). ``read``
    must have no effect beyond its answer: it may run twice."""
    from workbench.core.transactions.context import current_transaction

    entries = log_of(catalog)
    if is_local(catalog.storage.root) or entries.version < 0 or current_transaction():
        return read()
    seen = entries.version
    checking = _checker().submit(roll_forward, catalog)
    try:
        answer = _unchecked_read(catalog, read)
    except Exception:
        if _moved(checking, entries, seen):
            return read()  # the error may be the stale log's (a table made meanwhile)
        raise
    return read() if _moved(checking, entries, seen) else answer


def _unchecked_read(catalog: Catalog, read: Callable[[], T]) -> T:
    """``read()`` with ``catalog``'s views on its log as last read (after it, even when
    interrupted, views check again)."""
    token = _unchecked.set(_unchecked.get() | {catalog.line_key})
    try:
        return read()
    finally:
        _unchecked.reset(token)


def _moved(checking: Future, entries: TransactionLog, seen: int) -> bool:
    """Whether the check found commits after version ``seen`` (its failure raised here: a
    store that cannot be reached fails the read as it would have)."""
    checking.result()
    return entries.version != seen


def _checker() -> ThreadPoolExecutor:
    """The threads that check logs, this process's own (a forked child starts its own: the
    parent's threads are not in it)."""
    import os
    from concurrent.futures import ThreadPoolExecutor

    with _checkers_lock:
        if not _checkers or _checkers[0][0] != os.getpid():
            pool = ThreadPoolExecutor(2, thread_name_prefix="workbench-log-check")
            _checkers[:] = [(os.getpid(), pool)]
        return _checkers[0][1]
