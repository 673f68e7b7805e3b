"""The optimizer updates, compiled: SGD (with and without momentum), Adam and AdaGrad on
a weight seen as (rows, row size), for a dense gradient or the stored rows of a
row_sparse one (MXNet's ``sgd_update``, ``sgd_mom_update``, ``adam_update``,
``adagrad_update`` kernels).

Each function updates ``weight`` and the states in place, one pass over memory and no
temporaries.  ``rows`` None: ``grad`` is dense, row i for weight row i.  ``rows`` given
(the sorted unique row indices of a row_sparse gradient, ``grad`` its stored rows): with
``lazy`` only those rows of the weight and states are touched (MXNet's lazy update);
without it every row is updated, a row absent from the gradient as if its gradient were
0 (MXNet's standard update).  ``clip`` < 0 means no clipping (MXNet's clip_gradient).
Values are float32 or float64, the same dtype for every array; the arithmetic runs in
that dtype, as MXNet's kernels do.  Loops run without the GIL, over rows in parallel
with OpenMP once the work reaches runtime._sparse_common's ARITH_SERIAL_CUTOFF.
"""

import numpy as np

from cython.parallel cimport prange
from libc.math cimport sqrt

from runtime._sparse_common cimport arith_threads, as_array, as_index, lower_bound
from runtime._types cimport floating, index_t

__all__ = ["adagrad_update", "adam_update", "sgd_update"]

cdef object _FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


# -- argument checks (with the GIL) ---------------------------------------------------------

cdef object _check(str op, object weight, object grad, object rows, tuple states):
    """(rows as int64 or None, number of rows to visit): weight, grad and states are
    C-contiguous 2-D arrays of one float dtype; grad has the weight's row size and, when
    dense, its row count; rows index the weight's rows, sorted."""
    weight = as_array(weight, "weight", 2, True)
    if weight.dtype not in _FLOATS:
        raise NotImplementedError(f"{op}: weight must be float32 or float64 (got "
                                  f"{weight.dtype})")
    grad = as_array(grad, "grad", 2, False)
    if grad.dtype != weight.dtype:
        raise TypeError(f"{op}: grad must have the weight's dtype {weight.dtype} (got "
                        f"{grad.dtype})")
    if grad.shape[1] != weight.shape[1]:
        raise ValueError(f"{op}: grad rows must hold {weight.shape[1]} values (got shape "
                         f"{grad.shape!r})")
    for name, s in states:
        s = as_array(s, name, 2, True)
        if s.dtype != weight.dtype:
            raise TypeError(f"{op}: {name} must have the weight's dtype {weight.dtype} "
                            f"(got {s.dtype})")
        if s.shape != weight.shape:
            raise ValueError(f"{op}: {name} must have the weight's shape {weight.shape!r} "
                             f"(got {s.shape!r})")
    if rows is None:
        if grad.shape[0] != weight.shape[0]:
            raise ValueError(f"{op}: a dense grad must have the weight's shape "
                             f"{weight.shape!r} (got {grad.shape!r})")
        return None
    rows = as_index(rows, "rows", False)
    cdef Py_ssize_t k = rows.shape[0]
    if k != grad.shape[0]:
        raise ValueError(f"{op}: rows must list one index per grad row ({grad.shape[0]}) "
                         f"(got {k})")
    if k and (rows[0] < 0 or rows[k - 1] >= weight.shape[0]):
        raise IndexError(f"{op}: rows must lie in [0, {weight.shape[0]}) (got "
                         f"{int(rows[0])} .. {int(rows[k - 1])})")
    return rows


cdef object _ROW0 = np.zeros(1, np.int64)   # the rows argument of a dense gradient


cdef Py_ssize_t _visited(object weight, object rows, bint lazy):
    """Rows an update touches (0 for an empty weight: nothing to do)."""
    if weight.size == 0:
        return 0
    return weight.shape[0] if rows is None or not lazy else len(rows)


cdef inline index_t _grad_row(const index_t[::1] rows, Py_ssize_t k, Py_ssize_t i) \
        noexcept nogil:
    """The position of weight row ``i`` among ``rows`` (-1 when absent)."""
    cdef Py_ssize_t p = lower_bound(&rows[0], k, i, 0) if k else 0
    return p if p < k and rows[p] == i else -1


