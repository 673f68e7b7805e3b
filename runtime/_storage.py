"""Sparse storage: construction and format checks (the storage layer above
``runtime._ndarray``; ``runtime.nd.sparse`` is its public face).

Layouts, as MXNet's:

- ``csr`` (2-D): ``data`` (nnz,), ``indices`` (nnz,) column of each value, sorted and
  unique within a row, ``indptr`` (rows + 1,) with ``indptr[0] == 0`` and
  ``indptr[-1] == nnz``;
- ``row_sparse`` (any ndim >= 1): ``data`` (k, *shape[1:]) holding the rows listed in
  ``indices`` (k,), sorted strictly increasing.

Constructors validate fully (an O(nnz) pass in Cython): unsorted, duplicate or
out-of-range indices raise ValueError naming the first offending position.  Storage
casts on GPU arrays go through the host until the CuPy kernels land.

This module imports only the kernels and ``runtime._ndarray``; ``runtime._wiring`` hands
the routines that NDArray calls (sparse ``zeros``, ``check_format``, unpickling) to
``runtime._ndarray.set_storage_hooks``.
"""

import numpy as np

from runtime import _sparse_format as K
from runtime._sparse_common import row_size as _row_size
from runtime._ndarray import (STYPES, NDArray, alloc_sparse, as_ctx, as_dtype, empty,
                              from_numpy, shape_size, storage_host,
                              storage_view, write_storage)
from runtime._ndarray import zeros as _dense_zeros
from runtime.context import Context, cpu

# The NumPy arrays ("parts") that hold an array of each storage type: the data, then the
# aux arrays (csr: indptr, indices; row_sparse: row indices).
PARTS = {"default": 1, "csr": 3, "row_sparse": 2}


def is_scipy_sparse(x):
    """True for a SciPy sparse matrix or array."""
    import scipy.sparse as sp     # SciPy's sparse package is imported on first use (cost)
    return sp.issparse(x)


# -- parts -------------------------------------------------------------------------------

def _host(x, name, op):
    """NumPy array of ``x`` (NDArray or array-like), for sparse parts."""
    if isinstance(x, NDArray):
        return x.asnumpy()
    try:
        return np.asarray(x)
    except ValueError as e:
        raise ValueError(f"{op}: {name} must be a rectangular array-like ({e})") from None


def index_array(x, name, op):
    """``x`` (an NDArray or an array-like) as a 1-D int64 NumPy array; ValueError or
    TypeError naming ``op`` and the argument ``name`` otherwise.  Floating-point indices
    are taken when they hold whole numbers (MXNet programs build them with ``nd.array``,
    float32 by default); MXNet truncates the others, ndrt refuses them."""
    a = _host(x, name, op)
    if a.ndim != 1:
        raise ValueError(f"{op}: {name} must be 1-D (got shape {a.shape!r})")
    if a.size and a.dtype.kind == "f":
        bad = np.flatnonzero(~np.isfinite(a) | (a != np.trunc(a)))
        if bad.size:
            raise ValueError(f"{op}: {name} must hold whole numbers (got "
                             f"{name}[{bad[0]}]={a[bad[0]].item()!r})")
    elif a.size and a.dtype.kind not in "iu":
        raise TypeError(f"{op}: {name} must hold integers (got dtype {a.dtype})")
    return a.astype(np.int64, copy=False)


def _values(x, name, op):
    """NumPy array of the stored values ``x``; TypeError unless they are numbers."""
    a = _host(x, name, op)
    if a.dtype.kind not in "biuf":
        raise TypeError(f"{op}: {name} must hold numbers (got dtype {a.dtype})")
    return a


def _default_dtype(dtype, source, op):
    """MXNet's rule: the source's dtype when it is an NDArray or NumPy array, else float32."""
    if dtype is not None:
        return as_dtype(dtype, f"{op}: dtype")
    if isinstance(source, (NDArray, np.ndarray)) or is_scipy_sparse(source):
        return as_dtype(source.dtype, f"{op}: the source's dtype")
    return as_dtype(None)


