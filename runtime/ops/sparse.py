"""Sparse kernels of registry operators (MXNet's ``FComputeEx<cpu>``) and the sparse-only
operators ``cast_storage``, ``_sparse_retain`` and ``_square_sum``.

Storage types of the results follow MXNet 1.x on the CPU:

=========================================  =====================  ==========================
operator                                   inputs                 result
=========================================  =====================  ==========================
``dot``                                    csr, default           default
``dot(transpose_a=True)``                  csr, default           row_sparse
``dot``                                    csr, row_sparse        default
``dot(transpose_a=True)``                  csr, row_sparse        row_sparse
``dot``                                    default, csr           csr (2-D lhs)
``dot(transpose_b=True)``                  default, csr           default [1]
``add``, ``subtract``                      row_sparse x2          row_sparse (union of rows)
``multiply``                               row_sparse x2          row_sparse (intersection)
``multiply``                               row_sparse, default    row_sparse (and reversed)
``multiply``                               csr, default           csr (and reversed)
``add``, ``subtract``, ``multiply``        csr x2 (one shape)     csr
``sum``, ``mean`` (one axis, 0 or 1)       csr                    default [2]
``add_n``                                  row_sparse x n         row_sparse (union of rows)
``cast_storage``                           any                    ``stype``
``cast``                                   csr; row_sparse        csr; row_sparse (values
                                                                  cast, layout kept)
``slice`` (rows of axis 0, step 1)         csr                    csr
``_sparse_retain``                         row_sparse, default    row_sparse
``_square_sum`` (axis 0; 1)                row_sparse (2-D)       default; row_sparse if
                                                                  keepdims on axis 1
=========================================  =====================  ==========================

Any other combination runs the dense kernel on dense temporaries (the invoker's storage
fallback: ``StorageFallbackWarning`` once per signature, or ``StorageFallbackError`` under
``set_storage_fallback('error')``); so do dtypes other than float32/float64 (float16 is
computed in float32), and inputs whose shapes differ (broadcasting), which each kernel
declares with its ``sparse_check`` so that the invoker decides before it runs.  The kernels
are compiled (``runtime._sparse_arith``: OpenMP over rows, without the GIL); arrays on a GPU
go through host copies until CuPy kernels land.

Choices where MXNet is unspecific or inconsistent:

- csr (op) csr drops zero results (MXNet's CPU kernel and SciPy do), so ``x - x`` stores
  nothing; row_sparse results keep every row of the union (MXNet does), zero or not.
  ``multiply`` of row_sparse arrays stores the intersection of the rows (MXNet stores the
  union, with zero rows): the values only differ where a row stored on one side holds
  inf or nan, which an unstored row (exact zeros) turns into nan in a dense product.
  ``multiply`` of csr and dense keeps the csr structure (MXNet does), so an inf or nan of
  the dense side at an unstored position does not appear either.
- [1] MXNet infers csr for ``dot(default, csr, transpose_b=True)`` unless
  ``forward_stype='default'``, and then falls back; ndrt runs the dense-output kernel.
- [2] MXNet falls back (with the same dense result) for ``keepdims`` or ``exclude``;
  ndrt's kernel takes them.
- ``_sparse_retain`` stores every requested row (MXNet does: rows that ``data`` does not
  store come out as stored zero rows); indices may be unsorted or repeated (sorted and
  deduplicated first) and of any real dtype (floats are truncated, as MXNet's cast);
  indices outside ``[0, data.shape[0])`` are ignored (MXNet reads out of bounds).
"""

import numpy as np

from runtime import _sparse_arith as K
from runtime import _sparse_format, _storage
from runtime._sparse_common import row_size as _row_size
from runtime._ndarray import (STYPES, alloc_sparse, empty, from_numpy, shape_size, storage_host,
                              storage_view)
from runtime.ops import registry
from runtime.ops._call import F
from runtime.ops.reduce import REDUCE_ATTRS, reduced_axes, reduced_shape
from runtime.ops.registry import Attr, attach_sparse, register

