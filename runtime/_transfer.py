"""Copies that involve GPU memory, through cuda-python (host <-> device, device <-> device).

Raw memory only (pointers, byte counts, NumPy arrays): the storage layer above
(``runtime._ndarray``) says what to copy.  Host-to-host copies never come here (the array
code does them with memcpy / NumPy).
Large host<->device copies go through a pinned staging buffer from the ``cpu_pinned``
pool, which is what lets the driver use DMA at full speed.
"""

import ctypes

import numpy as np

import allocator
from allocator import _cuda

STAGE_MIN = 1 << 20   # bytes; smaller copies go straight from pageable memory


def _h2d(dst_ctx, dptr, hptr, n):
    _cuda.activate(dst_ctx.device_id)
    if n >= STAGE_MIN:
        stage = allocator.alloc(n, "cpu_pinned")
        ctypes.memmove(stage.ptr, hptr, n)
        _cuda.call("cuMemcpyHtoD", dptr, stage.ptr, n)
    else:
        _cuda.call("cuMemcpyHtoD", dptr, hptr, n)


def _d2h(src_ctx, hptr, dptr, n):
    _cuda.activate(src_ctx.device_id)
    if n >= STAGE_MIN:
        stage = allocator.alloc(n, "cpu_pinned")
        _cuda.call("cuMemcpyDtoH", stage.ptr, dptr, n)
        ctypes.memmove(hptr, stage.ptr, n)
    else:
        _cuda.call("cuMemcpyDtoH", hptr, dptr, n)


def copy_bytes(dst_ctx, dptr, src_ctx, sptr, n):
    """Copy ``n`` bytes between any two contexts (at least one of them a GPU)."""
    if n == 0:
        return
    dst_gpu, src_gpu = dst_ctx.device_type == "gpu", src_ctx.device_type == "gpu"
    if dst_gpu and src_gpu:
        if dst_ctx.device_id == src_ctx.device_id:
            _cuda.activate(dst_ctx.device_id)
            _cuda.call("cuMemcpyDtoD", dptr, sptr, n)
        else:
            _cuda.activate(dst_ctx.device_id)
            ctxs = _cuda._state["contexts"]
            _cuda.activate(src_ctx.device_id)
            _cuda.call("cuMemcpyPeer", dptr, ctxs[dst_ctx.device_id], sptr,
                       ctxs[src_ctx.device_id], n)
    elif dst_gpu:
        _h2d(dst_ctx, dptr, sptr, n)
    elif src_gpu:
        _d2h(src_ctx, dptr, sptr, n)
    else:
        raise AssertionError("host-to-host copies are done by the caller")


def memset(ctx, ptr, value, n):
    _cuda.activate(ctx.device_id)
    _cuda.call("cuMemsetD8", ptr, value, n)


def to_host(ctx, ptr, shape, dtype):
    """A NumPy copy of the C-contiguous ``shape`` x ``dtype`` values at ``ptr`` on GPU ``ctx``."""
    a = np.empty(shape, dtype)
    copy_bytes(_HOST, a.ctypes.data, ctx, ptr, a.nbytes)
    return a


def from_host(ctx, ptr, src):
    """Write the values of NumPy ``src`` (C order, its own dtype) to ``ptr`` on GPU ``ctx``."""
    src = np.ascontiguousarray(src)
    copy_bytes(ctx, ptr, _HOST, src.ctypes.data, src.nbytes)


class _Host:
    device_type = "cpu"
    device_id = 0


_HOST = _Host()
