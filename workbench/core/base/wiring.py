"""Modules that register hooks when imported (compaction after each commit, runs noting their
writes, the built-in models ``dc.infer`` takes by name), imported once, when a transaction
first records a change or commits or a model is first looked up by name: a process that only
reads never pays for them (about 8 ms of a cold query)."""

from __future__ import annotations

import importlib
import threading

_pending: list[str] = []
_lock = threading.Lock()


def wire_later(*modules: str) -> None:
    """Import ``modules`` at the next ``wire()``."""
    with _lock:
        _pending.extend(m for m in modules if m not in _pending)


def wire() -> None:
    """Import the modules ``wire_later`` named and not imported yet (cheap once done)."""
    if not _pending:
        return
    with _lock:
        while _pending:
            importlib.import_module(_pending[0])
            _pending.pop(0)
