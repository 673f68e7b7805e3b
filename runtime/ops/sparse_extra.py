"""Sparse kernels of ``norm`` and ``where`` (MXNet's FComputeEx of those operators),
beside the others in runtime.ops.sparse:

- ``norm`` of csr and row_sparse arrays over every axis: the L1 or L2 norm of the stored
  values alone, since the unstored ones are zeros.  The result is dense, as MXNet's:
  shape (1,), or all ones with ``keepdims``.  Other axes, and dtypes other than
  float32/float64, take the invoker's storage fallback.
- ``where(csr condition, dense x, dense y)`` of one shape: y, with x at the stored
  nonzero entries of the condition (MXNet's ``where(csr, default, default) =
  default``).  Broadcasting takes the fallback.
"""

import numpy as np

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


attach_sparse("norm", _sparse_norm, _stypes, _check)
attach_sparse("where", _sparse_where, _where_stypes, _where_check)
