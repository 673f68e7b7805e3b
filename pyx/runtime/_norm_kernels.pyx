"""BatchNorm's host kernels: per-channel statistics and the affine passes, fused so that
the forward reads the data twice and writes once, the backward reads the head gradient
and the data twice and writes once (NumPy needs five and six passes).

Every array is C-contiguous and seen as (pre, C, post), the channel axis in the middle;
float32 or float64 (float16 data goes through NumPy in float32).  Sums run in double, one
channel per thread (results do not depend on the thread count); the affine passes share
the rows (pre * C) among the threads of ``arith_threads``.  A region whose thread started
late (a busy machine) sends the next calls to one thread for a while (``back_off``, as
the sparse products do).
"""

from cython.parallel cimport prange

from openmp cimport omp_get_wtime

from runtime._sparse_common cimport (TRACKED_THREADS, arith_threads, back_off, clear_starts,
                                     mark_start, started_late)
from runtime._types cimport floating


cdef inline void _channel_sums(const floating* a, const floating* b, double shift,
                               Py_ssize_t pre, Py_ssize_t c, Py_ssize_t post,
                               Py_ssize_t ch, double* sa, double* sab) noexcept nogil:
    """Over channel ``ch``: with ``b``, sum(a) and sum(a * (b - shift)); without (NULL),
    sum(a - shift) and sum((a - shift) ** 2).  The shift keeps the sums of products free
    of cancellation when the values sit far from 0."""
    cdef double s0 = 0, s1 = 0, q0 = 0, q1 = 0, u0, u1, v0, v1
    cdef Py_ssize_t p, q, n2 = post - post % 2
    cdef const floating* ra
    cdef const floating* rb
    cdef bint two = b != NULL
    cdef double ashift = 0.0 if two else shift
    for p in range(pre):
        ra = a + (p * c + ch) * post
        rb = (b + (p * c + ch) * post) if two else ra
        for q in range(0, n2, 2):
            u0 = ra[q] - ashift
            u1 = ra[q + 1] - ashift
            v0 = rb[q] - shift
            v1 = rb[q + 1] - shift
            s0 += u0
            s1 += u1
            q0 += u0 * v0
            q1 += u1 * v1
        for q in range(n2, post):
            u0 = ra[q] - ashift
            s0 += u0
            q0 += u0 * (rb[q] - shift)
    sa[0] = s0 + s1
    sab[0] = q0 + q1


def channel_moments(floating[:, :, ::1] x, double[::1] mean, double[::1] var):
    """Per channel of x (pre, C, post): the mean and the biased variance, into ``mean``
    and ``var`` (double, length C).  One pass: sums of x - k and (x - k) ** 2 in double,
    k the channel's first value."""
    cdef Py_ssize_t pre = x.shape[0], c = x.shape[1], post = x.shape[2], ch
    cdef double m = <double>(pre * post), k, d, t0
    cdef int nt = arith_threads(c, pre * c * post)
    cdef double starts[TRACKED_THREADS]
    cdef bint late
    if mean.shape[0] != c or var.shape[0] != c:
        raise ValueError(f"mean and var must have length {c}")
    if m == 0:
        return
    with nogil:
        clear_starts(starts, nt)
        t0 = omp_get_wtime()
        for ch in prange(c, num_threads=nt, schedule="dynamic"):
            mark_start(starts)
            k = x[0, ch, 0]
            _channel_sums(&x[0, 0, 0], <const floating*>NULL, k, pre, c, post, ch,
                          &mean[ch], &var[ch])
            d = mean[ch] / m
            mean[ch] = k + d
            var[ch] = max(var[ch] / m - d * d, 0.0)
        late = nt > 1 and started_late(t0, starts, nt)
    if late:
        back_off()


def channel_dot(floating[:, :, ::1] g, floating[:, :, ::1] x, double[::1] mean,
                double[::1] sum_g, double[::1] dot):
    """Per channel: sum(g) and sum(g * (x - mean)), into ``sum_g`` and ``dot``."""
    cdef Py_ssize_t pre = x.shape[0], c = x.shape[1], post = x.shape[2], ch
    cdef int nt = arith_threads(c, 2 * pre * c * post)
    cdef double starts[TRACKED_THREADS]
    cdef double t0
    cdef bint late
    if g.shape[0] != pre or g.shape[1] != c or g.shape[2] != post:
        raise ValueError("g and x must have one shape")
    if mean.shape[0] != c or sum_g.shape[0] != c or dot.shape[0] != c:
        raise ValueError(f"mean, sum_g and dot must have length {c}")
    with nogil:
        clear_starts(starts, nt)
        t0 = omp_get_wtime()
        for ch in prange(c, num_threads=nt, schedule="dynamic"):
            mark_start(starts)
            _channel_sums(&g[0, 0, 0], &x[0, 0, 0], mean[ch], pre, c, post, ch,
                          &sum_g[ch], &dot[ch])
        late = nt > 1 and started_late(t0, starts, nt)
    if late:
        back_off()


def channel_affine(floating[:, :, ::1] x, floating[::1] a, floating[::1] b,
                   floating[:, :, ::1] out):
    """out = x * a + b per channel (``out`` may be ``x``)."""
    _affine(x, a, x, a, b, out, False)


def channel_affine2(floating[:, :, ::1] x, floating[::1] a, floating[:, :, ::1] g,
                    floating[::1] d, floating[::1] b, floating[:, :, ::1] out):
    """out = x * a + g * d + b per channel (``out`` may be ``x`` or ``g``)."""
    _affine(x, a, g, d, b, out, True)


cdef int _affine(floating[:, :, ::1] x, floating[::1] a, floating[:, :, ::1] g,
                 floating[::1] d, floating[::1] b, floating[:, :, ::1] out,
                 bint two) except -1:
    cdef Py_ssize_t pre = x.shape[0], c = x.shape[1], post = x.shape[2], r, q, ch
    cdef floating av, bv, dv
    cdef floating* o
    cdef const floating* xi
    cdef const floating* gi
    cdef int nt = arith_threads(pre * c, (3 if two else 2) * pre * c * post)
    cdef double starts[TRACKED_THREADS]
    cdef double t0
    cdef bint late
    if (out.shape[0] != pre or out.shape[1] != c or out.shape[2] != post
            or g.shape[0] != pre or g.shape[1] != c or g.shape[2] != post):
        raise ValueError(f"channel_affine: arrays must have shape {(pre, c, post)!r}")
    if a.shape[0] != c or b.shape[0] != c or d.shape[0] != c:
        raise ValueError(f"channel_affine: per-channel vectors must have length {c}")
    if pre * c * post == 0:
        return 0
    with nogil:
        clear_starts(starts, nt)
        t0 = omp_get_wtime()
        for r in prange(pre * c, num_threads=nt, schedule="dynamic"):
            mark_start(starts)
            ch = r % c
            av = a[ch]
            bv = b[ch]
            o = &out[0, 0, 0] + r * post
            xi = &x[0, 0, 0] + r * post
            if two:
                dv = d[ch]
                gi = &g[0, 0, 0] + r * post
                for q in range(post):
                    o[q] = xi[q] * av + gi[q] * dv + bv
            else:
                for q in range(post):
                    o[q] = xi[q] * av + bv
        late = nt > 1 and started_late(t0, starts, nt)
    if late:
        back_off()
    return 0
