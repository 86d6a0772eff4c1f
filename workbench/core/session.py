"""``dc.init``: register catalogs and, in the same call, configure the compute engines and the
run log they use; it sits above the catalog registry so the registry knows neither."""

from __future__ import annotations

from typing import Any

from workbench.core.catalog.catalogs import Catalog
from workbench.core.catalog.registry import check_branch, register, resolved
from workbench.core.data.engine import configure_engines
from workbench.core.events.config import configure_events
from workbench.core.ops import compaction  # noqa: F401 - compacts tables after each commit


def init(
    catalogs: dict[str, Catalog] | None = None,
    default: str | None = None,
    spark: dict[str, Any] | None = None,
    engines: dict[str, dict[str, Any]] | None = None,
    events: str | None = None,
    branch: str | None = None,
) -> dict[str, Catalog]:
    """Register catalogs by name (replacing earlier ones; with none given, keep those
    registered, or register the local default catalog); starts no Ray or Spark.

    ``engines`` configures compute engines used later, by name: e.g. ``{"spark": {"master":
    ..., "driver_memory": ..., "conf": {...}}, "ray": {"address": ..., "num_cpus": ...}}``;
    ``spark=`` is the same as ``engines={"spark": ...}``. ``events`` is the URI of the run
    log every catalog's runs go to (``sqlite:///abs/path.db`` or ``delta:///abs/path``; by
    default each catalog's own, in ``<root>/_workbench/events``). ``branch`` is the branch
    calls use when they name none (``main`` unless given; see ``dc.branch`` for a block).
    """
    catalogs, default = resolved(catalogs, default)
    check_branch(catalogs, default, branch)  # first: a failed init changes nothing
    settings = dict(engines or {})
    if spark is not None:
        settings["spark"] = spark
    if settings:
        configure_engines(settings)
    if events is not None:
        configure_events(events)
    return register(catalogs, default, branch)
