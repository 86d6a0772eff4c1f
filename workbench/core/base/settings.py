"""Engine settings from outside the code: a ``[<engine>]`` table in ``workbench.toml`` (or the
file ``WORKBENCH_CONFIG`` names) and ``WORKBENCH_<ENGINE>_<KEY>`` environment variables. Code
settings (``dc.init(engines=...)``) take precedence over both, and the environment over the
file."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import tomllib

from workbench.core.base.errors import InvalidArgumentError

CONFIG_FILE = "workbench.toml"


def file_settings(section: str) -> dict[str, Any]:
    """The ``[section]`` table of the configuration file (empty when there is none)."""
    path = Path(os.environ.get("WORKBENCH_CONFIG", CONFIG_FILE))
    if not path.is_file():
        return {}
    with path.open("rb") as f:
        return dict(tomllib.load(f).get(section, {}))


def environment_settings(section: str, keys: tuple[str, ...]) -> dict[str, str]:
    """``WORKBENCH_<SECTION>_<KEY>`` variables for the given keys, by key."""
    prefix = f"WORKBENCH_{section.upper()}_"
    return {k: os.environ[prefix + k.upper()] for k in keys if prefix + k.upper() in os.environ}


def known_settings(engine: str, settings: Mapping[str, Any], keys: tuple[str, ...]) -> dict:
    """``settings`` for ``engine`` as a dict, or ``InvalidArgumentError`` naming unknown keys."""
    unknown = set(settings) - set(keys)
    if unknown:
        raise InvalidArgumentError(
            f"Unknown {engine} setting(s) {sorted(unknown)}; use {', '.join(keys)}."
        )
    return dict(settings)
