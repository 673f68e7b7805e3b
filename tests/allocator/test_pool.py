"""Pool strategies on a fake upstream: rounding, reuse, splitting, coalescing, stats, OOM."""

import gc

import pytest

from allocator import (BestFitPool, Buffer, HostUpstream, NaivePool, OutOfMemoryError, Pool,
                       RoundPool, UnpooledPool)
from tests.allocator.mock import FakeUpstream

KiB, MiB = 1 << 10, 1 << 20
STRATEGIES = [NaivePool, RoundPool, BestFitPool, UnpooledPool]


def stats(pool):
    return pool.memory_stats()


@pytest.mark.parametrize("size, rounded", [
    (1, 4096), (4096, 4096), (4097, 8192), (2 * MiB, 2 * MiB), (2 * MiB + 1, 4 * MiB),
    (5 * MiB, 6 * MiB)])
def test_naive_rounds_to_page_then_large_granule(size, rounded):
    pool = NaivePool(FakeUpstream())
    b = pool.alloc(size)
    assert b.nbytes_reserved == rounded
    assert stats(pool)["reserved_bytes.all.current"] == rounded


def test_naive_reuses_only_exact_rounded_size():
    up = FakeUpstream()
    pool = NaivePool(up)
    p = pool.alloc(5000).ptr          # rounded 8192, freed at once (cached)
    assert pool.alloc(8000).ptr == p  # same rounded size: hit
    b = pool.alloc(9000)              # 12288: miss
    assert b.ptr != p and len(up.allocs) == 2
    s = stats(pool)
    assert (s["num_cache_hits"], s["num_cache_misses"]) == (1, 2)


@pytest.mark.parametrize("size, rounded", [
    (1, 4096), (4097, 8192), (5000, 8192), (3 * MiB, 4 * MiB), (16 * MiB, 16 * MiB),
    (16 * MiB + 1, 32 * MiB), (40 * MiB, 48 * MiB)])
def test_round_buckets_powers_of_two_then_linear(size, rounded):
    pool = RoundPool(FakeUpstream(), round_cutoff=24)
    assert pool.alloc(size).nbytes_reserved == rounded


def test_round_reuses_within_bucket():
    pool = RoundPool(FakeUpstream())
    p = pool.alloc(5000).ptr
    assert pool.alloc(7000).ptr == p
    assert pool.alloc(9000).ptr != p


def test_bestfit_splits_one_segment_for_small_blocks():
    up = FakeUpstream()
    pool = BestFitPool(up)
    a, b = pool.alloc(1000), pool.alloc(1000)
    assert up.allocs == [2 * MiB]                  # one 2 MiB segment serves both
    assert b.ptr == a.ptr + 1024                   # 512-byte granules, adjacent
    assert a.nbytes_reserved == b.nbytes_reserved == 1024
    s = stats(pool)
    assert s["segment.all.current"] == 1 and s["allocated_bytes.all.current"] == 2048


def test_bestfit_coalesces_and_releases_whole_segments():
    up = FakeUpstream()
    pool = BestFitPool(up)
    bufs = [pool.alloc(4096) for _ in range(4)]
    for i in (0, 2, 1, 3):                          # free out of order
        bufs[i].free()
    pool.empty_cache()                              # coalesces, then releases the segment
    assert up.frees == [2 * MiB] and up.held == 0
    assert stats(pool)["reserved_bytes.all.current"] == 0


def test_bestfit_partial_segment_is_not_released():
    up = FakeUpstream()
    pool = BestFitPool(up)
    keep = pool.alloc(4096)
    pool.alloc(4096)                                # freed at once
    pool.empty_cache()
    assert up.frees == [] and stats(pool)["reserved_bytes.all.current"] == 2 * MiB
    del keep
    pool.empty_cache()
    assert up.frees == [2 * MiB]


def test_bestfit_picks_the_smallest_block_that_fits():
    up = FakeUpstream()
    pool = BestFitPool(up)
    # Segments of their own (>= max_split_size), all cached.
    sizes = [30 * MiB, 12 * MiB, 20 * MiB]
    ptrs = {s: pool.alloc(s).ptr for s in sizes}
    assert pool.alloc(11 * MiB).ptr == ptrs[12 * MiB]
    assert pool.alloc(18 * MiB).ptr == ptrs[20 * MiB]
    assert len(up.allocs) == 3