# The dtype each value dtype is computed in (others take the dense kernels).
_WORK = {np.dtype(np.float32): np.dtype(np.float32), np.dtype(np.float64): np.dtype(np.float64),
         np.dtype(np.float16): np.dtype(np.float32)}


# -- helpers ------------------------------------------------------------------------------

def _on_host(x):
    return x.ctx.device_type != "gpu"


def _dense_np(x, work):
    """Host NumPy array of dense NDArray ``x`` in dtype ``work`` (a view when possible)."""
    a = storage_view(x, -1) if _on_host(x) else x.asnumpy()
    return a if a.dtype == work else a.astype(work)


def _data_np(x, work):
    """Host NumPy array of the stored values of sparse ``x``, in dtype ``work``."""
    a = storage_host(x, -1)
    return a if a.dtype == work else a.astype(work)


def _rows2d(a, rows, shape):
    """``a`` seen as (rows, prod(shape[1:]))."""
    return a.reshape(rows, _row_size(shape))


class _Dense:
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


class _Sparse:
    """A sparse result with ``data`` (storage_shape) and ``aux`` views, as _Dense."""

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


def _dtype_check(attrs, shapes, dtypes):
    """The sparse kernels compute in float32 or float64 (float16 in float32); other dtypes
    take the invoker's storage fallback."""
    return None if dtypes[0] in _WORK else f"dtype {dtypes[0]}"


def _work(x):
    return _WORK.get(np.dtype(x.dtype))


def _csr_np(x, work):
    """(indptr, indices, data) host arrays of csr ``x``, data in dtype ``work``."""
    return storage_host(x, 0), storage_host(x, 1), _data_np(x, work)


def _rowmap(rows, nrows):
    """int64 (nrows,): the position of each row among the stored ``rows``, -1 if absent."""
    m = np.full(nrows, -1, np.int64)
    m[rows] = np.arange(rows.shape[0], dtype=np.int64)
    return m


# -- dot ------------------------------------------------------------------------------------

def _flags(attrs):
    # x @ y reaches the op with an empty attribute dict (see runtime.ops.linalg).
    return bool(attrs.get("transpose_a", False)), bool(attrs.get("transpose_b", False))


def _dot_stypes(attrs, stypes):
    ta, tb = _flags(attrs)
    lhs, rhs = stypes
    if lhs == "csr" and rhs in ("default", "row_sparse") and not tb:
        return ["row_sparse" if ta else "default"]
    if lhs == "default" and rhs == "csr" and not ta:
        return ["default" if tb else "csr"]
    return None


def _rhs_rows(b, work):
    """D as (rows, n) and its rowmap (None for a dense D) for the products."""
    n = _row_size(b.shape)
    if b.stype == "default":
        return _dense_np(b, work).reshape(b.shape[0], n), None
    idx = storage_host(b, 0)
    return _data_np(b, work).reshape(idx.shape[0], n), _rowmap(idx, b.shape[0])


def _csr_dot(a, b, work):
    """csr @ (dense | row_sparse) -> dense."""
    m = a.shape[0]
    d, rowmap = _rhs_rows(b, work)
    out = _Dense((m,) + b.shape[1:], a.dtype, a.ctx, work)
    K.csr_dot_dense(*_csr_np(a, work), d, out.view.reshape(m, d.shape[1]), rowmap)
    return out.done()


def _csr_t_dot(a, b, work):
    """csr.T @ (dense | row_sparse) -> row_sparse: the rows are the used columns of a."""
    k = a.shape[1]
    indptr, indices, data = _csr_np(a, work)
    d, rowmap = _rhs_rows(b, work)
    plan = K.csr_column_plan(indptr, indices, k, rowmap)
    nused = plan.nused
    rest = b.shape[1:]
    out = _Sparse("row_sparse", (k,) + rest, a.dtype, a.ctx, work, (nused,) + rest,
                  [(nused,)])
    K.csr_t_dot_dense(indptr, indices, data, d, plan, out.aux[0],
                      out.data.reshape(nused, d.shape[1]), rowmap)
    return out.done()


