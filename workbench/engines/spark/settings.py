"""Spark settings from ``dc.init(spark=...)``, environment variables and a config file.

Precedence: ``dc.init`` over ``WORKBENCH_SPARK_*`` environment variables over the ``[spark]``
table of ``workbench.toml`` (or the file ``WORKBENCH_CONFIG`` names) over defaults. Importing
this module does not import pyspark.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import tomllib

from workbench.core.errors import InvalidArgumentError


@dataclass(frozen=True)
class SparkSettings:
    """How to build the shared SparkSession."""

    master: str = "local[*]"
    driver_memory: str = "2g"
    conf: dict[str, str] = field(default_factory=dict)


_from_init: dict[str, Any] = {}


def configure(spark: dict[str, Any] | None) -> None:
    """Remember settings passed to ``dc.init(spark={...})`` (keys: master, driver_memory, conf)."""
    unknown = set(spark or {}) - {"master", "driver_memory", "conf"}
    if unknown:
        raise InvalidArgumentError(
            f"Unknown Spark setting(s) {sorted(unknown)}; use master, driver_memory and conf."
        )
    _from_init.clear()
    _from_init.update(spark or {})


def _from_file() -> dict[str, Any]:
    path = Path(os.environ.get("WORKBENCH_CONFIG", "workbench.toml"))
    if not path.is_file():
        return {}
    with path.open("rb") as f:
        return dict(tomllib.load(f).get("spark", {}))


def _from_environment() -> dict[str, Any]:
    found: dict[str, Any] = {}
    if "WORKBENCH_SPARK_MASTER" in os.environ:
        found["master"] = os.environ["WORKBENCH_SPARK_MASTER"]
    if "WORKBENCH_SPARK_DRIVER_MEMORY" in os.environ:
        found["driver_memory"] = os.environ["WORKBENCH_SPARK_DRIVER_MEMORY"]
    prefix = "WORKBENCH_SPARK_CONF_"  # WORKBENCH_SPARK_CONF_spark__sql__shuffle__partitions=8
    conf = {
        key[len(prefix) :].replace("__", "."): value
        for key, value in os.environ.items()
        if key.startswith(prefix)
    }
    if conf:
        found["conf"] = conf
    return found


def current() -> SparkSettings:
    """The effective settings."""
    merged: dict[str, Any] = {"conf": {}}
    for layer in (_from_file(), _from_environment(), _from_init):
        conf = {**merged["conf"], **{str(k): str(v) for k, v in layer.get("conf", {}).items()}}
        merged.update({k: v for k, v in layer.items() if k != "conf"})
        merged["conf"] = conf
    return SparkSettings(**merged)
