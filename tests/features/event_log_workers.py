"""Processes for the run-log tests: appenders racing each other, and a run that gets killed.

``append URI WORKER COUNT BATCH``: append COUNT metric events of run ``worker-WORKER``, BATCH
per call. ``start URI RUN_ID READY``: append a RUN_STARTED of this process, create the file
READY, then wait to be killed.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from workbench.core.events.config import open_event_log
from workbench.core.events.model import Event, EventType, this_process


def append(uri: str, worker: int, count: int, batch: int) -> None:
    """Append ``count`` metric events of this worker's run, ``batch`` per call."""
    log = open_event_log(uri)
    events = [
        Event(f"worker-{worker}", EventType.METRIC_LOGGED, {"name": f"m{i}", "value": float(i)})
        for i in range(count)
    ]
    for start in range(0, count, batch):
        log.append(events[start : start + batch])


def start(uri: str, run_id: str, ready: str) -> None:
    """Start a run of this process, say so, and wait to be killed."""
    payload = {"name": "doomed", "kind": "pipeline", **this_process()}
    open_event_log(uri).append(Event(run_id, EventType.RUN_STARTED, payload))
    Path(ready).touch()
    time.sleep(600)


if __name__ == "__main__":
    command, *args = sys.argv[1:]
    if command == "append":
        append(args[0], *map(int, args[1:]))
    else:
        start(*args)