def _dense_dot_csr(a, b, tb, work):
    """dense @ csr -> csr (MXNet's CPU result: every row stores every column that b uses),
    dense @ csr.T -> dense."""
    indptr, indices, data = _csr_np(b, work)
    if tb:
        m = shape_size(a.shape[:-1])
        a2 = _dense_np(a, work).reshape(m, b.shape[1])
        out = _Dense(a.shape[:-1] + (b.shape[0],), a.dtype, a.ctx, work)
        K.dense_dot_csr_t(a2, indptr, indices, data, out.view.reshape(m, b.shape[0]))
        return out.done()
    if a.ndim != 2:
        raise ValueError(f"dot: dot(default, csr) gives a csr array and needs a 2-D lhs (got "
                         f"shape {a.shape!r}); reshape lhs or convert rhs to default")
    m, n = a.shape[0], b.shape[1]
    # out.T = b.T @ a.T: the rows of that row_sparse product are the used columns of b.
    at = np.ascontiguousarray(_dense_np(a, work).T)
    plan = K.csr_column_plan(indptr, indices, n)
    nused = plan.nused
    cols = np.empty(nused, np.int64)
    prod = np.empty((nused, m), work)
    K.csr_t_dot_dense(indptr, indices, data, at, plan, cols, prod)
    out = _Sparse("csr", (m, n), a.dtype, a.ctx, work, (m * nused,), [(m + 1,), (m * nused,)])
    out.aux[0][...] = np.arange(m + 1, dtype=np.int64) * nused
    out.aux[1].reshape(m, nused)[...] = cols
    out.data.reshape(m, nused)[...] = prod.T
    return out.done()


def _dot(attrs, inputs):
    a, b = inputs
    ta, tb = _flags(attrs)
    work = _work(a)
    if a.stype == "csr":
        return [_csr_t_dot(a, b, work) if ta else _csr_dot(a, b, work)]
    return [_dense_dot_csr(a, b, tb, work)]


# -- elementwise add, subtract, multiply --------------------------------------------------

def _binary_stypes(name):
    def stypes(attrs, st):
        lhs, rhs = st
        if lhs == rhs and lhs in ("csr", "row_sparse"):
            return [lhs]
        if name == "multiply" and {lhs, rhs} == {"row_sparse", "default"}:
            return ["row_sparse"]
        if name == "multiply" and {lhs, rhs} == {"csr", "default"}:
            return ["csr"]
        return None
    return stypes


def _csr_binary(name, a, b, work):
    ap, bp = _csr_np(a, work), _csr_np(b, work)
    indptr = np.empty(a.shape[0] + 1, np.int64)
    nnz = K.csr_binary_count(name, *ap, *bp, indptr)
    out = _Sparse("csr", a.shape, a.dtype, a.ctx, work, (nnz,), [(a.shape[0] + 1,), (nnz,)])
    out.aux[0][...] = indptr
    K.csr_binary_fill(name, *ap, *bp, out.aux[0], out.aux[1], out.data)
    return out.done()


def _rsp_binary(name, a, b, work):
    ai, bi = storage_host(a, 0), storage_host(b, 0)
    n = K.rsp_binary_count(name, ai, bi)
    out = _Sparse("row_sparse", a.shape, a.dtype, a.ctx, work, (n,) + a.shape[1:], [(n,)])
    K.rsp_binary(name, ai, _rows2d(_data_np(a, work), ai.shape[0], a.shape), bi,
                 _rows2d(_data_np(b, work), bi.shape[0], b.shape), out.aux[0],
                 _rows2d(out.data, n, a.shape))
    return out.done()


def _rsp_mul_dense(x, d, work):
    idx = storage_host(x, 0)
    n = idx.shape[0]
    out = _Sparse("row_sparse", x.shape, x.dtype, x.ctx, work, (n,) + x.shape[1:], [(n,)])
    out.aux[0][...] = idx
    K.rsp_mul_dense(idx, _rows2d(_data_np(x, work), n, x.shape),
                    _rows2d(_dense_np(d, work), x.shape[0], x.shape),
                    _rows2d(out.data, n, x.shape))
    return out.done()