def from_parts(stype, shape, dtype, ctx, data, aux, check=True):
    """A new ``stype`` array on ``ctx`` holding copies of the host arrays ``data`` and
    ``aux`` (cast to ``dtype`` and int64).  ``check``: the full format check first
    (ValueError naming the first defect); False for parts a kernel made."""
    data = np.asarray(data)
    aux = [np.asarray(a, dtype=np.int64) for a in aux]
    if check:
        op = "csr_matrix" if stype == "csr" else "row_sparse_array"
        check_parts(op, stype, shape, data, aux, full=True)
    out = alloc_sparse(stype, shape, dtype, ctx, data.shape, [a.shape for a in aux])
    write_storage(out, -1, data)
    for i, a in enumerate(aux):
        write_storage(out, i, a)
    return out


def check_parts(op, stype, shape, data, aux, full):
    """Validate the NumPy parts of a ``stype`` array of ``shape`` (MXNet's rules): the
    cheap checks of the aux shapes and ends, and with ``full`` the indices' order and
    range (in Cython).  ValueError ``op: ...`` at the first defect."""
    if stype == "csr":
        indptr, indices = aux
        rows, cols = shape
        if indptr.shape != (rows + 1,):
            raise ValueError(f"{op}: indptr must have rows + 1 = {rows + 1} entries for shape "
                             f"{shape!r} (got {indptr.shape[0]})")
        if data.shape != indices.shape:
            raise ValueError(f"{op}: data and indices must have the same length (got "
                             f"{data.shape[0]} and {indices.shape[0]})")
        if indptr[0] != 0:
            raise ValueError(f"{op}: indptr[0] must be 0 (got {indptr[0]})")
        if indptr[-1] != data.shape[0]:
            raise ValueError(f"{op}: indptr[-1] must equal nnz={data.shape[0]} "
                             f"(got {indptr[-1]})")
        msg = K.check_csr(indptr, indices, cols) if full else None
    else:
        (indices,) = aux
        if data.ndim != len(shape) or data.shape[1:] != tuple(shape[1:]):
            raise ValueError(f"{op}: data rows must have shape {tuple(shape[1:])!r} for "
                             f"shape {shape!r} (got data of shape {data.shape!r})")
        if data.shape[0] != indices.shape[0]:
            raise ValueError(f"{op}: data has {data.shape[0]} rows but indices has "
                             f"{indices.shape[0]} entries")
        msg = K.check_rsp(indices, shape[0]) if full else None
    if msg:
        raise ValueError(f"{op}: {msg}")


def check_format(x, full_check=True):
    """Validate a sparse array's layout with MXNet's rules.

    The cheap check compares the aux shapes with the shape; ``full_check`` also scans
    the indices (order, range).  Raises ValueError naming the first defect.
    """
    # a bool, as MXNet's: a truthy string such as 'maybe' is a mistake, not a request
    if not isinstance(full_check, (bool, np.bool_)):
        raise TypeError(f"check_format: full_check must be a bool (got {full_check!r})")
    if x.stype == "default":
        return
    parts = [storage_host(x, i) for i in range(len(x.chunk.aux_shapes))]
    check_parts("check_format", x.stype, x.shape, storage_host(x, -1), parts, full_check)


