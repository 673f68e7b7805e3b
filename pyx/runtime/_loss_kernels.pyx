"""The softmax family's host kernels, one pass over each row: the fused softmax
cross-entropy with class labels, forward and data gradient (runtime/ops/loss.py), and
log_softmax along the last axis (runtime/ops/nn.py).

``x`` is (n, k) C-contiguous float32 or float64, ``label`` (n,) contiguous float32,
float64, int32 or int64, ``ograd`` (n,) of x's dtype; the arithmetic runs in x's dtype,
in the order of the NumPy formulas it replaces (max, exp of the shifted logits, their
sum, then the log or the division).  A label that is not an integer in [0, k) (NaN
included) stops the kernel before anything is written: it returns the label's position
(-1 when every label is good), and the caller raises.
"""

cimport numpy as cnp
from libc.math cimport exp, expf, floor, log, logf

from runtime._types cimport float32_t, float64_t, floating, int32_t, int64_t

cnp.import_array()

__all__ = ["log_softmax_rows", "softmax_ce", "softmax_ce_grad"]

ctypedef fused label_t:
    float32_t
    float64_t
    int32_t
    int64_t


cdef inline floating _exp(floating v) noexcept nogil:
    if floating is float32_t:
        return expf(v)
    else:
        return exp(v)


cdef inline floating _log(floating v) noexcept nogil:
    if floating is float32_t:
        return logf(v)
    else:
        return log(v)


cdef Py_ssize_t _bad_label(const label_t* label, Py_ssize_t n, Py_ssize_t k) noexcept nogil:
    """The first position whose label is not an integer in [0, k), or -1."""
    cdef Py_ssize_t i
    cdef double v
    for i in range(n):
        v = <double>label[i]
        if not (v >= 0 and v < k and v == floor(v)):
            return i
    return -1


cdef inline floating _row_max(const floating* r, Py_ssize_t k) noexcept nogil:
    cdef floating m = r[0]
    cdef Py_ssize_t j
    for j in range(1, k):
        if r[j] > m or r[j] != r[j]:      # NaN wins, as NumPy's max
            m = r[j]
            if m != m:
                break
    return m


cdef void _ce(const floating* x, const label_t* label, const floating* ograd,
              floating* out, floating* prob, Py_ssize_t n, Py_ssize_t k) noexcept nogil:
    """ograd NULL: the loss of each row into out (n,), and the softmax into prob (n, k)
    unless it is NULL; else the gradient (n, k)."""
    cdef Py_ssize_t i, j
    cdef floating m, s, g
    cdef const floating* r
    cdef floating* o
    for i in range(n):
        r = x + i * k
        m = _row_max(r, k)
        s = 0
        if ograd == NULL:
            if prob == NULL:
                for j in range(k):
                    s = s + _exp(r[j] - m)
            else:
                o = prob + i * k
                for j in range(k):
                    o[j] = _exp(r[j] - m)
                    s = s + o[j]
                for j in range(k):
                    o[j] = o[j] / s
            out[i] = _log(s) - (r[<Py_ssize_t>label[i]] - m)
            continue
        o = out + i * k
        for j in range(k):
            o[j] = _exp(r[j] - m)
            s = s + o[j]
        g = ograd[i]
        for j in range(k):
            o[j] = o[j] / s
        o[<Py_ssize_t>label[i]] -= 1
        for j in range(k):
            o[j] = o[j] * g


cdef Py_ssize_t _run(const floating* x, cnp.ndarray label, const floating* ograd,
                     floating* out, floating* prob, Py_ssize_t n, Py_ssize_t k) except -2:
    cdef int t = cnp.PyArray_TYPE(label)
    cdef void* lp = cnp.PyArray_DATA(label)
    cdef Py_ssize_t bad
    if t == cnp.NPY_FLOAT32:
        bad = _bad_label(<const float32_t*>lp, n, k)
    elif t == cnp.NPY_FLOAT64:
        bad = _bad_label(<const float64_t*>lp, n, k)
    elif t == cnp.NPY_INT32:
        bad = _bad_label(<const int32_t*>lp, n, k)
    elif t == cnp.NPY_INT64:
        bad = _bad_label(<const int64_t*>lp, n, k)
    else:
        raise TypeError(f"label must be float32, float64, int32 or int64 (got "
                        f"{label.dtype})")
    if bad >= 0 or k == 0:
        return bad
    with nogil:
        if t == cnp.NPY_FLOAT32:
            _ce(x, <const float32_t*>lp, ograd, out, prob, n, k)
        elif t == cnp.NPY_FLOAT64:
            _ce(x, <const float64_t*>lp, ograd, out, prob, n, k)
        elif t == cnp.NPY_INT32:
            _ce(x, <const int32_t*>lp, ograd, out, prob, n, k)
        else:
            _ce(x, <const int64_t*>lp, ograd, out, prob, n, k)
    return -1


