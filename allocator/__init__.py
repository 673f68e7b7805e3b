"""ndrt's pooled memory: host, CUDA device and pinned host pools with PyTorch-style stats.

>>> import allocator
>>> buf = allocator.alloc(1 << 20)            # 1 MiB from the CPU pool
>>> allocator.memory_allocated() >= 1 << 20
True
>>> del buf                                   # back to the pool (cached)
"""

from allocator._device import Device, as_device
from allocator._pool import (BestFitPool, Buffer, NaivePool, Pool, RoundPool, UnpooledPool,
                             alloc)
from allocator._registry import (config, configure, empty_cache, get_pool,
                                 max_memory_allocated, memory_allocated, memory_reserved,
                                 memory_stats, memory_summary, on_empty_cache, pools,
                                 reset_peak_stats, set_limit)
from allocator._upstream import HostUpstream, Upstream
from allocator.errors import CudaError, OutOfMemoryError

__all__ = [
    "Device", "as_device", "Pool", "NaivePool", "RoundPool", "BestFitPool", "UnpooledPool",
    "Buffer", "Upstream", "HostUpstream", "alloc", "get_pool", "pools", "configure", "config",
    "empty_cache", "on_empty_cache", "memory_stats", "memory_allocated", "memory_reserved",
    "max_memory_allocated", "reset_peak_stats", "memory_summary", "set_limit",
    "OutOfMemoryError", "CudaError",
]
