"""The bounded cache behind the file cache, decoded small files and decoded vectors."""

from __future__ import annotations

from workbench.core.base.caches import BoundedCache, cache_names, clear_process_caches


def test_least_recently_used_values_go_first_and_none_over_a_tenth_of_the_bound_is_kept():
    bound = {"bytes": 100}
    cache: BoundedCache[tuple[str, str], bytes] = BoundedCache(
        "tests.bounded", len, lambda: bound["bytes"]
    )
    for name in "abcdefghij":
        cache.keep(("store", name), b"x" * 10)
    assert cache.size == 100 and len(cache.values()) == 10
    assert cache.get(("store", "a")) == b"x" * 10  # now the most recently used
    cache.keep(("store", "k"), b"y" * 10)
    assert cache.get(("store", "b")) is None and cache.get(("store", "a")) is not None
    cache.keep(("store", "big"), b"z" * 11)  # over a tenth of the bound: not kept
    assert cache.get(("store", "big")) is None and cache.size == 100
    cache.keep(("store", "k"), b"other")  # a key kept stays as it was
    assert cache.get(("store", "k")) == b"y" * 10


def test_a_store_is_forgotten_alone_and_a_zero_bound_keeps_nothing():
    bound = {"bytes": 1000}
    cache: BoundedCache[tuple[str, str], bytes] = BoundedCache(
        "tests.bounded_stores", len, lambda: bound["bytes"]
    )
    cache.keep(("one", "a"), b"12345")
    cache.keep(("two", "a"), b"123")
    cache.forget("one")
    assert cache.get(("one", "a")) is None and cache.get(("two", "a")) == b"123"
    assert cache.size == 3
    assert "tests.bounded_stores" in cache_names(forgetting=True)
    clear_process_caches()
    assert cache.size == 0 and not cache.values()
    bound["bytes"] = 0
    cache.keep(("two", "b"), b"1")
    assert cache.get(("two", "b")) is None
