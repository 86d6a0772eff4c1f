"""Lease heartbeats: while a call runs, its transaction's leases are renewed every third of the
lease time, so a call that works longer than a lease (a model predicting for minutes) keeps its
tables, and a writer whose process dies stops renewing and loses them after the lease time.

One daemon thread beats for every call in the process: a call registers on entry and leaves
on exit, which costs no thread start and join per commit (a third of a small commit's time)."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from types import TracebackType

from workbench.core.storage.leases import lease_seconds

log = logging.getLogger(__name__)


class Heartbeat:
    """``with Heartbeat(renew):`` calls ``renew()`` every third of the lease time while the
    block runs; no renewal runs or starts once the block has ended."""

    def __init__(self, renew: Callable[[], None]):
        self.renew = renew
        self.interval = lease_seconds() / 3

    def __enter__(self) -> Heartbeat:
        _BEATS.add(self)
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        _BEATS.remove(self)  # waits for a renewal under way: none may land after a release


class _Beats:
    """The registered heartbeats, each with its next due time, and the thread that beats."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._due: dict[Heartbeat, float] = {}
        self._renewing: Heartbeat | None = None
        self._thread: threading.Thread | None = None

    def add(self, beat: Heartbeat) -> None:
        with self._changed:
            self._due[beat] = time.monotonic() + beat.interval
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(
                    target=self._run, name="workbench-lease", daemon=True
                )
                self._thread.start()
            self._changed.notify_all()

    def remove(self, beat: Heartbeat) -> None:
        with self._changed:
            self._due.pop(beat, None)
            while self._renewing is beat:
                self._changed.wait()

    def _run(self) -> None:
        with self._changed:
            while True:
                if not self._due:
                    self._changed.wait()
                    continue
                beat, due = min(self._due.items(), key=lambda item: item[1])
                wait = due - time.monotonic()
                if wait > 0:
                    self._changed.wait(wait)
                    continue
                self._due[beat] = time.monotonic() + beat.interval
                self._renewing = beat
                self._changed.release()  # other calls come and go while this one renews
                try:
                    beat.renew()
                except Exception as e:  # a store briefly unreachable: the next beat tries again
                    log.warning("Could not renew a table lease (%s); retrying.", e)
                finally:
                    self._changed.acquire()
                    self._renewing = None
                    self._changed.notify_all()


_BEATS = _Beats()
