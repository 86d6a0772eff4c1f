"""Timing helpers shared by the benchmarks."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any


def seconds(fn: Callable[[], Any]) -> float:
    """Wall-clock seconds one call of ``fn`` takes (``time.perf_counter``)."""
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def median_seconds(fn: Callable[[], Any], repeats: int) -> float:
    """The median of ``repeats`` timed calls of ``fn``, in seconds."""
    import statistics

    return statistics.median(seconds(fn) for _ in range(repeats))