def _csr_mul_dense(x, d, work):
    """csr ``x`` times dense ``d`` of one shape: x's structure, each stored value times
    the dense value at its position (MXNet's elemwise_mul(csr, default) = csr)."""
    indptr, indices, data = _csr_np(x, work)
    rows = np.repeat(np.arange(x.shape[0]), np.diff(indptr))
    nnz = data.shape[0]
    out = _Sparse("csr", x.shape, x.dtype, x.ctx, work, (nnz,), [(x.shape[0] + 1,), (nnz,)])
    out.aux[0][...] = indptr
    out.aux[1][...] = indices
    np.multiply(data, _dense_np(d, work)[rows, indices], out=out.data)
    return out.done()


def _binary_check(attrs, shapes, dtypes):
    if shapes[0] != shapes[1]:
        return "broadcasting"
    return _dtype_check(attrs, shapes, dtypes)


def _binary(name):
    stypes = _binary_stypes(name)

    def compute(attrs, inputs):
        a, b = inputs
        work = _work(a)
        if a.stype == b.stype == "csr":
            return [_csr_binary(name, a, b, work)]
        if a.stype == b.stype == "row_sparse":
            return [_rsp_binary(name, a, b, work)]
        x, d = (a, b) if a.stype != "default" else (b, a)
        if x.stype == "csr":
            return [_csr_mul_dense(x, d, work)]
        return [_rsp_mul_dense(x, d, work)]
    return compute, stypes, _binary_check


# -- sum, mean of csr ---------------------------------------------------------------------

def _csr_axis(op):
    def stypes(attrs, st):
        if st[0] != "csr":
            return None
        return ["default"] if len(reduced_axes(op, attrs, 2)) == 1 else None
    return stypes


def _csr_reduce(op, mean):
    def compute(attrs, inputs):
        x = inputs[0]
        work = _work(x)
        (axis,) = reduced_axes(op, attrs, 2)
        n = x.shape[axis]
        scale = (1.0 / n if n else float("nan")) if mean else 1.0
        out = _Dense(reduced_shape(op, attrs, x.shape), x.dtype, x.ctx, work)
        K.csr_sum(*_csr_np(x, work), axis, out.view.reshape(-1), scale)
        return [out.done()]
    return compute


# -- add_n of row_sparse ------------------------------------------------------------------

def _add_n_stypes(attrs, st):
    return ["row_sparse"] if all(s == "row_sparse" for s in st) else None


def _add_n(attrs, inputs):
    x = inputs[0]
    work = _work(x)
    idx = [storage_host(v, 0) for v in inputs]
    n = K.rsp_union_count(idx)
    out = _Sparse("row_sparse", x.shape, x.dtype, x.ctx, work, (n,) + x.shape[1:], [(n,)])
    K.rsp_add_n(idx, [_rows2d(_data_np(v, work), i.shape[0], x.shape)
                      for v, i in zip(inputs, idx)], out.aux[0], _rows2d(out.data, n, x.shape))
    return [out.done()]


# -- cast_storage -------------------------------------------------------------------------

def _cast_storage_shape(attrs, shapes):
    stype, shape = attrs["stype"], shapes[0]
    if stype == "csr" and len(shape) != 2:
        raise ValueError(f"cast_storage: csr needs a 2-D array (got shape {shape!r})")
    if stype == "row_sparse" and len(shape) < 1:
        raise ValueError("cast_storage: row_sparse needs at least 1 dimension (got a 0-d "
                         "array)")
    return [shape]


def _cast_storage_storage(attrs, stypes):
    src, dst = stypes[0], attrs["stype"]
    if src == dst == "default":
        return ["default"], "dense"
    if src != dst and "default" not in (src, dst):
        raise ValueError(f"cast_storage: cannot convert {src} to {dst} directly (MXNet "
                         "neither); convert to 'default' first")
    return [dst], "sparse"


def _cast_storage(attrs, inputs):
    return [_storage.cast_storage(inputs[0], attrs["stype"])]


def _copy(attrs, ins, outs):
    np.copyto(outs[0], ins[0])


