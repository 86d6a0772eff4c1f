"""A progress bar for a long call: rows done, total and rows/s (tqdm; its notebook widget under
Jupyter), or nothing when tqdm is missing or the bar is turned off."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


class _Silent:
    def update(self, n: int) -> None:
        """Ignore progress."""


@contextmanager
def progress_bar(total: int, description: str, enabled: bool = True) -> Iterator[Any]:
    """A bar with ``update(rows)``; closed when the block ends."""
    if not enabled or total == 0:
        yield _Silent()
        return
    try:
        from tqdm.auto import tqdm
    except ImportError:
        yield _Silent()
        return
    bar = tqdm(total=total, desc=description, unit="rows", unit_scale=True, leave=False)
    try:
        yield bar
    finally:
        bar.close()
