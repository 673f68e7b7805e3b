"""Copies that involve GPU memory, through cuda-python (host <-> device, device <-> device).

Host-to-host copies never come here (the array code does them with memcpy / NumPy).
Large host<->device copies go through a pinned staging buffer from the ``cpu_pinned``
pool, which is what lets the driver use DMA at full speed.
"""

import ctypes

import numpy as np

import allocator
from allocator import _cuda

STAGE_MIN = 1 << 20   # bytes; smaller copies go straight from pageable memory


def _ptr(x):
    return x._storage_ptr(-1)


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


def from_host(out, src):
    """Write the C-contiguous NumPy array ``src`` (out's dtype and shape) into GPU ``out``."""
    src = np.ascontiguousarray(src, dtype=out._dtype_np)
    copy_bytes(out.ctx, _ptr(out), _HOST, src.ctypes.data, src.nbytes)
    out._bump()


def to_host(x):
    """A NumPy copy of dense GPU array ``x``."""
    a = np.empty(x.shape, x._dtype_np)
    copy_bytes(_HOST, a.ctypes.data, x.ctx, _ptr(x), a.nbytes)
    return a


def storage_to_host(x, i):
    """A NumPy copy of the data (i = -1) or aux array i of a sparse GPU array."""
    c = x.chunk
    shape = c.storage_shape if i < 0 else c.aux_shapes[i]
    a = np.empty(shape, x._dtype_np if i < 0 else np.int64)
    copy_bytes(_HOST, a.ctypes.data, x.ctx, x._storage_ptr(i), a.nbytes)
    return a


def storage_from_host(x, i, src):
    """Write NumPy ``src`` into the data (i = -1) or aux array i of sparse GPU array ``x``."""
    src = np.ascontiguousarray(src, dtype=x._dtype_np if i < 0 else np.int64)
    copy_bytes(x.ctx, x._storage_ptr(i), _HOST, src.ctypes.data, src.nbytes)


def copy(dst, src):
    """Dense ``src`` into dense ``dst`` (same shape), across contexts, casting if needed."""
    if dst._dtype_np != src._dtype_np:
        from_host(dst, src.asnumpy().astype(dst._dtype_np))
        return
    copy_bytes(dst.ctx, _ptr(dst), src.ctx, _ptr(src), src.nbytes)


def setitem(x, key, value):
    """``x[key] = value`` on a GPU array: done on a host copy, written back whole."""
    a = to_host(x)
    a[key] = value
    from_host(x, a)


def cupy_view(x):
    """A CuPy array over GPU array ``x`` (zero-copy); needs the ``gpu`` extra."""
    try:
        import cupy
    except ImportError:
        raise ImportError("this needs CuPy for GPU arrays: pip install 'ndrt[gpu]'") from None
    with cupy.cuda.Device(x.ctx.device_id):
        return cupy.asarray(x)


class _Host:
    device_type = "cpu"
    device_id = 0


_HOST = _Host()
