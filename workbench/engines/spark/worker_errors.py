"""Workbench errors raised in Spark's Python workers, given back to the caller as themselves.

PySpark (4.3) runs a Python data source's ``schema()``, ``reader()``, ``writer()`` and its tasks
in worker processes: an error raised there reaches the driver as an ``AnalysisException`` or a
``Py4JJavaError`` holding the worker's traceback as text. ``workbench_errors`` finds the last
workbench error in that text and raises it instead, with its class and message only.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager

from workbench.core.base import errors
from workbench.core.base.errors import WorkbenchError

_RAISED = re.compile(r"^workbench\.core\.base\.errors\.(\w+): ", re.MULTILINE)
_SPARK_TAIL = re.compile(r"\n\s*(?:SQLSTATE: |JVM stacktrace:)")


@contextmanager
def workbench_errors() -> Iterator[None]:
    """Re-raise a Spark exception that carries a workbench error raised in a Python worker as
    that error (its type and message, without the worker's traceback or Java's stack)."""
    from py4j.protocol import Py4JJavaError
    from pyspark.errors.exceptions.captured import CapturedException

    try:
        yield
    except (CapturedException, Py4JJavaError) as e:  # the second from a standalone cluster
        error = raised_in_worker(str(e))
        if error is None:
            raise
        raise error from None


def raised_in_worker(text: str) -> WorkbenchError | None:
    """The last workbench error a Python traceback in ``text`` ends with, rebuilt from its
    class name and message; None if it holds none."""
    found = list(_RAISED.finditer(text))
    if not found:
        return None
    last = found[-1]
    kind = getattr(errors, last.group(1), None)
    if not (isinstance(kind, type) and issubclass(kind, WorkbenchError)):
        return None
    return kind(_SPARK_TAIL.split(text[last.end() :], maxsplit=1)[0].strip())