cdef inline floating _clipped(floating g, floating clip) noexcept nogil:
    if clip >= 0:
        if g > clip:
            return clip
        if g < -clip:
            return -clip
    return g


# -- SGD ----------------------------------------------------------------------------------

cdef inline void _sgd_row(floating* w, const floating* g, floating* m, Py_ssize_t d,
                          floating lr, floating wd, floating rescale, floating clip,
                          floating momentum) noexcept nogil:
    cdef Py_ssize_t c
    cdef floating gr
    for c in range(d):
        gr = _clipped(rescale * g[c], clip) if g != NULL else 0
        if m == NULL:
            w[c] = (1 - lr * wd) * w[c] - lr * gr
        else:
            m[c] = momentum * m[c] - lr * wd * w[c] - lr * gr
            w[c] = w[c] + m[c]


def _sgd(floating[:, ::1] w, const floating[:, ::1] g, const index_t[::1] rows,
         bint has_rows, floating[:, ::1] mom, bint has_mom, bint lazy, floating lr,
         floating wd, floating rescale, floating clip, floating momentum, int nthreads):
    cdef Py_ssize_t n = w.shape[0], d = w.shape[1], k = g.shape[0], i, j
    cdef index_t p
    cdef floating* m = &mom[0, 0] if has_mom else <floating*>NULL
    with nogil:
        if not has_rows:
            for i in prange(n, num_threads=nthreads, schedule="static"):
                _sgd_row(&w[i, 0], &g[i, 0], <floating*>NULL if m == NULL else m + i * d,
                         d, lr, wd, rescale, clip, momentum)
        elif lazy:
            for j in prange(k, num_threads=nthreads, schedule="static"):
                i = rows[j]
                _sgd_row(&w[i, 0], &g[j, 0], <floating*>NULL if m == NULL else m + i * d,
                         d, lr, wd, rescale, clip, momentum)
        else:
            for i in prange(n, num_threads=nthreads, schedule="static"):
                p = _grad_row(rows, k, i)
                _sgd_row(&w[i, 0], <const floating*>NULL if p < 0 else &g[p, 0],
                         <floating*>NULL if m == NULL else m + i * d, d, lr, wd, rescale, clip,
                         momentum)


def sgd_update(weight, grad, rows, mom, double lr, double wd, double rescale_grad,
               double clip_gradient, double momentum, bint lazy):
    """SGD in place: ``mom`` None: w = (1 - lr wd) w - lr clip(rescale g); else
    mom = momentum mom - lr wd w - lr clip(rescale g), w += mom (MXNet's sgd_update and
    sgd_mom_update).  Returns the number of rows updated."""
    states = () if mom is None else (("mom", mom),)
    rows = _check("sgd_update", weight, grad, rows, states)
    cdef Py_ssize_t visited = _visited(weight, rows, lazy)
    if visited:
        _sgd(weight, grad, _ROW0 if rows is None else rows, rows is not None,
             weight if mom is None else mom, mom is not None, lazy, lr, wd, rescale_grad,
             clip_gradient, momentum, arith_threads(visited, visited * weight.shape[1]))
    return visited


# -- Adam ---------------------------------------------------------------------------------

cdef inline void _adam_row(floating* w, const floating* g, floating* mean, floating* var,
                           Py_ssize_t d, floating lr, floating beta1, floating beta2,
                           floating eps, floating wd, floating rescale,
                           floating clip) noexcept nogil:
    cdef Py_ssize_t c
    cdef floating gr
    for c in range(d):
        gr = (rescale * g[c] if g != NULL else 0) + wd * w[c]
        gr = _clipped(gr, clip)
        mean[c] = beta1 * mean[c] + (1 - beta1) * gr
        var[c] = beta2 * var[c] + (1 - beta2) * gr * gr
        w[c] = w[c] - lr * mean[c] / (<floating>sqrt(var[c]) + eps)