def check_array(where, stype, dtype, shape, parts):
    """Validate one stored array, as a file holds it (``nd.load``) and as
    ``NDArray.__reduce__`` pickles it (both come from outside); returns its NumPy dtype
    and shape (of Python ints).

    ``stype`` is one of STYPES, ``dtype`` a str naming one of DTYPES ('float32' in files,
    '<f4' in pickles), ``shape`` a tuple of ints whose size fits (``shape_size``),
    ``parts`` the NumPy arrays of the stype's layout: the data of that dtype (and, dense,
    that shape), int64 1-D indices, and sparse parts pass the full format check.  Raises
    TypeError (a field of the wrong kind) or ValueError, naming ``where``.
    """
    if stype not in STYPES:
        raise ValueError(f"{where}: stype must be one of {', '.join(STYPES)} (got {stype!r})")
    if not isinstance(dtype, str):
        raise TypeError(f"{where}: dtype must be a str (got {dtype!r})")
    d = as_dtype(dtype, f"{where}: dtype")
    if type(shape) is not tuple or not all(
            isinstance(s, (int, np.integer)) and not isinstance(s, bool) for s in shape):
        raise TypeError(f"{where}: shape must be a tuple of ints (got {shape!r})")
    shape = tuple(int(s) for s in shape)
    shape_size(shape, d, f"{where}: shape")
    n = PARTS[stype]
    if not isinstance(parts, (list, tuple)) or len(parts) != n or not all(
            type(p) is np.ndarray for p in parts):
        got = [type(p).__name__ for p in parts] if isinstance(parts, (list, tuple)) else \
            type(parts).__name__
        raise TypeError(f"{where}: parts must be {n} NumPy array(s) for a {stype} array "
                        f"(got {got})")
    data, aux = parts[0], list(parts[1:])
    if data.dtype != d:
        raise ValueError(f"{where}: data must have dtype {d} (got {data.dtype})")
    if stype == "default":
        if data.shape != shape:
            raise ValueError(f"{where}: data must have shape {shape!r} (got {data.shape!r})")
        return d, shape
    for a in aux:
        if a.dtype != np.int64 or a.ndim != 1:
            raise ValueError(f"{where}: sparse indices must be int64 and 1-D (got {a.dtype} "
                             f"of shape {a.shape!r})")
    if stype == "csr" and len(shape) != 2:
        raise ValueError(f"{where}: a csr array must be 2-D (got shape {shape!r})")
    if stype == "row_sparse" and len(shape) < 1:
        raise ValueError(f"{where}: a row_sparse array needs at least 1 dimension")
    check_parts(where, stype, shape, data, aux, full=True)
    return d, shape


def rebuild(stype, dtype, shape, device_type, device_id, parts):
    """Unpickle what ``NDArray.__reduce__`` gave.  A pickle comes from outside, so every
    field is validated as ``nd.load`` validates a file before anything is allocated."""
    d, shape = check_array("unpickle", stype, dtype, shape, parts)
    ctx = Context(device_type, device_id)
    if stype == "default":
        return from_numpy(parts[0], ctx)
    return from_parts(stype, shape, d, ctx, parts[0], parts[1:], check=False)


# -- shapes ------------------------------------------------------------------------------

def as_shape(shape, op, dtype=None):
    """``shape`` as a tuple of ints whose size (in bytes of ``dtype``, if given) fits;
    TypeError or ValueError naming ``op``."""
    if isinstance(shape, (int, np.integer)) and not isinstance(shape, bool):
        shape = (int(shape),)
    if not isinstance(shape, (tuple, list)) or not all(
            isinstance(s, (int, np.integer)) and not isinstance(s, bool) for s in shape):
        raise TypeError(f"{op}: shape must be a tuple of ints (got {shape!r})")
    shape = tuple(int(s) for s in shape)
    shape_size(shape, dtype, f"{op}: shape")
    return shape


def _is_shape(arg):
    return isinstance(arg, tuple) and all(
        isinstance(s, (int, np.integer)) and not isinstance(s, bool) for s in arg)


def _check_shape_fits(op, shape, need):
    if shape is None:
        return need
    shape = as_shape(shape, op)
    if len(shape) != len(need):
        raise ValueError(f"{op}: shape must be {len(need)}-D (got {shape!r})")
    if any(s < n for s, n in zip(shape, need)):
        raise ValueError(f"{op}: shape {shape!r} is too small for the indices (need at "
                         f"least {need!r})")
    return shape


# -- constructors ------------------------------------------------------------------------

def _check_inferable(op, indices):
    """A shape inferred from the largest index needs one index (MXNet refuses too)."""
    if indices.size == 0:
        raise ValueError(f"{op}: shape cannot be inferred from empty indices (got 0 "
                         f"indices); give shape")