def test_bestfit_large_blocks_serve_only_requests_they_fit_closely():
    up = FakeUpstream()
    pool = BestFitPool(up)
    a, b = pool.alloc(64 * MiB), pool.alloc(12 * MiB)
    big = a.ptr
    del a, b                                 # both cached whole
    c = pool.alloc(60 * MiB)                 # within the slack (1/4): reused whole
    assert c.ptr == big and c.nbytes_reserved == 64 * MiB
    d = pool.alloc(30 * MiB)                 # 12 MiB too small, 64 MiB taken: new segment
    assert up.allocs == [64 * MiB, 12 * MiB, 30 * MiB] and d.ptr != big
    held = pool.alloc(11 * MiB)              # the cached 12 MiB block fits closely
    assert held.nbytes_reserved == 12 * MiB and len(up.allocs) == 3


def test_bestfit_ties_go_to_the_lowest_address():
    pool = BestFitPool(FakeUpstream())
    held = [pool.alloc(1000) for _ in range(6)]
    addrs = [b.ptr for b in held]
    held[4].free()
    held[1].free()
    assert pool.alloc(1000).ptr == addrs[1]


def test_bestfit_gives_back_free_segments_before_growing():
    up = FakeUpstream()
    pool = BestFitPool(up)
    pool.alloc(40 * MiB)                     # cached whole, too big for what follows
    pool.alloc(30 * MiB)                     # cache (40) >= need (30): 40 goes back first
    assert up.frees == [40 * MiB]
    assert pool.memory_stats()["reserved_bytes.all.current"] == 30 * MiB


def test_bestfit_segment_sizes():
    up = FakeUpstream()
    pool = BestFitPool(up)
    held = [pool.alloc(MiB),        # small: 2 MiB segment
            pool.alloc(3 * MiB),    # medium: 20 MiB segment, 17 MiB remainder split off
            pool.alloc(29 * MiB)]   # large: own segment rounded to 2 MiB
    assert up.allocs == [2 * MiB, 20 * MiB, 30 * MiB]
    assert stats(pool)["largest_free_block"] == 17 * MiB
    held.append(pool.alloc(5 * MiB))  # served from the remainder, no upstream call
    assert len(up.allocs) == 3 and held[-1].ptr == held[1].ptr + 3 * MiB


def test_bestfit_max_split_size_sets_the_own_segment_class():
    up = FakeUpstream()
    pool = BestFitPool(up, max_split_size=4 * MiB)
    pool.alloc(5 * MiB)                      # >= 4 MiB: own segment, rounded to 2 MiB
    assert up.allocs == [6 * MiB]
    pool2 = BestFitPool(FakeUpstream())
    held = [pool2.alloc(5 * MiB), pool2.alloc(5 * MiB)]   # < 10 MiB: share a 20 MiB segment
    assert pool2.upstream.allocs == [20 * MiB] and held[1].ptr == held[0].ptr + 5 * MiB
    with pytest.raises(ValueError, match=r"max_split_size must be an integer in \(1 MiB, 20 MiB\]"):
        BestFitPool(FakeUpstream(), max_split_size=0)


def test_unpooled_goes_straight_to_the_upstream():
    up = FakeUpstream()
    pool = UnpooledPool(up)
    pool.alloc(1000)
    pool.alloc(1000)
    assert up.allocs == [1000, 1000] and up.frees == [1000, 1000] and up.held == 0
    assert stats(pool)["reserved_bytes.all.current"] == 0


@pytest.mark.parametrize("cls", STRATEGIES)
def test_stats_follow_pytorch_keys_and_balance(cls):
    pool = cls(FakeUpstream())
    a = pool.alloc(3000)
    b = pool.alloc(100_000)
    s = stats(pool)
    assert s["requested_bytes.all.current"] == 103_000
    assert s["allocation.all.current"] == 2 == s["active.all.current"]
    alloc_now = s["allocated_bytes.all.current"]
    assert alloc_now == a.nbytes_reserved + b.nbytes_reserved >= 103_000
    assert s["reserved_bytes.all.current"] >= alloc_now
    del a
    s = stats(pool)
    assert s["allocated_bytes.all.peak"] == alloc_now
    assert s["allocated_bytes.all.freed"] == alloc_now - s["allocated_bytes.all.current"]
    assert s["requested_bytes.all.current"] == 100_000
    pool.reset_peak_stats()
    assert stats(pool)["allocated_bytes.all.peak"] == s["allocated_bytes.all.current"]
    del b
    s = stats(pool)
    assert s["allocated_bytes.all.current"] == 0 == s["requested_bytes.all.current"]
    assert s["allocated_bytes.all.allocated"] == s["allocated_bytes.all.freed"] == alloc_now
    for key in ("active_bytes.all.current", "num_alloc_retries", "num_ooms",
                "segment.all.peak", "num_device_alloc", "num_device_free"):
        assert key in s
    text = pool.memory_summary()
    assert "allocated" in text and "reserved" in text and pool.strategy in text


