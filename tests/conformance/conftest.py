"""The lived-in catalogs every conformance case reads: built once per test run."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import workbench as dc
from tests.conformance.paths import Where
from tests.conformance.states import build
from tests.conformance.tables import NAMESPACE, PARTNER, TableState

LOCAL = "conformance"
OBJECT_STORE = "conformance_s3"


class Lived:
    """A built catalog: where it is, its states, and the join partner's rows."""

    def __init__(self, where: Where, catalog: dc.Catalog, states: dict[str, TableState]):
        self.where, self.catalog, self.states = where, catalog, states
        partner = dc.read(PARTNER, NAMESPACE, where.catalog, read_as="pyarrow")
        self.partner = partner.to_pylist()

    def register(self) -> None:
        """Put the catalog back under its name (other tests replace the registry)."""
        dc.put_catalog(self.where.catalog, self.catalog)


@pytest.fixture(scope="session")
def lived(tmp_path_factory: pytest.TempPathFactory) -> Lived:
    catalog = dc.Catalog(dc.CatalogProperties(str(tmp_path_factory.mktemp("lived") / "catalog")))
    dc.put_catalog(LOCAL, catalog)
    return Lived(Where(LOCAL), catalog, build(LOCAL))


@pytest.fixture(scope="session")
def lived_on_s3(s3) -> Lived:
    root = f"s3://{s3.new_bucket()}/catalog"
    catalog = dc.Catalog(dc.CatalogProperties(root, s3.options))
    dc.put_catalog(OBJECT_STORE, catalog)
    return Lived(Where(OBJECT_STORE, dict(s3.options)), catalog, build(OBJECT_STORE, small=True))


@pytest.fixture
def registered(request: pytest.FixtureRequest) -> Iterator[None]:
    """The test's lived-in catalog registered for the test's length."""
    for name in ("lived", "lived_on_s3"):
        if name in request.fixturenames:
            request.getfixturevalue(name).register()
    yield
