"""The catalog registry DeltaCAT's tests set themselves up with.

Not a port of one DeltaCAT test class: DeltaCAT's fixtures and ``setup_method``s
(deltacat/tests/conftest.py, ``TestDeltaCAT.setup_method`` and the class fixtures of
deltacat/tests/catalog/test_default_catalog_impl.py) rely on ``dc.put_catalog``,
``dc.pop_catalog``, ``dc.clear_catalogs``, ``dc.get_catalog`` and a new catalog holding the
namespace ``default``. These tests pin that behaviour, which the ported tests take for granted
(they register catalogs through ``dc.init`` instead; see conftest.py).
"""

from __future__ import annotations

import pytest

import workbench as dc

pytestmark = pytest.mark.compat


def _catalog(tmp_path, name):
    return dc.Catalog(dc.CatalogProperties(root=str(tmp_path / name)))


def test_put_catalog_registers_and_returns_the_catalog(tmp_path):
    made = _catalog(tmp_path, "one")
    assert dc.put_catalog("one", catalog=made) is made
    assert dc.get_catalog("one") is made
    positional = _catalog(tmp_path, "two")
    assert dc.put_catalog("two", positional) is positional  # the catalog may be positional


def test_first_catalog_after_clear_becomes_the_default(tmp_path):
    dc.clear_catalogs()
    first = dc.put_catalog("first", catalog=_catalog(tmp_path, "first"))
    dc.put_catalog("second", catalog=_catalog(tmp_path, "second"))
    assert dc.get_catalog() is first
    third = dc.put_catalog("third", catalog=_catalog(tmp_path, "third"), default=True)
    assert dc.get_catalog() is third


def test_put_catalog_fail_if_exists(tmp_path):
    dc.put_catalog("taken", catalog=_catalog(tmp_path, "a"))
    with pytest.raises(ValueError, match="already exists"):
        dc.put_catalog("taken", catalog=_catalog(tmp_path, "b"), fail_if_exists=True)


def test_unknown_catalog_is_a_value_error():
    with pytest.raises(ValueError, match=r"Catalog 'nowhere' not found\."):
        dc.get_catalog("nowhere")


def test_pop_catalog_returns_the_catalog_or_none(tmp_path):
    made = dc.put_catalog("popped", catalog=_catalog(tmp_path, "popped"))
    assert dc.pop_catalog("popped") is made
    assert dc.pop_catalog("popped") is None


def test_clear_catalogs_leaves_no_default(tmp_path):
    dc.put_catalog("cleared", catalog=_catalog(tmp_path, "cleared"))
    dc.clear_catalogs()
    with pytest.raises(ValueError):
        dc.get_catalog()


def test_a_new_catalog_holds_the_default_namespace(cat):
    assert [ns.name for ns in dc.list_namespaces(catalog=cat)] == ["default"]
    assert dc.namespace_exists("default", catalog=cat)
    assert dc.default_namespace() == "default"
