"""Remembered table versions: found by table, bounded, and forgotten per catalog, with the
index ``recall`` looks through always matching what is kept."""

from __future__ import annotations

from types import SimpleNamespace

import workbench as dc
from workbench.core.base.caches import forget_catalog
from workbench.core.catalog.scope import get_catalog
from workbench.core.transactions import snapshot_cache


def kept_versions() -> dict[tuple[str, str, str], set[int]]:
    found: dict[tuple[str, str, str], set[int]] = {}
    for uri, incarnation, line, version in snapshot_cache._tables:
        found.setdefault((uri, incarnation, line), set()).add(version)
    return found


def test_the_index_follows_what_is_kept_through_eviction_and_forgetting():
    for version in range(snapshot_cache.MAX_REMEMBERED + 40):
        for table in ("a", "b"):
            opened = SimpleNamespace(uri=f"/t/{table}", incarnation="i", version=version)
            snapshot_cache.keep(opened, "line-one" if version % 2 else "line-two")
    assert len(snapshot_cache._tables) == snapshot_cache.MAX_REMEMBERED
    assert snapshot_cache._versions == kept_versions()
    assert min(snapshot_cache._versions[("/t/a", "i", "line-one")]) > 40  # oldest dropped
    snapshot_cache._clear()
    assert not snapshot_cache._tables and not snapshot_cache._versions


def test_a_table_read_many_times_opens_from_a_remembered_version(catalog):
    for i in range(5):
        dc.write({"id": [i]}, "t")
    opened = {v: dc.read("t", version=v, read_as=dc.DatasetType.PYARROW) for v in range(5)}
    assert {v: t.column("id").to_pylist() for v, t in opened.items()} == {
        v: list(range(v + 1)) for v in range(5)
    }
    assert snapshot_cache._versions == kept_versions() and snapshot_cache._versions
    forget_catalog(get_catalog().identity)
    assert not snapshot_cache._tables and not snapshot_cache._versions