def csr_matrix(arg1, shape=None, ctx=None, dtype=None):
    """A CSRNDArray, in any of MXNet's forms.

    - ``csr_matrix(D)``: D a dense array-like, a dense or csr NDArray, or a SciPy sparse
      matrix/array (``csr_matrix``, ``csr_array``, other formats are converted);
    - ``csr_matrix((M, N))``: an empty M x N matrix;
    - ``csr_matrix((data, indices, indptr), shape)``: the CSR parts;
    - ``csr_matrix((data, (row, col)), shape)``: COO triplets; duplicates are summed and
      indices sorted (SciPy does it).

    When ``shape`` is omitted it is inferred from the indices (ValueError when there are
    none, as in MXNet).  ``dtype`` defaults to the
    source's dtype when the source is an NDArray, a NumPy array or a SciPy matrix
    (the dtype of ``data`` for the tuple forms), float32 otherwise.
    """
    op = "csr_matrix"
    ctx = as_ctx(ctx)
    if _is_shape(arg1) and len(arg1) != 2:
        raise ValueError(f"{op}: csr arrays are 2-D (got shape {arg1!r})")
    if isinstance(arg1, tuple) and len(arg1) == 2 and _is_shape(arg1):
        if shape is not None and as_shape(shape, op) != as_shape(arg1, op):
            raise ValueError(f"{op}: shape {shape!r} contradicts {arg1!r}")
        return zeros("csr", as_shape(arg1, op), ctx=ctx, dtype=dtype)
    if isinstance(arg1, tuple) and len(arg1) == 2 and isinstance(arg1[1], (tuple, list)):
        import scipy.sparse as sp     # imported on first use (cost), as is_scipy_sparse
        data = _values(arg1[0], "data", op)
        row, col = (index_array(v, n, op) for v, n in zip(arg1[1], ("row", "col")))
        if not (data.ndim == 1 and data.shape == row.shape == col.shape):
            raise ValueError(f"{op}: data, row and col must be 1-D of one length (got "
                             f"{data.shape!r}, {row.shape!r}, {col.shape!r})")
        for name, v in (("row", row), ("col", col)):
            if v.size and v.min() < 0:
                raise ValueError(f"{op}: {name} indices must be >= 0 (got {name}"
                                 f"[{int(v.argmin())}]={int(v.min())})")
        need = (int(row.max()) + 1 if row.size else 0, int(col.max()) + 1 if col.size else 0)
        shape = _check_shape_fits(op, shape, need)
        d = _default_dtype(dtype, data if isinstance(arg1[0], (NDArray, np.ndarray)) else None,
                           op)
        work = np.float32 if d == np.float16 else d     # SciPy has no float16
        m = sp.coo_matrix((data.astype(work), (row, col)), shape=shape).tocsr()
        m.sum_duplicates()
        return from_parts("csr", shape, d, ctx, m.data, [m.indptr, m.indices], check=False)
    if isinstance(arg1, tuple) and len(arg1) == 3:
        data = _values(arg1[0], "data", op)
        indices = index_array(arg1[1], "indices", op)
        indptr = index_array(arg1[2], "indptr", op)
        if data.ndim != 1:
            raise ValueError(f"{op}: data must be 1-D (got shape {data.shape!r})")
        if indptr.size == 0:
            raise ValueError(f"{op}: indptr must have at least one entry (got 0)")
        if shape is None:
            _check_inferable(op, indices)
            shape = (indptr.size - 1, int(indices.max()) + 1)
        shape = as_shape(shape, op)
        if len(shape) != 2:
            raise ValueError(f"{op}: shape must be 2-D (got {shape!r})")
        d = _default_dtype(dtype, data if isinstance(arg1[0], (NDArray, np.ndarray)) else None,
                           op)
        return from_parts("csr", shape, d, ctx, data.astype(d), [indptr, indices])
    if isinstance(arg1, tuple):
        raise ValueError(f"{op}: a tuple argument must be (M, N), (data, indices, indptr) or "
                         f"(data, (row, col)) (got a tuple of {len(arg1)} items)")
    if is_scipy_sparse(arg1):
        if len(arg1.shape) != 2:
            raise ValueError(f"{op}: arg1 must be 2-D (got a SciPy array of shape "
                             f"{arg1.shape!r})")
        m = arg1.tocsr(copy=True)
        m.sum_duplicates()
        d = _default_dtype(dtype, m, op)
        if shape is not None and as_shape(shape, op) != m.shape:
            raise ValueError(f"{op}: shape {shape!r} does not match the SciPy matrix's "
                             f"{m.shape!r}")
        return from_parts("csr", m.shape, d, ctx, m.data.astype(d), [m.indptr, m.indices])
    return _convert(op, arg1, "csr", shape, ctx, dtype)


