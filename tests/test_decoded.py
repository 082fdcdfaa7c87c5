"""`DecodedCache`: bounded, oldest out first, and never holding what a forget erased."""

from __future__ import annotations

from chrysalis.store.decoded import DecodedCache


def key(n: int) -> bytes:
    return b"r\0" + n.to_bytes(8, "big")


def test_a_full_cache_drops_its_oldest_entry_first() -> None:
    cache = DecodedCache(capacity=3)
    for n in range(3):
        cache.put(key(n), {"id": f"b{n}"}, cache.epoch)
    cache.put(key(3), {"id": "b3"}, cache.epoch)
    assert cache.get(key(0)) is None
    assert [cache.get(key(n)) for n in (1, 2, 3)] == [{"id": "b1"}, {"id": "b2"}, {"id": "b3"}]
    # Many turns of eviction (what a recall at 100k beads does all day) keep the bound and
    # the order: the last `capacity` puts are the ones held.
    for n in range(4, 5000):
        cache.put(key(n), {"id": f"b{n}"}, cache.epoch)
    assert [n for n in range(5000) if cache.get(key(n)) is not None] == [4997, 4998, 4999]


def test_an_invalidated_entry_is_gone_and_a_put_from_before_is_refused() -> None:
    cache = DecodedCache(capacity=10)
    before = cache.epoch  # taken before a reader opened its transaction
    cache.put(key(1), {"content": "the secret"}, before)
    cache.invalidate([key(1)])  # a forget erased it meanwhile
    assert cache.get(key(1)) is None
    cache.put(key(1), {"content": "the secret"}, before)  # the reader's stale read
    assert cache.get(key(1)) is None
    cache.put(key(2), {"content": "fresh"}, cache.epoch)
    assert cache.get(key(2)) == {"content": "fresh"}
    # Invalidating a key it never held, or one already evicted, is harmless.
    cache.invalidate([key(99)])
    assert cache.get(key(2)) == {"content": "fresh"}