@pytest.mark.parametrize("cls", STRATEGIES)
def test_ladder_frees_cache_then_retries(cls):
    up = FakeUpstream(capacity=64 * MiB)
    pool = cls(up)
    for _ in range(3):
        pool.alloc(20 * MiB)            # cached (or released, unpooled)
    pool.alloc(50 * MiB).free()         # needs the cache back: retried, not an OOM
    s = stats(pool)
    assert s["num_ooms"] == 0
    assert s["num_alloc_retries"] == (0 if cls is UnpooledPool else 1)


@pytest.mark.parametrize("cls", STRATEGIES)
def test_ladder_collects_garbage_before_giving_up(cls):
    up = FakeUpstream(capacity=32 * MiB)
    pool = cls(up)
    cycle = [pool.alloc(30 * MiB)]
    cycle.append(cycle)                 # garbage only gc can free
    del cycle
    gc.disable()
    try:
        b = pool.alloc(30 * MiB)
    finally:
        gc.enable()
    assert stats(pool)["num_ooms"] == 0 and b.size == 30 * MiB


@pytest.mark.parametrize("cls", STRATEGIES)
def test_oom_raises_with_sizes_and_leaves_pool_consistent(cls):
    up = FakeUpstream(capacity=32 * MiB)
    pool = cls(up)
    keep = pool.alloc(10 * MiB)
    before = stats(pool)
    with pytest.raises(OutOfMemoryError) as ei:
        pool.alloc(100 * MiB)
    msg = str(ei.value)
    assert isinstance(ei.value, MemoryError)
    for part in ("out of memory on cpu(0)", "104857600 bytes requested", "allocated",
                 "reserved", "largest free block", "limit", "Remedy"):
        assert part in msg, part
    after = stats(pool)
    assert after["num_ooms"] == 1
    assert after["allocated_bytes.all.current"] == before["allocated_bytes.all.current"]
    assert after["reserved_bytes.all.current"] == up.held
    small = pool.alloc(1 * MiB)          # still works
    del small, keep
    assert stats(pool)["allocated_bytes.all.current"] == 0


def test_limit_caps_reserved_bytes_and_says_so():
    pool = RoundPool(FakeUpstream(), limit=8 * MiB)
    pool.alloc(4 * MiB)
    with pytest.raises(OutOfMemoryError, match="set_limit"):
        pool.alloc(16 * MiB)
    pool.set_limit(0)
    pool.alloc(16 * MiB)
    with pytest.raises(ValueError, match="limit must be >= 0"):
        pool.set_limit(-1)
    with pytest.raises(TypeError, match="limit must be an integer"):
        pool.set_limit(1.5)
    with pytest.raises(ValueError, match=r"limit must be >= 0 and <= 2\*\*64 - 1 bytes.*\(got "
                                         r"18446744073709551616\)"):
        pool.set_limit(2**64)
    pool.set_limit(2**64 - 1)
    assert pool.limit == 2**64 - 1


@pytest.mark.parametrize("limit, nbytes, segment", [
    (8 * MiB, 4 * MiB, 8 * MiB),               # medium: 20 MiB as usual
    (MiB, 4 * KiB, MiB),                       # small: 2 MiB as usual
    (13 * MiB, 12 * MiB + 1, 13 * MiB),        # large: 14 MiB as usual
    (12 * MiB, 12 * MiB, 12 * MiB),            # the whole limit
])
def test_bestfit_segments_shrink_to_fit_the_limit(limit, nbytes, segment):
    up = FakeUpstream()
    pool = BestFitPool(up, limit=limit)
    b = pool.alloc(nbytes)
    assert up.allocs == [segment]
    del b


def test_bestfit_shrunk_segment_is_still_split():
    up = FakeUpstream()
    pool = BestFitPool(up, limit=8 * MiB)
    b = pool.alloc(4 * MiB)
    c = pool.alloc(3 * MiB)                    # from the rest of the first segment
    assert len(up.allocs) == 1 and c.ptr == b.ptr + 4 * MiB
    del b, c


def test_bestfit_segment_fits_the_room_the_ladder_frees():
    up = FakeUpstream()
    pool = BestFitPool(up, limit=8 * MiB)
    pool.alloc(MiB)                            # a 2 MiB small segment, cached once freed
    b = pool.alloc(7 * MiB)                    # 6 MiB of room until the cache goes back
    assert up.frees == [2 * MiB] and up.allocs[-1] == 8 * MiB
    del b


