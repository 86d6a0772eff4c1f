"""Spark settings from ``dc.init(spark=...)``, environment variables and a config file.

Precedence: ``dc.init`` over ``WORKBENCH_SPARK_*`` environment variables over the ``[spark]``
table of ``workbench.toml`` (or the file ``WORKBENCH_CONFIG`` names) over defaults. Importing
this module does not import pyspark.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from workbench.core.base.settings import environment_settings, file_settings, known_settings
from workbench.core.data.engine import engine_settings


@dataclass(frozen=True)
class SparkSettings:
    """How to build the shared SparkSession."""

    master: str = "local[*]"
    driver_memory: str = "2g"
    conf: dict[str, str] = field(default_factory=dict)


KEYS = ("master", "driver_memory", "conf")


def check(spark: Mapping[str, Any]) -> dict[str, Any]:
    """Settings given to ``dc.init(engines={"spark": {...}})`` (or ``spark=``), checked."""
    return known_settings("Spark", spark, KEYS)


def _from_environment() -> dict[str, Any]:
    found: dict[str, Any] = environment_settings("spark", ("master", "driver_memory"))
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
    for layer in (file_settings("spark"), _from_environment(), engine_settings("spark")):
        conf = {**merged["conf"], **{str(k): str(v) for k, v in layer.get("conf", {}).items()}}
        merged.update({k: v for k, v in layer.items() if k != "conf"})
        merged["conf"] = conf
    return SparkSettings(**merged)
