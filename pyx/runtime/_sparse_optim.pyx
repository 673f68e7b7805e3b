"""The optimizer updates, compiled: SGD (with and without momentum), Adam, AdaGrad,
Nesterov momentum, RMSProp (plain and centered), FTML, FTRL, Signum and signSGD for a
dense gradient or the stored rows of a row_sparse one (MXNet's ``sgd_update``,
``sgd_mom_update``, ``adam_update``, ``adagrad_update``, ``nag_mom_update``,
``rmsprop_update``, ``rmspropalex_update``, ``ftml_update``, ``ftrl_update``,
``signum_update``, ``signsgd_update`` kernels).

Each function writes the updated weight into ``out`` (``weight`` itself for the in-place
call; otherwise ``weight`` is copied into ``out`` first) and updates the states in
place: one pass over memory, no temporaries.  ``rows`` None: ``grad`` is dense, of the
weight's shape.  ``rows`` given (the sorted unique row indices of a row_sparse gradient,
``grad`` its stored rows): with ``lazy`` only those rows of ``out`` and the states are
touched (MXNet's lazy update); without it every row is updated, a row absent from the
gradient as if its gradient were 0 (MXNet's standard update).  ``clip`` < 0 means no
clipping (MXNet's clip_gradient); a NaN gradient stays NaN.  Arrays are C-contiguous
NumPy arrays of one dtype, float32 or float64, the arithmetic in that dtype as in MXNet's
kernels.  The checks run first, with the GIL, so that bad arguments change nothing; the
loops run without it, in parallel with OpenMP (over blocks of a dense gradient, over rows
of a sparse one) once the work reaches runtime._sparse_common's ARITH_SERIAL_CUTOFF.
On x86 the loops flush denormal values to zero (inputs and results, the FTZ and DAZ
modes, set and restored around the loop in each thread): Adam's mean of a weight whose
gradient stays 0 decays through the denormal range (below 1.2e-38 in float32), where the
arithmetic would be many times slower, and a value that small changes no update.
"""

import numpy as np

cimport numpy as cnp
from cython.parallel cimport parallel, prange
from libc.math cimport INFINITY, sqrt, sqrtf
from cpython.mem cimport PyMem_Free, PyMem_Malloc
from libc.string cimport memcpy

from runtime._blas cimport loop_threads, pooled
from runtime._sparse_common cimport arith_threads, lower_bound
from runtime._types cimport float32_t, float64_t, floating, index_t

cnp.import_array()

__all__ = ["adagrad_update", "adam_update", "ftml_update", "ftrl_update", "multi_sgd_update",
           "nag_mom_update", "rmsprop_update", "rmspropalex_update", "sgd_update", "signum_update"]

cdef enum:
    # A dense gradient is updated in blocks of this many values (the parallel unit).
    _BLOCK = 16384
    # A lazy update asks for the weight and state rows of the stored row this far ahead
    # (their first this many bytes): the rows lie at random in arrays far larger than the
    # caches, and waiting for each in turn was most of the update.
    _AHEAD = 8
    _AHEAD_BYTES = 128

cdef extern from *:
    """
    #define NDRT_PREFETCH_W(p) __builtin_prefetch((const void*)(p), 1, 1)
    """
    void _prefetch_w "NDRT_PREFETCH_W"(const void* p) noexcept nogil


# -- argument checks (with the GIL) ---------------------------------------------------------

cdef struct Plan:
    char* w               # out's values (the weight after the copy)
    const char* g         # grad's values (dense, or the stored rows)
    const index_t* rows   # NULL: a dense grad
    char* s0              # states (NULL where the update has fewer)
    char* s1
    char* s2
    Py_ssize_t size       # values of the weight
    Py_ssize_t n, d       # the weight as (rows, row size)
    Py_ssize_t k          # stored rows of a sparse grad
    bint f32              # float32 (else float64)
    int nthreads


cdef cnp.ndarray _array(str op, str name, object a, bint out):
    if not isinstance(a, cnp.ndarray):
        raise TypeError(f"{op}: {name} must be a numpy.ndarray (got {type(a).__name__})")
    cdef cnp.ndarray x = <cnp.ndarray>a
    if not cnp.PyArray_IS_C_CONTIGUOUS(x):
        raise ValueError(f"{op}: {name} must be C-contiguous (got strides "
                         f"{(<object>x).strides!r})")
    if out and not cnp.PyArray_ISWRITEABLE(x):
        raise ValueError(f"{op}: {name} must be writeable (got a read-only array)")
    return x