def _oom_remedy(pool, nbytes):
    with pytest.raises(OutOfMemoryError) as ei:
        pool.alloc(nbytes)
    return str(ei.value).split("Remedy: ", 1)[1]


@pytest.mark.parametrize("cls", STRATEGIES)
def test_oom_remedy_with_nothing_allocated_says_the_limit_is_too_small(cls):
    pool = cls(FakeUpstream(), limit=8 * MiB)
    remedy = _oom_remedy(pool, 9 * MiB)
    assert "limit of 8.00 MiB is too small for this request" in remedy
    assert "allocator.set_limit" in remedy and "free arrays" not in remedy


@pytest.mark.parametrize("cls", STRATEGIES)
def test_oom_remedy_with_nothing_allocated_says_the_device_is_too_small(cls):
    pool = cls(FakeUpstream(capacity=4 * MiB))
    remedy = _oom_remedy(pool, 9 * MiB)
    assert "cpu(0) could not provide" in remedy and "with nothing allocated" in remedy
    assert "free arrays" not in remedy and "set_limit" not in remedy


def test_oom_remedy_with_fragments_says_the_cache_was_already_emptied():
    pool = BestFitPool(FakeUpstream(capacity=4 * MiB))
    keep = pool.alloc(MiB)                     # 1 MiB of its 2 MiB segment stays cached
    remedy = _oom_remedy(pool, 3 * MiB)
    assert "already emptied its cache" in remedy and "empty_cache" not in remedy
    assert "free arrays you no longer need" in remedy
    del keep


@pytest.mark.parametrize("cls", STRATEGIES)
def test_oom_remedy_with_live_allocations_says_free_arrays(cls):
    pool = cls(FakeUpstream(capacity=24 * MiB))
    keep = pool.alloc(16 * MiB)
    remedy = _oom_remedy(pool, 16 * MiB)
    assert remedy.startswith("free arrays you no longer need")
    assert "empty_cache" not in remedy
    del keep


@pytest.mark.parametrize("upstream", [HostUpstream, FakeUpstream])
def test_the_abstract_pool_cannot_be_instantiated(upstream):
    with pytest.raises(TypeError, match="Pool is abstract"):
        Pool(upstream())

    class Custom(Pool):
        pass
    with pytest.raises(TypeError, match="Custom is abstract"):
        Custom(upstream())

    class Tuned(RoundPool):                    # a subclass of a strategy is concrete
        pass
    b = Tuned(upstream()).alloc(100)
    b.free()


@pytest.mark.parametrize("cls", STRATEGIES)
def test_upstream_failure_other_than_oom_propagates_cleanly(cls):
    class Broken(FakeUpstream):
        def alloc(self, nbytes):
            raise RuntimeError("device lost")
    pool = cls(Broken())
    with pytest.raises(RuntimeError, match="device lost"):
        pool.alloc(4096)
    s = stats(pool)
    assert s["allocated_bytes.all.current"] == 0 == s["reserved_bytes.all.current"]


@pytest.mark.parametrize("bad, exc, match", [
    (-1, ValueError, r"nbytes must be in \[0, 2\*\*50\] \(got -1\)"),
    (1 << 51, ValueError, "nbytes must be in"),
    (1.5, TypeError, "nbytes must be an integer"),
    ("8", TypeError, "nbytes must be an integer"),
    (True, TypeError, "nbytes must be an integer"),
    (None, TypeError, "nbytes must be an integer"),
])
def test_bad_sizes(bad, exc, match):
    pool = RoundPool(FakeUpstream())
    with pytest.raises(exc, match=match):
        pool.alloc(bad)
    assert stats(pool)["num_cache_misses"] == 0


def test_numpy_integer_sizes_are_accepted():
    np = pytest.importorskip("numpy")
    pool = RoundPool(FakeUpstream())
    assert pool.alloc(np.int64(100)).size == 100


def test_zero_bytes_gives_an_empty_buffer_without_pool_memory():
    pool = RoundPool(FakeUpstream())
    b = pool.alloc(0)
    assert (b.size, b.ptr, b.nbytes_reserved) == (0, 0, 0)
    assert stats(pool)["allocation.all.current"] == 0
    b.free()


def test_double_free_and_foreign_pool_raise():
    p1, p2 = RoundPool(FakeUpstream()), RoundPool(FakeUpstream())
    b = p1.alloc(100)
    with pytest.raises(ValueError, match="belongs to"):
        p2.free(b)
    assert stats(p1)["allocation.all.current"] == 1   # untouched by the refused free
    p1.free(b)
    assert b.freed and b.device is None
    with pytest.raises(ValueError, match="double free"):
        b.free()
    with pytest.raises(ValueError, match="double free"):
        p1.free(b)
    assert stats(p1)["allocation.all.current"] == 0


