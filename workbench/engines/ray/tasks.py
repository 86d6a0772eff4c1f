"""Module-level functions run as Ray tasks, declared with Ray only when first called (so
importing the engine does not start or import Ray)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


class Task:
    """``Task(fn).remote(...)`` runs ``fn`` as a Ray task."""

    def __init__(self, function: Callable[..., Any]):
        self.function = function
        self._task: Any = None

    def remote(self, *args: Any) -> Any:
        return self._declared().remote(*args)

    def with_returns(self, count: int) -> Any:
        """The task declared to return ``count`` objects (each its own reference)."""
        return self._declared().options(num_returns=count)

    def _declared(self) -> Any:
        import ray

        if self._task is None:
            self._task = ray.remote(self.function)
        return self._task