register(
    "cast_storage", attrs={"stype": Attr("str", required=True, choices=STYPES)},
    infer_shape=_cast_storage_shape, infer_storage=_cast_storage_storage, compute=_copy,
    compute_sparse=_cast_storage, gradient=lambda a, i, o, g: [g[0]],
    doc="""The array in storage type ``stype`` ('default', 'csr', 'row_sparse'), always a
new array (MXNet's ``cast_storage``).  csr needs a 2-D array, row_sparse at least 1-D;
csr <-> row_sparse raises ValueError (as in MXNet: go through 'default').  The gradient
is the output gradient, in its own storage type.""")


# -- _sparse_retain -----------------------------------------------------------------------

def _retain_type(attrs, dtypes):
    if dtypes[1].kind not in "iuf":
        raise TypeError(f"_sparse_retain: indices must be integers or floats (got "
                        f"{dtypes[1]})")
    return [dtypes[0]]


def _retain_storage(attrs, stypes):
    if stypes[0] != "row_sparse":
        raise TypeError(f"_sparse_retain: data must be a row_sparse NDArray (got {stypes[0]})")
    if stypes[1] != "default":
        raise TypeError(f"_sparse_retain: indices must be a dense NDArray (got {stypes[1]})")
    return ["row_sparse"], "sparse"


def _keep_rows(indices, nrows):
    """Sorted unique int64 row numbers in [0, nrows) of the index array ``indices``."""
    a = indices.asnumpy().reshape(-1)
    keep = a.astype(np.int64) if a.dtype.kind != "f" else np.trunc(a).astype(np.int64)
    if _sparse_format.check_rsp(keep, nrows) is not None:
        keep = np.unique(keep)
        keep = keep[(keep >= 0) & (keep < nrows)]
    return keep


def _retain(attrs, inputs):
    x, indices = inputs
    keep = _keep_rows(indices, x.shape[0])
    n = keep.shape[0]
    dtype = np.dtype(x.dtype)
    out = _Sparse("row_sparse", x.shape, dtype, x.ctx, dtype, (n,) + x.shape[1:], [(n,)])
    idx = storage_host(x, 0)
    K.rsp_retain(idx, _rows2d(storage_host(x, -1), idx.shape[0], x.shape), keep, out.aux[0],
                 _rows2d(out.data, n, x.shape))
    return [out.done()]


def _retain_grad(attrs, inputs, outputs, out_grads):
    g = out_grads[0]
    if g.stype != "row_sparse":
        g = F.cast_storage(g, stype="row_sparse")
    return [F._sparse_retain(g, inputs[1]), None]


register(
    "_sparse_retain", aliases=("retain", "sparse_retain"), inputs=("data", "indices"),
    infer_shape=lambda attrs, shapes: [shapes[0]], infer_type=_retain_type,
    infer_storage=_retain_storage, compute_sparse=_retain, gradient=_retain_grad,
    grad_inputs=(1,), ignores=(),
    doc="""The rows ``indices`` of the row_sparse array ``data``, as a row_sparse array
(MXNet's ``sparse.retain``; ``_sparse_retain``).  Every requested row is stored, zero
when ``data`` does not store it (as MXNet).  ``indices``: a dense array of integers or
floats (truncated); unsorted and repeated indices are sorted and deduplicated, and
indices outside ``[0, data.shape[0])`` are ignored (MXNet reads out of bounds).  Any
dtype.  Gradient: ``retain`` of the output gradient (row_sparse); none for indices.""")


# -- _square_sum ----------------------------------------------------------------------------

def _square_sum_axis(attrs):
    """The one axis (0 or 1 of a 2-D array) that the kernel takes, else None."""
    try:
        axes = reduced_axes("_square_sum", attrs, 2)
    except ValueError:
        return None
    return axes[0] if len(axes) == 1 else None


def _square_sum_stypes(attrs, stypes):
    if stypes[0] != "row_sparse":
        return None
    axis = _square_sum_axis(attrs)
    if axis is None:
        return None
    return ["row_sparse" if axis == 1 and attrs["keepdims"] else "default"]