def _convert(op, arg1, stype, shape, ctx, dtype):
    """``arg1`` (an NDArray or a dense array-like) as a ``stype`` array on ``ctx``: the
    shared tail of csr_matrix and row_sparse_array."""
    other = "row_sparse" if stype == "csr" else "csr"
    ndim = 2 if stype == "csr" else -1
    d = _default_dtype(dtype, arg1, op)
    if isinstance(arg1, NDArray):
        if arg1.stype == other:
            raise ValueError(f"{op}: arg1 must be a dense or {stype} array (got {other}; "
                             "convert with tostype('default') first)")
        _check_ndim(op, arg1.shape, ndim)
        src = arg1 if arg1.stype == stype else cast_storage(arg1, stype)
        out = src.copyto(ctx) if src is arg1 or src.ctx != ctx else src
        out = out.astype(d, copy=False)
    else:
        a = _dense_host(arg1, op, d)
        _check_ndim(op, a.shape, ndim)
        out = cast_storage(from_numpy(a, ctx), stype)
    if shape is not None and as_shape(shape, op) != out.shape:
        raise ValueError(f"{op}: shape {shape!r} does not match the source's {out.shape!r}")
    return out


def _check_ndim(op, shape, ndim):
    """csr sources must be 2-D (ndim=2), row_sparse sources at least 1-D (ndim=-1)."""
    if ndim == 2 and len(shape) != 2:
        raise ValueError(f"{op}: arg1 must be 2-D (got shape {shape!r})")
    if ndim == -1 and len(shape) < 1:
        raise ValueError(f"{op}: arg1 must have at least 1 dimension (got a 0-d array)")


def _dense_host(src, op, dtype):
    a = _host(src, "arg1", op)
    if a.dtype.kind not in "biuf":
        raise TypeError(f"{op}: arg1 must hold numbers (got dtype {a.dtype})")
    return a.astype(dtype, copy=False)


def row_sparse_array(arg1, shape=None, ctx=None, dtype=None):
    """A RowSparseNDArray, in any of MXNet's forms.

    - ``row_sparse_array(D)``: D a dense array-like or a dense or row_sparse NDArray;
    - ``row_sparse_array((D0, D1, ..., Dn))``: an empty array of that shape;
    - ``row_sparse_array((data, indices), shape)``: rows ``data[i]`` at row
      ``indices[i]``; indices must be sorted strictly increasing.

    ``dtype`` follows MXNet as in :func:`csr_matrix`.
    """
    op = "row_sparse_array"
    ctx = as_ctx(ctx)
    if _is_shape(arg1):
        if not arg1:
            raise ValueError(f"{op}: shape must have at least 1 dimension (got ())")
        if shape is not None and as_shape(shape, op) != as_shape(arg1, op):
            raise ValueError(f"{op}: shape {shape!r} contradicts {arg1!r}")
        return zeros("row_sparse", as_shape(arg1, op), ctx=ctx, dtype=dtype)
    if isinstance(arg1, tuple):
        if len(arg1) != 2:
            raise ValueError(f"{op}: a tuple argument must be a shape or (data, indices) (got "
                             f"a tuple of {len(arg1)} items)")
        data = _values(arg1[0], "data", op)
        indices = index_array(arg1[1], "indices", op)
        if data.ndim < 1:
            raise ValueError(f"{op}: data must have at least 1 dimension (got a scalar)")
        if shape is None:
            _check_inferable(op, indices)
            shape = (int(indices.max()) + 1,) + data.shape[1:]
        shape = as_shape(shape, op)
        d = _default_dtype(dtype, data if isinstance(arg1[0], (NDArray, np.ndarray)) else None,
                           op)
        return from_parts("row_sparse", shape, d, ctx, data.astype(d), [indices])
    return _convert(op, arg1, "row_sparse", shape, ctx, dtype)


