"""Progress bars for long calls: tqdm's (a widget in notebooks, text in terminals; done, total and
rate) when tqdm is installed and the work is big enough to be worth one, else nothing."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

MIN_TOTAL = 200  # smaller jobs finish before a bar would help


@contextmanager
def progress(
    total: int,
    description: str,
    unit: str = "item",
    min_total: int = MIN_TOTAL,
    enabled: bool = True,
) -> Iterator[Callable[[int], None]]:
    """A function to report ``n`` more items done; it draws a bar when enabled, ``total``
    reaches ``min_total`` and tqdm is importable."""
    try:
        from tqdm.auto import tqdm
    except ImportError:
        tqdm = None
    if tqdm is None or not enabled or total < max(min_total, 1):
        yield lambda n: None
        return
    with tqdm(total=total, desc=description, unit=unit, unit_scale=True, leave=False) as bar:
        yield bar.update
