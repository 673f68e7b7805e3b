"""Let CuPy allocate from an ndrt device pool."""

from allocator._registry import get_pool


def use_pool(device=0):
    """Make CuPy take its device memory from the ndrt pool of ``gpu(device)``.

    CuPy's memory objects keep the pool's Buffer alive, so memory returns to the ndrt
    pool when CuPy drops it, and ndrt's statistics, limit and OOM ladder cover CuPy's
    allocations too.  Call ``cupy.cuda.set_allocator()`` to undo.

    Raises
    ------
    ImportError
        CuPy is not installed (install the ``gpu`` extra: ``pip install "ndrt[gpu]"``).
    """
    try:
        import cupy
    except ImportError:
        raise ImportError("allocator.cupy.use_pool needs CuPy: pip install 'ndrt[gpu]'") from None
    pool = get_pool(("gpu", device))
    device_id = pool.device.id

    def malloc(nbytes):
        buf = pool.alloc(nbytes)
        mem = cupy.cuda.UnownedMemory(buf.ptr, nbytes, buf, device_id)
        return cupy.cuda.MemoryPointer(mem, 0)

    cupy.cuda.set_allocator(malloc)
    return pool