def array(source_array, ctx=None, dtype=None):
    """A sparse copy of a sparse NDArray or SciPy matrix (MXNet's ``sparse.array``)."""
    if isinstance(source_array, NDArray) and source_array.stype == "row_sparse":
        return row_sparse_array(source_array, ctx=ctx, dtype=dtype)
    if isinstance(source_array, NDArray) and source_array.stype != "csr":
        raise TypeError(f"sparse.array: source_array must be sparse (got {source_array.stype})")
    return csr_matrix(source_array, ctx=ctx, dtype=dtype)


def zeros(stype, shape, ctx=None, dtype=None):
    """An all-zero sparse array: no stored values, only the aux arrays ('default': a dense
    array of zeros)."""
    op = "sparse.zeros"
    ctx, d = as_ctx(ctx), as_dtype(dtype, f"{op}: dtype")
    shape = as_shape(shape, op, d)      # before the NumPy parts below are made of it
    if stype == "csr":
        if len(shape) != 2:
            raise ValueError(f"{op}: csr arrays are 2-D (got shape {shape!r})")
        # indptr is a zero-stride view: the pool, not a host temporary, takes its memory.
        return from_parts("csr", shape, d, ctx, np.empty(0, d),
                          [np.broadcast_to(np.int64(0), (shape[0] + 1,)),
                           np.empty(0, np.int64)], check=False)
    if stype == "row_sparse":
        if len(shape) < 1:
            raise ValueError(f"{op}: row_sparse arrays have at least 1 dimension (got ())")
        return from_parts("row_sparse", shape, d, ctx, np.empty((0,) + shape[1:], d),
                          [np.empty(0, np.int64)], check=False)
    if stype == "default":
        return _dense_zeros(shape, ctx=ctx, dtype=d)
    raise ValueError(f"{op}: stype must be one of {', '.join(STYPES)} (got {stype!r})")


def cast_storage(x, stype):
    """``x`` in storage type ``stype``, a new array: the conversion kernels of the
    ``cast_storage`` operator (which validates ``stype`` and the shapes first: csr needs
    2-D, row_sparse at least 1-D, csr <-> row_sparse goes through 'default')."""
    src = x.stype
    if src == stype:
        return x.copy()
    if x.ctx.device_type == "gpu":   # through the host until the GPU kernels land
        return cast_storage(x.copyto(cpu()), stype).copyto(x.ctx)
    if stype == "default":
        out = empty(x.shape, x.ctx, x.dtype)
        dense = storage_view(out, -1).reshape(x.shape[0], _row_size(x.shape))
        if src == "csr":
            K.csr_to_dense(storage_view(x, -1), storage_view(x, 1), storage_view(x, 0), dense)
        else:
            K.rsp_to_dense(storage_view(x, -1).reshape(x.chunk.storage_shape[0],
                                                       _row_size(x.shape)),
                           storage_view(x, 0), dense)
        return out
    dense = storage_view(x, -1)    # a view with x's own shape and offset (x may be a view)
    if stype == "csr":
        indptr = np.empty(x.shape[0] + 1, np.int64)
        nnz = K.csr_count(dense, indptr)
        out = alloc_sparse("csr", x.shape, x.dtype, x.ctx, (nnz,), [(x.shape[0] + 1,), (nnz,)])
        storage_view(out, 0)[...] = indptr
        K.csr_fill(dense, indptr, storage_view(out, 1), storage_view(out, -1))
        return out
    rows = dense.reshape(x.shape[0], _row_size(x.shape))
    mask = np.empty(x.shape[0], np.uint8)
    k = K.rsp_count(rows, mask)
    out = alloc_sparse("row_sparse", x.shape, x.dtype, x.ctx, (k,) + x.shape[1:], [(k,)])
    K.rsp_fill(rows, mask, storage_view(out, 0),
               storage_view(out, -1).reshape(k, _row_size(x.shape)))
    return out



