"""What the sparse kernels of every operator domain share (MXNet's ``FComputeEx<cpu>``):
the dtype they compute in (:data:`WORK`, :func:`dtype_check`), host arrays of storage
parts, and result buffers (:class:`Dense`, :class:`Sparse`) written in place in pool
memory when possible.  Each kernel is declared with its operator, in the operator's
domain module; runtime.ops.sparse documents the storage types of every kernel's results.
"""

import numpy as np

from runtime import _storage
from runtime._ndarray import alloc_sparse, empty, from_numpy, storage_host, storage_view
from runtime._sparse_common import row_size

# The dtype each value dtype is computed in (others take the dense kernels).
WORK = {np.dtype(np.float32): np.dtype(np.float32), np.dtype(np.float64): np.dtype(np.float64),
        np.dtype(np.float16): np.dtype(np.float32)}
FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def on_host(x):
    return x.ctx.device_type != "gpu"


def dense_np(x, work):
    """Host NumPy array of dense NDArray ``x`` in dtype ``work`` (a view when possible)."""
    a = storage_view(x, -1) if on_host(x) else x.asnumpy()
    return a if a.dtype == work else a.astype(work)


def data_np(x, work):
    """Host NumPy array of the stored values of sparse ``x``, in dtype ``work``."""
    a = storage_host(x, -1)
    return a if a.dtype == work else a.astype(work)


def rows2d(a, rows, shape):
    """``a`` seen as (rows, prod(shape[1:]))."""
    return a.reshape(rows, row_size(shape))


class Dense:
    """A dense result: written in place in pool memory when it is on the host and of the
    computed dtype, else computed in a NumPy array and copied over by ``done()``."""

    def __init__(self, shape, dtype, ctx, work):
        self.shape, self.dtype, self.ctx = tuple(shape), np.dtype(dtype), ctx
        self.nd = None
        if ctx.device_type != "gpu" and self.dtype == work:
            self.nd = empty(self.shape, ctx, self.dtype)
            self.view = storage_view(self.nd, -1)
        else:
            self.view = np.empty(self.shape, work)

    def done(self):
        if self.nd is not None:
            return self.nd
        return from_numpy(self.view.astype(self.dtype, copy=False), self.ctx)


class Sparse:
    """A sparse result with ``data`` (storage_shape) and ``aux`` views, as Dense."""

    def __init__(self, stype, shape, dtype, ctx, work, storage_shape, aux_shapes):
        self.stype, self.shape, self.dtype, self.ctx = stype, tuple(shape), np.dtype(dtype), ctx
        self.nd = None
        if ctx.device_type != "gpu" and self.dtype == work:
            self.nd = alloc_sparse(stype, self.shape, self.dtype, ctx, storage_shape,
                                   aux_shapes)
            self.data = storage_view(self.nd, -1)
            self.aux = [storage_view(self.nd, i) for i in range(len(aux_shapes))]
        else:
            self.data = np.empty(storage_shape, work)
            self.aux = [np.empty(s, np.int64) for s in aux_shapes]

    def done(self):
        if self.nd is not None:
            return self.nd
        return _storage.from_parts(self.stype, self.shape, self.dtype, self.ctx,
                                   self.data.astype(self.dtype, copy=False), self.aux,
                                   check=False)


def dtype_check(attrs, shapes, dtypes):
    """The sparse kernels compute in float32 or float64 (float16 in float32); other dtypes
    take the invoker's storage fallback."""
    return None if dtypes[0] in WORK else f"dtype {dtypes[0]}"


def floats_only(attrs, shapes, dtypes):
    """For kernels that compute in float32 or float64 only (no float16): other dtypes take
    the invoker's storage fallback."""
    return None if dtypes[0] in FLOATS else f"dtype {dtypes[0]}"


def work_dtype(x):
    return WORK.get(np.dtype(x.dtype))


def csr_np(x, work):
    """(indptr, indices, data) host arrays of csr ``x``, data in dtype ``work``."""
    return storage_host(x, 0), storage_host(x, 1), data_np(x, work)


def rowmap(rows, nrows):
    """int64 (nrows,): the position of each row among the stored ``rows``, -1 if absent."""
    m = np.full(nrows, -1, np.int64)
    m[rows] = np.arange(rows.shape[0], dtype=np.int64)
    return m
