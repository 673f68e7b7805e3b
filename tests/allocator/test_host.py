"""Real host memory: alignment, zero-copy views, the process-wide CPU pool."""

import numpy as np
import pytest

import allocator
from allocator import HostUpstream, OutOfMemoryError, RoundPool


@pytest.mark.parametrize("size", [1, 63, 64, 1000, 4096, 100_000, 5 << 20])
def test_host_buffers_are_64_byte_aligned_and_writable(size):
    buf = allocator.alloc(size)
    assert buf.ptr % 64 == 0 and buf.size == size
    a = np.frombuffer(buf, np.uint8)
    a[:] = 7
    assert a.sum() == 7 * size
    assert a.ctypes.data == buf.ptr          # zero-copy


def test_large_host_blocks_are_hugepage_aligned():
    up = HostUpstream()
    p = up.alloc(8 << 20)
    try:
        assert p % (2 << 20) == 0
    finally:
        up.free(p, 8 << 20)


def test_view_keeps_buffer_alive_and_blocks_explicit_free():
    buf = allocator.alloc(4096)
    view = np.frombuffer(buf, np.float32)
    with pytest.raises(BufferError, match="view"):
        buf.free()
    del buf                                  # the view still holds the memory
    view[:] = 3.0
    assert float(view.sum()) == 3.0 * 1024
    used = allocator.memory_allocated()
    del view
    assert allocator.memory_allocated() == used - 4096


def test_memory_returns_to_the_pool_when_buffers_die():
    start = allocator.memory_stats()
    bufs = [allocator.alloc(n) for n in (10, 5000, 1 << 20, 3 << 20)]
    assert allocator.memory_allocated() > start["allocated_bytes.all.current"]
    del bufs
    assert allocator.memory_allocated() == start["allocated_bytes.all.current"]
    assert allocator.memory_stats()["requested_bytes.all.current"] == \
        start["requested_bytes.all.current"]


def test_alloc_accepts_device_specs_and_rejects_unknown_ones():
    for spec in (None, "cpu", "cpu(0)", "cpu:0", ("cpu", 0), allocator.Device("cpu")):
        b = allocator.alloc(16, spec)
        assert str(b.device) == "cpu(0)"
    for bad in ("tpu", "gpu(-1)", "cpu(0"):
        with pytest.raises(ValueError, match="device must be a spec"):
            allocator.alloc(16, bad)
    for bad in (3, ("cpu",), [1], {"cpu": 0}):      # unhashable ones too: never cached
        with pytest.raises(TypeError, match=r"device must be a string .* \(got "):
            allocator.alloc(16, bad)
    with pytest.raises(ValueError, match="device id must be 0 for the cpu"):
        allocator.get_pool("cpu(1)")


def test_absurd_host_request_is_an_oom_not_a_crash():
    pool = RoundPool(HostUpstream())
    with pytest.raises(OutOfMemoryError, match="out of memory on cpu"):
        pool.alloc(1 << 49)                   # 512 TiB: no machine has it
    assert pool.memory_stats()["reserved_bytes.all.current"] == 0


def test_empty_cache_and_summary_on_the_process_pool():
    b = allocator.alloc(1 << 20)
    del b
    allocator.empty_cache()
    assert allocator.memory_stats()["cached_bytes"] == 0
    assert "cpu(0)" in allocator.memory_summary()
    allocator.reset_peak_stats()
    assert allocator.max_memory_allocated() == allocator.memory_allocated()