cdef int _same(str op, str name, cnp.ndarray x, cnp.ndarray w, int t,
               bint shape) except -1:
    """x has the weight's dtype (type number ``t``) and, with ``shape``, its shape."""
    cdef int i, nd = cnp.PyArray_NDIM(w)
    if cnp.PyArray_TYPE(x) != t:
        raise TypeError(f"{op}: {name} must have the weight's dtype {w.dtype} (got "
                        f"{x.dtype})")
    if not shape:
        return 0
    if cnp.PyArray_NDIM(x) == nd:
        for i in range(nd):
            if cnp.PyArray_DIM(x, i) != cnp.PyArray_DIM(w, i):
                break
        else:
            return 0
    raise ValueError(f"{op}: {name} must have the weight's shape {(<object>w).shape!r} "
                     f"(got {(<object>x).shape!r})")


cdef int _plan(Plan* p, str op, object out, object weight, object grad, object rows,
               tuple states, tuple names, bint lazy) except -1:
    """Check the arguments, fill ``p`` and copy ``weight`` into ``out`` (unless it is
    ``weight``); nothing is written before every check has passed."""
    cdef cnp.ndarray o = _array(op, "out", out, True)
    cdef cnp.ndarray w = _array(op, "weight", weight, False)
    cdef cnp.ndarray g = _array(op, "grad", grad, False)
    cdef cnp.ndarray r
    cdef object gshape = (<object>g).shape
    cdef int t = cnp.PyArray_TYPE(w)
    cdef Py_ssize_t i
    if t != cnp.NPY_FLOAT32 and t != cnp.NPY_FLOAT64:
        raise NotImplementedError(f"{op}: weight must be float32 or float64 (got "
                                  f"{w.dtype})")
    shape = (<object>w).shape
    _same(op, "out", o, w, t, True)
    if cnp.PyArray_TYPE(g) != t:
        raise TypeError(f"{op}: grad must have the weight's dtype {w.dtype} (got "
                        f"{g.dtype})")
    for i in range(len(states)):
        _same(op, names[i], _array(op, names[i], states[i], True), w, t, True)
    p.size = cnp.PyArray_SIZE(w)
    p.n = shape[0] if len(shape) else 1
    p.d = p.size // p.n if p.n else 0
    p.rows = NULL
    p.k = 0
    if rows is None:
        if gshape != shape:
            raise ValueError(f"{op}: a dense grad must have the weight's shape {shape!r} "
                             f"(got {gshape!r})")
    else:
        r = _array(op, "rows", rows, False)
        if cnp.PyArray_TYPE(r) != cnp.NPY_INT64 or cnp.PyArray_NDIM(r) != 1:
            raise TypeError(f"{op}: rows must be a 1-D int64 array (got {r.dtype}, shape "
                            f"{(<object>r).shape!r})")
        p.k = cnp.PyArray_DIM(r, 0)
        if len(shape) == 0 or gshape != (p.k,) + shape[1:]:
            raise ValueError(f"{op}: grad must hold {p.k} rows of the weight's row shape "
                             f"{shape[1:]!r} (got shape {gshape!r})")
        p.rows = <const index_t*>cnp.PyArray_DATA(r)
        for i in range(1, p.k):
            if p.rows[i] <= p.rows[i - 1]:
                raise ValueError(f"{op}: rows must be sorted and unique (got {p.rows[i]} "
                                 f"after {p.rows[i - 1]} at position {i})")
        if p.k and (p.rows[0] < 0 or p.rows[p.k - 1] >= p.n):
            raise IndexError(f"{op}: rows must lie in [0, {p.n}) (got {p.rows[0]} .. "
                             f"{p.rows[p.k - 1]})")
    p.f32 = t == cnp.NPY_FLOAT32
    p.w = <char*>cnp.PyArray_DATA(o)
    p.g = <const char*>cnp.PyArray_DATA(g)
    p.s0 = <char*>cnp.PyArray_DATA(<cnp.ndarray>states[0]) if len(states) > 0 else NULL
    p.s1 = <char*>cnp.PyArray_DATA(<cnp.ndarray>states[1]) if len(states) > 1 else NULL
    p.s2 = <char*>cnp.PyArray_DATA(<cnp.ndarray>states[2]) if len(states) > 2 else NULL
    if p.rows == NULL:
        # a dense update is an elementwise loop: on the products' team once it is large
        p.nthreads = (loop_threads(p.size) if pooled()
                      else arith_threads((p.size + _BLOCK - 1) // _BLOCK, p.size))
    elif lazy:
        p.nthreads = arith_threads(p.k, p.k * p.d)
    else:
        p.nthreads = arith_threads(p.n, p.size)
    if p.w != <char*>cnp.PyArray_DATA(w) and p.size:
        memcpy(p.w, cnp.PyArray_DATA(w), p.size * cnp.PyArray_ITEMSIZE(w))
    return 0


cdef inline index_t _grad_row(const index_t* rows, Py_ssize_t k, Py_ssize_t i) \
        noexcept nogil:
    """The position of weight row ``i`` among ``rows`` (-1 when absent)."""
    cdef Py_ssize_t p = lower_bound(rows, k, i, 0) if k else 0
    return p if p < k and rows[p] == i else -1


cdef inline floating _clipped(floating g, floating clip) noexcept nogil:
    """``g`` in [-clip, clip]; NaN stays NaN (selects, which vectorise)."""
    g = clip if g > clip else g
    return -clip if g < -clip else g


cdef inline floating _root(floating x) noexcept nogil:
    if floating is float32_t:
        return sqrtf(x)
    else:
        return sqrt(x)


# -- the loops: one function per update runs the three shapes of a call -------------------

# ``row(w, g, s0, s1, s2, n, a)`` updates n values (g NULL: a zero gradient); ``a`` holds the
# attributes.  The row functions keep every branch outside the loop over values (no
# gradient, no momentum), so that the loops vectorise; no clipping is clipping to an
# infinite bound.

cdef struct Attrs:
    double lr, wd, rescale, clip, momentum, beta1, beta2, eps
    double gamma1, gamma2, lamda1, beta, wd_lh, clip_weights
    double c1, c2         # FTML's bias corrections 1 - beta1^t, 1 - beta2^t


ctypedef void (*row_f32)(float32_t*, const float32_t*, float32_t*, float32_t*, float32_t*,
                         Py_ssize_t,
                         const Attrs*) noexcept nogil
ctypedef void (*row_f64)(float64_t*, const float64_t*, float64_t*, float64_t*, float64_t*,
                         Py_ssize_t,
                         const Attrs*) noexcept nogil


cdef inline double _bound(double clip) noexcept nogil:
    return INFINITY if clip < 0 else clip


cdef void _sgd_row(floating* w, const floating* g, floating* m, floating* unused,
                   floating* s2, Py_ssize_t d, const Attrs* a) noexcept nogil:
    cdef Py_ssize_t c
    cdef floating lr = <floating>a.lr, lwd = <floating>(a.lr * a.wd)
    cdef floating decay = 1 - lwd, rescale = <floating>a.rescale
    cdef floating momentum = <floating>a.momentum, clip = <floating>_bound(a.clip)
    if g == NULL:
        if m == NULL:
            for c in range(d):
                w[c] = decay * w[c]
        else:
            for c in range(d):
                m[c] = momentum * m[c] - lwd * w[c]
                w[c] = w[c] + m[c]
    elif m == NULL:
        for c in range(d):
            w[c] = decay * w[c] - lr * _clipped(rescale * g[c], clip)
    else:
        for c in range(d):
            m[c] = momentum * m[c] - lwd * w[c] - lr * _clipped(rescale * g[c], clip)
            w[c] = w[c] + m[c]


cdef void _adam_row(floating* w, const floating* g, floating* mean, floating* var,
                    floating* s2, Py_ssize_t d, const Attrs* a) noexcept nogil:
    cdef Py_ssize_t c
    cdef floating gr, lr = <floating>a.lr, wd = <floating>a.wd
    cdef floating rescale = <floating>a.rescale, clip = <floating>_bound(a.clip)
    cdef floating beta1 = <floating>a.beta1, beta2 = <floating>a.beta2
    cdef floating b1 = 1 - beta1, b2 = 1 - beta2, eps = <floating>a.eps
    if g == NULL:
        for c in range(d):
            gr = _clipped(wd * w[c], clip)
            mean[c] = beta1 * mean[c] + b1 * gr
            var[c] = beta2 * var[c] + b2 * gr * gr
            w[c] = w[c] - lr * mean[c] / (_root(var[c]) + eps)
    else:
        for c in range(d):
            gr = _clipped(rescale * g[c] + wd * w[c], clip)
            mean[c] = beta1 * mean[c] + b1 * gr
            var[c] = beta2 * var[c] + b2 * gr * gr
            w[c] = w[c] - lr * mean[c] / (_root(var[c]) + eps)


cdef void _adagrad_row(floating* w, const floating* g, floating* h, floating* unused,
                       floating* s2, Py_ssize_t d, const Attrs* a) noexcept nogil:
    cdef Py_ssize_t c
    cdef floating gr, lr = <floating>a.lr, lwd = <floating>(a.lr * a.wd)
    cdef floating rescale = <floating>a.rescale, clip = <floating>_bound(a.clip)
    cdef floating eps = <floating>a.eps
    if g == NULL:     # a zero gradient: only the weight decay
        for c in range(d):
            w[c] = w[c] - lwd * w[c]
    else:
        for c in range(d):
            gr = _clipped(rescale * g[c], clip)
            h[c] = h[c] + gr * gr
            w[c] = w[c] - lr * gr / _root(h[c] + eps) - lwd * w[c]


cdef void _nag_row(floating* w, const floating* g, floating* m, floating* unused,
                   floating* s2, Py_ssize_t d, const Attrs* a) noexcept nogil:
    """s = lr (clip(rescale g) + wd w); mom = momentum mom - s; w += momentum mom - s
    (MXNet's kernel: its momentum holds the lr-scaled steps)."""
    cdef Py_ssize_t c
    cdef floating st, lr = <floating>a.lr, wd = <floating>a.wd
    cdef floating rescale = <floating>a.rescale, clip = <floating>_bound(a.clip)
    cdef floating momentum = <floating>a.momentum
    for c in range(d):
        st = lr * (wd * w[c] if g == NULL else _clipped(rescale * g[c], clip) + wd * w[c])
        m[c] = momentum * m[c] - st
        w[c] = w[c] + momentum * m[c] - st


cdef void _rmsprop_row(floating* w, const floating* g, floating* n, floating* unused,
                       floating* s2, Py_ssize_t d, const Attrs* a) noexcept nogil:
    """g = clip(rescale g + wd w); n = (1 - gamma1) g^2 + gamma1 n;
    w = clip_weights(w - lr g / sqrt(n + epsilon))."""
    cdef Py_ssize_t c
    cdef floating gr, v, lr = <floating>a.lr, wd = <floating>a.wd
    cdef floating rescale = <floating>a.rescale, clip = <floating>_bound(a.clip)
    cdef floating gamma1 = <floating>a.gamma1, g1 = 1 - gamma1, eps = <floating>a.eps
    cdef floating cw = <floating>_bound(a.clip_weights)
    for c in range(d):
        gr = _clipped(wd * w[c] if g == NULL else rescale * g[c] + wd * w[c], clip)
        n[c] = g1 * gr * gr + gamma1 * n[c]
        v = w[c] - lr * gr / _root(n[c] + eps)
        w[c] = _clipped(v, cw)


cdef void _rmspropalex_row(floating* w, const floating* g, floating* n, floating* gm,
                           floating* delta, Py_ssize_t d, const Attrs* a) noexcept nogil:
    """Graves' centered RMSProp: g = clip(rescale g + wd w); n = (1 - gamma1) g^2 +
    gamma1 n; gm = (1 - gamma1) g + gamma1 gm; delta = gamma2 delta - lr g /
    sqrt(n - gm^2 + epsilon); w = clip_weights(w + delta)."""
    cdef Py_ssize_t c
    cdef floating gr, lr = <floating>a.lr, wd = <floating>a.wd
    cdef floating rescale = <floating>a.rescale, clip = <floating>_bound(a.clip)
    cdef floating gamma1 = <floating>a.gamma1, g1 = 1 - gamma1, eps = <floating>a.eps
    cdef floating gamma2 = <floating>a.gamma2, cw = <floating>_bound(a.clip_weights)
    for c in range(d):
        gr = _clipped(wd * w[c] if g == NULL else rescale * g[c] + wd * w[c], clip)
        n[c] = g1 * gr * gr + gamma1 * n[c]
        gm[c] = g1 * gr + gamma1 * gm[c]
        delta[c] = gamma2 * delta[c] - lr * gr / _root(n[c] - gm[c] * gm[c] + eps)
        w[c] = _clipped(w[c] + delta[c], cw)


cdef void _ftml_row(floating* w, const floating* g, floating* dd, floating* v,
                    floating* z, Py_ssize_t d, const Attrs* a) noexcept nogil:
    """FTML: g = clip(rescale g + wd w); v = beta2 v + (1 - beta2) g^2;
    d_t = (1 - beta1^t) / lr (sqrt(v / (1 - beta2^t)) + epsilon);
    z = beta1 z + (1 - beta1) g - (d_t - beta1 d) w; d = d_t; w = -z / d_t."""
    cdef Py_ssize_t c
    cdef floating gr, dt, lr = <floating>a.lr, wd = <floating>a.wd
    cdef floating rescale = <floating>a.rescale, clip = <floating>_bound(a.clip)
    cdef floating beta1 = <floating>a.beta1, beta2 = <floating>a.beta2
    cdef floating c1 = <floating>a.c1, c2 = <floating>a.c2, eps = <floating>a.eps
    for c in range(d):
        gr = _clipped(wd * w[c] if g == NULL else rescale * g[c] + wd * w[c], clip)
        v[c] = beta2 * v[c] + (1 - beta2) * gr * gr
        dt = c1 / lr * (_root(v[c] / c2) + eps)
        z[c] = beta1 * z[c] + (1 - beta1) * gr - (dt - beta1 * dd[c]) * w[c]
        dd[c] = dt
        w[c] = -z[c] / dt


cdef void _ftrl_row(floating* w, const floating* g, floating* z, floating* n,
                    floating* s2, Py_ssize_t d, const Attrs* a) noexcept nogil:
    """g = clip(rescale g); z += g - (sqrt(n + g^2) - sqrt(n)) w / lr; n += g^2;
    w = (sign(z) lamda1 - z) / ((beta + sqrt(n)) / lr + wd) where |z| > lamda1, else 0."""
    cdef Py_ssize_t c
    cdef floating gr, lr = <floating>a.lr, wd = <floating>a.wd
    cdef floating rescale = <floating>a.rescale, clip = <floating>_bound(a.clip)
    cdef floating lamda1 = <floating>a.lamda1, beta = <floating>a.beta, sz
    for c in range(d):
        gr = 0 if g == NULL else _clipped(rescale * g[c], clip)
        z[c] = z[c] + gr - (_root(n[c] + gr * gr) - _root(n[c])) * w[c] / lr
        n[c] = n[c] + gr * gr
        sz = (z[c] > 0) - (z[c] < 0)
        # times the mask, as MXNet's kernel: a NaN z gives a NaN weight, not 0
        w[c] = ((sz * lamda1 - z[c]) / ((beta + _root(n[c])) / lr + wd)
                * ((z[c] > lamda1) | (z[c] < -lamda1)))


cdef void _signum_row(floating* w, const floating* g, floating* m, floating* unused,
                      floating* s2, Py_ssize_t d, const Attrs* a) noexcept nogil:
    """m NULL (signSGD): w = (1 - lr wd) w - lr sign(g).  Else (Signum):
    mom = momentum mom - (1 - momentum) (wd w + clip(rescale g));
    w = (1 - lr wd_lh) w + lr sign(mom)."""
    cdef Py_ssize_t c
    cdef floating gr, lr = <floating>a.lr, wd = <floating>a.wd
    cdef floating rescale = <floating>a.rescale, clip = <floating>_bound(a.clip)
    cdef floating momentum = <floating>a.momentum, m1 = 1 - momentum
    cdef floating keep = 1 - lr * <floating>a.wd_lh, decay = 1 - lr * wd
    if m == NULL:
        for c in range(d):
            gr = 0 if g == NULL else g[c]
            w[c] = decay * w[c] - lr * ((gr > 0) - (gr < 0))
        return
    for c in range(d):
        gr = 0 if g == NULL else _clipped(rescale * g[c], clip)
        m[c] = momentum * m[c] - m1 * wd * w[c] - m1 * gr
        w[c] = keep * w[c] + lr * ((m[c] > 0) - (m[c] < 0))


cdef inline floating* _at(char* base, Py_ssize_t i, floating* kind) noexcept nogil:
    return <floating*>NULL if base == NULL else <floating*>base + i


cdef inline void _ask_row(char* base, Py_ssize_t i, Py_ssize_t d, floating* kind) noexcept nogil:
    """Prefetch (for writing) the first bytes of the row at value ``i`` of ``base``."""
    cdef Py_ssize_t b, nbytes = min(d * <Py_ssize_t>sizeof(floating), <Py_ssize_t>_AHEAD_BYTES)
    if base == NULL:
        return
    b = 0
    while b < nbytes:
        _prefetch_w(base + i * <Py_ssize_t>sizeof(floating) + b)
        b += 64


cdef extern from *:
    """
    /* Flush denormals to zero (and read them as zero) in the update loops: Adam's mean of
       a weight whose gradient stays 0 decays through the denormal range, where x86
       arithmetic is many times slower.  MXCSR is per thread: each thread sets it for its
       part of the loop and restores it. */
    #if defined(__SSE__) || defined(__x86_64__) || defined(_M_X64)
    #include <xmmintrin.h>
    static inline unsigned int ndrt_ftz_on(void) {
        unsigned int c = _mm_getcsr();
        _mm_setcsr(c | 0x8040u);
        return c;
    }
    static inline void ndrt_ftz_off(unsigned int c) { _mm_setcsr(c); }
    #else
    static inline unsigned int ndrt_ftz_on(void) { return 0; }
    static inline void ndrt_ftz_off(unsigned int c) { (void)c; }
    #endif
    """
    unsigned int ftz_on "ndrt_ftz_on"() noexcept nogil
    void ftz_off "ndrt_ftz_off"(unsigned int c) noexcept nogil


cdef void _run(const Plan* p, const Attrs* a, bint lazy, floating* kind,
               void (*row)(floating*, const floating*, floating*, floating*, floating*,
                           Py_ssize_t, const Attrs*) noexcept nogil) noexcept nogil:
    """The update ``row`` over a dense gradient (in blocks), the rows of a sparse one
    (lazy) or every row (standard); denormals flushed to zero (ftz_on)."""
    cdef floating* w = <floating*>p.w
    cdef const floating* g = <const floating*>p.g
    cdef Py_ssize_t b, i, j, lo, d = p.d, nb = (p.size + _BLOCK - 1) // _BLOCK
    cdef index_t q
    cdef unsigned int csr = 0      # (each thread sets its own; firstprivate copies this)
    if p.rows == NULL and p.nthreads <= 1:
        # one thread: no OpenMP region (its start costs more than a small update)
        csr = ftz_on()
        row(w, g, _at(p.s0, 0, kind), _at(p.s1, 0, kind), _at(p.s2, 0, kind), p.size, a)
        ftz_off(csr)
        return
    with parallel(num_threads=p.nthreads):
        csr = ftz_on()
        if p.rows == NULL:
            for b in prange(nb, schedule="static"):
                lo = b * _BLOCK
                row(w + lo, g + lo, _at(p.s0, lo, kind), _at(p.s1, lo, kind), _at(p.s2, lo, kind),
                    min(<Py_ssize_t>_BLOCK, p.size - lo), a)
        elif lazy:
            for j in prange(p.k, schedule="static"):
                if j + _AHEAD < p.k:
                    q = p.rows[j + _AHEAD] * d
                    _ask_row[floating](p.w, q, d, kind)
                    _ask_row[floating](p.s0, q, d, kind)
                    _ask_row[floating](p.s1, q, d, kind)
                    _ask_row[floating](p.s2, q, d, kind)
                i = p.rows[j] * d
                row(w + i, g + j * d, _at(p.s0, i, kind), _at(p.s1, i, kind),
                    _at(p.s2, i, kind), d, a)
        else:
            for i in prange(p.n, schedule="static"):
                q = _grad_row(p.rows, p.k, i)
                row(w + i * d, <const floating*>NULL if q < 0 else g + q * d,
                    _at(p.s0, i * d, kind), _at(p.s1, i * d, kind),
                    _at(p.s2, i * d, kind), d, a)
        ftz_off(csr)


cdef int _dispatch(const Plan* p, const Attrs* a, bint lazy, row_f32 f32,
                   row_f64 f64) except -1:
    if p.size == 0:
        return 0
    with nogil:
        if p.f32:
            _run[float32_t](p, a, lazy, <float32_t*>NULL, f32)
        else:
            _run[float64_t](p, a, lazy, <float64_t*>NULL, f64)
    return 0


# -- the functions ------------------------------------------------------------------------

def sgd_update(out, weight, grad, rows, mom, double lr, double wd, double rescale_grad,
               double clip_gradient, double momentum, bint lazy):
    """SGD: ``mom`` None: out = (1 - lr wd) weight - lr clip(rescale g); else
    mom = momentum mom - lr wd weight - lr clip(rescale g), out = weight + mom (MXNet's
    sgd_update and sgd_mom_update)."""
    cdef Plan p
    cdef Attrs a
    states, names = ((), ()) if mom is None else ((mom,), ("mom",))
    _plan(&p, "sgd_update", out, weight, grad, rows, states, names, lazy)
    a.lr, a.wd, a.rescale, a.clip, a.momentum = lr, wd, rescale_grad, clip_gradient, \
        momentum
    _dispatch(&p, &a, lazy, _sgd_row[float32_t], _sgd_row[float64_t])


def multi_sgd_update(list outs, list weights, list grads, list moms, lrs, wds,
                     double rescale_grad, double clip_gradient, double momentum):
    """:func:`sgd_update` of every dense weight ``weights[i]`` (into ``outs[i]``) with
    ``grads[i]``, ``moms[i]`` (``moms`` None: without momentum), ``lrs[i]`` and
    ``wds[i]`` in one call (MXNet's multi_sgd_update and multi_sgd_mom_update): every
    argument is checked first, then the updates run one after the other without the
    GIL, each in parallel blocks when it is large."""
    cdef Py_ssize_t i, n = len(weights)
    cdef Plan* plans
    cdef Attrs* attrs
    cdef cnp.ndarray o, w
    op = "multi_sgd_update" if moms is None else "multi_sgd_mom_update"
    if not (len(outs) == len(grads) == len(lrs) == len(wds) == n) or (
            moms is not None and len(moms) != n):
        raise ValueError(f"{op}: outs, grads, moms, lrs and wds must have one entry per "
                         f"weight ({n})")
    names = () if moms is None else ("mom",)
    plans = <Plan*>PyMem_Malloc(max(n, 1) * sizeof(Plan))
    attrs = <Attrs*>PyMem_Malloc(max(n, 1) * sizeof(Attrs))
    if plans == NULL or attrs == NULL:
        PyMem_Free(plans)
        PyMem_Free(attrs)
        raise MemoryError(f"{op}: no memory for {n} update plans")
    try:
        for i in range(n):
            # out=weight here: nothing is copied before every argument has passed
            _plan(&plans[i], op, weights[i], weights[i], grads[i], None,
                  () if moms is None else (moms[i],), names, False)
            w = <cnp.ndarray>weights[i]
            o = _array(op, "out", outs[i], True)
            _same(op, "out", o, w, cnp.PyArray_TYPE(w), True)
            attrs[i].lr, attrs[i].wd = lrs[i], wds[i]
            attrs[i].rescale, attrs[i].clip, attrs[i].momentum = rescale_grad, \
                clip_gradient, momentum
        for i in range(n):
            o = <cnp.ndarray>outs[i]
            w = <cnp.ndarray>weights[i]
            plans[i].w = <char*>cnp.PyArray_DATA(o)
            if plans[i].w != <char*>cnp.PyArray_DATA(w) and plans[i].size:
                memcpy(plans[i].w, cnp.PyArray_DATA(w),
                       plans[i].size * cnp.PyArray_ITEMSIZE(w))
        with nogil:
            for i in range(n):
                if plans[i].size == 0:
                    continue
                if plans[i].f32:
                    _run[float32_t](&plans[i], &attrs[i], False, <float32_t*>NULL,
                                    _sgd_row[float32_t])
                else:
                    _run[float64_t](&plans[i], &attrs[i], False, <float64_t*>NULL,
                                    _sgd_row[float64_t])
    finally:
        PyMem_Free(plans)
        PyMem_Free(attrs)


def adam_update(out, weight, grad, rows, mean, var, double lr, double beta1, double beta2,
                double epsilon, double wd, double rescale_grad, double clip_gradient,
                bint lazy):
    """Adam (MXNet's adam_update, no bias correction): g = clip(rescale g + wd weight);
    mean = beta1 mean + (1 - beta1) g; var = beta2 var + (1 - beta2) g^2;
    out = weight - lr mean / (sqrt(var) + epsilon)."""
    cdef Plan p
    cdef Attrs a
    _plan(&p, "adam_update", out, weight, grad, rows, (mean, var), ("mean", "var"), lazy)
    a.lr, a.wd, a.rescale, a.clip = lr, wd, rescale_grad, clip_gradient
    a.beta1, a.beta2, a.eps = beta1, beta2, epsilon
    _dispatch(&p, &a, lazy, _adam_row[float32_t], _adam_row[float64_t])


def adagrad_update(out, weight, grad, rows, history, double lr, double epsilon, double wd,
                   double rescale_grad, double clip_gradient, bint lazy):
    """AdaGrad (MXNet's adagrad_update): g = clip(rescale g); history += g^2;
    out = weight - lr (g / sqrt(history + epsilon) + wd weight) (MXNet's
    sparse kernel and its AdaGrad's formula: epsilon inside the root)."""
    cdef Plan p
    cdef Attrs a
    _plan(&p, "adagrad_update", out, weight, grad, rows, (history,), ("history",), lazy)
    a.lr, a.wd, a.rescale, a.clip, a.eps = lr, wd, rescale_grad, clip_gradient, epsilon
    _dispatch(&p, &a, lazy, _adagrad_row[float32_t], _adagrad_row[float64_t])


def nag_mom_update(out, weight, grad, rows, mom, double lr, double momentum, double wd,
                   double rescale_grad, double clip_gradient, bint lazy):
    """Nesterov momentum (MXNet's nag_mom_update): s = lr (clip(rescale g) + wd weight);
    mom = momentum mom - s; out = weight + momentum mom - s."""
    cdef Plan p
    cdef Attrs a
    _plan(&p, "nag_mom_update", out, weight, grad, rows, (mom,), ("mom",), lazy)
    a.lr, a.wd, a.rescale, a.clip, a.momentum = lr, wd, rescale_grad, clip_gradient, \
        momentum
    _dispatch(&p, &a, lazy, _nag_row[float32_t], _nag_row[float64_t])


def rmsprop_update(out, weight, grad, rows, n, double lr, double gamma1, double epsilon,
                   double wd, double rescale_grad, double clip_gradient,
                   double clip_weights, bint lazy):
    """RMSProp (MXNet's rmsprop_update): g = clip(rescale g + wd weight);
    n = (1 - gamma1) g^2 + gamma1 n; out = weight - lr g / sqrt(n + epsilon), clipped to
    [-clip_weights, clip_weights] when clip_weights >= 0."""
    cdef Plan p
    cdef Attrs a
    _plan(&p, "rmsprop_update", out, weight, grad, rows, (n,), ("n",), lazy)
    a.lr, a.wd, a.rescale, a.clip, a.gamma1, a.eps = lr, wd, rescale_grad, clip_gradient, \
        gamma1, epsilon
    a.clip_weights = clip_weights
    _dispatch(&p, &a, lazy, _rmsprop_row[float32_t], _rmsprop_row[float64_t])


def ftrl_update(out, weight, grad, rows, z, n, double lr, double lamda1, double beta,
                double wd, double rescale_grad, double clip_gradient, bint lazy):
    """FTRL-proximal (MXNet's ftrl_update): g = clip(rescale g);
    z += g - (sqrt(n + g^2) - sqrt(n)) weight / lr; n += g^2;
    out = (sign(z) lamda1 - z) / ((beta + sqrt(n)) / lr + wd) where |z| > lamda1, else 0."""
    cdef Plan p
    cdef Attrs a
    _plan(&p, "ftrl_update", out, weight, grad, rows, (z, n), ("z", "n"), lazy)
    a.lr, a.wd, a.rescale, a.clip, a.lamda1, a.beta = lr, wd, rescale_grad, clip_gradient, \
        lamda1, beta
    _dispatch(&p, &a, lazy, _ftrl_row[float32_t], _ftrl_row[float64_t])


def signum_update(out, weight, grad, rows, mom, double lr, double momentum, double wd,
                  double rescale_grad, double clip_gradient, double wd_lh, bint lazy):
    """Signum (MXNet's signum_update), or signSGD (signsgd_update) when ``mom`` is None:
    see _signum_row."""
    cdef Plan p
    cdef Attrs a
    states, names = ((), ()) if mom is None else ((mom,), ("mom",))
    _plan(&p, "signum_update", out, weight, grad, rows, states, names, lazy)
    a.lr, a.wd, a.rescale, a.clip, a.momentum = lr, wd, rescale_grad, clip_gradient, \
        momentum
    a.wd_lh = wd_lh
    _dispatch(&p, &a, lazy, _signum_row[float32_t], _signum_row[float64_t])


def rmspropalex_update(out, weight, grad, rows, n, g, delta, double lr, double gamma1,
                       double gamma2, double epsilon, double wd, double rescale_grad,
                       double clip_gradient, double clip_weights, bint lazy):
    """Centered RMSProp (MXNet's rmspropalex_update): see _rmspropalex_row."""
    cdef Plan p
    cdef Attrs a
    _plan(&p, "rmspropalex_update", out, weight, grad, rows, (n, g, delta),
          ("n", "g", "delta"), lazy)
    a.lr, a.wd, a.rescale, a.clip, a.gamma1, a.gamma2, a.eps = lr, wd, rescale_grad, \
        clip_gradient, gamma1, gamma2, epsilon
    a.clip_weights = clip_weights
    _dispatch(&p, &a, lazy, _rmspropalex_row[float32_t], _rmspropalex_row[float64_t])


def ftml_update(out, weight, grad, rows, d, v, z, double lr, double beta1, double beta2,
                double epsilon, int t, double wd, double rescale_grad, double clip_grad,
                bint lazy):
    """FTML (MXNet's ftml_update): see _ftml_row; ``t`` >= 1 the update count."""
    cdef Plan p
    cdef Attrs a
    _plan(&p, "ftml_update", out, weight, grad, rows, (d, v, z), ("d", "v", "z"), lazy)
    a.lr, a.wd, a.rescale, a.clip, a.beta1, a.beta2, a.eps = lr, wd, rescale_grad, \
        clip_grad, beta1, beta2, epsilon
    a.c1, a.c2 = 1.0 - beta1 ** t, 1.0 - beta2 ** t
    _dispatch(&p, &a, lazy, _ftml_row[float32_t], _ftml_row[float64_t])
