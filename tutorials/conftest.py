"""The tutorials run beside the tests (``make test``): each notebook's cells go to one xdist
worker, in order, as nbval runs them in one kernel."""

from __future__ import annotations

import pytest


def pytest_itemcollected(item: pytest.Item) -> None:
    item.add_marker(pytest.mark.xdist_group(f"tutorial:{item.path.name}"))