def test_buffer_is_not_constructible_by_hand_into_a_pool():
    b = Buffer()
    assert b.freed
    with pytest.raises(ValueError, match="double free"):
        b.free()


def test_device_buffers_export_cuda_array_interface_not_the_buffer_protocol():
    pool = RoundPool(FakeUpstream(kind="gpu"))
    b = pool.alloc(256)
    cai = b.__cuda_array_interface__
    assert cai["data"] == (b.ptr, False) and cai["shape"] == (256,) and cai["version"] == 3
    with pytest.raises(BufferError, match="device memory"):
        memoryview(b)


def test_strategy_parameters_are_validated():
    with pytest.raises(ValueError, match="page_size must be a power of two"):
        NaivePool(FakeUpstream(), page_size=1000)
    with pytest.raises(ValueError, match="round_cutoff must be an integer in"):
        RoundPool(FakeUpstream(), round_cutoff=64)
    with pytest.raises(ValueError, match="max_split_size must be"):
        BestFitPool(FakeUpstream(), max_split_size=-5)
    with pytest.raises(TypeError):
        RoundPool(None)


@pytest.mark.parametrize("cls, name, good", [
    (NaivePool, "page_size", 8192), (NaivePool, "large_alloc_round_size", 4 * MiB),
    (RoundPool, "round_cutoff", 20), (BestFitPool, "max_split_size", 16 * MiB)])
def test_strategy_parameters_take_any_integral_and_refuse_bool_and_float(cls, name, good):
    np = pytest.importorskip("numpy")
    cls(FakeUpstream(), **{name: np.int64(good)}).alloc(100).free()
    for bad in (float(good), True):
        with pytest.raises(TypeError, match=rf"{name} must be an integer \(got "):
            cls(FakeUpstream(), **{name: bad})


def test_free_reentered_from_a_destructor_during_an_upstream_call():
    """A Buffer dying inside the upstream call (gc finalizer) re-enters free safely."""
    pool = BestFitPool(FakeUpstream())
    victim = [pool.alloc(4096)]
    victim.append(victim)

    class Collecting(FakeUpstream):
        def alloc(self, nbytes):
            gc.collect()                 # frees `victim` into the same pool mid-alloc
            return super().alloc(nbytes)

    pool.upstream.__class__  # the pool keeps its upstream; use a second pool for the hook
    pool2 = BestFitPool(Collecting())
    victim2 = [pool2.alloc(4096)]
    victim2.append(victim2)
    del victim, victim2
    b = pool2.alloc(30 * MiB)            # miss -> upstream -> gc -> frees into pool2
    s = stats(pool2)
    assert s["allocation.all.current"] == 1 and s["allocated_bytes.all.current"] == 30 * MiB
    del b
    assert stats(pool)["allocation.all.current"] == 0


def test_bestfit_parks_freed_blocks_for_same_size_hits():
    up = FakeUpstream()
    pool = BestFitPool(up)
    keep = pool.alloc(3000)
    p = pool.alloc(3000).ptr                         # freed at once: parked, not merged
    assert pool.alloc(3000).ptr == p and len(up.allocs) == 1
    b = pool.alloc(3000)
    b.free()
    with pytest.raises(ValueError, match="double free"):
        b.free()
    big = pool.alloc(2 * MiB - 3072)                 # a miss: parked blocks coalesce first
    assert big.nbytes_reserved == 2 * MiB - 3072
    del keep, big
    pool.empty_cache()
    assert up.held == 0


@pytest.mark.parametrize("pool_cls", [NaivePool, RoundPool, BestFitPool])
def test_peak_since_mark_is_a_window_beside_the_user_peak(pool_cls):
    pool = pool_cls(FakeUpstream())
    a = pool.alloc(8192)
    b = pool.alloc(8192)
    b.free()
    peak = pool.memory_stats()["allocated_bytes.all.peak"]
    assert pool.mark_peak() == pool.memory_stats()["allocated_bytes.all.current"]
    assert pool.peak_since_mark() < peak
    c = pool.alloc(4096)
    assert pool.peak_since_mark() == pool.memory_stats()["allocated_bytes.all.current"]
    c.free()
    assert pool.peak_since_mark() > pool.memory_stats()["allocated_bytes.all.current"]
    assert pool.memory_stats()["allocated_bytes.all.peak"] == peak
    a.free()
