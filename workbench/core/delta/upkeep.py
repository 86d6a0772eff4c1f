"""Upkeep that only speeds reads up, done off the commit path: Delta checkpoints and the
compaction steps of the logs workbench writes itself.

A commit stands without either, so a writer asks for the work and goes on, and one background
thread does it in order (deltalake and pyarrow work without holding the GIL, so writers do not
stall). A job asked for again while it waits is not queued twice. Each job opens what it reads
itself (never a handle a writer uses). A job that fails is logged and skipped (quietly when
what it read was removed meanwhile, a folder deleted say); ``flush`` waits
for the jobs asked for (tests, and the end of the process).
"""

from __future__ import annotations

import atexit
import logging
import queue
import threading
from collections.abc import Callable

log = logging.getLogger(__name__)
EXIT_WAIT_SECONDS = 10.0

_Job = tuple[str, Callable[[], object], str | None, dict[str, str] | None]
_jobs: queue.Queue[_Job] = queue.Queue()
_waiting: set[str] = set()
_lock = threading.Lock()
_worker: threading.Thread | None = None


def later(
    name: str,
    job: Callable[[], object],
    table: str | None = None,
    storage_options: dict[str, str] | None = None,
) -> None:
    """Have ``job`` run soon in the background; ``name`` tells jobs apart (a job whose name
    is already waiting is dropped). ``table``: the Delta table the job works on, so a failure
    after it was removed is told apart from a real one."""
    global _worker
    with _lock:
        if name in _waiting:
            return
        _waiting.add(name)
        if _worker is None or not _worker.is_alive():
            _worker = threading.Thread(target=_work, name="workbench-upkeep", daemon=True)
            _worker.start()
    _jobs.put((name, job, table, storage_options))


def request_checkpoint(uri: str, storage_options: dict[str, str] | None = None) -> None:
    """Have a checkpoint of the Delta table at ``uri`` written at its newest version, soon."""

    def checkpoint() -> None:
        from deltalake import DeltaTable

        DeltaTable(uri, storage_options=storage_options).create_checkpoint()

    later(f"checkpoint {uri}", checkpoint, uri, storage_options)


def flush(timeout: float | None = None) -> None:
    """Wait until the jobs asked for are done (or ``timeout`` seconds pass)."""
    done = threading.Event()
    threading.Thread(target=lambda: (_jobs.join(), done.set()), daemon=True).start()
    done.wait(timeout)


def _work() -> None:
    while True:
        name, job, table, storage_options = _jobs.get()
        with _lock:
            _waiting.discard(name)
        try:
            job()
        except Exception as e:  # upkeep only speeds reads up
            gone = _removed_meanwhile(e) or _table_gone(table, storage_options)
            level = logging.DEBUG if gone else logging.WARNING
            log.log(level, "Skipped %s: %s", name, e)
        finally:
            _jobs.task_done()


def _removed_meanwhile(error: Exception) -> bool:
    """True when a job failed because its table, or a file it read, was removed meanwhile."""
    from deltalake.exceptions import TableNotFoundError

    return isinstance(error, (FileNotFoundError, TableNotFoundError))


def _table_gone(uri: str | None, storage_options: dict[str, str] | None) -> bool:
    """True when the job's table is no longer there (removed while the job read it: deltalake
    then fails with an error of no particular type)."""
    if uri is None:
        return False
    from deltalake import DeltaTable

    try:
        return not DeltaTable.is_deltatable(uri, storage_options=storage_options)
    except Exception:  # a store that cannot answer cannot tell: warn
        return False


atexit.register(flush, EXIT_WAIT_SECONDS)