cdef cnp.ndarray _arr(object a, str name, int ndim, object shape, int dtype):
    if not isinstance(a, cnp.ndarray):
        raise TypeError(f"{name} must be a numpy.ndarray (got {type(a).__name__})")
    cdef cnp.ndarray x = <cnp.ndarray>a
    if cnp.PyArray_NDIM(x) != ndim or not cnp.PyArray_IS_C_CONTIGUOUS(x):
        raise ValueError(f"{name} must be a C-contiguous {ndim}-D array (got shape "
                         f"{a.shape!r})")
    if shape is not None and a.shape != shape:
        raise ValueError(f"{name} must have shape {shape!r} (got {a.shape!r})")
    if dtype >= 0 and cnp.PyArray_TYPE(x) != dtype:
        raise TypeError(f"{name} must have x's dtype {np_name(dtype)} (got {a.dtype})")
    return x


cdef str np_name(int t):
    return "float32" if t == cnp.NPY_FLOAT32 else "float64"


cdef Py_ssize_t _call(object x, object label, object ograd, object out,
                      object prob) except -2:
    cdef cnp.ndarray xa = _arr(x, "x", 2, None, -1)
    cdef int t = cnp.PyArray_TYPE(xa)
    if t != cnp.NPY_FLOAT32 and t != cnp.NPY_FLOAT64:
        raise TypeError(f"x must be float32 or float64 (got {x.dtype})")
    cdef Py_ssize_t n = cnp.PyArray_DIM(xa, 0), k = cnp.PyArray_DIM(xa, 1)
    cdef cnp.ndarray la = _arr(label, "label", 1, (n,), -1)
    cdef cnp.ndarray ga = None
    cdef cnp.ndarray pa = None
    if ograd is not None:
        ga = _arr(ograd, "ograd", 1, (n,), t)
    if prob is not None:
        pa = _arr(prob, "prob", 2, (n, k), t)
        if not cnp.PyArray_ISWRITEABLE(pa):
            raise ValueError("prob must be writeable")
    cdef cnp.ndarray oa = (_arr(out, "out", 1, (n,), t) if ograd is None
                           else _arr(out, "out", 2, (n, k), t))
    if not cnp.PyArray_ISWRITEABLE(oa):
        raise ValueError("out must be writeable")
    if t == cnp.NPY_FLOAT32:
        return _run(<const float32_t*>cnp.PyArray_DATA(xa), la,
                    <const float32_t*>(NULL if ga is None else cnp.PyArray_DATA(ga)),
                    <float32_t*>cnp.PyArray_DATA(oa),
                    <float32_t*>(NULL if pa is None else cnp.PyArray_DATA(pa)), n, k)
    return _run(<const float64_t*>cnp.PyArray_DATA(xa), la,
                <const float64_t*>(NULL if ga is None else cnp.PyArray_DATA(ga)),
                <float64_t*>cnp.PyArray_DATA(oa),
                <float64_t*>(NULL if pa is None else cnp.PyArray_DATA(pa)), n, k)


def softmax_ce(x, label, out, prob=None):
    """out[i] = log(sum_j exp(x[i, j] - m_i)) - (x[i, label[i]] - m_i), m_i the row's
    max, and (unless ``prob`` is None) prob[i] = softmax(x[i]); returns -1, or the
    position of the first bad label (nothing written)."""
    return _call(x, label, None, out, prob)


def softmax_ce_grad(x, label, ograd, out):
    """out[i, j] = (softmax(x[i])[j] - (j == label[i])) * ograd[i]; returns -1, or the
    position of the first bad label (nothing written)."""
    return _call(x, label, ograd, out, None)


cdef void _log_softmax(const floating* x, floating* out, Py_ssize_t n,
                       Py_ssize_t k) noexcept nogil:
    # NumPy's steps: y = x - max, then y - log(sum(exp(y)))
    cdef Py_ssize_t i, j
    cdef floating m, s
    cdef const floating* r
    cdef floating* o
    for i in range(n):
        r = x + i * k
        o = out + i * k
        m = _row_max(r, k)
        s = 0
        for j in range(k):
            o[j] = r[j] - m
            s = s + _exp(o[j])
        s = _log(s)
        for j in range(k):
            o[j] = o[j] - s


def log_softmax_rows(x, out):
    """out[i] = x[i] - max(x[i]) - log(sum(exp(x[i] - max(x[i])))) for the rows of the
    (n, k) array x (k >= 1); ``out`` may be ``x``."""
    cdef cnp.ndarray xa = _arr(x, "x", 2, None, -1)
    cdef int t = cnp.PyArray_TYPE(xa)
    if t != cnp.NPY_FLOAT32 and t != cnp.NPY_FLOAT64:
        raise TypeError(f"x must be float32 or float64 (got {x.dtype})")
    cdef Py_ssize_t n = cnp.PyArray_DIM(xa, 0), k = cnp.PyArray_DIM(xa, 1)
    if k < 1:
        raise ValueError(f"x must have at least one column (got shape {x.shape!r})")
    cdef cnp.ndarray oa = _arr(out, "out", 2, (n, k), t)
    if not cnp.PyArray_ISWRITEABLE(oa):
        raise ValueError("out must be writeable")
    if t == cnp.NPY_FLOAT32:
        with nogil:
            _log_softmax(<const float32_t*>cnp.PyArray_DATA(xa),
                         <float32_t*>cnp.PyArray_DATA(oa), n, k)
    else:
        with nogil:
            _log_softmax(<const float64_t*>cnp.PyArray_DATA(xa),
                         <float64_t*>cnp.PyArray_DATA(oa), n, k)
