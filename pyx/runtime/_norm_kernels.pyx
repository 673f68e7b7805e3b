"""BatchNorm's host kernels: per-channel statistics and the affine passes, fused so that
the forward reads the data twice and writes once, the backward reads the head gradient
and the data twice and writes once (NumPy needs five and six passes).

Every array is C-contiguous and seen as (pre, C, post), the channel axis in the middle;
float32 or float64 (float16 data goes through NumPy in float32).  Sums run in double, one
channel per thread (results do not depend on the thread count); the affine passes share
the rows (pre * C) among the threads of ``arith_threads``.
"""

from cython.parallel cimport prange

from runtime._sparse_common cimport arith_threads
from runtime._types cimport floating


cdef inline void _channel_sums(const floating* a, const floating* b, Py_ssize_t pre,
                               Py_ssize_t c, Py_ssize_t post, Py_ssize_t ch,
                               double* sa, double* sab) noexcept nogil:
    """sum(a) and sum(a * b) over channel ``ch`` (b NULL: sum(a * a))."""
    cdef double s0 = 0, s1 = 0, s2 = 0, s3 = 0, q0 = 0, q1 = 0, q2 = 0, q3 = 0, u, v
    cdef Py_ssize_t p, q, n4 = post - post % 4
    cdef const floating* ra
    cdef const floating* rb
    for p in range(pre):
        ra = a + (p * c + ch) * post
        rb = (b + (p * c + ch) * post) if b != NULL else ra
        for q in range(0, n4, 4):
            s0 += ra[q]
            s1 += ra[q + 1]
            s2 += ra[q + 2]
            s3 += ra[q + 3]
            q0 += <double>ra[q] * rb[q]
            q1 += <double>ra[q + 1] * rb[q + 1]
            q2 += <double>ra[q + 2] * rb[q + 2]
            q3 += <double>ra[q + 3] * rb[q + 3]
        for q in range(n4, post):
            s0 += ra[q]
            q0 += <double>ra[q] * rb[q]
    sa[0] = (s0 + s1) + (s2 + s3)
    sab[0] = (q0 + q1) + (q2 + q3)


def channel_moments(floating[:, :, ::1] x, double[::1] mean, double[::1] var):
    """Per channel of x (pre, C, post): the mean and the biased variance, into ``mean``
    and ``var`` (double, length C).  One pass (sum and sum of squares in double)."""
    cdef Py_ssize_t pre = x.shape[0], c = x.shape[1], post = x.shape[2], ch
    cdef double m = <double>(pre * post), mu
    cdef int nt = arith_threads(c, pre * c * post)
    if mean.shape[0] != c or var.shape[0] != c:
        raise ValueError(f"mean and var must have length {c}")
    if m == 0:
        return
    with nogil:
        for ch in prange(c, num_threads=nt, schedule="static"):
            _channel_sums(&x[0, 0, 0], <const floating*>NULL, pre, c, post, ch, &mean[ch],
                          &var[ch])
            mu = mean[ch] / m
            mean[ch] = mu
            var[ch] = max(var[ch] / m - mu * mu, 0.0)


def channel_dot(floating[:, :, ::1] g, floating[:, :, ::1] x, double[::1] sum_g,
                double[::1] sum_gx):
    """Per channel: sum(g) and sum(g * x), into ``sum_g`` and ``sum_gx``."""
    cdef Py_ssize_t pre = x.shape[0], c = x.shape[1], post = x.shape[2], ch
    cdef int nt = arith_threads(c, 2 * pre * c * post)
    if g.shape[0] != pre or g.shape[1] != c or g.shape[2] != post:
        raise ValueError("g and x must have one shape")
    if sum_g.shape[0] != c or sum_gx.shape[0] != c:
        raise ValueError(f"sum_g and sum_gx must have length {c}")
    with nogil:
        for ch in prange(c, num_threads=nt, schedule="static"):
            _channel_sums(&g[0, 0, 0], &x[0, 0, 0], pre, c, post, ch, &sum_g[ch],
                          &sum_gx[ch])


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
    if (out.shape[0] != pre or out.shape[1] != c or out.shape[2] != post
            or g.shape[0] != pre or g.shape[1] != c or g.shape[2] != post):
        raise ValueError(f"channel_affine: arrays must have shape {(pre, c, post)!r}")
    if a.shape[0] != c or b.shape[0] != c or d.shape[0] != c:
        raise ValueError(f"channel_affine: per-channel vectors must have length {c}")
    if pre * c * post == 0:
        return 0
    with nogil:
        for r in prange(pre * c, num_threads=nt, schedule="static"):
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
    return 0