def _adam(floating[:, ::1] w, const floating[:, ::1] g, const index_t[::1] rows,
          bint has_rows, floating[:, ::1] mean, floating[:, ::1] var, bint lazy,
          floating lr, floating beta1, floating beta2, floating eps, floating wd,
          floating rescale, floating clip, int nthreads):
    cdef Py_ssize_t n = w.shape[0], d = w.shape[1], k = g.shape[0], i, j
    cdef index_t p
    with nogil:
        if not has_rows:
            for i in prange(n, num_threads=nthreads, schedule="static"):
                _adam_row(&w[i, 0], &g[i, 0], &mean[i, 0], &var[i, 0], d, lr, beta1, beta2,
                          eps, wd, rescale, clip)
        elif lazy:
            for j in prange(k, num_threads=nthreads, schedule="static"):
                i = rows[j]
                _adam_row(&w[i, 0], &g[j, 0], &mean[i, 0], &var[i, 0], d, lr, beta1, beta2,
                          eps, wd, rescale, clip)
        else:
            for i in prange(n, num_threads=nthreads, schedule="static"):
                p = _grad_row(rows, k, i)
                _adam_row(&w[i, 0], <const floating*>NULL if p < 0 else &g[p, 0],
                          &mean[i, 0], &var[i, 0], d, lr, beta1, beta2, eps, wd, rescale,
                          clip)


def adam_update(weight, grad, rows, mean, var, double lr, double beta1, double beta2,
                double epsilon, double wd, double rescale_grad, double clip_gradient,
                bint lazy):
    """Adam in place (MXNet's adam_update, no bias correction): g = clip(rescale g +
    wd w); mean = beta1 mean + (1 - beta1) g; var = beta2 var + (1 - beta2) g^2;
    w -= lr mean / (sqrt(var) + epsilon).  Returns the number of rows updated."""
    rows = _check("adam_update", weight, grad, rows, (("mean", mean), ("var", var)))
    cdef Py_ssize_t visited = _visited(weight, rows, lazy)
    if visited:
        _adam(weight, grad, _ROW0 if rows is None else rows, rows is not None, mean, var,
              lazy, lr, beta1, beta2, epsilon, wd, rescale_grad, clip_gradient,
              arith_threads(visited, visited * weight.shape[1]))
    return visited


# -- AdaGrad ------------------------------------------------------------------------------

cdef inline void _adagrad_row(floating* w, const floating* g, floating* h, Py_ssize_t d,
                              floating lr, floating eps, floating wd, floating rescale,
                              floating clip) noexcept nogil:
    cdef Py_ssize_t c
    cdef floating gr
    for c in range(d):
        gr = _clipped(rescale * g[c], clip) if g != NULL else 0
        h[c] = h[c] + gr * gr
        w[c] = w[c] - lr * (gr / (<floating>sqrt(h[c]) + eps) + wd * w[c])


def _adagrad(floating[:, ::1] w, const floating[:, ::1] g, const index_t[::1] rows,
             bint has_rows, floating[:, ::1] h, bint lazy, floating lr, floating eps,
             floating wd, floating rescale, floating clip, int nthreads):
    cdef Py_ssize_t n = w.shape[0], d = w.shape[1], k = g.shape[0], i, j
    cdef index_t p
    with nogil:
        if not has_rows:
            for i in prange(n, num_threads=nthreads, schedule="static"):
                _adagrad_row(&w[i, 0], &g[i, 0], &h[i, 0], d, lr, eps, wd, rescale, clip)
        elif lazy:
            for j in prange(k, num_threads=nthreads, schedule="static"):
                i = rows[j]
                _adagrad_row(&w[i, 0], &g[j, 0], &h[i, 0], d, lr, eps, wd, rescale, clip)
        else:
            for i in prange(n, num_threads=nthreads, schedule="static"):
                p = _grad_row(rows, k, i)
                _adagrad_row(&w[i, 0], <const floating*>NULL if p < 0 else &g[p, 0],
                             &h[i, 0], d, lr, eps, wd, rescale, clip)


def adagrad_update(weight, grad, rows, history, double lr, double epsilon, double wd,
                   double rescale_grad, double clip_gradient, bint lazy):
    """AdaGrad in place (MXNet's adagrad_update): g = clip(rescale g); history += g^2;
    w -= lr (g / (sqrt(history) + epsilon) + wd w).  Returns the number of rows
    updated."""
    rows = _check("adagrad_update", weight, grad, rows, (("history", history),))
    cdef Py_ssize_t visited = _visited(weight, rows, lazy)
    if visited:
        _adagrad(weight, grad, _ROW0 if rows is None else rows, rows is not None, history,
                 lazy, lr, epsilon, wd, rescale_grad, clip_gradient,
                 arith_threads(visited, visited * weight.shape[1]))
    return visited
