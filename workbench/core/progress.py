"""Progress bars for long calls: tqdm's (a widget in notebooks, text in terminals) when tqdm is
installed and the work is big enough to be worth one, else nothing."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

MIN_TOTAL = 200  # smaller jobs finish before a bar would help


@contextmanager
def progress(
    total: int, description: str, unit: str = "item", min_total: int = MIN_TOTAL
) -> Iterator[Callable[[int], None]]:
    """A function to report ``n`` more items done; it draws a bar when ``total`` reaches
    ``min_total`` and tqdm is importable."""
    try:
        from tqdm.auto import tqdm
    except ImportError:
        tqdm = None
    if tqdm is None or total < min_total:
        yield lambda n: None
        return
    with tqdm(total=total, desc=description, unit=unit, leave=False) as bar:
        yield bar.update