def _square_sum_dense(attrs, ins, outs):
    x = ins[0]
    axes = reduced_axes("_square_sum", attrs, x.ndim)
    r = np.sum(np.square(x), axis=axes, keepdims=True, dtype=x.dtype)
    outs[0][...] = r.reshape(outs[0].shape)


def _square_sum_check(attrs, shapes, dtypes):
    if len(shapes[0]) != 2:
        return f"{len(shapes[0])}-D arrays"
    return _dtype_check(attrs, shapes, dtypes)


def _square_sum_sparse(attrs, inputs):
    x = inputs[0]
    work = _work(x)
    axis = _square_sum_axis(attrs)
    idx = storage_host(x, 0)
    k = idx.shape[0]
    data = _data_np(x, work).reshape(k, x.shape[1])
    shape = reduced_shape("_square_sum", attrs, x.shape)
    if axis == 0:
        out = _Dense(shape, x.dtype, x.ctx, work)
        K.square_sum(data, 0, out.view.reshape(-1))
        return [out.done()]
    if attrs["keepdims"]:
        out = _Sparse("row_sparse", shape, x.dtype, x.ctx, work, (k, 1), [(k,)])
        out.aux[0][...] = idx
        K.square_sum(data, 1, out.data.reshape(k))
        return [out.done()]
    sums = np.empty((k, 1), work)
    K.square_sum(data, 1, sums.reshape(k))
    out = _Dense(shape, x.dtype, x.ctx, work)
    _sparse_format.rsp_to_dense(sums, idx, out.view.reshape(x.shape[0], 1))
    return [out.done()]


def _square_sum_grad(attrs, inputs, outputs, out_grads):
    x, g = inputs[0], out_grads[0]
    if g.stype != "default":
        g = F.cast_storage(g, stype="default")
    axes = reduced_axes("_square_sum", attrs, x.ndim)
    kept = tuple(1 if i in axes else s for i, s in enumerate(x.shape))
    if g.shape != kept:
        g = g.reshape(kept)
    return [x * F.broadcast_to(g, shape=x.shape) * 2.0]


register(
    "_square_sum", aliases=("square_sum",), attrs=REDUCE_ATTRS,
    infer_shape=lambda attrs, shapes: [reduced_shape("_square_sum", attrs, shapes[0])],
    compute=_square_sum_dense, compute_sparse=_square_sum_sparse,
    sparse_stypes=_square_sum_stypes, sparse_check=_square_sum_check,
    gradient=_square_sum_grad, grad_inputs=(0,),
    doc="""``sum(square(data), axis, keepdims, exclude)`` in one op (MXNet's
``_square_sum``), for row_sparse ``data`` whose gradient stays row_sparse.  For a 2-D
row_sparse array: axis 0 gives a dense result, axis 1 a dense one, or a row_sparse one
(the stored rows of ``data``) with ``keepdims=True`` (MXNet).  Other storage types and
axes run the dense kernel (MXNet has no dense kernel).  Gradient ``2 * data * g``
(row_sparse for row_sparse ``data``).""")


# -- cast, slice: the storage kernels of NDArray.astype and csr x[a:b] ---------------------

def _cast(attrs, inputs):
    x = inputs[0]
    aux = [storage_host(x, i) for i in range(len(x.chunk.aux_shapes))]
    return [_storage.from_parts(x.stype, x.shape, attrs["dtype"], x.ctx, storage_host(x, -1),
                                aux, check=False)]


def _csr_rows(attrs):
    """((begin, end) of the rows, (begin, end) of the columns or None) of a csr ``slice``
    with step 1 naming axis 0 or axes 0 and 1 (MXNet's SliceCsrImpl), else None."""
    begin, end, step = attrs["begin"], attrs["end"], attrs["step"]
    if not (isinstance(begin, (tuple, list)) and isinstance(end, (tuple, list))
            and len(begin) == len(end) and len(begin) in (1, 2)):
        return None
    steps = step if isinstance(step, (tuple, list)) else (step,)
    if any(s not in (None, 1) for s in steps):
        return None
    return (begin[0], end[0]), ((begin[1], end[1]) if len(begin) == 2 else None)


