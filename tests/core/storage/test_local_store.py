"""A local root's reads: keys the store names as they are read the file directly; keys it
encodes go through the store. Both must see exactly what the store wrote."""

from __future__ import annotations

import pytest

from workbench.core.storage.store import Storage

KEYS = [
    "log/_delta_log/00000000000000000001.json",  # plain: read directly
    "year=2024/part-0.parquet",
    "a b/c%d é.json",  # encoded by the store: read through it
    ".hidden/x",
    "n/..x",
]


@pytest.mark.parametrize("key", KEYS)
def test_a_local_store_reads_what_it_wrote_under_any_key(tmp_path, key):
    storage = Storage(str(tmp_path / "root"))
    assert storage.get(key) is None and not storage.exists(key)  # no root yet
    storage.put(key, b"bytes")
    assert storage.get(key) == b"bytes" and storage.exists(key)
    assert not storage.put_if_absent(key, b"other") and storage.get(key) == b"bytes"
    folder = key.rpartition("/")[0]
    assert storage.get(folder) is None and not storage.exists(folder)  # a folder is no object
    assert storage.get(f"{key}/below") is None and not storage.exists(f"{key}/below")
