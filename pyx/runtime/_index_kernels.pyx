"""Indexing ops' host kernels (runtime/ops/shape.py): ``pick`` along the last axis of a
2-D array, one pass over the rows.

``data`` is (n, k) C-contiguous float32 or float64 with k >= 1, ``index`` (n,)
contiguous float32, float64, int32 or int64, ``out`` (n,) of data's dtype.  A float
index is truncated toward zero (as MXNet), then clipped into [0, k) or wrapped around
(``wrap``), exactly as the NumPy path (``_indices``) does it; an index that is not a
finite number stops the kernel before anything is written: it returns the index's
position (-1 when every index is good), and the caller raises.
"""

cimport numpy as cnp
from libc.math cimport trunc

from runtime._types cimport float32_t, float64_t, floating, int32_t, int64_t

cnp.import_array()

__all__ = ["pick_rows"]

ctypedef fused pos_t:
    float32_t
    float64_t
    int32_t
    int64_t

cdef double _FAR = 4611686018427387904.0     # 2**62: the NumPy path clips floats there


cdef Py_ssize_t _not_finite(const pos_t* index, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t i
    cdef double v
    if pos_t is int32_t or pos_t is int64_t:
        return -1
    for i in range(n):
        v = <double>index[i]
        if not (v - v == 0):                 # NaN and the infinities
            return i
    return -1


cdef void _pick(const floating* data, const pos_t* index, floating* out, Py_ssize_t n,
                Py_ssize_t k, bint wrap) noexcept nogil:
    cdef Py_ssize_t i
    cdef int64_t c
    cdef double v
    for i in range(n):
        if pos_t is int32_t or pos_t is int64_t:
            c = index[i]
        else:
            v = trunc(<double>index[i])
            c = <int64_t>(_FAR if v > _FAR else (-_FAR if v < -_FAR else v))
        out[i] = data[i * k + pick_column(c, k, wrap)]


cdef Py_ssize_t _run(const floating* data, cnp.ndarray index, floating* out, Py_ssize_t n,
                     Py_ssize_t k, bint wrap) except -2:
    cdef int t = cnp.PyArray_TYPE(index)
    cdef void* ip = cnp.PyArray_DATA(index)
    cdef Py_ssize_t bad = -1
    if t == cnp.NPY_FLOAT32:
        bad = _not_finite(<const float32_t*>ip, n)
    elif t == cnp.NPY_FLOAT64:
        bad = _not_finite(<const float64_t*>ip, n)
    elif t != cnp.NPY_INT32 and t != cnp.NPY_INT64:
        raise TypeError(f"index must be float32, float64, int32 or int64 (got "
                        f"{index.dtype})")
    if bad >= 0:
        return bad
    with nogil:
        if t == cnp.NPY_FLOAT32:
            _pick(data, <const float32_t*>ip, out, n, k, wrap)
        elif t == cnp.NPY_FLOAT64:
            _pick(data, <const float64_t*>ip, out, n, k, wrap)
        elif t == cnp.NPY_INT32:
            _pick(data, <const int32_t*>ip, out, n, k, wrap)
        else:
            _pick(data, <const int64_t*>ip, out, n, k, wrap)
    return -1


cdef cnp.ndarray _arr(object a, str name, int ndim):
    if not isinstance(a, cnp.ndarray):
        raise TypeError(f"{name} must be a numpy.ndarray (got {type(a).__name__})")
    cdef cnp.ndarray x = <cnp.ndarray>a
    if cnp.PyArray_NDIM(x) != ndim or not cnp.PyArray_IS_C_CONTIGUOUS(x):
        raise ValueError(f"{name} must be a C-contiguous {ndim}-D array (got shape "
                         f"{a.shape!r})")
    return x


def pick_rows(data, index, bint wrap, out):
    """out[i] = data[i, c_i], c_i index[i] truncated, clipped (or wrapped) into [0, k);
    returns -1, or the position of the first index that is not a finite number (nothing
    written)."""
    cdef cnp.ndarray da = _arr(data, "data", 2)
    cdef int t = cnp.PyArray_TYPE(da)
    if t != cnp.NPY_FLOAT32 and t != cnp.NPY_FLOAT64:
        raise TypeError(f"data must be float32 or float64 (got {data.dtype})")
    cdef Py_ssize_t n = cnp.PyArray_DIM(da, 0), k = cnp.PyArray_DIM(da, 1)
    if k < 1:
        raise ValueError(f"data must have at least one column (got shape {data.shape!r})")
    cdef cnp.ndarray ia = _arr(index, "index", 1)
    cdef cnp.ndarray oa = _arr(out, "out", 1)
    if ia.shape[0] != n or oa.shape[0] != n:
        raise ValueError(f"index and out must have shape {(n,)!r} (got {index.shape!r} and "
                         f"{out.shape!r})")
    if cnp.PyArray_TYPE(oa) != t or not cnp.PyArray_ISWRITEABLE(oa):
        raise TypeError(f"out must be a writeable array of data's dtype {data.dtype} (got "
                        f"{out.dtype})")
    if t == cnp.NPY_FLOAT32:
        return _run(<const float32_t*>cnp.PyArray_DATA(da), ia,
                    <float32_t*>cnp.PyArray_DATA(oa), n, k, wrap)
    return _run(<const float64_t*>cnp.PyArray_DATA(da), ia, <float64_t*>cnp.PyArray_DATA(oa),
                n, k, wrap)