def _csr_slice_stypes(attrs, stypes):
    return ["csr"] if stypes[0] == "csr" and _csr_rows(attrs) is not None else None


def _csr_slice(attrs, inputs):
    x = inputs[0]
    rows, cols = _csr_rows(attrs)
    start, stop, _ = slice(*rows).indices(x.shape[0])
    stop = max(start, stop)
    indptr = storage_host(x, 0)
    lo, hi = int(indptr[start]), int(indptr[stop])
    indices, data = storage_host(x, 1)[lo:hi], storage_host(x, -1)[lo:hi]
    ptr = indptr[start:stop + 1] - lo
    ncols = x.shape[1]
    if cols is not None:         # keep the entries in [c0, c1), shifted by c0
        c0, c1, _ = slice(*cols).indices(ncols)
        ncols = max(c1 - c0, 0)
        keep = (indices >= c0) & (indices < c0 + ncols)
        kept = np.concatenate(([0], np.cumsum(keep, dtype=np.int64)))
        ptr = kept[ptr]                          # entries kept before each row's start
        indices, data = indices[keep] - c0, data[keep]
    return [_storage.from_parts("csr", (stop - start, ncols), np.dtype(x.dtype), x.ctx,
                                data, [ptr, indices], check=False)]


# -- attach the sparse kernels of the ops declared elsewhere -------------------------------

for _name in ("add", "subtract", "multiply"):
    attach_sparse(_name, *_binary(_name))
for _name, _base in (("elemwise_add", "add"), ("elemwise_sub", "subtract"),
                     ("elemwise_mul", "multiply")):
    attach_sparse(_name, *_binary(_base))
attach_sparse("sum", _csr_reduce("sum", False), _csr_axis("sum"), _dtype_check)
attach_sparse("mean", _csr_reduce("mean", True), _csr_axis("mean"), _dtype_check)
attach_sparse("add_n", _add_n, _add_n_stypes, _dtype_check)
attach_sparse("cast", _cast, lambda attrs, stypes: [stypes[0]])
attach_sparse("slice", _csr_slice, _csr_slice_stypes)
if "dot" in registry.OPS:      # runtime.ops.linalg (imported before this module)
    attach_sparse("dot", _dot, _dot_stypes, _dtype_check)


# -- getnnz ------------------------------------------------------------------------------------

def _getnnz_shape(attrs, shapes):
    s = tuple(shapes[0])
    if len(s) != 2:
        raise ValueError(f"_contrib_getnnz: data must be a 2-D csr array (got shape {s!r})")
    axis = attrs["axis"]
    if axis is None:
        return [(1,)]
    if axis not in (0, 1, -1, -2):
        raise ValueError(f"_contrib_getnnz: axis must be None, 0 or 1 (got {axis})")
    return [(s[1 - axis % 2],)]


def _getnnz_storage(attrs, stypes):
    if stypes[0] != "csr":
        raise NotImplementedError(f"_contrib_getnnz: data must have storage type 'csr' "
                                  f"(got {stypes[0]!r})")
    return ["default"], "sparse"


def _getnnz(attrs, inputs):
    x = inputs[0]
    indptr, indices = storage_host(x, 0), storage_host(x, 1)
    axis = attrs["axis"]
    if axis is None:
        counts = np.array([indices.size], np.int64)
    elif axis % 2 == 1:
        counts = np.diff(indptr).astype(np.int64)
    else:
        counts = np.bincount(indices, minlength=x.shape[1]).astype(np.int64)
    return [from_numpy(counts, x.ctx)]


register(
    "_contrib_getnnz", attrs={"axis": Attr("axis", None)}, infer_shape=_getnnz_shape,
    infer_type=lambda attrs, dtypes: [np.dtype(np.int64)], infer_storage=_getnnz_storage,
    compute_sparse=_getnnz, differentiable=False,
    doc="""The number of stored values of a csr array, explicit zeros included (MXNet's
``contrib.getnnz``): in all (``axis=None``, shape (1,)), per row (``axis=1``) or per
column (``axis=0``; MXNet 1.9.1 refuses it), int64.  Only csr data (NotImplementedError
otherwise).""")
