"""Sparse kernels of ``norm`` and ``where`` (MXNet's FComputeEx of those operators),
beside the others in runtime.ops.sparse:

- ``norm`` of csr and row_sparse arrays over every axis: the L1 or L2 norm of the stored
  values alone, since the unstored ones are zeros.  The result is dense, as MXNet's:
  shape (1,), or all ones with ``keepdims``.  Other axes, and dtypes other than
  float32/float64, take the invoker's storage fallback.
- ``where(csr condition, dense x, dense y)`` of one shape: y, with x at the stored
  nonzero entries of the condition (MXNet's ``where(csr, default, default) =
  default``).  Broadcasting takes the fallback.
- ``divide(csr, dense)`` (``broadcast_div``, ``csr / dense``) with a dense array that
  broadcasts to the csr's shape (a row (1, n) or (n,), a column (m, 1), a full matrix):
  csr with the csr's structure, each stored value divided by the dense value at its
  position (MXNet's ``broadcast_div(csr, dense) = csr``; the unstored zeros stay zero).
"""

import numpy as np

from runtime import _storage
from runtime._ndarray import from_numpy, storage_host
from runtime.ops.reduce import _norm
from runtime.ops.registry import attach_sparse

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def _stypes(attrs, stypes):
    if stypes[0] in ("csr", "row_sparse") and attrs["axis"] is None:
        return ["default"]
    return None


def _check(attrs, shapes, dtypes):
    return None if dtypes[0] in _FLOATS else f"dtype {dtypes[0]}"


def _sparse_norm(attrs, inputs):
    x = inputs[0]
    values = storage_host(x, -1).reshape(-1)
    out = np.empty((1,), values.dtype)
    _norm({**attrs, "axis": None, "keepdims": False}, [values], [out])
    shape = (1,) * x.ndim if attrs["keepdims"] else (1,)
    return [from_numpy(out.reshape(shape), x.ctx)]


def _where_stypes(attrs, stypes):
    if stypes[0] == "csr" and stypes[1] == stypes[2] == "default":
        return ["default"]
    return None


def _where_check(attrs, shapes, dtypes):
    return None if shapes[0] == shapes[1] == shapes[2] else "broadcasting"


def _sparse_where(attrs, inputs):
    cond, x, y = inputs
    indptr, indices, values = (storage_host(cond, i) for i in (0, 1, -1))
    rows = np.repeat(np.arange(cond.shape[0]), np.diff(indptr))
    pick = values != 0
    res = np.array(storage_host(y, -1), copy=True).reshape(y.shape)
    r, c = rows[pick], indices[pick]
    res[r, c] = storage_host(x, -1).reshape(x.shape)[r, c]
    return [from_numpy(res, y.ctx)]


def _div_stypes(attrs, stypes):
    return ["csr"] if stypes[0] == "csr" and stypes[1] == "default" else None


def _div_check(attrs, shapes, dtypes):
    lhs, rhs = shapes
    if len(rhs) > 2 or np.broadcast_shapes(lhs, rhs) != lhs:
        return "broadcasting to a larger shape"
    return _check(attrs, shapes, dtypes)


def _csr_div_dense(attrs, inputs):
    x, d = inputs
    indptr, indices, values = (storage_host(x, i) for i in (0, 1, -1))
    rows = np.repeat(np.arange(x.shape[0]), np.diff(indptr))
    dense = np.broadcast_to(storage_host(d, -1).reshape(d.shape), x.shape)
    with np.errstate(divide="ignore", invalid="ignore"):
        data = np.divide(values, dense[rows, indices])
    return [_storage.from_parts("csr", x.shape, np.dtype(x.dtype), x.ctx, data,
                                [indptr, indices], check=False)]


attach_sparse("norm", _sparse_norm, _stypes, _check)
attach_sparse("divide", _csr_div_dense, _div_stypes, _div_check)
attach_sparse("where", _sparse_where, _where_stypes, _where_check)
