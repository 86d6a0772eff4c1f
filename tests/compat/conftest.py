"""Fixtures for the DeltaCAT 2.0 compatibility tests.

DeltaCAT's own tests register each catalog with ``dc.put_catalog(name, catalog=Catalog(...))``
after ``dc.init()``. Here every catalog is registered through workbench's public registry API
(``dc.init({...}, default=...)`` with ``dc.Catalog(dc.CatalogProperties(root))``), so that the
behaviour under test, not the set-up, decides whether a test passes. The DeltaCAT registry
functions themselves are tested in ``test_catalog_registry.py``.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

import workbench as dc

DIFFERENCES = Path(__file__).with_name("differences.txt")


def pytest_collection_modifyitems(config, items):
    """Cases listed in differences.txt are DeltaCAT behaviour workbench differs from on purpose
    (see REPORT.md): each runs as a strict xfail, so one that starts passing is noticed."""
    lines = DIFFERENCES.read_text().splitlines()
    differing = {line for line in lines if line and not line.startswith("#")}
    for item in items:
        if item.nodeid in differing:
            reason = "workbench differs from DeltaCAT on purpose (tests/compat/differences.txt)"
            item.add_marker(pytest.mark.xfail(reason=reason, strict=True))


class Catalogs:
    """The catalogs registered for one test, each in its own temporary root."""

    def __init__(self, tmp_path: Path):
        self.tmp_path = tmp_path
        self.registered: dict[str, dc.Catalog] = {}
        self.default: str | None = None

    def add(
        self, name: str | None = None, namespace: str | None = None, default: bool = True
    ) -> str:
        """Register a fresh catalog (the default unless ``default=False``); optionally create a
        namespace in it, as DeltaCAT's class fixtures do. Returns the catalog name."""
        name = name or f"compat-{uuid.uuid4()}"
        root = self.tmp_path / f"root{len(self.registered)}"
        self.registered[name] = dc.Catalog(dc.CatalogProperties(str(root)))
        if default or self.default is None:
            self.default = name
        dc.init(dict(self.registered), default=self.default)
        if namespace is not None:
            dc.create_namespace(namespace=namespace, catalog=name)
        return name

    def root(self, name: str) -> str:
        """The root folder of a registered catalog."""
        return self.registered[name].root


@pytest.fixture(autouse=True)
def catalogs(tmp_path: Path) -> Catalogs:
    """A registry reset for every test: one temporary catalog called ``default``, so that no
    test can reach a catalog of an earlier test or the working directory."""
    registry = Catalogs(tmp_path)
    registry.add("default")
    return registry


@pytest.fixture
def cat(catalogs: Catalogs) -> str:
    """A fresh catalog, registered as the default; its name."""
    return catalogs.add()
