"""Starting Ray only when asked, with laptop-sized settings unless configured for a cluster.

Settings (``dc.init(engines={"ray": {...}})`` over ``WORKBENCH_RAY_*`` over ``[ray]`` in
``workbench.toml``): ``address`` of a cluster to join; for a local start ``num_cpus`` and
``object_store_memory`` (bytes). A Ray instance started by someone else is used as it is.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from typing import Any

from workbench.core.base.errors import EngineUnavailableError
from workbench.core.base.settings import environment_settings, file_settings, known_settings
from workbench.core.data.engine import engine_settings

KEYS = ("address", "num_cpus", "object_store_memory")
LOCAL_OBJECT_STORE_BYTES = 256 * 1024**2


def check(settings: Mapping[str, Any]) -> dict[str, Any]:
    """Ray settings given to ``dc.init``, checked."""
    return known_settings("Ray", settings, KEYS)


def current() -> dict[str, Any]:
    """The effective settings."""
    merged: dict[str, Any] = {}
    for layer in (file_settings("ray"), environment_settings("ray", KEYS), engine_settings("ray")):
        merged.update(layer)
    return merged


def ensure_ray() -> None:
    """Connect to the configured cluster or start a small local Ray, once per process."""
    import ray

    if ray.is_initialized():
        return
    settings = current()
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    quiet = {"include_dashboard": False, "log_to_driver": False, "logging_level": "ERROR"}
    try:
        if settings.get("address"):
            ray.init(address=settings["address"], **quiet)
            print(f"workbench: connected to the Ray cluster at {settings['address']}.")
            return
        cpus = int(settings.get("num_cpus") or os.cpu_count() or 1)
        memory = int(settings.get("object_store_memory") or LOCAL_OBJECT_STORE_BYTES)
        ray.init(num_cpus=cpus, object_store_memory=memory, **quiet)
    except Exception as e:  # Ray reports start-up failures with many exception types
        raise EngineUnavailableError(f"Ray could not start ({e}).") from e
    _quiet_data()
    print(
        f"workbench: started a local Ray instance ({cpus} CPUs, {memory // 1024**2} MB object "
        "store); set dc.init(engines={'ray': {'address': ..., 'num_cpus': ...}}) to change it.",
        file=sys.stderr,
    )


def _quiet_data() -> None:
    """No progress bars or per-dataset log lines from Ray Data in notebooks and terminals."""
    import logging

    import ray.data

    context = ray.data.DataContext.get_current()
    context.enable_progress_bars = False
    context.print_on_execution_start = False
    logging.getLogger("ray.data").setLevel(logging.WARNING)
