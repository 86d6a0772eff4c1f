"""Object stores found not answering. A request that spent its whole retry budget
(``retry_timeout``) and still failed to reach its store marks that store down for a few
seconds, and meanwhile every request to it fails at once, saying so. A call whose store is gone
thus fails within one budget, its clean-up (a lease given back, the run's failure recorded) and
other threads' lease renewals included, instead of spending the budget again on each request.
A request that gets an answer marks its store up again."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager

from workbench.core.base.caches import process_cache
from workbench.core.base.errors import StorageUnreachableError
from workbench.core.storage.identity import store_identity

QUIET_SECONDS = 10.0  # how long a store found not answering is not asked again

_down: dict[str, tuple[float, str]] = {}  # store -> (until when, why: the failure's words)
_lock = threading.Lock()


def store_of(root: str, options: Mapping[str, str] | None) -> str:
    """The store an outage takes away for an object-store root: its bucket, as ``options``
    reach it (the run log under a catalog root is on the catalog's store)."""
    return store_identity(_bucket(root), options)


def _bucket(root: str) -> str:
    scheme, _, rest = root.partition("://")
    return f"{scheme}://{rest.split('/', 1)[0]}"


def _forget(identity: str) -> None:
    """Forget that the store of a catalog (its identity: ``root#digest``) did not answer: put
    back after a pop, the catalog asks it afresh."""
    root, _, digest = identity.rpartition("#")
    with _lock:
        _down.pop(f"{_bucket(root)}#{digest}", None)


process_cache("storage.outages", _down.clear, forget=_forget)


@contextmanager
def watched(store: str, budget: float, refusal: Callable[[str], Exception]) -> Iterator[None]:
    """Run the block's requests to ``store`` (``store_of``), or, while it is down, raise
    ``refusal(why)`` at once. A ``StorageUnreachableError`` the block raises after ``budget``
    seconds or more (its retries spent without reaching the store) marks the store down."""
    _refuse_if_down(store, refusal)
    started = time.monotonic()
    try:
        yield
    except StorageUnreachableError as e:
        if time.monotonic() - started >= budget:
            with _lock:
                _down[store] = (time.monotonic() + QUIET_SECONDS, str(e.__cause__ or e))
        raise
    if store in _down:  # it answered
        with _lock:
            _down.pop(store, None)


def _refuse_if_down(store: str, refusal: Callable[[str], Exception]) -> None:
    with _lock:
        until, failure = _down.get(store, (0.0, ""))
    if time.monotonic() < until:
        raise refusal(
            f"it did not answer a request moments ago, so it is not asked again for "
            f"{QUIET_SECONDS:g} s: {failure}"
        )
