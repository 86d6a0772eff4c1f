"""Timing helpers shared by the benchmarks."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TypeVar

T = TypeVar("T")


def seconds(fn: Callable[[], Any]) -> float:
    """Wall-clock seconds one call of ``fn`` takes (``time.perf_counter``)."""
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def median_seconds(fn: Callable[[], Any], repeats: int) -> float:
    """The median of ``repeats`` timed calls of ``fn``, in seconds."""
    import statistics

    return statistics.median(seconds(fn) for _ in range(repeats))


def forget_read_data() -> None:
    """Empty what a process keeps from earlier reads (object-store files, decoded small data
    files, decoded deletion vectors): the next read is a new process's first."""
    from workbench.core.delta import decoded_files, deleted_positions
    from workbench.core.storage import file_cache

    for cache in (file_cache, decoded_files, deleted_positions):
        cache.clear()


def progress(
    items: Iterable[T], total: int, label: str, describe: Callable[[T], str] | None = None
) -> Iterator[T]:
    """Yield ``items`` while showing progress on stderr (tqdm if installed, else a line each);
    ``describe`` names the item being worked on."""
    try:
        from tqdm import tqdm
    except ImportError:
        for i, item in enumerate(items, 1):
            name = f" {describe(item)}" if describe else ""
            print(f"{label} [{i}/{total}]{name}", file=sys.stderr, flush=True)
            yield item
        return
    bar = tqdm(items, total=total, desc=label, file=sys.stderr, leave=False)
    for item in bar:
        if describe is not None:
            bar.set_description(f"{label}: {describe(item)}")
        yield item
