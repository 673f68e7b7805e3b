"""The sparse-only operators ``cast_storage``, ``_sparse_retain`` and ``_square_sum``, and
the storage rules of every sparse kernel (MXNet's ``FComputeEx<cpu>``).  Each kernel is
declared with its operator in that operator's domain module (``dot``: runtime.ops.dot;
``add``, ``subtract``, ``multiply``, ``divide``, ``where``, ``add_n``, ``cast``:
runtime.ops.elemwise; ``sum``, ``mean``, ``norm``: runtime.ops.reduce; ``slice``:
runtime.ops.shape); what they share is in runtime.ops._sparse_kernels.

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
``divide`` (dense broadcasting to csr)     csr, default           csr (csr's structure)
``norm`` (every axis)                      csr; row_sparse        default, shape (1,)
``where`` (one shape)                      csr, default x2        default
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
from runtime._ndarray import STYPES, from_numpy, storage_host
from runtime.ops._call import F
from runtime.ops._sparse_kernels import (Dense, Sparse, data_np, dtype_check, rows2d,
                                         work_dtype)
from runtime.ops.reduce import REDUCE_ATTRS, reduced_axes, reduced_shape
from runtime.ops.registry import Attr, register


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
    out = Sparse("row_sparse", x.shape, dtype, x.ctx, dtype, (n,) + x.shape[1:], [(n,)])
    idx = storage_host(x, 0)
    K.rsp_retain(idx, rows2d(storage_host(x, -1), idx.shape[0], x.shape), keep, out.aux[0],
                 rows2d(out.data, n, x.shape))
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
    return dtype_check(attrs, shapes, dtypes)


def _square_sum_sparse(attrs, inputs):
    x = inputs[0]
    work = work_dtype(x)
    axis = _square_sum_axis(attrs)
    idx = storage_host(x, 0)
    k = idx.shape[0]
    data = data_np(x, work).reshape(k, x.shape[1])
    shape = reduced_shape("_square_sum", attrs, x.shape)
    if axis == 0:
        out = Dense(shape, x.dtype, x.ctx, work)
        K.square_sum(data, 0, out.view.reshape(-1))
        return [out.done()]
    if attrs["keepdims"]:
        out = Sparse("row_sparse", shape, x.dtype, x.ctx, work, (k, 1), [(k,)])
        out.aux[0][...] = idx
        K.square_sum(data, 1, out.data.reshape(k))
        return [out.done()]
    sums = np.empty((k, 1), work)
    K.square_sum(data, 1, sums.reshape(k))
    out = Dense(shape, x.dtype, x.ctx, work)
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
